"""Placement quality: does the model answer better with bookend than with the frameworks' orders?

Two parts (details in ``bench/placement_quality/``):

* **Curve panel** (no model): expected accuracy of every strategy for K = 3..20, geometric and
  empirical retrieval rank laws, on the published position curves of Liu et al. 2023 and the
  SmolLM2 curves measured here; regret against the oracle.
* **Real runs** on SmolLM2-135M-Instruct (CPU, offline): accuracy by gold slot at K = 10 and 9,
  bookend profiles calibrated on disjoint probe items (and on other templates), the trained-weights
  Jacobian profile, then every strategy on BM25 and MiniLM rankings of evaluation items.

Writes ``bench/quality.json`` and ``bench/figures/quality_*.png``, prints the tables. From the
repository root::

    pip install -r bench/requirements.txt
    python bench/quality.py            # default, about 35 minutes on 2 shared cores
    python bench/quality.py --quick    # under 3 minutes
    python bench/quality.py --panel-only
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from placement_quality import figures, report
from placement_quality.curves import PositionCurve, liu2023_curves
from placement_quality.panel import PANEL_STRATEGIES, PanelModel, run_panel

import bookend

BENCH = Path(__file__).resolve().parent


def settings_for(quick: bool, seed: int) -> Any:
    """The sizes of the real runs: the default or ``--quick``."""
    from placement_quality.real import RealSettings

    if quick:
        # An even and an odd K as in the default, with shorter prompts.
        return RealSettings(
            k_values=(6, 5),
            calibration_items=2,
            transfer_items=1,
            eval_items=4,
            rank_law_items=20,
            jacobian_tokens=256,
            jacobian_inputs=1,
            jacobian_probes=2,
            seed=seed,
        )
    return RealSettings(
        k_values=(10, 9),
        calibration_items=12,
        transfer_items=4,
        eval_items=30,
        rank_law_items=100,
        jacobian_tokens=512,
        jacobian_inputs=2,
        jacobian_probes=4,
        seed=seed,
    )


def liu_panel_models() -> list[PanelModel]:
    """The published curves; bookend's default theory spec stands in for these API models."""
    return [PanelModel(curve, bookend.DEFAULT_MODEL) for curve in liu2023_curves()]


def curve_json(result: Any) -> dict[str, Any]:
    """Accuracy by gold slot with its 95% Wilson interval."""
    return {
        "accuracy": result.accuracy.tolist(),
        "ci_low": result.accuracy_ci[:, 0].tolist(),
        "ci_high": result.accuracy_ci[:, 1].tolist(),
        "n_items": result.n_items,
        "candidate_prob": result.candidate_prob.tolist(),
    }


def write(path: Path, results: dict[str, Any]) -> None:
    path.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")


def real_runs(args: argparse.Namespace, results: dict[str, Any], out: Path) -> list[PanelModel]:
    """The SmolLM2 runs; fills ``results`` (written after each stage) and returns its curves."""
    from placement_quality import lm, real
    from placement_quality.retrieval import retrievers

    settings = settings_for(args.quick, args.seed)
    results["settings"]["real"] = {
        **vars(settings),
        "eval_families": real.EVAL_FAMILIES,
        "transfer_families": real.TRANSFER_FAMILIES,
        "theory_preset": real.THEORY_PRESET,
        "profile_metric": lm.PROFILE_METRIC,
        "threads": args.threads,
    }
    timing: dict[str, float] = results["timing"]
    start = time.perf_counter()
    model = lm.load_smollm2(args.threads)
    scorers = retrievers()
    timing["load_seconds"] = time.perf_counter() - start

    start = time.perf_counter()
    results["rank_law_counts"] = real.rank_law_counts(scorers, settings)
    timing["rank_law_seconds"] = time.perf_counter() - start

    start = time.perf_counter()
    curves = real.measure_curves(model, settings)
    timing["curves_seconds"] = time.perf_counter() - start
    results["position_curve"] = {
        str(k): {
            **curve_json(curves.calibrated[k]),
            "transfer": curve_json(curves.transfer[k]),
        }
        for k in settings.k_values
    }
    write(out, results)

    start = time.perf_counter()
    jacobian = lm.jacobian_profile(
        model, settings.jacobian_tokens, settings.jacobian_inputs, settings.jacobian_probes
    )
    timing["jacobian_seconds"] = time.perf_counter() - start

    start = time.perf_counter()
    scorer = lm.PromptScorer(model)
    rows, counts = real.evaluate(scorer, scorers, curves, {"bookend-jacobian": jacobian}, settings)
    timing["evaluate_seconds"] = time.perf_counter() - start
    timing["evaluate_model_calls"] = scorer.calls
    timing["seconds_per_prompt"] = scorer.seconds / max(scorer.calls, 1)
    results["rank_counts"] = counts
    results["rows"] = rows
    write(out, results)
    return [
        PanelModel(
            PositionCurve.from_slots(
                f"smollm2-135m (measured K={k})",
                curves.calibrated[k].accuracy.tolist(),
                "bench/quality.py, in-domain calibration",
            ),
            real.THEORY_PRESET,
        )
        for k in settings.k_values
    ]


