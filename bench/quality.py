"""Placement quality without a model: the curve panel.

Expected accuracy of every strategy for K = 3..20 and several retrieval rank laws, on the published
position curves of Liu et al. 2023 (``bench/placement_quality/``); regret against the oracle. The
real runs on a model moved into the product: ``bookend eval`` (``bookend_rag_lab``), recorded
in ``bench/RESULTS.md``, "Placement quality (bookend eval)". A ``bookend eval`` report adds its
measured position curve and its empirical gold-rank laws to the panel.

Writes ``bench/quality.json`` and ``bench/figures/quality_panel_regret.png``, prints the tables.
From the repository root::

    pip install -r bench/requirements.txt
    python bench/quality.py                                   # seconds
    python bench/quality.py --eval-report bench/eval/smollm2-k10/report.json
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from placement_quality import figures, report
from placement_quality.curves import PositionCurve, liu2023_curves
from placement_quality.panel import PANEL_STRATEGIES, PanelModel, run_panel

import bookend_rag
from bookend_rag_lab.runfiles import read_json

BENCH = Path(__file__).resolve().parent


def liu_panel_models() -> list[PanelModel]:
    """The published curves; bookend's default theory spec stands in for these API models."""
    return [PanelModel(curve, bookend_rag.DEFAULT_MODEL) for curve in liu2023_curves()]


def eval_panel_model(eval_report: dict[str, Any]) -> tuple[list[PanelModel], dict[str, Any]]:
    """A ``bookend eval`` report's accuracy by gold slot (one panel model per K) and its
    gold-rank counts per retriever (empirical rank laws)."""
    name = Path(eval_report["model"]).name
    # The report names its theory spec as "NAME (H=depth, alpha=share)".
    depth = re.search(r"H=(\d+)", eval_report["settings"]["theory"])
    theory: Any = (
        bookend_rag.ModelSpec(depth=int(depth.group(1))) if depth else bookend_rag.DEFAULT_MODEL
    )
    models = []
    for k, per_metric in eval_report["position_curve"].items():
        slots = per_metric["accuracy"]
        if all(slot is not None for slot in slots):
            curve = PositionCurve.from_slots(
                f"{name} (bookend eval, K={k})",
                [slot["mean"] for slot in slots],
                "bookend eval, random-shuffle draws",
            )
            models.append(PanelModel(curve, theory))
    # Empirical rank laws need counts over at least the panel's largest K.
    counts = {r: g["counts"] for r, g in eval_report["gold_rank"].items() if len(g["counts"]) >= 20}
    return models, counts


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eval-report", type=Path, help="a bookend eval report.json to add")
    parser.add_argument("--out", type=Path, default=BENCH / "quality.json")
    parser.add_argument("--figures", type=Path, default=BENCH / "figures")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    models = liu_panel_models()
    counts: dict[str, Any] | None = None
    if args.eval_report:
        extra, counts = eval_panel_model(read_json(args.eval_report))
        models += extra
    results = {
        "panel": run_panel(models, counts),
        "eval_report": None if args.eval_report is None else str(args.eval_report),
        "seconds": time.perf_counter() - started,
    }
    args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    args.figures.mkdir(parents=True, exist_ok=True)
    path = figures.panel_regret(
        results["panel"], PANEL_STRATEGIES, args.figures / "quality_panel_regret.png"
    )
    print(f"wrote {args.out} and {path}")
    print(report.render(results["panel"], PANEL_STRATEGIES))


if __name__ == "__main__":
    main()
