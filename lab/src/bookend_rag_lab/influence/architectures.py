"""Transformers configurations for Step-0 measurements, built offline.

A configuration comes from a preset name (its ``family`` in ``presets.json`` selects the
transformers config class; the published dimensions live in ``data/architectures.json``), from a
local ``config.json`` (or a directory holding one), or is passed in as a transformers config.

Two adjustments make CPU runs of large architectures possible, both recorded in the report:

- :func:`shrink_width` keeps the head dimension and the depth and scales the number of heads,
  key-value heads and the MLP with the hidden width.
- the vocabulary is capped (``vocab_cap``): random-token inputs draw i.i.d. rows of a random
  embedding table, so its size only changes how often a token repeats, not the profile.

Importing this module does not import torch (the command line reads :data:`DEFAULT_VOCAB_CAP`).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bookend_rag import ModelSpec, available_presets
from bookend_rag_lab import deps

if TYPE_CHECKING:
    import torch

__all__ = [
    "DEFAULT_VOCAB_CAP",
    "build_config",
    "has_rope",
    "nominal_spec",
    "random_model",
    "shrink_width",
]

DEFAULT_VOCAB_CAP = 8192

# GPT-2 names its dimensions differently; its config maps the common names onto these.
_GPT2_KEYS = {
    "hidden_size": "n_embd",
    "num_attention_heads": "n_head",
    "num_hidden_layers": "n_layer",
    "intermediate_size": "n_inner",
    "max_position_embeddings": "n_positions",
}


@lru_cache(maxsize=1)
def _tables() -> tuple[dict[str, Any], dict[str, Any]]:
    text = resources.files("bookend_rag").joinpath("data/architectures.json").read_text("utf-8")
    data = json.loads(text)
    presets_text = resources.files("bookend_rag").joinpath("data/presets.json").read_text("utf-8")
    return data, json.loads(presets_text)["presets"]


def _preset_config(name: str) -> Any:
    spec = ModelSpec.preset(name)  # normalises the name and raises a helpful ValueError
    key = str(spec.name)
    arch, presets = _tables()
    entry = presets[key]
    family = arch["families"].get(entry["family"])
    if family is None or key not in arch["presets"]:
        raise ValueError(
            f"preset {key!r} has a depth but no published dimensions to build it from "
            f"(family={entry['family']!r}); pass its config.json instead"
        )
    dims = dict(arch["presets"][key])
    dims["num_hidden_layers"] = int(entry["depth"])
    dims["max_position_embeddings"] = int(entry["context_length"])
    config_class = getattr(deps.transformers(), family["config_class"])
    if entry["family"] == "gpt2":
        dims = {_GPT2_KEYS.get(k, k): v for k, v in dims.items()}
    config = config_class(**dims)
    config.name_or_path = key
    return config


def build_config(
    source: Any,
    *,
    width: int | None = None,
    vocab_cap: int | None = DEFAULT_VOCAB_CAP,
    n_tokens: int | None = None,
) -> Any:
    """A transformers config for a random-weight model, without network access.

    Args:
        source: a preset name (``bookend_rag.available_presets()``), the path of a ``config.json``
            or
            of a directory holding one, a mapping with a ``model_type``, or a transformers
            ``PretrainedConfig`` (copied, never modified).
        width: shrink the hidden width to about this many units (see :func:`shrink_width`).
        vocab_cap: cap the vocabulary size (``None`` keeps it).
        n_tokens: the sequence length that will be measured; the position table is extended for
            rotary models and checked for learned absolute positions.

    Raises:
        ValueError: unknown preset, missing file, or ``n_tokens`` beyond learned positions.
    """
    tf = deps.transformers()
    if isinstance(source, tf.PretrainedConfig):
        config = copy.deepcopy(source)
    elif isinstance(source, Mapping):
        config = _config_from_mapping(tf, source)
    elif isinstance(source, (str, Path)) and _looks_like_path(source):
        path = Path(source)
        if path.is_dir():
            path = path / "config.json"
        if not path.is_file():
            raise ValueError(f"no config.json at source={str(source)!r}")
        config = _config_from_mapping(tf, json.loads(path.read_text(encoding="utf-8")))
    elif isinstance(source, str):
        config = _preset_config(source)
    else:
        raise ValueError(
            f"source must be a preset name, a config.json path or a transformers config, "
            f"got source={source!r} (presets: {', '.join(available_presets()[:4])}, ...)"
        )
    if width is not None:
        config = shrink_width(config, width)
    if vocab_cap is not None:
        _cap_vocab(config, vocab_cap)
    if n_tokens is not None:
        _fit_positions(config, n_tokens)
    return config


def _looks_like_path(source: str | Path) -> bool:
    text = str(source)
    return isinstance(source, Path) or text.endswith(".json") or "/" in text or Path(text).is_dir()


def _config_from_mapping(tf: Any, data: Mapping[str, Any]) -> Any:
    model_type = data.get("model_type")
    if not model_type:
        raise ValueError(f"config has no model_type; keys are {sorted(data)[:20]}")
    kwargs = {k: v for k, v in data.items() if k != "model_type"}
    return tf.AutoConfig.for_model(str(model_type), **kwargs)


def _cap_vocab(config: Any, vocab_cap: int) -> None:
    if vocab_cap < 2:
        raise ValueError(f"vocab_cap must be >= 2, got vocab_cap={vocab_cap!r}")
    config.vocab_size = min(int(config.vocab_size), vocab_cap)
    for key in ("bos_token_id", "eos_token_id", "pad_token_id"):
        value = getattr(config, key, None)
        if isinstance(value, int) and value >= config.vocab_size:
            setattr(config, key, None)


def _fit_positions(config: Any, n_tokens: int) -> None:
    if n_tokens < 2:
        raise ValueError(f"n_tokens must be >= 2, got n_tokens={n_tokens!r}")
    limit = getattr(config, "max_position_embeddings", None)
    if limit is not None and n_tokens > int(limit):
        if not has_rope(config):
            raise ValueError(
                f"n_tokens={n_tokens} exceeds the {limit} learned positions of this architecture"
            )
        config.max_position_embeddings = n_tokens


def has_rope(config: Any) -> bool:
    """Whether the architecture rotates queries and keys (RoPE) rather than adding positions."""
    return getattr(config, "model_type", "") not in ("gpt2", "gpt_neo", "opt", "bloom")


def shrink_width(config: Any, width: int) -> Any:
    """A copy of ``config`` with hidden width near ``width``; depth and head dimension unchanged.

    Heads ``h' = max(1, round(width · h·d_head / hidden / d_head))``, key-value heads scaled alike
    and lowered until they divide ``h'``, MLP width scaled by ``width / hidden``. Architectures
    whose head dimension is implied (``hidden / heads``, e.g. GPT-2) get ``hidden' = h' · d_head``.

    The profile's shape moves with width (the initialiser's std is fixed, so width changes the
    relative size of the attention update): on Qwen2-0.5B at N = 512 the fitted Poisson ``lambda``
    is 1.10 at the real width 896, 2.47 at 448 and 2.95 at 256 (``bench/RESULTS.md``). Use it for
    quick looks at large configurations, not for the numbers.
    """
    hidden = int(config.hidden_size)
    if width < 8 or width > hidden:
        raise ValueError(f"width must lie in [8, {hidden}] for this config, got width={width!r}")
    out = copy.deepcopy(config)
    heads = int(config.num_attention_heads)
    explicit_head_dim = getattr(config, "head_dim", None)
    head_dim = int(explicit_head_dim or hidden // heads)
    new_heads = max(1, round(width * heads / hidden))
    new_head_dim = min(head_dim, width)
    if explicit_head_dim is None or config.model_type == "gpt2":
        new_hidden = new_heads * new_head_dim
    else:
        new_hidden = width
        out.head_dim = new_head_dim
    kv = getattr(config, "num_key_value_heads", None)
    if kv is not None:
        new_kv = max(1, round(int(kv) * new_heads / heads))
        while new_heads % new_kv:
            new_kv -= 1
        out.num_key_value_heads = new_kv
    scale = new_hidden / hidden
    if config.model_type == "gpt2":
        inner = config.n_inner or 4 * hidden
        out.n_inner = max(1, round(inner * scale))
    elif getattr(config, "intermediate_size", None):
        out.intermediate_size = max(1, round(int(config.intermediate_size) * scale))
    out.hidden_size = new_hidden
    out.num_attention_heads = new_heads
    return out


def nominal_spec(config: Any) -> ModelSpec:
    """The theory's nominal spec for ``config``: depth ``H`` and ``alpha = 1/H``."""
    return ModelSpec.from_hf_config(config.to_dict())


def random_model(config: Any, seed: int) -> torch.nn.Module:
    """The headless base model of ``config``, random weights drawn from ``seed``, in eval mode.

    Parameters do not require gradients: the influence is a gradient with respect to the input
    embeddings only, and skipping weight gradients roughly halves the backward pass.
    """
    import torch

    tf = deps.transformers()
    torch.manual_seed(seed)
    model = tf.AutoModel.from_config(config, attn_implementation="sdpa", dtype=torch.float32)
    model.eval()
    model.requires_grad_(False)
    return model  # type: ignore[no-any-return]
