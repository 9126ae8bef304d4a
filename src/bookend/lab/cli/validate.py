"""The ``bookend validate`` and ``bookend calibrate`` subcommands.

``register(subparsers)`` adds both to an ``argparse`` subparsers object; each sets
``func(args) -> int``. This module imports without torch: the measurement modules are imported
inside the commands, and a missing ``bookend[validate]`` extra ends the command with a clear message
and exit code 2.

Examples::

    bookend validate gpt2 --tokens 1024 --seeds 2 --probes 8 --json gpt2.json --plot gpt2.png
    bookend validate qwen2-0.5b --rope-compare --json qwen2.json
    bookend validate --weights smollm2 --profile-out smollm2-profile.json --fitted-out fitted.json
    bookend calibrate --weights smollm2 --docs 6 10 --filler 0-1 4-6 --items 12 --out fitted.json
    bookend calibrate --outcomes report.json --holdout-docs 14 --out fitted.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bookend.lab.deps import guarded

__all__ = ["register"]

_VOCAB_CAP = 8192  # mirrors architectures.DEFAULT_VOCAB_CAP, which cannot be imported without torch


def register(subparsers: Any) -> None:
    """Add the ``validate`` and ``calibrate`` subcommands to ``subparsers``."""
    _add_validate(subparsers)
    _add_calibrate(subparsers)


def _add_validate(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "validate",
        help="measure a model's influence profile and compare it with the theory",
        description=(
            "Measure the Jacobian-norm influence of every position on the final token (Hutchinson "
            "probes), for an architecture with random weights (Step 0) or for local trained "
            "weights, then compare it with the Cesàro theory and fit (H, alpha)."
        ),
    )
    p.add_argument("model", nargs="?", help="preset name or config.json path (random weights)")
    p.add_argument("--weights", help="local model directory, .gguf file, or 'smollm2'")
    p.add_argument("--tokens", type=int, default=512, help="sequence length N (default 512)")
    p.add_argument("--seeds", type=int, default=2, help="model initialisations (Step 0)")
    p.add_argument("--probes", type=int, default=8, help="Hutchinson probes per input")
    p.add_argument("--inputs", type=int, help="inputs per initialisation (default 1; 4 trained)")
    p.add_argument("--rope", choices=("on", "off"), default="on", help="rotary embeddings")
    p.add_argument(
        "--rope-compare", action="store_true", help="also measure with RoPE off and compare"
    )
    p.add_argument("--width", type=int, help="shrink the hidden width (CPU runs)")
    p.add_argument("--vocab-cap", type=int, default=_VOCAB_CAP, help="vocabulary cap (Step 0)")
    p.add_argument(
        "--text",
        nargs="?",
        const="",
        metavar="PATH",
        help="natural text input instead of random tokens (no PATH: the bundled text)",
    )
    p.add_argument("--precision", choices=("bfloat16", "float32"), default="bfloat16")
    p.add_argument("--max-depth", type=float, default=2000.0, help="upper bound of the H fit")
    p.add_argument("--threads", type=int, help="torch threads (default: all cores)")
    p.add_argument("--json", dest="json_path", help="write the JSON report here")
    p.add_argument("--plot", help="write the PNG figure here")
    p.add_argument("--profile-out", help="write the measured profile JSON (for reorder) here")
    p.add_argument(
        "--fitted-out",
        help="fit the parametric profile (bookend.fitted) to the measurement by least squares "
        "and write it here",
    )
    p.set_defaults(func=guarded(_run_validate), command_name="validate")


def _filler_range(text: str) -> tuple[int, int]:
    """``"LO-HI"`` (or one number) as an inclusive range of filler sentences per document."""
    lo, _, hi = text.partition("-")
    try:
        pair = (int(lo), int(hi or lo))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected LO-HI such as 0-6, got {text!r}") from None
    if not 0 <= pair[0] <= pair[1]:
        raise argparse.ArgumentTypeError(f"expected 0 <= LO <= HI, got {text!r}")
    return pair


def _add_calibrate(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "calibrate",
        help="behavioural probe: accuracy by slot, and a fitted profile for placement",
        description=(
            "Score a trained model on generated multi-document lookup items with the gold "
            "document in every slot, for every K in --docs and every prompt length in --filler; "
            "fit the parametric profile (primacy, a recency window in tokens, a floor) to the "
            "per-item outcomes by maximum likelihood and write it (--out), with the raw per-slot "
            "table of the largest fitted K beside it (<out stem>-slots.json). Cells whose K is in "
            "--holdout-docs or whose filler is in --holdout-filler are held back from the fit and "
            "predicted: the fitted profile against the slot table stretched to them."
        ),
    )
    p.add_argument("--weights", help="local model directory, .gguf or 'smollm2'")
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
        type=_filler_range,
        nargs="+",
        default=[(0, 6)],
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
            "instead of the plain probe; their lengths are their own, so --filler must be left out"
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
        help="what the fit's likelihood scores (see bookend.lab.fitting.profile)",
    )
    p.add_argument("--holdout-docs", type=int, nargs="+", default=[], metavar="K")
    p.add_argument("--holdout-filler", type=_filler_range, nargs="+", default=[], metavar="LO-HI")
    p.add_argument(
        "--compare",
        nargs="+",
        default=[],
        metavar="MODEL",
        help="also score these profiles (JSON paths, presets) on the held-back cells",
    )
    p.add_argument("--threads", type=int, help="torch threads (default: all cores)")
    p.add_argument("--json", dest="json_path", help="write the JSON report (with outcomes) here")
    p.add_argument("--plot", help="write the PNG slot curves of the slot table here")
    p.add_argument(
        "--holdout-plot", help="write the PNG of held-back accuracy by slot against predictions"
    )
    p.set_defaults(func=guarded(_run_calibrate), command_name="calibrate")


def _set_threads(threads: int | None) -> None:
    # Idle OpenMP workers should sleep, not spin: on a shared machine, spinning threads of several
    # processes starve each other (measured on the 2-core CI machine under load: a SmolLM2 forward
    # pass took 21 s spinning, 4 s passive). Read when torch first loads, hence before the import.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import torch

    torch.set_num_threads(threads or os.cpu_count() or 1)


def _progress(total: int, desc: str) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="input", file=sys.stderr, leave=False)


def _write_json(path: str, data: dict[str, Any]) -> None:
    Path(path).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def _read_text(option: str | None) -> str | None:
    if option is None:
        return None
    from bookend.lab.influence.text import bundled_text

    return Path(option).read_text(encoding="utf-8") if option else bundled_text()


def _summary(report: dict[str, Any]) -> str:
    lines = [f"measured final-token share {report['measured_final_token_share']:.4f}"]
    for key in ("nominal", "fit", "poisson_fit", "hooks"):
        if key in report:
            b = report[key]
            lines.append(
                f"{key:<12} H={b['depth']:<9.4g} alpha={b['attn_share']:<9.4g} "
                f"spearman={b['spearman']:.4f} (binned {b['spearman_log_binned']:.4f}) "
                f"log_rmse={b['log_rmse']:.4f} W1={b['wasserstein']:.4f} "
                f"(1-alpha)^H={b['final_token_share']:.4f}"
            )
    if "rope_off" in report:
        off = report["rope_off"]
        lines.append(
            f"RoPE on vs off spearman={off['spearman_vs_rope_on']:.4f} "
            f"(binned {off['spearman_log_binned_vs_rope_on']:.4f})"
        )
    lines.append(f"measured in {report['seconds']:.1f} s")
    return "\n".join(lines)


@dataclass
class _Measured:
    """One validate run's measurement, before the report: what each mode hands on."""

    measurement: Any
    nominal: Any
    label: str
    settings: dict[str, Any]
    step0: dict[str, Any] | None = None  # the Step-0 arguments, for --rope-compare


