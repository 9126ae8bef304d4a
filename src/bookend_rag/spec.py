"""Model architecture specs: the inputs of the influence theory.

A :class:`ModelSpec` names a depth ``H`` (transformer blocks), an attention share ``alpha`` (the
weight of the attention output in each residual update; ``1/H`` unless measured) and, for
information, the context window. Specs come from the bundled presets, from a local Hugging Face
``config.json``, or are written out by hand.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Annotated, Any

from pydantic import BeforeValidator, ConfigDict, Field, model_validator

from bookend_rag.datafiles import load_data_json
from bookend_rag.errors import OneLineModel, no_bool
from bookend_rag.inputs import MAX_TOKENS
from bookend_rag.theory import MAX_DEPTH

__all__ = [
    "DEFAULT_PRESET",
    "UNMEASURED_ORDER",
    "ModelName",
    "ModelSpec",
    "available_presets",
    "normalise_model_name",
    "preset_key",
    "resolve_model_name",
]

_DEPTH_KEYS = ("num_hidden_layers", "n_layer", "num_layers", "n_layers")
_CONTEXT_KEYS = ("max_position_embeddings", "n_positions", "n_ctx", "max_sequence_length")


def _preset_table() -> dict[str, dict[str, Any]]:
    presets: dict[str, dict[str, Any]] = load_data_json("presets.json")["presets"]
    return presets


def available_presets() -> list[str]:
    """Names accepted by :meth:`ModelSpec.preset`, sorted."""
    return sorted(_preset_table())


#: The preset placed when the caller names no model, and for every name bookend knows no
#: architecture for (:func:`resolve_model_name`): a 32-layer decoder (Llama 3.1 8B).
DEFAULT_PRESET = "llama-3.1-8b"

# How users spell a model, read in order by :func:`normalise_model_name`. Each rule is
# (what it reads, pattern, replacement), applied to the lower-cased name.
_SPELLING_RULES: tuple[tuple[str, re.Pattern[str], str], ...] = (
    (
        "a path, a Hugging Face organisation or a LiteLLM provider: the last part "
        "('meta-llama/Llama-3.1-8B', 'openai/gpt-4o', '/models/x.gguf')",
        re.compile(r"^.*[/\\]"),
        "",
    ),
    ("a weights file's extension", re.compile(r"\.(gguf|ggml|safetensors|bin|onnx|pth?)$"), ""),
    ("Ollama's default tag ('llama3.1:latest')", re.compile(r":latest$"), ""),
    ("an Ollama tag ('llama3.1:8b', 'qwen3:8b')", re.compile(r":"), "-"),
    (
        "a quantisation joined by a dot ('SmolLM2-135M-Instruct.Q4_1.gguf')",
        re.compile(r"\.(?=i?q\d|b?f\d|fp\d|int\d)"),
        "-",
    ),
    (
        "a vendor before the family ('Meta-Llama-3-8B', Bedrock's 'anthropic.claude-...')",
        re.compile(r"^(meta|anthropic|openai|google|amazon|mistralai)[.-](?=[^\W\d_])"),
        "",
    ),
)

# A quantisation written with underscores, kept whole when names are split at '_'.
_QUANTISATION = re.compile(r"i?q\d+(_[a-z0-9]+)*")
# Parts of a name after its first that change the weights but not the architecture: tuning
# (instruct, chat, it, base, pt), releases (v0.3, 2407, 20241022), quantisation and packaging.
_VARIANT_PART = re.compile(
    r"instruct|chat|it|base|pt|hf|turbo|"
    r"v\d+\.\d+(\.\d+)*|\d{4}|\d{8}|"
    r"i?q\d+(_[a-z0-9]+)*|b?f\d+|fp\d+|int\d+|\d+bit|w\d+a\d+|"
    r"awq|gptq|gguf|ggml|exl2|mlx|qat|bnb|dynamic|quantized"
)
# A name's tokens: numbers (with their dots: '3.1', '0.5') and runs of letters.
_TOKEN = re.compile(r"\d+(?:\.\d+)*|[^\W\d_]+")

# Families served only through an API: no published depth. (label, pattern on the normal form)
_CLOSED_FAMILIES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("OpenAI GPT", re.compile(r"^(chat)?gpt-(3\.5|[345](\.\d+)?)(-|$)")),
    ("OpenAI o-series", re.compile(r"^o-[1-9](-|$)")),
    ("Anthropic Claude", re.compile(r"^claude(-|$)")),
    ("Google Gemini", re.compile(r"^gemini(-|$)")),
)


def normalise_model_name(name: str) -> str:
    """The normal form of a model name: every spelling of one architecture gives the same string.

    Pure and total (any string gives a string). In order:

    1. lower case, then the rules of ``_SPELLING_RULES``: the last ``/`` part (a Hugging Face
       organisation, a LiteLLM provider, a directory), no weights-file extension, an Ollama tag
       ``name:tag`` read as ``name-tag`` (``:latest`` dropped), a quantisation joined by a dot
       read as a part, no vendor before the family (``Meta-Llama-3-8B``);
    2. the name is split into parts at ``-``, ``_`` and spaces (a quantisation such as
       ``q4_K_M`` stays one part), and every part after the first that names a variant of the
       same architecture is dropped: ``instruct``, ``chat``, ``it``, ``base``, ``pt``, ``hf``,
       releases (``v0.3``, ``2407``, ``20241022``), quantisations (``q4_k_m``, ``IQ4_XS``,
       ``bf16``, ``fp8``, ``int4``, ``4bit``, ``awq``, ``gptq``, ``gguf``, ``mlx`` ...);
    3. what is left is read as tokens, numbers (``3.1``) and runs of letters, joined by ``-``:
       ``gemma3``, ``gemma-3`` and ``Gemma 3`` are alike.

    Example:
        >>> normalise_model_name("meta-llama/Llama-3.1-8B-Instruct")
        'llama-3.1-8-b'
        >>> normalise_model_name("llama3.2:3b-instruct-q4_K_M")
        'llama-3.2-3-b'
        >>> normalise_model_name("SmolLM2-135M-Instruct.Q4_1.gguf")
        'smollm-2-135-m'
        >>> normalise_model_name("smollm2:135m")
        'smollm-2-135-m'
    """
    text = name.strip().lower()
    for _, pattern, replacement in _SPELLING_RULES:
        text = pattern.sub(replacement, text)
    parts: list[str] = []
    for part in re.split(r"[-\s]+", text):
        parts.extend([part] if _QUANTISATION.fullmatch(part) else part.split("_"))
    parts = [p for p in parts if p]
    kept = parts[:1] + [p for p in parts[1:] if not _VARIANT_PART.fullmatch(p)]
    return "-".join(_TOKEN.findall("-".join(kept)))


@cache
def _name_index() -> dict[str, str]:
    """Normal form -> preset key, over each preset's key, Hugging Face id and aliases."""
    index: dict[str, str] = {}
    for key, entry in _preset_table().items():
        for spelling in (key, entry["hf_id"], *entry.get("aliases", ())):
            index.setdefault(normalise_model_name(spelling), key)
    return index


