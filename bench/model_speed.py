"""Seconds per scored prompt in process, float32 against bfloat16, and how far their scores differ.

The lever of ``bookend tune``'s time on a CPU: the precision of the weights (``--dtype``). The
prompts are hard items (``--items`` of them, K documents, BM25 ranking) in the orders a tune
scores: the gold document moved through every slot (the slot measurement), and the relevance
order, its reverse, LangChain's and Haystack's patterns (the race). Each dtype scores every
prompt, the two interleaved over ``--rounds`` rounds; printed and written with ``--json``: the
median seconds per prompt, bfloat16's speedup, and the differences of bfloat16's scores from
float32's (a continuation's log-probability, and the gold answer's probability among the
candidates, the metric tune decides on). Setup (from the repository root)::

    make smollm2
    OMP_NUM_THREADS=1 .venv/bin/python bench/model_speed.py --json bench/model_speed.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from bookend_rag.lab.experiments.trials import rank_items
from bookend_rag.lab.frameworks import haystack_order, langchain_order
from bookend_rag.lab.items.hard import hard_items
from bookend_rag.lab.metrics import item_metrics
from bookend_rag.lab.models.local import TrainedModel, load_trained, score_continuations
from bookend_rag.lab.models.scorer import Continuations
from bookend_rag.lab.reorderers import gold_at_slot

DTYPES = ("float32", "bfloat16")
#: (prompt, continuations, index of the gold answer among them)
Prompt = tuple[str, tuple[str, ...], int]


def _prompts(n: int, k: int) -> list[Prompt]:
    prompts: set[Prompt] = set()
    items = hard_items(n, k, seed=1)
    for item, ranking in zip(items, rank_items(items, ["bm25"])["bm25"], strict=True):
        if item.gold is None or item.candidates is None:
            raise ValueError(f"hard item {item.item_id!r} has no gold document or candidates")
        scores = list(ranking.scores)
        orders = [gold_at_slot(ranking.rank_of(item.gold), k, slot) for slot in range(k)]
        orders += [list(range(k)), list(range(k))[::-1]]
        orders += [langchain_order(scores), haystack_order(scores)]
        for ranks in orders:
            prompt = item.prompt([ranking.indices[r] for r in ranks])
            prompts.add((prompt, item.continuations, item.answer_index))
    return sorted(prompts)


def _score(model: TrainedModel, prompts: list[Prompt]) -> tuple[float, list[Continuations]]:
    started = time.perf_counter()
    scored = [score_continuations(model.lm, model.tokenizer, p, c) for p, c, _ in prompts]
    return (time.perf_counter() - started) / len(prompts), scored


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=3)
    parser.add_argument("--docs", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    torch.set_num_threads(1)
    models = {dtype: load_trained("smollm2", dtype=dtype) for dtype in DTYPES}
    prompts = _prompts(args.items, args.docs)
    times: dict[str, list[float]] = {dtype: [] for dtype in DTYPES}
    scored: dict[str, list[Continuations]] = {}
    for _ in range(args.rounds):
        for dtype in DTYPES:
            seconds, scored[dtype] = _score(models[dtype], prompts)
            times[dtype].append(seconds)
    median = {dtype: statistics.median(values) for dtype, values in times.items()}
    logprob = np.array([s.logprob for s in scored["bfloat16"]]) - np.array(
        [s.logprob for s in scored["float32"]]
    )
    prob = {
        dtype: np.array(
            [
                item_metrics(s, gold, candidates=True)["candidate_prob"]
                for s, (_, _, gold) in zip(scored[dtype], prompts, strict=True)
            ]
        )
        for dtype in DTYPES
    }
    gap = np.abs(prob["bfloat16"] - prob["float32"])
    results: dict[str, Any] = {
        "threads": 1,
        "items": args.items,
        "k": args.docs,
        "prompts": len(prompts),
        "rounds": args.rounds,
        "seconds_per_prompt": median,
        "bfloat16_speedup": median["float32"] / median["bfloat16"],
        "max_abs_logprob_difference": float(np.abs(logprob).max()),
        "candidate_prob_mean_abs_difference": float(gap.mean()),
        "candidate_prob_max_abs_difference": float(gap.max()),
    }
    print(f"{len(prompts)} prompts of {args.items} hard items, K = {args.docs}, one thread")
    for dtype in DTYPES:
        print(f"  {dtype:9s} {median[dtype]:.3f} s per prompt (median of {args.rounds} rounds)")
    print(f"  bfloat16 speedup {results['bfloat16_speedup']:.2f}x")
    print(
        f"  bfloat16 - float32: log-probability up to {np.abs(logprob).max():.3f}; gold answer's "
        f"probability among the candidates {100 * gap.mean():.2f} points on average, "
        f"{100 * gap.max():.2f} at most"
    )
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