def _run_validate(args: argparse.Namespace) -> int:
    """Measure, compare, fit; write the report, plot and profile."""
    if (args.model is None) == (args.weights is None):
        raise ValueError("give either a MODEL (preset or config.json) or --weights PATH")
    if args.rope_compare and (args.weights is not None or args.rope == "off"):
        raise ValueError("--rope-compare needs a Step-0 MODEL measured with --rope on")
    _set_threads(args.threads)
    from bookend.lab.influence import runner

    text = _read_text(args.text)
    settings: dict[str, Any] = {
        "model": args.model,
        "weights": args.weights,
        "n_tokens": args.tokens,
        "probes": args.probes,
        "precision": args.precision,
        "input": "random tokens" if text is None and args.weights is None else "natural text",
        "threads": args.threads or os.cpu_count(),
    }
    run = (
        _measure_trained(args, text, settings)
        if args.weights
        else _measure_step0(args, text, settings)
    )
    report = runner.make_report(run.measurement, run.nominal, settings, max_depth=args.max_depth)
    if run.step0 is not None and args.rope_compare:
        report["rope_off"] = _rope_off(args, run)
    print(_summary(report))
    _write_validate_outputs(args, run, report)
    return 0


def _measure_trained(
    args: argparse.Namespace, text: str | None, settings: dict[str, Any]
) -> _Measured:
    """``--weights``: the Jacobian profile of a trained model over text windows."""
    from bookend.lab.influence import runner
    from bookend.lab.models.weights import load_trained
    from bookend.spec import ModelSpec

    model = load_trained(args.weights)
    n_inputs = args.inputs or 4
    bar = _progress(n_inputs, "validate")
    measurement = runner.measure_trained(
        model,
        n_tokens=args.tokens,
        n_inputs=n_inputs,
        n_probes=args.probes,
        text=text,
        precision=args.precision,
        progress=bar.update,
    )
    bar.close()
    settings.update(inputs=n_inputs, source=model.name)
    nominal = ModelSpec.from_hf_config(model.lm.config.to_dict())
    return _Measured(measurement, nominal, f"{Path(model.name).name} (measured)", settings)


