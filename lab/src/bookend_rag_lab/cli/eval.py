"""The ``bookend eval`` subcommand: compare placement strategies on a model and items.

Examples::

    bookend eval --weights smollm2 --quick
    bookend eval --weights smollm2 --docs 10 --items 150 --profile fitted=smollm2-fitted.json
    bookend eval --weights ./my-model --items-file my_items.jsonl --out eval-out
    bookend eval --endpoint http://127.0.0.1:8000/v1 --served-model Qwen/Qwen2.5-7B-Instruct --quick

Parses, then calls :func:`~bookend_rag_lab.experiments.evaluate.evaluate`. Imports without torch; a
missing ``bookend-rag[lab]`` extra ends the command with one line and exit code 2, as do bad
arguments.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Collection
from typing import Any

import bookend_rag
from bookend_rag_lab.cli.common import (
    add_command,
    check_profiles,
    load_template_option,
    set_threads,
)
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
from bookend_rag_lab.experiments.reuse import not_a_report

__all__ = ["QUICK", "register"]

#: ``--quick``: documents per item and items (a few minutes with SmolLM2 on 2 CPU cores).
QUICK = {"docs": 6, "items": 8, "random_draws": 2}
#: The default run: about 30 minutes with SmolLM2 on 2 CPU cores.
DEFAULT = {"docs": DOCS, "items": ITEMS, "random_draws": 3}


def register(subparsers: Any) -> None:
    """Add the ``eval`` subcommand to an ``argparse`` subparsers object."""
    p = add_command(
        subparsers,
        "eval",
        _evaluate,
        help="does placement help on your model and data? every strategy, paired statistics",
        description=(
            "Score the gold answer of every item with its retrieved documents in the order of "
            "each strategy (bookend with the model's theory default, rank-only and any profile "
            "file; LangChain, LlamaIndex and Haystack reorderers when installed; retrieval "
            "order, reversed, seeded random shuffles, the oracle), then compare the strategies "
            "item by item. Writes report.json, report.md and PNG figures to --out."
        ),
    )
    add_run_arguments(p, split="evaluation", out="bookend-eval")
    p.add_argument("--families", nargs="+", help="built-in template families")
    p.add_argument(
        "--profile",
        action="append",
        default=[],
        metavar="[NAME=]PATH",
        help="repeatable: a bookend strategy with this profile JSON (or preset), named NAME",
    )
    p.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="repeatable: a bookend strategy with every setting of this PlacementConfig JSON "
        "(profile, weight_rule, competition, layout ...) or of a bookend tune tuned.json, "
        "named NAME",
    )
    p.add_argument("--random-draws", type=int, help="random shuffles per item (default 3)")
    p.add_argument("--no-oracle", action="store_true", help="skip the oracle")
    p.add_argument(
        "--reuse",
        metavar="REPORT",
        help="a previous report.json of this model on these items: its scored orders are taken "
        "from it (a few rescored as a check), only new orders call the model",
    )
    p.add_argument("--quick", action="store_true", help="a smoke run of a few minutes")


def _named_paths(option: str, specs: list[str], taken: Collection[str] = ()) -> dict[str, str]:
    out: dict[str, str] = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep:
            name, path = os.path.splitext(os.path.basename(spec))[0], spec
        if not name or not path or name in out or name in taken:
            raise ValueError(f"{option} must be [NAME=]PATH with distinct names, got {spec!r}")
        out[name] = path
    return out


def _strategy_settings(args: argparse.Namespace) -> dict[str, Any]:
    """``--profile`` paths and ``--config`` files (read and validated by
    :func:`bookend_rag.load_config`: a ``tuned.json`` of ``bookend tune`` keeps its provenance, so
    that the run can check the model) by strategy name."""
    profiles: dict[str, Any] = _named_paths("--profile", args.profile)
    for name, path in _named_paths("--config", args.config, profiles).items():
        profiles[name] = bookend_rag.load_config(path, param=f"--config {name}")
    return profiles


def _evaluate(args: argparse.Namespace) -> int:
    load_template_option(args)
    sizes = QUICK if args.quick else DEFAULT
    check_counts(args, ("docs", "items", "random_draws", "threads"))
    profiles = _strategy_settings(args)
    if args.reuse is not None and not os.path.isfile(args.reuse):
        # Before the model loads: a mistyped path should not cost a minute of loading.
        raise not_a_report(args.reuse, "no file")
    check_profiles("--profile", [p for p in profiles.values() if isinstance(p, str)])
    set_threads(args.threads)
    from bookend_rag_lab.experiments.evaluate import evaluate

    k, n_items = args.docs or sizes["docs"], args.items or sizes["items"]
    scorer = scorer_spec(args)
    result = evaluate(
        run_spec(args, suite=args.suite, k=k, n_items=n_items),
        scorer,
        **run_options(args, scorer),
        profiles=profiles,
        random_draws=args.random_draws or sizes["random_draws"],
        oracle=not args.no_oracle,
        reuse=args.reuse,
    )
    return print_result(result.markdown, result.files)
