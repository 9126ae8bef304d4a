"""Requests per second of ``bookend eval --endpoint`` against a local llama-cpp-python server.

Starts ``python -m llama_cpp.server`` on the SmolLM2 GGUF (127.0.0.1, a free port, ``--threads``
CPU threads), then scores the same hard-item prompts (K documents, every candidate answer) with
:class:`~bookend_rag_lab.models.endpoint.EndpointScorer` at 1, 4 and 8 requests in flight, a fresh
in-memory cache each time, after one warm-up pass (``--in-flight``, ``--top-logprobs`` change
what is run). Each prompt costs one completion request per
distinct context ``prompt + c_<t`` (see the scorer's docstring). For scale, the same prompts are
scored in process with transformers on the same file (``--no-in-process`` skips it). Setup (from
the repository root)::

    make smollm2 server
    OMP_NUM_THREADS=1 python bench/endpoint_speed.py --json bench/endpoint_speed.json
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from bookend_rag_lab.items.hard import hard_items
from bookend_rag_lab.models import load_scorer
from bookend_rag_lab.models.endpoint import EndpointScorer
from bookend_rag_lab.models.llama_server import LlamaServer
from bookend_rag_lab.models.weights import smollm2_gguf

SERVED = "SmolLM2-135M-Instruct"


def _prompts(n: int, k: int) -> list[tuple[str, tuple[str, ...]]]:
    items = hard_items(n, k, seed=0)
    return [(it.prompt(list(range(k))), it.continuations) for it in items]


def _served(
    url: str, prompts: list[tuple[str, tuple[str, ...]]], flight: int, top: int
) -> dict[str, Any]:
    with EndpointScorer(url, SERVED, concurrency=flight, top_logprobs=top) as scorer:
        started = time.perf_counter()
        for prompt, continuations in prompts:
            scorer.score(prompt, continuations)
        seconds = time.perf_counter() - started
        return {
            "in_flight": flight,
            "prompts": len(prompts),
            "requests": scorer.requests,
            "seconds": seconds,
            "requests_per_second": scorer.requests / seconds,
            "prompts_per_second": len(prompts) / seconds,
            "bounded_tokens": scorer.bounded_tokens,
            "scored_tokens": scorer.scored_tokens,
        }


def _in_process(prompts: list[tuple[str, tuple[str, ...]]]) -> dict[str, Any]:
    import torch

    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    scorer = load_scorer("smollm2")
    started = time.perf_counter()
    for prompt, continuations in prompts:
        scorer.score(prompt, continuations)
    seconds = time.perf_counter() - started
    return {
        "prompts": len(prompts),
        "seconds": seconds,
        "prompts_per_second": len(prompts) / seconds,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=12, help="hard items, one prompt each")
    parser.add_argument("--docs", type=int, default=6, help="documents per prompt, K")
    parser.add_argument("--threads", type=int, default=1, help="the server's CPU threads")
    parser.add_argument("--in-flight", type=int, nargs="+", default=[1, 4, 8])
    parser.add_argument("--top-logprobs", type=int, default=1000, help="next tokens per context")
    parser.add_argument("--no-in-process", action="store_true")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args(argv)
    prompts = _prompts(args.prompts, args.docs)
    log = Path(tempfile.mkdtemp()) / "server.log"
    with LlamaServer(smollm2_gguf(), SERVED, log, threads=args.threads) as server:
        _served(server.url, prompts, 1, args.top_logprobs)  # warm-up: page the model in
        runs = [_served(server.url, prompts, n, args.top_logprobs) for n in args.in_flight]
    for run in runs:
        print(
            f"{run['in_flight']} in flight: {run['requests_per_second']:.2f} requests/s, "
            f"{run['prompts_per_second']:.3f} prompts/s ({run['requests']} requests, "
            f"{run['prompts']} prompts, {run['seconds']:.1f} s; {run['bounded_tokens']} of "
            f"{run['scored_tokens']} tokens beyond the top {args.top_logprobs})"
        )
    result: dict[str, Any] = {
        "server": "llama-cpp-python 0.3.36 (python -m llama_cpp.server), SmolLM2-135M Q4_1",
        "server_threads": args.threads,
        "top_logprobs": args.top_logprobs,
        "docs": args.docs,
        "served": runs,
    }
    if not args.no_in_process:
        result["in_process"] = _in_process(prompts)
        print(f"in process: {result['in_process']['prompts_per_second']:.3f} prompts/s")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