def _measure_step0(
    args: argparse.Namespace, text: str | None, settings: dict[str, Any]
) -> _Measured:
    """``MODEL``: the Step-0 profile of an architecture over random initialisations."""
    from bookend.lab.influence import runner
    from bookend.lab.influence.architectures import nominal_spec

    n_inputs = args.inputs or 1
    settings.update(
        seeds=args.seeds,
        inputs=n_inputs,
        rope=args.rope,
        width=args.width,
        vocab_cap=args.vocab_cap,
    )
    step0 = {
        "n_tokens": args.tokens,
        "seeds": args.seeds,
        "n_probes": args.probes,
        "n_inputs": n_inputs,
        "width": args.width,
        "vocab_cap": args.vocab_cap,
        "text": text,
        "precision": args.precision,
    }
    bar = _progress(args.seeds * n_inputs, "validate")
    measurement, config = runner.measure_step0(
        args.model, rope=args.rope == "on", progress=bar.update, **step0
    )
    bar.close()
    settings.update(
        hidden_size=int(config.hidden_size),
        num_attention_heads=int(config.num_attention_heads),
        model_type=str(config.model_type),
    )
    label = f"{args.model} step-0 (measured)"
    return _Measured(measurement, nominal_spec(config), label, settings, step0)


def _rope_off(args: argparse.Namespace, run: _Measured) -> dict[str, Any]:
    """``--rope-compare``: the same Step-0 measurement with RoPE off, compared and fitted."""
    from scipy.stats import spearmanr

    from bookend.lab.fitting.theory import fit_depth_share, log_binned
    from bookend.lab.influence import runner

    assert run.step0 is not None
    bar = _progress(args.seeds * run.step0["n_inputs"], "rope off")
    off, _ = runner.measure_step0(args.model, rope=False, progress=bar.update, **run.step0)
    bar.close()
    on_profile, off_profile = run.measurement.mean, off.mean
    return {
        "measured": off_profile.tolist(),
        "spearman_vs_rope_on": float(spearmanr(on_profile[:-1], off_profile[:-1]).statistic),
        "spearman_log_binned_vs_rope_on": float(
            spearmanr(log_binned(on_profile[:-1]), log_binned(off_profile[:-1])).statistic
        ),
        "fit": fit_depth_share(off_profile, max_depth=args.max_depth).to_json(),
        "seconds": off.seconds,
    }


