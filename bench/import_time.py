"""`import bookend_rag` against the import of its three dependencies, side by side in one run.

    python bench/import_time.py [--repeats 15] [--json bench/import_time.json]

Each repeat runs, each in a fresh interpreter (``python -I``: no PYTHONPATH, no user site),
the import of numpy, scipy and pydantic alone; the same with pydantic's ``BaseModel`` and
``Field`` (``import pydantic`` alone loads almost nothing: a library that defines a model pays
for these); ``import bookend_rag``, which imports them all; and that import followed by the first
default ``reorder`` call. Each is timed inside its subprocess around the statement only
(interpreter start-up does not count), in CPU time (waiting for a core on a shared machine does
not count), and the statements alternate, so that what the other jobs still cost (caches, memory
bandwidth) weighs on all alike.

The figure is the ratio of the best times of ``import bookend_rag`` and of the three
dependencies (the fastest repeat is the least disturbed; the medians are printed beside them).
The target (issue 39) is at most 1.5: what the default call does not need is imported when
first used (scipy.sparse for ``drop_lookalikes``, scipy.special for the theory's density,
importlib.metadata for the lab's exports), and the pydantic models' validators are built when
first used (with the first one, pydantic scans the installed distributions for its plugins).
The first call's figure shows what moved to it rather than vanished.

Printed and written with ``--json``: the seconds of every repeat, best and median per statement,
the ratios, and the modules ``import bookend_rag`` loads beyond its dependencies' own (outside
bookend_rag itself).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

DEPENDENCIES = "import numpy, scipy, pydantic"
#: `import pydantic` loads almost nothing until a model class is defined: this is the import of
#: the dependencies as a library that defines pydantic models pays it.
WITH_BASEMODEL = "import numpy, scipy; from pydantic import BaseModel, Field"
BOOKEND = "import bookend_rag"
#: The import and the first default call, for what the import leaves to that call (a pydantic
#: model's validator, built when first used).
FIRST_CALL = "import bookend_rag; bookend_rag.reorder(['a b', 'c d', 'e f'], [0.9, 0.1, 0.5])"
_TIMED = "import time; t = time.process_time(); {statement}; print(time.process_time() - t)"
_EXTRA = (
    "import sys; {deps}; before = set(sys.modules); import bookend_rag; "
    "print('\\n'.join(sorted(m for m in set(sys.modules) - before "
    "if not m.startswith('bookend_rag'))))"
)


def _seconds(statement: str) -> float:
    code = _TIMED.format(statement=statement)
    out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"{statement!r} failed: {out.stderr.strip().splitlines()[-1]}")
    return float(out.stdout)


def _extra_modules() -> list[str]:
    code = _EXTRA.format(deps=DEPENDENCIES)
    out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True)
    out.check_returncode()
    return out.stdout.split()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1, got --repeats {args.repeats}")
    _seconds(BOOKEND)  # warm the file-system cache and the bytecode of both
    seconds: dict[str, list[float]] = {
        s: [] for s in (DEPENDENCIES, WITH_BASEMODEL, BOOKEND, FIRST_CALL)
    }
    for _ in range(args.repeats):
        for statement, samples in seconds.items():
            samples.append(_seconds(statement))
    best = {statement: min(samples) for statement, samples in seconds.items()}
    median = {statement: statistics.median(samples) for statement, samples in seconds.items()}
    extra = _extra_modules()
    results: dict[str, Any] = {
        "python": platform.python_version(),
        "load_average": os.getloadavg(),
        "repeats": args.repeats,
        "seconds": seconds,
        "best_s": best,
        "median_s": median,
        "ratio_of_best": best[BOOKEND] / best[DEPENDENCIES],
        "ratio_of_median": median[BOOKEND] / median[DEPENDENCIES],
        "first_call_ratio_of_best": best[FIRST_CALL] / best[DEPENDENCIES],
        "ratio_of_best_to_dependencies_with_basemodel": best[BOOKEND] / best[WITH_BASEMODEL],
        "target_ratio": 1.5,
        "modules_beyond_dependencies": extra,
    }
    print(f"fresh interpreters, {args.repeats} repeats each, alternating")
    for statement in seconds:
        print(
            f"  {statement[:40]:40s} best {1000 * best[statement]:6.1f} ms, "
            f"median {1000 * median[statement]:6.1f} ms"
        )
    print(
        f"  ratio {results['ratio_of_best']:.2f} (best), {results['ratio_of_median']:.2f} "
        f"(median); target at most {results['target_ratio']}; with the first default call "
        f"{results['first_call_ratio_of_best']:.2f} (best); against the dependencies with "
        f"pydantic's BaseModel {results['ratio_of_best_to_dependencies_with_basemodel']:.2f} (best)"
    )
    print(f"  {len(extra)} modules beyond the dependencies' own (outside bookend_rag)")
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
