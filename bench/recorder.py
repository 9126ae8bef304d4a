"""The retrieval recorder's cost and loss (issue 48), printed as the tables of ``bench/RESULTS.md``.

1. **Cost per call**: ``bookend_rag.reorder`` on K texts with scores (new ones on every call:
   :func:`adapters.corpus`, as ``bench/adapters.py`` draws them), without and with ``recorder=``
   side by side in one run, at each ``--k`` (default 20 and 1000); the median over interleaved
   rounds of :func:`adapters.per_call` (this thread's CPU time; ``--wall``: the wall clock, where
   a wait for the interpreter lock held by the recorder's writer thread counts). The timed
   recorders have a large buffer (:func:`adapters.recorder`), so that a call is kept rather than
   dropped for a full buffer (cheaper, so it would flatter the figure); the run prints what each
   still dropped.
2. **Loss in a loop**, ``--repeats`` times (default 3: the loss varies with what else runs):
   ``--calls`` calls (default 10,000) of ``reorder(texts, scores, recorder=PATH)`` at K =
   ``--loss-k`` (default 20) as fast as one thread makes them, the recorder as a path gives it
   (its default settings), then closed as at exit; how many records reach the file and the parts
   it rotated into (those beyond its backups are deleted), how many the file counts as not
   recorded (the ``unrecorded`` field of schema 2), how many were written twice (each call's
   ``question`` is its number)
   and the recorder's warnings (every one counted, not only the first that Python's default
   filter shows).

Run from the repository root (the adapters and baselines of ``bench/requirements.txt`` installed,
as ``bench/adapters.py`` needs them)::

    OMP_NUM_THREADS=1 .venv/bin/python bench/recorder.py            # --k 20 1000 --rounds 5
"""

from __future__ import annotations

import argparse
import platform
import shutil
import tempfile
import time
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from adapters import Call, corpus, draws_for, measure, recorder, recorders_dropped, rotating

import bookend_rag
from bookend_rag.recorder import RecorderWarning, RetrievalRecorder, as_recorder
from bookend_rag.retrievals import RetrievalReader, retrieval_files


def cost(k: int) -> dict[str, Call]:
    """``reorder`` on ``k`` texts, without and with a recorder, over the same document lists."""
    kept = recorder(f"reorder-k{k}", k)
    plain: list[Call] = []
    recorded: list[Call] = []
    for draw in range(draws_for(k)):
        texts, scores = corpus(k, draw)
        plain.append(partial(bookend_rag.reorder, texts, scores))
        recorded.append(
            partial(bookend_rag.reorder, texts, scores, recorder=kept, question=f"draw {draw}")
        )
    return {"without": rotating(plain), "recorder": rotating(recorded)}


@dataclass
class Loss:
    """What a loop of recorded calls left in the file, and what was reported."""

    calls: int
    records: int
    unrecorded: int  # the records' ``unrecorded`` summed
    twice: int  # records of a call written again
    warnings: list[str]
    loop: float  # seconds of the loop
    closed: float  # seconds until the recorder was closed

    @property
    def missing(self) -> int:
        """Calls with no record in the file."""
        return self.calls - self.records + self.twice


def loss(calls: int, k: int) -> Loss:
    """``calls`` recorded calls at ``k`` in a loop, then the recorder closed (as at exit): what
    reached the file and what was reported."""
    path = Path(tempfile.mkdtemp(prefix="bookend-bench-loss-")) / "retrievals.jsonl"
    draws = [corpus(k, draw) for draw in range(draws_for(k))]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RecorderWarning)
        started = time.perf_counter()
        for i in range(calls):
            texts, scores = draws[i % len(draws)]
            bookend_rag.reorder(texts, scores, recorder=str(path), question=f"call {i}")
        looped = time.perf_counter() - started
        made = as_recorder(str(path))
        assert isinstance(made, RetrievalRecorder)
        made.close()  # what the process's exit runs
        closed = time.perf_counter() - started
    reader = RetrievalReader(retrieval_files(path))  # the file and the parts it rotated into
    records = list(reader)
    shutil.rmtree(path.parent)  # some 80 MB at K = 20
    seen = Counter(r.question for r in records)
    return Loss(
        calls=calls,
        records=len(records),
        unrecorded=reader.unrecorded,
        twice=sum(n - 1 for n in seen.values()),
        warnings=[str(w.message) for w in caught if issubclass(w.category, RecorderWarning)],
        loop=looped,
        closed=closed,
    )


def main(argv: Sequence[str] | None = None) -> None:
    """Time the recorder's cost per call at each K, then its loss in a loop; print both tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, nargs="+", default=[20, 1000], help="documents per call")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--wall", action="store_true", help="time by the wall clock")
    parser.add_argument("--calls", type=int, default=10_000, help="calls of the loss loop")
    parser.add_argument("--loss-k", type=int, default=20, help="documents per call of the loop")
    parser.add_argument("--repeats", type=int, default=3, help="loops, one row each (default 3)")
    args = parser.parse_args(argv)
    clock = time.perf_counter if args.wall else time.thread_time
    timed = "wall clock" if args.wall else "thread CPU time"
    python = platform.python_version()
    print(f"median of {args.rounds} interleaved rounds, {timed}, python {python}")
    print("\n| K | `reorder` | `reorder`, recorder on | recorder / without |")
    print("|---|---|---|---|")
    for k in args.k:
        times = measure(cost(k), args.rounds, clock)
        without, recorded = times["without"], times["recorder"]
        ratio = recorded / without
        print(f"| {k} | {without * 1e6:.1f} us | {recorded * 1e6:.1f} us | {ratio:.2f}x |")
    print("\nthe timed recorders (a full one drops a call, which is cheaper than keeping it):")
    for line in recorders_dropped():
        print(f"  {line}")

    print(
        "\n| K | calls | records in the file | calls not in the file | counted in the file "
        "(`unrecorded`) | written twice | warnings | loop, then closed |"
    )
    print("|---|---|---|---|---|---|---|---|")
    shown: list[str] = []
    for _ in range(args.repeats):
        out = loss(args.calls, args.loss_k)
        counted, twice = f"{out.unrecorded:,}", f"{out.twice:,}"
        print(
            f"| {args.loss_k} | {out.calls:,} | {out.records:,} | {out.missing:,} "
            f"({100 * out.missing / out.calls:.1f}%) | {counted} | {twice} | "
            f"{len(out.warnings)} | {out.loop:.2f} s, {out.closed:.2f} s |"
        )
        shown += out.warnings[:2]
    for message in shown:
        print(f"  warning: {message}")


if __name__ == "__main__":
    main()
