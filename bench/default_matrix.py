"""The default chosen by its worst case: every candidate order on every measured cell.

A cell is one ``bookend eval`` report (a suite, a model, a K). In each cell every candidate order is
compared with the cell's best candidate on the same items (paired bootstrap on the primary metric,
the gold answer's probability among the candidates); a candidate's loss in a cell is how far its
mean falls behind the best. The default should minimise the largest loss over the cells (minimax
regret), and the record says where each candidate is significantly behind.

Candidates are named by what they do, whatever a report called them:

- ``relevance``: most relevant first (``bookend-theory``, retrieval order): the default for a
  model bookend has not measured;
- ``reversed``: most relevant last;
- ``view``: the theory's bookend view (``suffix_tokens=0``, report strategy ``bookend-view``);
- ``langchain``, ``llamaindex``, ``haystack``: the frameworks' patterns;
- ``random``: the mean of the seeded shuffles;
- ``fitted``: the model's fitted, token-aware profile from ``bookend calibrate`` on plain
  lookups (``bookend-fitted``; SmolLM2 only);
- ``slots``: the model's slot table measured on the hard items' calibration split
  (``bookend-hard-slots``);
- ``default``: what bookend's default does for the cell's model: the shipped measured profile of
  a model listed by ``bookend_rag.measured_models()`` (SmolLM2: its hard-item slot table, report
  strategy ``bookend-hard-slots``), the theory's order for any other (``relevance``); report
  strategy ``bookend-default`` where a run has it (``bookend eval`` adds it for weights that
  name a measured model).

Usage::

    .venv/bin/python bench/default_matrix.py CELL=REPORT.json [CELL=REPORT.json#FIRST-LAST ...] \\
        [--json bench/default_matrix.json]

``#FIRST-LAST`` keeps the report's items FIRST to LAST (1-based, inclusive): the items a run
added after a choice was made, to confirm it on items that did not inform it.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bookend_rag_lab.report.evidence import CANDIDATES, per_item
from bookend_rag_lab.runfiles import read_json
from bookend_rag_lab.stats import paired_difference


def cell_losses(values: Mapping[str, np.ndarray]) -> dict[str, dict[str, Any]]:
    """Per candidate: its mean, and its paired difference with the cell's best candidate."""
    best = max(values, key=lambda c: float(values[c].mean()))
    out: dict[str, dict[str, Any]] = {}
    for candidate, vals in values.items():
        row: dict[str, Any] = {"mean": float(vals.mean()), "best": best}
        if candidate != best:
            row["vs_best"] = paired_difference(vals, values[best]).to_json()
        out[candidate] = row
    return out


def minimax(cells: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """Candidates by their largest loss over the cells that measured them (smallest first)."""
    rows = []
    for candidate in CANDIDATES:
        losses = {
            cell: per[candidate].get("vs_best", {"diff": 0.0, "verdict": "best"})
            for cell, per in cells.items()
            if candidate in per
        }
        if not losses:
            continue
        worst = min(losses, key=lambda c: losses[c]["diff"])
        behind = sorted(c for c, d in losses.items() if d["verdict"] == "worse")
        rows.append(
            {
                "candidate": candidate,
                "cells": len(losses),
                "worst_cell": worst,
                "worst_loss": -float(losses[worst]["diff"]),
                "significantly_behind_in": behind,
            }
        )
    return sorted(rows, key=lambda r: (r["worst_loss"], -r["cells"]))


def points(d: Mapping[str, Any]) -> str:
    """A paired difference of probabilities in points: ``diff [ci_low, ci_high]``."""
    return f"{100 * d['diff']:+.1f} [{100 * d['ci_low']:+.1f}, {100 * d['ci_high']:+.1f}]"


def default_power(per: Mapping[str, Mapping[str, Any]]) -> tuple[int, float]:
    """The cell's n and the MDE of the default's paired difference with the best candidate (of
    the runner-up's when the default is the best order): the yardstick of the issue's target
    (a). A candidate that is the best order under another name differs by 0 on every item, so
    its MDE is 0 and it is skipped."""

    def differs(candidate: str) -> bool:
        return "vs_best" in per[candidate] and per[candidate]["vs_best"]["mde"] > 0

    rival = "default"
    if not differs(rival):
        rival = max(filter(differs, per), key=lambda c: per[c]["vs_best"]["diff"])
    d = per[rival]["vs_best"]
    return int(d["n"]), float(d["mde"])


def markdown(cells: Mapping[str, Mapping[str, Mapping[str, Any]]], ranked: Sequence[Any]) -> str:
    """The matrix (per cell its n and the default's MDE; mean per candidate, loss against the
    cell's best, with its interval) and the ranking."""
    names = [c for c in CANDIDATES if any(c in per for per in cells.values())]
    lines = [
        "| cell | n | MDE | " + " | ".join(names) + " |",
        "|---|---|---|" + "---|" * len(names),
    ]
    for cell, per in cells.items():
        n, mde = default_power(per)
        row = [str(n), f"{100 * mde:.1f}"]
        for name in names:
            if name not in per:
                row.append("—")
            elif "vs_best" not in per[name]:
                row.append(f"**{100 * per[name]['mean']:.1f}** (best)")
            else:
                d = per[name]["vs_best"]
                mark = " ✗" if d["verdict"] == "worse" else ""
                row.append(f"{100 * per[name]['mean']:.1f} ({points(d)}){mark}")
        lines.append(f"| {cell} | " + " | ".join(row) + " |")
    lines += [
        "",
        "| candidate | cells | worst loss (points) | worst cell | significantly behind in |",
    ]
    lines.append("|---|---|---|---|---|")
    for r in ranked:
        behind = ", ".join(r["significantly_behind_in"]) or "none"
        lines.append(
            f"| {r['candidate']} | {r['cells']} | {100 * r['worst_loss']:.1f} | "
            f"{r['worst_cell']} | {behind} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cells", nargs="+", metavar="CELL=REPORT")
    parser.add_argument("--metric", default="candidate_prob")
    parser.add_argument("--json", help="write the matrix and the ranking here")
    args = parser.parse_args(argv)
    cells: dict[str, dict[str, dict[str, Any]]] = {}
    for spec in args.cells:
        cell, sep, path = spec.partition("=")
        if not sep:
            parser.error(f"cells must be CELL=REPORT, got {spec!r}")
        path, _, span = path.partition("#")
        report = read_json(path)
        values = per_item(report, args.metric)
        if span:
            first, _, last = span.partition("-")
            values = {c: v[int(first) - 1 : int(last)] for c, v in values.items()}
        cells[cell] = cell_losses(values)
    ranked = minimax(cells)
    print(markdown(cells, ranked))
    if args.json:
        payload = {"metric": args.metric, "cells": cells, "minimax": ranked}
        Path(args.json).write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
