"""The ``bookend calibrate`` subcommand: parse, then call
:func:`~bookend_rag_lab.experiments.calibrate.calibrate`.

Imports without torch; a missing ``bookend-rag[lab]`` extra ends the command with one line and
exit code 2, as do bad arguments.

Examples::

    bookend calibrate --weights smollm2 --docs 6 10 --filler 0-1 4-6 --items 12 --out fitted.json
    bookend calibrate --outcomes report.json --holdout-docs 14 --out fitted.json
    bookend calibrate --endpoint http://127.0.0.1:8000/v1 --served-model NAME --out fitted.json
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from bookend_rag_lab.cli.common import (
    add_measure_command,
    add_template_option,
    check_outputs,
    check_profiles,
    filler_range,
    load_template_option,
    say,
    set_threads,
)
from bookend_rag_lab.cli.endpoint import add_endpoint_options, scorer_spec
from bookend_rag_lab.cli.runs import run_spec
from bookend_rag_lab.items.lookup import DEFAULT_FILLER

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``calibrate`` subcommand to an ``argparse`` subparsers object."""
    p = add_measure_command(
        subparsers,
        "calibrate",
        _run,
        help="calibration: accuracy by slot, and a fitted profile for placement",
        description=(
            "Score a trained model on generated multi-document lookup items with the gold "
            "document in every slot, for every K in --docs and every prompt length in --filler; "
            "fit the parametric profile (primacy, a recency window in tokens, a floor) to the "
            "per-item outcomes by maximum likelihood and write it (--out), with the raw per-slot "
            "table of the largest fitted K beside it (<out stem>-slots.json). Cells whose K is in "
            "--holdout-docs or whose filler is in --holdout-filler are held back from the fit and "
            "predicted: the fitted profile against the slot table stretched to them."
        ),
        json="the JSON report (with outcomes)",
        plot="the PNG slot curves of the slot table",
    )
    add_template_option(p)
    p.add_argument(
        "--outcomes",
        nargs="+",
        metavar="REPORT",
        help="fit to the outcomes saved in earlier --json reports instead of measuring",
    )
    p.add_argument(
        "--out",
        required=True,
        help="write the fitted profile JSON here (the slot table goes to <stem>-slots.json)",
    )
    p.add_argument("--slots-out", help="write the slot table here instead of <out stem>-slots.json")
    p.add_argument(
        "--docs", type=int, nargs="+", default=[10], help="documents per item, K (default 10)"
    )
    p.add_argument(
        "--filler",
        type=filler_range,
        nargs="+",
        default=[DEFAULT_FILLER],
        metavar="LO-HI",
        help="filler sentences per document, one range per prompt length (default 0-6)",
    )
    p.add_argument(
        "--items", type=int, default=30, help="items per cell, each scored in every slot"
    )
    p.add_argument("--families", nargs="+", help="template families (default: all)")
    p.add_argument(
        "--hard",
        action="store_true",
        help=(
            "the hard items of bookend eval (near-duplicates, distractors, unequal lengths) "
            "instead of the plain lookup items; their lengths are their own, so --filler must be "
            "left out"
        ),
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--split", choices=("calibration", "evaluation"), default="calibration")
    p.add_argument(
        "--metric",
        choices=("accuracy", "candidate_prob"),
        default="accuracy",
        help="the slot table's weights",
    )
    p.add_argument(
        "--target",
        choices=("correct", "candidate_prob"),
        default="correct",
        help="what the fit's likelihood scores (see bookend_rag_lab.fitting.profile)",
    )
    p.add_argument("--holdout-docs", type=int, nargs="+", default=[], metavar="K")
    p.add_argument("--holdout-filler", type=filler_range, nargs="+", default=[], metavar="LO-HI")
    p.add_argument(
        "--compare",
        nargs="+",
        default=[],
        metavar="MODEL",
        help="also score these profiles (JSON paths, presets) on the held-back cells",
    )
    p.add_argument(
        "--holdout-plot", help="write the PNG of held-back accuracy by slot against predictions"
    )
    add_endpoint_options(p)


def _run(args: argparse.Namespace) -> int:
    """Measure (or reload) outcomes; write the slot table, the fitted profile, report and plot."""
    if (args.weights is None and args.endpoint is None) == (args.outcomes is None):
        raise ValueError(
            "give either --weights or --endpoint (measure), or --outcomes REPORT (refit)"
        )
    if args.hard and args.filler != [DEFAULT_FILLER]:
        raise ValueError(
            f"--filler does not apply to --hard items (their lengths are their own), "
            f"got --filler {' '.join(f'{lo}-{hi}' for lo, hi in args.filler)}"
        )
    if args.compare and not (args.holdout_docs or args.holdout_filler):
        raise ValueError(
            "--compare scores the held-back cells: give --holdout-docs or --holdout-filler, "
            f"got --compare {' '.join(args.compare)}"
        )
    load_template_option(args)
    out = Path(args.out)
    check_outputs(
        out=args.out,
        slots_out=args.slots_out or out.with_name(f"{out.stem}-slots.json"),
        json=args.json_path,
        plot=args.plot,
        holdout_plot=args.holdout_plot,
    )
    check_profiles("--compare", args.compare)
    settings = {} if args.weights is None else {"threads": set_threads(args.threads)}
    from bookend_rag_lab.experiments.calibrate import calibrate

    calibrate(
        args.out,
        run_spec(args, suite="hard" if args.hard else "lookup", k=None, n_items=args.items),
        None if args.outcomes else scorer_spec(args),
        outcomes=args.outcomes,
        docs=args.docs,
        filler=args.filler,
        metric=args.metric,
        target=args.target,
        holdout_docs=args.holdout_docs,
        holdout_filler=args.holdout_filler,
        compare=args.compare,
        slots_out=args.slots_out,
        json_path=args.json_path,
        plot=args.plot,
        holdout_plot=args.holdout_plot,
        settings=settings,
        log=say,
    )
    return 0
