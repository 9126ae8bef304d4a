"""What a decision costs before it is made: requests and prompt tokens of ``bookend tune`` on 60
items at K = 10, first-token against full-continuation scoring, and the price of those tokens.

For each suite and prompt, ``bookend tune --dry-run`` (:func:`bookend_rag.tune` with
``dry_run=True``) bounds the model calls and their prompt tokens under SmolLM2's tokenizer (every
candidate on every item; the race spends less). A served model is asked one request per call when
the candidates differ in their first token (chat first-token scoring), and one request per distinct
context ``prompt + c_<t`` when the full continuation is scored token by token (completions
``next-token``): those columns count the contexts from the candidates' tokens, each of which sends
the prompt again (a server's prefix cache saves compute, not a hosted API's input bill). Prices are
list prices per million input tokens, given on the command line (``--price NAME=USD``).

Usage::

    .venv/bin/python bench/decision_cost.py --json bench/decision_cost.json \
        --price gpt-4o-mini=0.15 --price gpt-4o=2.50
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import bookend_rag
from bookend_rag_lab.items.suites import load_items
from bookend_rag_lab.models import load_scorer

PROMPTS = {"bookend": None, "chat-json": "bench/prompts/chat-json-records.json"}
SUITES = ("records", "hard", "nq")


def contexts_per_call(tokenizer: Any, candidates: tuple[str, ...]) -> int:
    """Distinct contexts ``prompt + c_<t`` the full continuations of ``candidates`` need (shared
    token prefixes asked once): 1 for the prompt, plus one per longer prefix."""
    prefixes = {()}
    for c in candidates:
        ids = tokenizer.encode(" " + c, add_special_tokens=False)
        prefixes |= {tuple(ids[:t]) for t in range(1, len(ids))}
    return len(prefixes)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=60)
    parser.add_argument("--docs", type=int, default=10)
    parser.add_argument("--price", action="append", default=[], metavar="NAME=USD")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    prices = {k: float(v) for k, v in (p.split("=", 1) for p in args.price)}
    scorer = load_scorer("smollm2")
    tokenizer = scorer.model.tokenizer  # type: ignore[attr-defined]
    rows = []
    for suite in SUITES:
        families = ("birthplace", "access_code") if suite == "hard" else None
        items = load_items(
            None,
            suite=suite,
            n_items=args.items,
            k=args.docs,
            seed=0,
            split="calibration",
            families=families,
        )
        mean_contexts = sum(contexts_per_call(tokenizer, i.continuations) for i in items) / len(
            items
        )
        for name, template in PROMPTS.items():
            run = bookend_rag.RunSpec(items, template=template)
            result = bookend_rag.tune(run, scorer, progress=False, dry_run=True)
            cost = result.report["dry_run"]
            row = {
                "suite": suite,
                "prompt": name,
                "calls": cost["calls"],
                "prompt_tokens": cost["prompt_tokens"],
                "first_token_requests": cost["calls"],
                "continuation_requests": round(cost["calls"] * mean_contexts),
                "continuation_tokens": round(cost["prompt_tokens"] * mean_contexts),
                "usd_first_token": {k: cost["prompt_tokens"] * v / 1e6 for k, v in prices.items()},
                "usd_continuation": {
                    k: cost["prompt_tokens"] * mean_contexts * v / 1e6 for k, v in prices.items()
                },
            }
            rows.append(row)
            print(json.dumps(row), file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    print(
        "| suite | prompt | requests (first token) | prompt tokens | requests (continuation) "
        "| prompt tokens (continuation) | USD first token | USD continuation |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        first = ", ".join(f"{k} ${v:.2f}" for k, v in r["usd_first_token"].items())
        full = ", ".join(f"{k} ${v:.2f}" for k, v in r["usd_continuation"].items())
        print(
            f"| {r['suite']} | {r['prompt']} | {r['first_token_requests']:,} | "
            f"{r['prompt_tokens']:,} | {r['continuation_requests']:,} | "
            f"{r['continuation_tokens']:,} | {first} | {full} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
