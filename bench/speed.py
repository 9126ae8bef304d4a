"""Speed of the theory and of `reorder`, side by side with the framework reorderers, in one run.

    python bench/speed.py [--quick] [--json bench/speed.json]

Section 1 times the exact O(N·H) influence profile against the dense `matrix_power` reference
(and checks they agree), and the exact profile at N = 131072, H = 80. Section 2 times per-call
placement at K = 20, 100 and 1000, new documents on each call (the same lists in the same turn
for every candidate), for bookend and for LangChain's and LlamaIndex's `LongContextReorder` and
Haystack's `LostInTheMiddleRanker` (installed by `pip install -r bench/requirements.txt`), with
the documents and the interleaved timer of `bench/adapters.py`. Every time is CPU time (this
process's, this thread's for the per-call figures), so that the other jobs of a shared machine do
not count; the ratios are still what to read.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from adapters import corpus, draws_for, frameworks, measure, rotating

from bookend_rag import Bookend, reorder
from bookend_rag.theory import influence_dense, influence_exact

RANK_ONLY = "bookend rank-only (equal lengths)"
DEFAULT = "bookend default (counts tokens)"
REORDER = "bookend reorder() (counts tokens)"


def _median_seconds(fn: Callable[[], Any], *, number: int, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.process_time()
        for _ in range(number):
            fn()
        samples.append((time.process_time() - start) / number)
    return statistics.median(samples)


def bench_theory(quick: bool) -> dict[str, Any]:
    n, depth, share = (1024, 32, 1 / 32) if quick else (2048, 32, 1 / 32)
    exact = influence_exact(n, depth, share)
    dense = influence_dense(n, depth, share)
    max_abs = float(np.max(np.abs(exact - dense)))
    t_exact = _median_seconds(lambda: influence_exact(n, depth, share), number=20, repeat=5)
    t_dense = _median_seconds(lambda: influence_dense(n, depth, share), number=1, repeat=3)
    t_long = _median_seconds(lambda: influence_exact(131072, 80, 1 / 80), number=1, repeat=3)
    return {
        "dense_vs_exact": {
            "n_tokens": n,
            "depth": depth,
            "exact_s": t_exact,
            "dense_s": t_dense,
            "speedup": t_dense / t_exact,
            "max_abs_difference": max_abs,
        },
        "exact_n131072_h80_s": t_long,
    }


def _reorder_candidates(k: int, draws: int) -> dict[str, Callable[[], Any]]:
    placer: Bookend[str] = Bookend("llama-3.1-8b")
    by_mass: Bookend[str] = Bookend("llama-3.1-8b", weight_rule="mass")
    competing: Bookend[str] = Bookend("llama-3.1-8b", competition=0.05)
    inputs = [corpus(k, draw) for draw in range(draws)]
    equal = [1] * k

    def each(call: Callable[[list[str], list[float]], Any]) -> Callable[[], Any]:
        return rotating([lambda t=texts, s=scores: call(t, s) for texts, scores in inputs])

    return {
        # Equal lengths, what the framework reorderers assume.
        RANK_ONLY: each(lambda t, s: placer.place(t, s, lengths=equal)),
        # The default: token counting, then slot weights (the slot rule).
        DEFAULT: each(placer.place),
        # The same through the function, which keeps a placer per distinct settings.
        REORDER: each(reorder),
        # The length-aware optimiser on every call (the mass rule).
        "bookend mass rule (token-aware)": each(by_mass.place),
        # Dinkelbach's method: a few placements under the slot rule.
        "bookend competing chunks (c = 0.05)": each(competing.place),
        **{f"{name} reorderer": calls["framework"] for name, calls in frameworks(k, draws).items()},
    }


def bench_reorder(rounds: int) -> dict[str, dict[str, float]]:
    """Per-call seconds at K = 20, 100 and 1000, bookend beside the framework reorderers, each
    call on new documents (:func:`adapters.draws_for` lists in turn)."""
    return {str(k): measure(_reorder_candidates(k, draws_for(k)), rounds) for k in (20, 100, 1000)}


def _print_reorder(results: dict[str, Any]) -> None:
    for k, times in results.items():
        print(
            f"\nK = {k}: median per-call time "
            "(ratios: bookend rank-only, default, reorder() / framework)"
        )
        ours = (times[RANK_ONLY], times[DEFAULT], times[REORDER])
        for name, seconds in times.items():
            ratio = (
                ""
                if name.startswith("bookend")
                else "   ratios" + "".join(f" {t / seconds:6.2f}" for t in ours)
            )
            print(f"  {name:<36} {seconds * 1e6:10.1f} us{ratio}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions, smaller dense N")
    parser.add_argument("--json", help="also write the figures to this JSON file")
    args = parser.parse_args()
    print(f"python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}")
    theory = bench_theory(args.quick)
    d = theory["dense_vs_exact"]
    print(
        f"exact profile vs dense matrix_power at N = {d['n_tokens']}, H = {d['depth']}: "
        f"{d['exact_s'] * 1e3:.3f} ms vs {d['dense_s']:.3f} s, speedup {d['speedup']:,.0f}x, "
        f"max abs difference {d['max_abs_difference']:.2e}"
    )
    print(f"exact profile at N = 131072, H = 80: {theory['exact_n131072_h80_s']:.3f} s")
    reorder = bench_reorder(3 if args.quick else 7)
    _print_reorder(reorder)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"theory": theory, "reorder": reorder}, fh, indent=2)


if __name__ == "__main__":
    main()