def summarise(results: dict[str, Any]) -> None:
    """Accuracies, paired comparisons and targets from the rows (in place)."""
    rows = results["rows"]
    results["strategies"] = report.accuracies(rows)
    results["strategies_by_k"] = report.accuracies_by(rows, "k")
    results["strategies_by_k_retriever"] = {
        k: report.accuracies_by(report.select(rows, k=int(k)), "retriever")
        for k in results["strategies_by_k"]
    }
    ours = [name for name in report.strategy_names(rows) if name.startswith("bookend")]
    results["paired"] = report.comparisons(
        rows, ours, [*report.FRAMEWORK_NAMES, "retrieval", "reversed"]
    )
    results["targets"] = report.targets(
        results["strategies_by_k"],
        results["strategies_by_k_retriever"],
        results["paired"],
        results["panel"],
    )


def draw(results: dict[str, Any], directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    drawn = [
        figures.panel_regret(
            results["panel"],
            PANEL_STRATEGIES,
            directory / "quality_panel_regret.png",
        )
    ]
    if "position_curve" in results:
        drawn.append(
            figures.position_curves(
                results["position_curve"], liu2023_curves(), directory / "quality_curves.png"
            )
        )
    if "strategies" in results:
        drawn.append(
            figures.strategy_accuracy(results["strategies"], directory / "quality_strategies.png")
        )
    return drawn


def finish(results: dict[str, Any], directory: Path) -> None:
    """Draw the figures and print every table."""
    for path in draw(results, directory):
        print(f"wrote {path}")
    print(report.render(results, PANEL_STRATEGIES))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny real runs (a few minutes)")
    parser.add_argument("--panel-only", action="store_true", help="the model-free panel only")
    parser.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    parser.add_argument("--seed", type=int, default=0, help="probe generator seed")
    parser.add_argument("--out", type=Path, default=BENCH / "quality.json")
    parser.add_argument("--figures", type=Path, default=BENCH / "figures")
    parser.add_argument(
        "--report", action="store_true", help="redraw and print the tables of --out, run nothing"
    )
    args = parser.parse_args(argv)
    if args.report:
        results = json.loads(args.out.read_text(encoding="utf-8"))
        finish(results, args.figures)
        return

    started = time.perf_counter()
    results: dict[str, Any] = {
        "settings": {"quick": args.quick, "panel_only": args.panel_only, "seed": args.seed},
        "machine": {"python": platform.python_version(), "processor": platform.machine()},
        "timing": {},
    }
    models = liu_panel_models()
    results["panel"] = run_panel(models)
    write(args.out, results)
    if not args.panel_only:
        models += real_runs(args, results, args.out)
        results["panel"] = run_panel(models, results["rank_law_counts"])
        summarise(results)
    results["timing"]["total_seconds"] = time.perf_counter() - started
    write(args.out, results)
    finish(results, args.figures)
    print(f"total {results['timing']['total_seconds']:.0f} s")


if __name__ == "__main__":
    main()