def _closed_family(normal: str) -> str | None:
    return next((label for label, pattern in _CLOSED_FAMILIES if pattern.search(normal)), None)


def _edits(a: str, b: str) -> int:
    """Edits (insert, delete, substitute, swap two neighbours) between two short strings."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        row = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                row[j] = min(row[j], prev2[j - 2] + 1)
        prev2, prev = prev, row
    return prev[-1]


def _misspelling_of(normal: str) -> list[str]:
    """The presets ``normal`` is a clear misspelling of: the same numbers in the same places
    and the same number of words, each word at most one edit away (two for words of six letters
    or more), at most two edits in all. ``gpt-4o`` has other numbers than ``gpt2`` and is none."""
    tokens = normal.split("-")
    found: dict[str, int] = {}
    for other, key in _name_index().items():
        theirs = other.split("-")
        if len(theirs) != len(tokens) or other == normal:
            continue
        total = 0
        for mine, their in zip(tokens, theirs, strict=True):
            if mine[0].isdigit() or their[0].isdigit():
                total += 99 if mine != their else 0
                continue
            edits = _edits(mine, their)
            total += edits if edits <= (2 if len(their) >= 6 else 1) else 99
        if total <= 2:
            found[key] = min(total, found.get(key, total))
    return sorted(found, key=lambda k: (found[k], k))[:3]


#: What a model bookend has not measured gets under the default layout, in the words README,
#: ``explain()`` and the unknown-model notice share: the theory's profiles all weigh the slots
#: less from front to back there.
UNMEASURED_ORDER = (
    "the relevance order (the most relevant chunk first, the others in falling relevance: the "
    "retriever's order only when the retriever sorts by score)"
)


@dataclass(frozen=True)
class ModelName:
    """What bookend knows about a model name (:func:`resolve_model_name`).

    Attributes:
        name: the name as given.
        normal: its normal form (:func:`normalise_model_name`).
        preset: the preset key of its architecture, or ``None`` when bookend knows none.
        closed: for a model served only through an API, its family (``"OpenAI GPT"``,
            ``"Anthropic Claude"`` ...), else ``None``.
    """

    name: str
    normal: str
    preset: str | None
    closed: str | None = None

    @property
    def notice(self) -> str | None:
        """For a name bookend knows no architecture for, the one line that says it is placed
        with the default order and how to do better; ``None`` for a known architecture."""
        if self.preset is not None:
            return None
        what = " (a closed API model)" if self.closed else ""
        how = (
            "measure it with `bookend tune --endpoint ...` to place it by its own profile"
            if self.closed
            else "give model=ModelSpec(depth=...) or ModelSpec.from_hf_config(...), or measure "
            "it with `bookend tune --endpoint ...`, to place it by its own profile"
        )
        return (
            f"bookend has not measured and knows no architecture for {self.name!r}{what}: placed "
            f"with the default order, under the default layout {UNMEASURED_ORDER}; {how}"
        )


def resolve_model_name(name: str) -> ModelName:
    """What ``name``, a model as a user types it, refers to; every name resolves but a typo.

    * a Hugging Face id, served name, Ollama tag, GGUF file name or preset name of an
      architecture bookend knows (:func:`available_presets`, by :func:`normalise_model_name`):
      ``ModelName.preset`` is its preset;
    * a model served only through an API (``gpt-4o``, ``o3-mini``, ``claude-*``, ``gemini-*``,
      also as ``openai/gpt-4o``): ``preset`` is ``None`` and ``closed`` names the family;
    * any other name (``my-finetune-v2``): ``preset`` is ``None``.

    The last two have a :attr:`ModelName.notice`: ``model=`` places them with the default order
    (that of :data:`DEFAULT_PRESET`, as when no model is named) and says so once.

    Raises:
        ValueError: the name is not a string or holds no letter or digit, or it is a clear
            misspelling of a preset (the same numbers, a word one or two edits away:
            ``lama-3.1-8b``); the message names the preset meant. Nothing else raises.

    Example:
        >>> resolve_model_name("Qwen/Qwen3-8B").preset
        'qwen3-8b'
        >>> resolve_model_name("anthropic/claude-3-5-sonnet-20241022").closed
        'Anthropic Claude'
    """
    if not isinstance(name, str):
        raise ValueError(f"a model name must be a string such as 'llama-3.1-8b', got {name!r}")
    normal = normalise_model_name(name)
    if not normal:
        raise ValueError(f"model name {name!r} holds no letter or digit")
    preset = _name_index().get(normal)
    if preset is not None:
        return ModelName(name, normal, preset)
    closed = _closed_family(normal)
    if closed is not None:
        return ModelName(name, normal, None, closed)
    meant = _misspelling_of(normal)
    if meant:
        raise ValueError(
            f"unknown preset name={name!r}; did you mean {', '.join(repr(m) for m in meant)}? "
            f"(bookend_rag.available_presets() lists all {len(_preset_table())}; a name bookend "
            "does not know and misspells no preset places with the default order)"
        )
    return ModelName(name, normal, None)


def preset_key(name: str) -> str | None:
    """The preset key of a name, or ``None``; never raises. Every spelling
    :func:`normalise_model_name` reads works: ``preset_key("HuggingFaceTB/SmolLM2-135M-Instruct")
    == "smollm2-135m"``, and so is ``preset_key("SmolLM2-135M-Instruct.Q4_1.gguf")`` and
    ``preset_key("smollm2:135m")``."""
    if not isinstance(name, str):
        return None
    return _name_index().get(normalise_model_name(name))


class ModelSpec(OneLineModel):
    """An immutable, validated description of a decoder model for the influence theory.

    Args:
        depth: number of transformer blocks ``H`` (real values >= 1 come from fits), at most
            :data:`bookend_rag.theory.MAX_DEPTH` (the closed form's work grows with ``H``).
        attn_share: attention share ``alpha`` in ``(0, 1]``; defaults to ``1 / depth``, the regime
            where the Recency Delta ``(1 - alpha)^H`` stays of order ``1/e``.
        context_length: the model's context window in tokens (informational; optional), at
            most :data:`bookend_rag.inputs.MAX_TOKENS`.

    Raises:
        ValueError: one line naming each bad field and its value.
        name: a label for reports.

    Example:
        >>> ModelSpec(depth=32).attn_share
        0.03125
        >>> ModelSpec.preset("llama-3.1-8b").depth
        32.0
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    depth: Annotated[float, BeforeValidator(no_bool)] = Field(
        ge=1, le=MAX_DEPTH, allow_inf_nan=False, description="Number of transformer blocks H."
    )
    attn_share: Annotated[float | None, BeforeValidator(no_bool)] = Field(
        default=None,
        gt=0,
        le=1,
        allow_inf_nan=False,
        description="Attention share alpha per layer; defaults to 1/depth.",
    )
    context_length: Annotated[int | None, BeforeValidator(no_bool)] = Field(
        default=None, ge=1, le=MAX_TOKENS, description="Context window in tokens."
    )
    name: str | None = Field(default=None, description="Label used in reports.")

    @model_validator(mode="after")
    def _default_share(self) -> ModelSpec:
        if self.attn_share is None:
            object.__setattr__(self, "attn_share", 1.0 / self.depth)
        return self

    @property
    def alpha(self) -> float:
        """The attention share as a float (never ``None`` after validation)."""
        assert self.attn_share is not None
        return self.attn_share

    @property
    def recency_delta(self) -> float:
        """``(1 - alpha)^H``: the weight the theory puts on the final token."""
        from bookend_rag.theory import recency_delta

        return recency_delta(self.depth, self.alpha)

    def label(self) -> str:
        """A short human-readable description, e.g. ``llama-3.1-8b (H=32, alpha=0.0312)``."""
        core = f"H={self.depth:g}, alpha={self.alpha:.4g}"
        return f"{self.name} ({core})" if self.name else f"ModelSpec({core})"

    @classmethod
    def preset(cls, name: str, *, attn_share: float | None = None) -> ModelSpec:
        """The spec of a widely used open model, from its published config.

        Args:
            name: a preset name such as ``"llama-3.1-8b"``, or any spelling of one that
                :func:`normalise_model_name` reads: a Hugging Face id with its organisation and
                instruct, chat or quantised variant (``"meta-llama/Llama-3.1-8B-Instruct"``,
                which shares the base model's architecture), an Ollama tag (``"llama3.1:8b"``),
                a GGUF file name.
            attn_share: override the default ``1 / depth``.

        Raises:
            ValueError: for a name of no preset. The message names the preset meant when the
                name is a clear misspelling of one (:func:`resolve_model_name`), says so for a
                closed API model, and never suggests a preset of another family. (``model=``
                is lenient where this is strict: it places such names with the default order.)
        """
        if not isinstance(name, str):
            raise ValueError(
                f"name must be a preset name string such as 'llama-3.1-8b', got name={name!r}"
            )
        table = _preset_table()
        key = preset_key(name)
        if key is None:
            resolved = resolve_model_name(name)  # raises for a misspelling, naming the preset
            what = " (a closed API model with no published depth)" if resolved.closed else ""
            raise ValueError(
                f"unknown preset name={name!r}{what} "
                f"(bookend_rag.available_presets() lists all {len(table)})"
            )
        entry = table[key]
        return cls(
            depth=entry["depth"],
            attn_share=attn_share,
            context_length=entry["context_length"],
            name=key,
        )

    @classmethod
    def from_hf_config(
        cls, path_or_dict: str | Path | Mapping[str, Any], *, attn_share: float | None = None
    ) -> ModelSpec:
        """Read depth and context window from a local Hugging Face ``config.json``; no network.

        Accepts the path of a ``config.json``, of a model directory holding one, or the parsed
        mapping (``transformers`` config objects work through ``config.to_dict()``). Depth is read
        from ``num_hidden_layers`` / ``n_layer``; the context from ``max_position_embeddings`` /
        ``n_positions``. Multimodal configs with a nested ``text_config`` are read from it.
        """
        if isinstance(path_or_dict, Mapping):
            config: Mapping[str, Any] = path_or_dict
            source = str(config.get("_name_or_path") or config.get("model_type") or "config")
        else:
            path = Path(path_or_dict)
            if path.is_dir():
                path = path / "config.json"
            if not path.is_file():
                raise ValueError(f"no config.json at path_or_dict={str(path_or_dict)!r}")
            try:
                config = json.loads(path.read_text(encoding="utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise ValueError(
                    f"path_or_dict={str(path_or_dict)!r} is not a JSON config.json ({exc})"
                ) from None
            if not isinstance(config, Mapping):
                raise ValueError(
                    f"path_or_dict={str(path_or_dict)!r} must hold a JSON object, "
                    f"got a {type(config).__name__}"
                )
            source = path.parent.name or str(path)
        if isinstance(config.get("text_config"), Mapping):
            config = {**config, **config["text_config"]}
        depth = next((config[k] for k in _DEPTH_KEYS if config.get(k) is not None), None)
        if depth is None:
            raise ValueError(
                f"config has none of {', '.join(_DEPTH_KEYS)}; keys are {sorted(config)[:20]}"
            )
        context = next((config[k] for k in _CONTEXT_KEYS if config.get(k) is not None), None)
        if not isinstance(depth, int) or depth < 1:
            raise ValueError(f"config depth must be a positive integer, got depth={depth!r}")
        return cls(
            depth=depth,
            attn_share=attn_share,
            context_length=int(context) if context is not None else None,
            name=str(config.get("_name_or_path") or source),
        )

    def __str__(self) -> str:
        return self.label()
