"""A run's files as a run writes them (plain) or as the repository keeps them (xz-compressed).

A run writes ``report.json``, ``calls.jsonl`` and ``retrievals.jsonl`` plain; ``bench/`` keeps them
as ``report.json.xz`` ... (``bench/compress_evidence.py``), a fraction of the size. Every reader of
such a file goes through :func:`read_text`: the plain file when it is there (a run's newer output),
else its compressed copy, so a fresh run and the committed evidence read alike. A call log is
append-only, so its two forms add up instead (:func:`compressed_text`, then the plain file:
the calls made since it was compressed).

A run holds its directory while it writes there (:func:`writing`): a second run on the same
directory would append the same calls to the log and overwrite the first one's report, so it stops
with an error naming the process that holds it.
"""

from __future__ import annotations

import json
import lzma
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

__all__ = [
    "SUFFIX",
    "compress",
    "compressed",
    "compressed_text",
    "read_json",
    "read_text",
    "stored",
    "writing",
]

#: The suffix of a compressed copy: xz (the standard library's :mod:`lzma`), a fifth smaller than
#: gzip on these files.
SUFFIX = ".xz"

#: The lock file a run holds in its directory (:func:`writing`); it stays behind, empty of meaning
#: once no process holds it.
LOCK = ".lock"


def compressed(path: str | Path) -> Path:
    """Where the compressed copy of ``path`` lives: ``path`` with :data:`SUFFIX` appended."""
    path = Path(path)
    return path.with_name(path.name + SUFFIX)


def stored(path: str | Path) -> bool:
    """Whether ``path`` or its compressed copy is a file."""
    return Path(path).is_file() or compressed(path).is_file()


def compressed_text(path: str | Path) -> str:
    """The text of the compressed copy of ``path``; empty when there is none."""
    packed = compressed(path)
    return lzma.decompress(packed.read_bytes()).decode("utf-8") if packed.is_file() else ""


def read_text(path: str | Path) -> str:
    """The text of ``path``, or of its compressed copy when ``path`` is not a file.

    Raises:
        FileNotFoundError: neither exists (naming ``path``).
    """
    path = Path(path)
    if not path.is_file() and compressed(path).is_file():
        return compressed_text(path)
    return path.read_text(encoding="utf-8")


def read_json(path: str | Path) -> Any:
    """The parsed JSON of ``path`` or of its compressed copy (:func:`read_text`)."""
    return json.loads(read_text(path))


def compress(path: str | Path, *, append: bool = False) -> Path:
    """Replace the plain file ``path`` by its compressed copy; the copy's path.

    Args:
        path: a plain file.
        append: ``path`` continues the compressed copy already there (a call log resumed from
            it): the copy keeps its text and gains ``path``'s. Else ``path`` replaces it (a
            report a run wrote afresh).
    """
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    if append:
        earlier = compressed_text(path)
        text = earlier + ("\n" if earlier and not earlier.endswith("\n") else "") + text
    packed = compressed(path)
    packed.write_bytes(lzma.compress(text.encode("utf-8")))
    path.unlink()
    return packed


@contextmanager
def writing(
    directory: str | Path | None, *, lock: str = LOCK, what: str = "out_dir"
) -> Iterator[None]:
    """Hold ``directory`` (created if missing) while a run writes there; the lock is released
    when the block ends, or when the process dies (an operating-system lock, so a killed run
    leaves nothing to clean up).

    Args:
        directory: the run's directory; ``None``: a run that writes no files, nothing to hold.
        lock: the lock file's name in it (a run that starts other runs in the same directory
            holds a lock of another name, or it would refuse its own children).
        what: how the error names the directory (the parameter it came from).

    Raises:
        ValueError: another process holds the directory; one line naming it and that process.
    """
    if directory is None:
        yield
        return
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / lock
    held = FileLock(path, timeout=0)
    try:
        held.acquire()
    except Timeout:
        holder = path.read_text(encoding="utf-8").strip() or "unknown"
        raise ValueError(
            f"{what} {str(directory)!r} is being written by another run (process {holder}); "
            "wait for it to finish or choose another directory"
        ) from None
    try:
        path.write_text(str(os.getpid()), encoding="utf-8")
        yield
    finally:
        held.release()
