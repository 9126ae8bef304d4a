"""What the run commands share: ``bookend eval`` and ``bookend tune`` score orders of items on a
model, so they take the same model, items and output arguments, check them alike and pass them on
alike; with ``bookend calibrate``, they name their items alike (:func:`run_spec`). The model is
local ``--weights`` or a served one (``--endpoint``, :mod:`bookend_rag_lab.cli.endpoint`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from bookend_rag_lab.cli.common import add_template_option, add_threads_option
from bookend_rag_lab.cli.endpoint import add_endpoint_options, served_theory
from bookend_rag_lab.experiments.probing import DEFAULT_DESIGN, PROBE_DESIGNS
from bookend_rag_lab.items.suites import SUITES
from bookend_rag_lab.models.backends import ScorerSpec
from bookend_rag_lab.reorderers import CURRENT_ORDERS

if TYPE_CHECKING:  # the experiments import SciPy's statistics: `bookend` starts without them
    from bookend_rag_lab.experiments.runspec import RunSpec

__all__ = [
    "DOCS",
    "ITEMS",
    "add_run_arguments",
    "check_counts",
    "print_result",
    "run_options",
    "run_spec",
]

#: Documents per built-in item and built-in items when not told (K = 10, 60 items).
DOCS = 10
ITEMS = 60


def add_run_arguments(p: argparse.ArgumentParser, *, split: str, out: str) -> None:
    """The model, items and output arguments of a run (``split`` and ``out``: the defaults)."""
    p.add_argument(
        "--weights",
        help="local model directory, .gguf file, 'smollm2', 'gemma3-270m' or "
        "'qwen2.5-coder-0.5b' (default: smollm2)",
    )
    p.add_argument("--items-file", help="JSONL items (see README); default: built-in items")
    p.add_argument(
        "--retrievals",
        metavar="FILE",
        nargs="+",
        help="your recorded retrievals (JSON Lines, bookend-retrievals/1 or /2): files (each with "
        "the parts a recorder rotated out of it, oldest first) or quoted glob patterns; "
        "probe items are built from them, no labels needed (--items: at "
        "most this many, default all); --items-file, when given too, is preferred",
    )
    p.add_argument(
        "--probes",
        choices=tuple(PROBE_DESIGNS),
        default=DEFAULT_DESIGN,
        help="how probes are built from --retrievals: your question, with the model's own "
        "answer from each document alone as the candidates and the top document's as the "
        "target (self-answer, default: one short generation per document); or an inserted "
        "code per document (codes: no generation, but its position curve was measured unlike "
        "real questions'; kept for comparison)",
    )
    p.add_argument(
        "--suite",
        choices=sorted(SUITES),
        default="hard",
        help="built-in items: generated hard items, plain generated lookups, real "
        "NaturalQuestions passages among retrieved hard negatives, real ISO 3166-2 "
        "look-alike records, or real SQuAD 2.0 questions with their Wikipedia paragraph "
        "among retrieved hard negatives (default hard)",
    )
    p.add_argument("--docs", type=int, help=f"documents per built-in item (default {DOCS})")
    p.add_argument("--items", type=int, help=f"built-in items (default {ITEMS})")
    p.add_argument("--seed", type=int, default=0, help="item generator and shuffle seed")
    p.add_argument(
        "--split",
        choices=("calibration", "selection", "evaluation"),
        default=split,
        help=f"built-in items' split (default {split})",
    )
    p.add_argument(
        "--retriever",
        action="append",
        choices=("bm25", "minilm", "file"),
        help="repeatable; items take them in turn (default: file scores, else bm25 and minilm)",
    )
    p.add_argument(
        "--theory",
        help="model spec of the theory orders (default: from the config; with --endpoint, the "
        "preset that --served-model names)",
    )
    p.add_argument(
        "--device",
        choices=("auto", "cpu", "cuda"),
        default="cpu",
        help="where the model runs (default cpu); auto takes CUDA when there is a GPU",
    )
    p.add_argument(
        "--dtype",
        choices=("float32", "bfloat16", "float16"),
        default="float32",
        help="precision of the weights (default float32); bfloat16 ran 1.5x faster on a CPU "
        "with AVX-512 BF16 and gave tune the same decision (bench/RESULTS.md)",
    )
    add_threads_option(p)
    add_template_option(p)
    p.add_argument(
        "--current",
        choices=CURRENT_ORDERS,
        default="retrieval",
        help="the order you use today, which every order is compared with: your retriever's "
        "order, or that framework's reorderer (default retrieval); tune keeps bookend's "
        "default only when it is not measurably behind it",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="print the requests, model calls and prompt tokens the run would spend (the "
        "tokenizer of --weights or of the served model counts them); with --retrievals, the "
        "answers generated first and the scoring each apart; eval scores nothing, tune times "
        "3 calls of each kind (cached for the run) to estimate the wall time",
    )
    p.add_argument("--out", default=out, help=f"output directory (default {out})")
    p.add_argument("--cache", help="model-call cache JSONL (default OUT/calls.jsonl)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_endpoint_options(p)


def check_counts(args: argparse.Namespace, options: Sequence[str], *, least: int = 1) -> None:
    """Refuse a count below ``least`` among ``options`` (attribute names), naming its option."""
    for option in options:
        value = getattr(args, option)
        if value is not None and value < least:
            raise ValueError(f"--{option.replace('_', '-')} must be >= {least}, got {value}")


def run_spec(args: argparse.Namespace, *, suite: str, k: int | None, n_items: int) -> RunSpec:
    """The items the arguments name (``suite``, ``k`` and ``n_items`` as the command resolves
    them, but probes from ``--retrievals`` number ``--items`` or all; ``calibrate`` has no
    ``--items-file``, ``--retrievals`` or ``--retriever``, and ``tune`` no ``--families``: the
    run's defaults)."""
    from bookend_rag_lab.experiments.runspec import RunSpec

    retrievals = getattr(args, "retrievals", None)
    probes = retrievals is not None and getattr(args, "items_file", None) is None
    return RunSpec(
        items=getattr(args, "items_file", None),
        suite=suite,
        k=k,
        n_items=args.items if probes else n_items,
        seed=args.seed,
        families=getattr(args, "families", None),
        split=args.split,
        retrievers=getattr(args, "retriever", None),
        template=args.template,
        retrievals=retrievals,
        probes=getattr(args, "probes", DEFAULT_DESIGN),
    )


def run_options(args: argparse.Namespace, scorer: ScorerSpec) -> dict[str, Any]:
    """The keyword arguments of :func:`~bookend_rag_lab.experiments.evaluate.evaluate` and
    :func:`~bookend_rag_lab.experiments.tune.tune` that :func:`add_run_arguments` parsed beside
    the run and the model: the theory (with a served model and no ``--theory``, the preset
    ``--served-model`` names), the user's order, the dry run and the output; status lines go to
    stderr."""
    command = args.command_name
    return {
        "theory": args.theory or (served_theory(args) if scorer.capabilities.served else None),
        "current": args.current,
        "dry_run": args.dry_run,
        "out_dir": args.out,
        "progress": not args.no_progress,
        "log": lambda message: print(f"bookend {command}: {message}", file=sys.stderr),
    }


def print_result(markdown: str, files: Sequence[object]) -> int:
    """The report on stdout, the files written on stderr; exit code 0."""
    print(markdown)
    for path in files:
        print(f"wrote {path}", file=sys.stderr)
    return 0
