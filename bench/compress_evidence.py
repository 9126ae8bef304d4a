"""Compress what the runs under ``bench/`` wrote: each ``report.json``, ``calls.jsonl`` and
``retrievals.jsonl`` becomes ``NAME.xz`` (:mod:`bookend_rag_lab.runfiles`), which the scripts, the
docs build and a resumed run read as they read the plain file; the plain file goes.

A report or a run's retrievals replace their compressed copy (a run wrote them afresh); a call log
is appended to it (a resumed run's cache holds only the calls made since: the rest are in the
compressed copy it read). The repository keeps only the compressed forms (``.gitignore``).

Usage (from the repository root; ``make compress-evidence``, and the targets that run the
recorded experiments end with it)::

    .venv/bin/python bench/compress_evidence.py [FOLDER ...]
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from bookend_rag_lab.runfiles import compress

BENCH = Path(__file__).resolve().parent
#: The files a run writes that the repository keeps compressed: name -> whether the plain file
#: continues the compressed copy (an append-only call log) instead of replacing it.
RUN_FILES = {"report.json": False, "retrievals.jsonl": False, "calls.jsonl": True}


def compress_runs(folders: Sequence[Path]) -> list[Path]:
    """Compress every plain run file under ``folders``; the compressed copies written."""
    plain = sorted({p for folder in folders for name in RUN_FILES for p in folder.rglob(name)})
    return [compress(path, append=RUN_FILES[path.name]) for path in plain]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="*", type=Path, default=[BENCH], help="default: bench/")
    args = parser.parse_args(argv)
    for written in compress_runs(args.folders):
        print(written)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
