"""The ``bookend eval`` subcommand: compare placement strategies on a model and items.

Examples::

    bookend eval --weights smollm2 --quick
    bookend eval --weights smollm2 --docs 10 --items 150 --profile fitted=smollm2-fitted.json
    bookend eval --weights ./my-model --items-file my_items.jsonl --out eval-out

Parses, then calls :func:`~bookend.lab.experiments.evaluate.evaluate`. Imports without torch; a
missing ``bookend[validate]`` extra ends the command with one line and exit code 2, as do bad
arguments.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Collection
from pathlib import Path
from typing import Any

from bookend.lab.cli.common import guarded, set_threads
from bookend.lab.items.suites import SUITES

__all__ = ["QUICK", "register"]

#: ``--quick``: documents per item and items (a few minutes with SmolLM2 on 2 CPU cores).
QUICK = {"docs": 6, "items": 8, "random_draws": 2}
#: The default run: about 30 minutes with SmolLM2 on 2 CPU cores.
DEFAULT = {"docs": 10, "items": 60, "random_draws": 3}


def register(subparsers: Any) -> None:
    """Add the ``eval`` subcommand to an ``argparse`` subparsers object."""
    p = subparsers.add_parser(
        "eval",
        help="does placement help on your model and data? every strategy, paired statistics",
        description=(
            "Score the gold answer of every item with its retrieved documents in the order of "
            "each strategy (bookend with the model's theory default, rank-only and any profile "
            "file; LangChain, LlamaIndex and Haystack reorderers when installed; retrieval "
            "order, reversed, seeded random shuffles, the oracle), then compare the strategies "
            "item by item. Writes report.json, report.md and PNG figures to --out."
        ),
    )
    p.add_argument(
        "--weights",
        default="smollm2",
        help="local model directory, .gguf file, 'smollm2' or 'gemma3-270m' (default: smollm2)",
    )
    p.add_argument("--items-file", help="JSONL items (see README); default: built-in hard items")
    p.add_argument(
        "--suite",
        choices=sorted(SUITES),
        default="hard",
        help="built-in items: generated hard items, plain generated lookups, real "
        "NaturalQuestions passages among retrieved hard negatives, or real ISO 3166-2 "
        "look-alike records (default hard)",
    )
    p.add_argument(
        "--docs", type=int, help=f"documents per built-in item (default {DEFAULT['docs']})"
    )
    p.add_argument("--items", type=int, help=f"built-in items (default {DEFAULT['items']})")
    p.add_argument("--seed", type=int, default=0, help="item generator and shuffle seed")
    p.add_argument("--families", nargs="+", help="built-in template families")
    p.add_argument(
        "--split", choices=("calibration", "selection", "evaluation"), default="evaluation"
    )
    p.add_argument(
        "--retriever",
        action="append",
        choices=("bm25", "minilm", "file"),
        help="repeatable; items take them in turn (default: file scores, else bm25 and minilm)",
    )
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
        "(profile, weight_rule, competition, layout ...), named NAME",
    )
    p.add_argument("--theory", help="model spec of bookend-theory (default: from the config)")
    p.add_argument("--random-draws", type=int, help="random shuffles per item (default 3)")
    p.add_argument("--no-oracle", action="store_true", help="skip the oracle")
    p.add_argument("--quick", action="store_true", help="a smoke run of a few minutes")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="cpu")
    p.add_argument("--dtype", choices=("float32", "bfloat16", "float16"), default="float32")
    p.add_argument("--threads", type=int, help="torch threads (default: all cores)")
    p.add_argument("--out", default="bookend-eval", help="output directory (default bookend-eval)")
    p.add_argument("--cache", help="model-call cache JSONL (default OUT/calls.jsonl)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=guarded(_evaluate), command_name="eval")


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
    """``--profile`` paths and ``--config`` files (read and validated) by strategy name."""
    from bookend import PlacementConfig

    profiles: dict[str, Any] = _named_paths("--profile", args.profile)
    for name, path in _named_paths("--config", args.config, profiles).items():
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as error:
            raise ValueError(f"--config {name}={path}: cannot read it ({error})") from None
        try:
            profiles[name] = PlacementConfig.model_validate_json(text)
        except ValueError as error:
            detail = "; ".join(str(error).splitlines()[:3])
            raise ValueError(f"--config {name}={path}: not a placement config: {detail}") from None
    return profiles


def _evaluate(args: argparse.Namespace) -> int:
    sizes = QUICK if args.quick else DEFAULT
    for option in ("docs", "items", "random_draws", "threads"):
        value = getattr(args, option)
        if value is not None and value < 1:
            raise ValueError(f"--{option.replace('_', '-')} must be >= 1, got {value}")
    set_threads(args.threads)
    from bookend.lab.experiments.evaluate import evaluate

    result = evaluate(
        args.items_file,
        suite=args.suite,
        weights=args.weights,
        device=args.device,
        dtype=args.dtype,
        cache=args.cache,
        k=args.docs or sizes["docs"],
        n_items=args.items or sizes["items"],
        seed=args.seed,
        families=args.families,
        split=args.split,
        retrievers=args.retriever,
        profiles=_strategy_settings(args),
        theory=args.theory,
        random_draws=args.random_draws or sizes["random_draws"],
        oracle=not args.no_oracle,
        out_dir=args.out,
        progress=not args.no_progress,
        log=lambda message: print(f"bookend eval: {message}", file=sys.stderr),
    )
    print(result.markdown)
    for path in result.files:
        print(f"wrote {path}", file=sys.stderr)
    return 0
