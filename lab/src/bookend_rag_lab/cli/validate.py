"""The ``bookend validate`` subcommand: parse, then call
:func:`~bookend_rag_lab.experiments.validate.validate_influence`.

Imports without torch; a missing ``bookend-rag[lab]`` extra ends the command with one line and
exit code 2, as do bad arguments.

Examples::

    bookend validate gpt2 --tokens 1024 --seeds 2 --probes 8 --json gpt2.json --plot gpt2.png
    bookend validate qwen2-0.5b --rope-compare --json qwen2.json
    bookend validate --weights smollm2 --profile-out smollm2-profile.json --fitted-out fitted.json
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from bookend_rag_lab.cli.common import add_measure_command, say, set_threads
from bookend_rag_lab.influence.architectures import DEFAULT_VOCAB_CAP

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``validate`` subcommand to an ``argparse`` subparsers object."""
    p = add_measure_command(
        subparsers,
        "validate",
        _run,
        help="measure a model's influence profile and compare it with the theory",
        description=(
            "Measure the Jacobian-norm influence of every position on the final token (Hutchinson "
            "probes), for an architecture with random weights (Step 0) or for local trained "
            "weights, then compare it with the Cesàro theory and fit (H, alpha)."
        ),
        json="the JSON report",
        plot="the PNG figure",
    )
    p.add_argument("model", nargs="?", help="preset name or config.json path (random weights)")
    p.add_argument("--tokens", type=int, default=512, help="sequence length N (default 512)")
    p.add_argument("--seeds", type=int, default=2, help="model initialisations (Step 0)")
    p.add_argument("--probes", type=int, default=8, help="Hutchinson probes per input")
    p.add_argument("--inputs", type=int, help="inputs per initialisation (default 1; 4 trained)")
    p.add_argument("--rope", choices=("on", "off"), default="on", help="rotary embeddings")
    p.add_argument(
        "--rope-compare", action="store_true", help="also measure with RoPE off and compare"
    )
    p.add_argument("--width", type=int, help="shrink the hidden width (CPU runs)")
    p.add_argument(
        "--vocab-cap", type=int, default=DEFAULT_VOCAB_CAP, help="vocabulary cap (Step 0)"
    )
    p.add_argument(
        "--text",
        nargs="?",
        const="",
        metavar="PATH",
        help="natural text input instead of random tokens (no PATH: the bundled text)",
    )
    p.add_argument("--precision", choices=("bfloat16", "float32"), default="bfloat16")
    p.add_argument("--max-depth", type=float, default=2000.0, help="upper bound of the H fit")
    p.add_argument("--profile-out", help="write the measured profile JSON (for reorder) here")
    p.add_argument(
        "--fitted-out",
        help="fit the parametric profile (bookend_rag.FittedProfile) to the measurement by least "
        "squares "
        "and write it here",
    )


def _run(args: argparse.Namespace) -> int:
    """Measure, compare, fit; write the report, plot and profiles."""
    import bookend_rag

    if (
        args.model
        and not Path(args.model).exists()
        and args.model not in bookend_rag.available_presets()
    ):
        raise ValueError(
            f"unknown preset name={args.model!r} and no such config file "
            "(bookend_rag.available_presets() lists the presets)"
        )
    threads = set_threads(args.threads)
    from bookend_rag_lab.experiments.validate import validate_influence
    from bookend_rag_lab.influence.text import bundled_text

    text = None
    if args.text is not None:
        text = Path(args.text).read_text(encoding="utf-8") if args.text else bundled_text()
    validate_influence(
        args.model,
        weights=args.weights,
        n_tokens=args.tokens,
        seeds=args.seeds,
        probes=args.probes,
        inputs=args.inputs,
        rope=args.rope == "on",
        rope_compare=args.rope_compare,
        width=args.width,
        vocab_cap=args.vocab_cap,
        text=text,
        precision=args.precision,
        max_depth=args.max_depth,
        json_path=args.json_path,
        plot=args.plot,
        profile_out=args.profile_out,
        fitted_out=args.fitted_out,
        settings={"threads": threads},
        log=say,
    )
    return 0
