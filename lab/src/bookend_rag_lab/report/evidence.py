"""What the reports say about each order, read back from committed ``bookend eval`` reports (no
model runs): the tables of ``bench/`` and the figures and numbers of the documentation site.

- :data:`CANDIDATES`, :func:`default_strategy`, :func:`per_item`: each candidate order's per-item
  values in a report, named by what the order does whatever the report called it;
- :func:`against_current`: each order's mean and its paired difference with the retriever's own
  order (what a user who adds no reorderer sends), on the same items.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bookend_rag.profiles.measured import measured_file
from bookend_rag_lab.stats import paired_difference

__all__ = [
    "CANDIDATES",
    "CURRENT",
    "SHOWN",
    "TUNE_TO_CANDIDATE",
    "against_current",
    "default_strategy",
    "per_item",
    "strongest",
]

#: Candidate -> report strategy names, the first present in a report is used (what each order
#: does: ``bench/default_matrix.py``); ``default`` is read off by :func:`default_strategy` where a
#: run has no ``bookend-default`` column.
CANDIDATES: dict[str, tuple[str, ...]] = {
    "relevance": ("bookend-theory", "retrieval"),
    "reversed": ("reversed",),
    "view": ("bookend-view",),
    "langchain": ("langchain",),
    "llamaindex": ("llamaindex",),
    "haystack": ("haystack",),
    "random": ("random",),
    "fitted": ("bookend-fitted",),
    "slots": ("bookend-hard-slots",),
    "default": ("bookend-default",),  # else read off by default_strategy
}

#: ``bookend tune``'s candidate names that :data:`CANDIDATES` names otherwise.
TUNE_TO_CANDIDATE = {"alternate": "haystack"}

#: The report strategy of the user's current order: the retriever's, unchanged.
CURRENT = "retrieval"

#: The orders set against the current one, in the order the site shows them (``tuned`` is the
#: column holding ``bookend tune``'s choice, where a cell has one).
SHOWN = ("default", "tuned", "langchain", "llamaindex", "haystack", "random")


def default_strategy(report: Mapping[str, Any]) -> str:
    """The report strategy that is bookend's default for the report's model: the shipped
    measured profile (SmolLM2's is its hard-item slot table) when the weights' file names a
    model bookend has measured, else the theory."""
    measured = measured_file(Path(str(report["model"])).name) is not None
    return "bookend-hard-slots" if measured else "bookend-theory"


def per_item(report: Mapping[str, Any], metric: str) -> dict[str, np.ndarray]:
    """Each candidate's per-item values of ``metric`` (candidates the report lacks are left out)."""
    items = report["items"]
    out: dict[str, np.ndarray] = {}
    for candidate, names in CANDIDATES.items():
        name = next((n for n in names if all(n in it["results"] for it in items)), None)
        if name is not None:
            out[candidate] = np.asarray([it["results"][name][metric] for it in items])
    if "default" not in out:
        name = default_strategy(report)
        out["default"] = np.asarray([it["results"][name][metric] for it in items])
    return out


def _column(report: Mapping[str, Any], name: str, metric: str) -> np.ndarray:
    """One report strategy's per-item values; a one-line error names a column the report lacks."""
    items = report["items"]
    missing = [it["id"] for it in items if name not in it["results"]]
    if missing or not items:
        raise ValueError(
            f"{name!r} is no column of the report on {report.get('model')!r} "
            f"(missing on {len(missing)} of {len(items)} items)"
        )
    return np.asarray([it["results"][name][metric] for it in items])


def against_current(
    report: Mapping[str, Any], *, tuned: str | None = None, metric: str | None = None
) -> dict[str, dict[str, Any]]:
    """Each order of :data:`SHOWN` against the retriever's own order, on the report's items.

    ``current`` holds the retriever's order's ``mean``; every other entry its ``mean`` and the
    paired difference ``mean(order) - mean(current)`` over the same items with its 95% bootstrap
    interval, MDE and verdict (:func:`~bookend_rag_lab.stats.paired_difference`). ``tuned`` names
    the column holding ``bookend tune``'s choice: a candidate of :data:`CANDIDATES` (tune's own
    names accepted) or a report strategy (``bookend eval --config NAME=tuned.json``); without it
    the cell has no ``tuned`` entry. ``metric`` defaults to the report's primary metric.

    Raises:
        ValueError: the report lacks the retriever's order or the ``tuned`` column.
    """
    metric = metric or str(report["primary_metric"])
    values = per_item(report, metric)
    if tuned is not None:
        name = TUNE_TO_CANDIDATE.get(tuned, tuned)
        values["tuned"] = values[name] if name in values else _column(report, name, metric)
    current = _column(report, CURRENT, metric)
    out: dict[str, dict[str, Any]] = {"current": {"mean": float(current.mean()), "n": current.size}}
    for order in SHOWN:
        if order in values:
            vals = values[order]
            out[order] = {"mean": float(vals.mean()), **paired_difference(vals, current).to_json()}
    return out


def strongest(cell: Mapping[str, Mapping[str, Any]], orders: Sequence[str]) -> str:
    """The order among ``orders`` (present in ``cell``) with the highest mean."""
    present = [o for o in orders if o in cell]
    if not present:
        raise ValueError(f"none of {list(orders)} is in the cell (it holds {sorted(cell)})")
    return max(present, key=lambda o: float(cell[o]["mean"]))
