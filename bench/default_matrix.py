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
- ``measured``: the model's own measured profile (``bookend-fitted`` where the report has it,
  else ``bookend-hard-slots``);
- ``default``: what bookend's default does for the model now: its measured profile
  (``bookend.profiles.measured``), except on a set that holds look-alike chunks
  (``bookend.lookalikes``, the default threshold), which it places in relevance order: report
  strategy ``bookend-default`` (``bookend eval --profile default=<model id>``); for a report
  made before it existed, read off each item's ``measured`` or ``relevance`` result (no model
  call; the items are rebuilt from their suite to find the look-alikes).

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

from bookend.lab.items.hard import hard_items
from bookend.lab.items.item import Item
from bookend.lab.items.nq import nq_items
from bookend.lab.items.records import records_items
from bookend.lab.stats import paired_difference
from bookend.lookalikes import lookalike_groups

#: Candidate -> report strategy names, the first present in a report is used.
CANDIDATES: dict[str, tuple[str, ...]] = {
    "relevance": ("bookend-theory", "retrieval"),
    "reversed": ("reversed",),
    "view": ("bookend-view",),
    "langchain": ("langchain",),
    "llamaindex": ("llamaindex",),
    "haystack": ("haystack",),
    "random": ("random",),
    "measured": ("bookend-fitted", "bookend-hard-slots"),
    "default": ("bookend-default",),  # derived in per_item where a report lacks it
}


def suite_items(report: Mapping[str, Any]) -> dict[str, Item]:
    """The report's items rebuilt from their suite (ids ``nq:``, ``records:``, or hard items)."""
    rows = report["items"]
    n, k, first = len(rows), int(rows[0]["k"]), str(rows[0]["id"])
    if first.startswith("nq:"):
        items = nq_items(n, k, split="evaluation")
    elif first.startswith("records:"):
        items = records_items(n, k, split="evaluation")
    else:
        s = report["settings"]
        items = hard_items(n, k, seed=s["seed"], split=s["split"], families=s["families"])
    return {item.item_id: item for item in items}


def has_lookalikes(report: Mapping[str, Any]) -> np.ndarray:
    """Per item: whether its documents hold look-alikes (two or more in one group)."""
    items = suite_items(report)
    flags = []
    for row in report["items"]:
        groups = lookalike_groups(list(items[row["id"]].documents))
        flags.append(len(set(groups)) < len(groups))
    return np.asarray(flags)


def per_item(report: Mapping[str, Any], metric: str) -> dict[str, np.ndarray]:
    """Each candidate's per-item values of ``metric`` (candidates the report lacks are left out)."""
    items = report["items"]
    out: dict[str, np.ndarray] = {}
    for candidate, names in CANDIDATES.items():
        name = next((n for n in names if all(n in it["results"] for it in items)), None)
        if name is not None:
            out[candidate] = np.asarray([it["results"][name][metric] for it in items])
    if "default" not in out and "measured" in out:
        out["default"] = np.where(has_lookalikes(report), out["relevance"], out["measured"])
    return out


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


def markdown(cells: Mapping[str, Mapping[str, Mapping[str, Any]]], ranked: Sequence[Any]) -> str:
    """The matrix (mean per cell; loss against the cell's best, with its interval) and the
    ranking."""
    names = [c for c in CANDIDATES if any(c in per for per in cells.values())]
    lines = [
        "| cell | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for cell, per in cells.items():
        row = []
        for name in names:
            if name not in per:
                row.append("—")
            elif "vs_best" not in per[name]:
                row.append(f"**{100 * per[name]['mean']:.1f}** (best)")
            else:
                d = per[name]["vs_best"]
                mark = " ✗" if d["verdict"] == "worse" else ""
                row.append(
                    f"{100 * per[name]['mean']:.1f} ({100 * d['diff']:+.1f} "
                    f"[{100 * d['ci_low']:+.1f}, {100 * d['ci_high']:+.1f}]){mark}"
                )
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
        report = json.loads(Path(path).read_text(encoding="utf-8"))
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
