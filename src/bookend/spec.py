"""Model architecture specs: the inputs of the influence theory.

A :class:`ModelSpec` names a depth ``H`` (transformer blocks), an attention share ``alpha`` (the
weight of the attention output in each residual update; ``1/H`` unless measured) and, for
information, the context window. Specs come from the bundled presets, from a local Hugging Face
``config.json``, or are written out by hand.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Annotated, Any

from pydantic import BeforeValidator, ConfigDict, Field, model_validator

from bookend.datafiles import load_data_json
from bookend.errors import OneLineModel, no_bool
from bookend.inputs import MAX_TOKENS
from bookend.theory import MAX_DEPTH

__all__ = ["ModelSpec", "available_presets", "preset_key"]

_DEPTH_KEYS = ("num_hidden_layers", "n_layer", "num_layers", "n_layers")
_CONTEXT_KEYS = ("max_position_embeddings", "n_positions", "n_ctx", "max_sequence_length")


def _preset_table() -> dict[str, dict[str, Any]]:
    presets: dict[str, dict[str, Any]] = load_data_json("presets.json")["presets"]
    return presets


def available_presets() -> list[str]:
    """Names accepted by :meth:`ModelSpec.preset`, sorted."""
    return sorted(_preset_table())


def _normalise_name(name: str) -> str:
    return name.strip().lower().replace("_", "-").split("/")[-1]


# Instruction-tuned and chat variants share the base model's architecture:
# "Llama-3.1-8B-Instruct", "Mistral-7B-Instruct-v0.3", "SmolLM2-135M-Instruct", "gemma-2-9b-it".
_TUNED_SUFFIX = re.compile(r"-(instruct|chat|it)(-v?\d+(\.\d+)*)?$")
# A GGUF file names its model before its quantisation: "SmolLM2-135M-Instruct.Q4_1.gguf",
# "gemma-3-270m-q4_k_m.gguf" ("_" already read as "-").
_GGUF_FILE = re.compile(r"([.-]i?q\d[\w.-]*|[.-]b?f(16|32))?\.gguf$")


@cache
def _presets_by_hf_id() -> dict[str, str]:
    return {_normalise_name(v["hf_id"]): k for k, v in _preset_table().items()}


def preset_key(name: str) -> str | None:
    """The preset key of a name, Hugging Face id, instruct/chat variant or GGUF file name, or
    ``None``: ``preset_key("HuggingFaceTB/SmolLM2-135M-Instruct") == "smollm2-135m"``, and so is
    ``preset_key("SmolLM2-135M-Instruct.Q4_1.gguf")``."""
    table = _preset_table()
    key = _GGUF_FILE.sub("", _normalise_name(name))
    for candidate in (key, _TUNED_SUFFIX.sub("", key)):
        found = candidate if candidate in table else _presets_by_hf_id().get(candidate)
        if found is not None:
            return found
    return None


class ModelSpec(OneLineModel):
    """An immutable, validated description of a decoder model for the influence theory.

    Args:
        depth: number of transformer blocks ``H`` (real values >= 1 come from fits), at most
            :data:`bookend.theory.MAX_DEPTH` (the closed form's work grows with ``H``).
        attn_share: attention share ``alpha`` in ``(0, 1]``; defaults to ``1 / depth``, the regime
            where the Recency Delta ``(1 - alpha)^H`` stays of order ``1/e``.
        context_length: the model's context window in tokens (informational; optional), at
            most :data:`bookend.inputs.MAX_TOKENS`.

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
        from bookend.theory import recency_delta

        return recency_delta(self.depth, self.alpha)

    def label(self) -> str:
        """A short human-readable description, e.g. ``llama-3.1-8b (H=32, alpha=0.0312)``."""
        core = f"H={self.depth:g}, alpha={self.alpha:.4g}"
        return f"{self.name} ({core})" if self.name else f"ModelSpec({core})"

    @classmethod
    def preset(cls, name: str, *, attn_share: float | None = None) -> ModelSpec:
        """The spec of a widely used open model, from its published config.

        Args:
            name: a preset name such as ``"llama-3.1-8b"`` (case and ``_``/``-`` are ignored); a
                Hugging Face id such as ``"meta-llama/Llama-3.1-8B"`` works too, and so do its
                instruct and chat variants (``"meta-llama/Llama-3.1-8B-Instruct"``), which share
                the base model's architecture.
            attn_share: override the default ``1 / depth``.

        Raises:
            ValueError: for an unknown name; the message lists the closest preset names.
        """
        if not isinstance(name, str):
            raise ValueError(
                f"name must be a preset name string such as 'llama-3.1-8b', got name={name!r}"
            )
        table = _preset_table()
        key = preset_key(name)
        if key is None:
            close = difflib.get_close_matches(_normalise_name(name), table, n=5, cutoff=0.4)
            hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
            raise ValueError(
                f"unknown preset name={name!r}{hint} "
                f"(bookend.available_presets() lists all {len(table)})"
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