def _write_validate_outputs(
    args: argparse.Namespace, run: _Measured, report: dict[str, Any]
) -> None:
    """``--json``, ``--plot``, ``--profile-out`` and ``--fitted-out``."""
    from bookend.lab.influence import runner

    if args.json_path:
        _write_json(args.json_path, report)
    if args.plot:
        from bookend.lab.report.figures import plot_profile

        inputs = run.settings["inputs"]
        if args.weights is not None:
            spread, band = f"{inputs} text windows", "window band"
        else:
            spread, band = f"{args.seeds} seeds x {inputs} input(s)", "seed band"
        title = f"{run.label}: N={args.tokens}, {spread}, {args.probes} probes"
        plot_profile(report, args.plot, title=title, band_label=band)
    if not (args.profile_out or args.fitted_out):
        return
    metadata = {"settings": run.settings, "fit": report["fit"], "nominal": report["nominal"]}
    measured = runner.measured_profile(run.measurement, label=run.label, metadata=metadata)
    if args.profile_out:
        measured.save(args.profile_out)
    if args.fitted_out:
        from bookend.lab.fitting.profile import fit_position_profile

        label = run.label.replace("(measured)", "(fitted)")
        fitted = fit_position_profile(measured, label=label)
        fitted.save(args.fitted_out)
        print(
            f"fitted profile: {fitted!r}, log_rmse={fitted.metadata['fit']['log_rmse']:.4f}, "
            f"standard errors {dict(fitted.standard_errors)}"
        )


def _measure_cells(args: argparse.Namespace) -> tuple[list[Any], dict[str, Any]]:
    """Run the probe in every (K, filler) cell; the outcomes and the run's settings."""
    _set_threads(args.threads)
    from bookend.lab.fitting.slots import calibrate
    from bookend.lab.items.hard import generate_hard_items
    from bookend.lab.items.lookup import DEFAULT_FILLER, generate_items
    from bookend.lab.models.weights import load_trained

    if args.hard and args.filler != [DEFAULT_FILLER]:
        raise ValueError(
            f"--filler does not apply to --hard items (their lengths are their own), "
            f"got --filler {' '.join(f'{lo}-{hi}' for lo, hi in args.filler)}"
        )
    model = load_trained(args.weights)
    outcomes: list[Any] = []
    for docs in args.docs:
        for filler in args.filler:
            if args.hard:
                items = generate_hard_items(
                    args.items, docs, seed=args.seed, split=args.split, families=args.families
                )
                desc = f"calibrate K={docs} hard items"
            else:
                items = generate_items(
                    args.items,
                    docs,
                    seed=args.seed,
                    split=args.split,
                    families=args.families,
                    filler=filler,
                )
                desc = f"calibrate K={docs} filler {filler[0]}-{filler[1]}"
            bar = _progress(len(items) * docs, desc)
            outcomes.extend(
                calibrate(model.lm, model.tokenizer, items, progress=bar.update).outcomes
            )
            bar.close()
    settings = {
        "weights": model.name,
        "docs": args.docs,
        "filler": [list(f) for f in args.filler],
        "items": args.items,
        "families": args.families or "all",
        "items_kind": "hard" if args.hard else "plain",
        "seed": args.seed,
        "split": args.split,
        "threads": args.threads or os.cpu_count(),
    }
    return outcomes, settings


def _load_outcomes(paths: list[str]) -> tuple[list[Any], dict[str, Any]]:
    """Outcomes and settings of earlier ``--json`` reports (settings of the first, sources)."""
    from bookend.lab.fitting.outcomes import outcomes_from_json

    outcomes: list[Any] = []
    settings: dict[str, Any] = {}
    for path in paths:
        try:
            report = json.loads(Path(path).read_text(encoding="utf-8"))
            outcomes.extend(outcomes_from_json(report["outcomes"]))
        except (OSError, json.JSONDecodeError, KeyError) as exc:
            raise ValueError(
                f"not a calibrate report with outcomes: path={path!r} ({exc})"
            ) from None
        settings = settings or dict(report.get("settings", {}))
    return outcomes, {**settings, "outcome_reports": paths}


