"""The ``bookend tune`` subcommand: choose the placement config for a model and items.

Examples::

    bookend tune --weights smollm2 --suite nq --docs 10 --items 60 --threads 1
    bookend tune --weights ./my-model --items-file my_items.jsonl --max-calls 600 --out tuned
    bookend tune --endpoint http://127.0.0.1:8000/v1 --served-model NAME --items-file my_items.jsonl
    bookend tune --weights ./my-model --retrievals 'retrievals.jsonl*' --dry-run

Parses, then calls :func:`~bookend_rag_lab.experiments.tune.tune`. Imports without torch; a missing
``bookend-rag[lab]`` extra ends the command with one line and exit code 2, as do bad arguments.
"""

from __future__ import annotations

import argparse
from typing import Any

from bookend_rag_lab.cli.common import add_command, load_template_option, set_threads
from bookend_rag_lab.cli.endpoint import scorer_spec
from bookend_rag_lab.cli.runs import (
    DOCS,
    ITEMS,
    add_run_arguments,
    check_counts,
    print_result,
    run_options,
    run_spec,
)

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``tune`` subcommand to an ``argparse`` subparsers object."""
    p = add_command(
        subparsers,
        "tune",
        _tune,
        help="choose the placement for your model and items by measurement; writes a config",
        description=(
            "Race candidate placements (bookend's default for the model, relevance order, its "
            "reverse, the theory's bookend view, Haystack's and LangChain's patterns; with "
            "--measure-blocks, a slot table and a fitted profile measured on your items with "
            "cross-fitting) on your items, stop scoring the clearly-behind, stop as soon as the "
            "decision is settled, and keep the default unless a candidate is measurably better "
            "(a Bonferroni-corrected paired interval, anytime-valid at the early looks). Writes "
            "tuned.json (the config and its provenance), report.json, report.md and tune.png to "
            "--out; resumable through the call cache."
        ),
    )
    add_run_arguments(p, split="calibration", out="bookend-tune")
    p.add_argument("--folds", type=int, default=2, help="cross-fitting folds (default 2)")
    p.add_argument(
        "--measure-blocks",
        type=int,
        default=0,
        metavar="N",
        help="also race a slot table and a fitted profile measured on your items: N blocks of "
        "K prompts per fold (3 is plenty); default 0, none: on the recorded cells they were "
        "never chosen and cost a third of the calls",
    )
    p.add_argument(
        "--max-calls",
        type=int,
        help="budget: at most this many scoring calls (self-answer probes' answers, one "
        "generation per document, come first and outside it: --dry-run states both)",
    )
    p.add_argument(
        "--max-tokens",
        type=int,
        help="budget: at most this many prompt tokens of the scoring calls (what a hosted API "
        "bills as input)",
    )
    p.add_argument("--minutes", type=float, help="budget: stop judging after this many minutes")
    p.add_argument(
        "--confidence",
        type=float,
        default=0.95,
        help="the guard's level before its Bonferroni correction (default 0.95)",
    )


def _tune(args: argparse.Namespace) -> int:
    load_template_option(args)
    check_counts(args, ("docs", "items", "threads", "max_tokens"))
    check_counts(args, ("measure_blocks",), least=0)
    set_threads(args.threads)
    from bookend_rag_lab.experiments.tune import tune

    scorer = scorer_spec(args)
    result = tune(
        run_spec(args, suite=args.suite, k=args.docs or DOCS, n_items=args.items or ITEMS),
        scorer,
        **run_options(args, scorer),
        folds=args.folds,
        measure_blocks=args.measure_blocks,
        max_calls=args.max_calls,
        max_tokens=args.max_tokens,
        minutes=args.minutes,
        confidence=args.confidence,
    )
    return print_result(result.markdown, result.files)