def _cell_line(cell: tuple[int, tuple[int, int]], outcomes: list[Any]) -> str:
    from bookend.lab.fitting.slots import summarise

    result = summarise(outcomes)
    tokens = sorted(o.n_tokens for o in outcomes)[len(outcomes) // 2]
    acc = " ".join(f"{a:.2f}" for a in result.accuracy)
    docs, (lo, hi) = cell
    return (
        f"K={docs:<2} filler {lo}-{hi} (median {tokens} tokens, {result.n_items} items): "
        f"accuracy by slot {acc}"
    )


def _run_calibrate(args: argparse.Namespace) -> int:
    """Measure (or reload) outcomes; write the slot table, the fitted profile, report and plot."""
    if (args.weights is None) == (args.outcomes is None):
        raise ValueError("give either --weights (measure) or --outcomes REPORT (refit)")
    from bookend.lab.fitting.outcomes import outcomes_to_json
    from bookend.lab.fitting.slots import slot_profile, summarise

    if args.outcomes:
        outcomes, settings = _load_outcomes(args.outcomes)
    else:
        outcomes, settings = _measure_cells(args)
    cells: dict[tuple[int, tuple[int, int]], list[Any]] = {}
    for o in outcomes:
        cells.setdefault(o.cell, []).append(o)
    report: dict[str, Any] = {
        "settings": settings,
        "cells": [
            {"docs": k, "filler": list(f), **summarise(group).to_json()}
            for (k, f), group in cells.items()
        ],
        "outcomes": outcomes_to_json(outcomes),
    }
    if args.json_path:  # the raw outcomes first, so that a failed fit loses no measurement
        _write_json(args.json_path, report)
    for cell, group in cells.items():
        print(_cell_line(cell, group))

    held = {c for c in cells if c[0] in args.holdout_docs or c[1] in args.holdout_filler}
    train = [o for c, group in cells.items() if c not in held for o in group]
    if not train:
        raise ValueError("every cell is held back; nothing is left to fit")
    table_docs = max(c[0] for c in cells if c not in held)
    table_outcomes = [o for o in train if o.n_docs == table_docs]
    name = Path(str(settings.get("weights", "model"))).name
    table = slot_profile(
        summarise(table_outcomes),
        metric=args.metric,
        label=f"{name} calibrated (K={table_docs})",
        metadata={"settings": settings, "cells": report["cells"]},
    )
    out = Path(args.out)
    table.save(args.slots_out or out.with_name(f"{out.stem}-slots.json"))

    from bookend.lab.fitting.profile import fit_outcomes

    fit = fit_outcomes(train, target=args.target, label=f"{name} fitted", settings=settings)
    fit.profile.save(out)
    print(fit.summary())
    report["fit"] = fit.to_json()
    if held:
        from bookend.config import resolve_profile
        from bookend.lab.fitting.holdout import heldback_report, heldback_summary

        heldback = [o for c in sorted(held) for o in cells[c]]
        others = {name: resolve_profile(name) for name in args.compare}
        report["holdout"] = heldback_report(fit, table, train, heldback, others)
        print(heldback_summary(report["holdout"]))
        if args.holdout_plot:
            from bookend.lab.report.figures import plot_heldback

            trained = ", ".join(report["holdout"]["train_cells"])
            plot_heldback(
                report["holdout"],
                args.holdout_plot,
                title=f"{name}: held-back cells against predictions fitted on {trained}",
                skip=("fitted (slope 1)",),
            )
    elif args.holdout_plot:
        raise ValueError("--holdout-plot needs held-back cells (--holdout-docs, --holdout-filler)")
    if args.json_path:
        _write_json(args.json_path, report)
    if args.plot:
        from bookend.lab.report.figures import plot_slots

        plot_slots(
            summarise(table_outcomes).to_json(),
            args.plot,
            title=f"{table.label}, {len(table_outcomes) // table_docs} items per slot",
        )
    return 0
