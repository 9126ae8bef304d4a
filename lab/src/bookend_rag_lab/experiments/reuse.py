"""Scores a previous report already holds: ``bookend eval --reuse REPORT``.

A report keeps, per item and strategy, the order and its metrics. A run of the same model on the
same items can take them for every ``(item, order)`` the report scored and call the model only for
the new orders: a changed or added strategy is then measured on the report's items for the calls
of its own orders. Before any score is taken, :data:`CHECKED` of them are scored again and must
agree (:data:`TOLERANCE`), so a report of another model, precision or item set is refused, not
mixed in.
"""

from __future__ import annotations

import json
import lzma
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bookend_rag_lab.runfiles import read_json

__all__ = [
    "CHECKED",
    "TOLERANCE",
    "KnownScores",
    "load_known_scores",
    "not_a_report",
    "same_model",
]

#: Reused scores that are scored again before any is taken.
CHECKED = 3
#: ``(rtol, atol)`` within which a rescored metric must agree with the report.
TOLERANCE = (1e-3, 1e-4)


@dataclass
class KnownScores:
    """The metrics of every ``(item id, order)`` a report scored.

    Attributes:
        source: where they came from (for messages and the report's settings).
        scores: ``(item id, order) -> {metric: value}``.
        checked: how many of them a run has rescored and found in agreement.
    """

    source: str
    scores: Mapping[tuple[str, tuple[int, ...]], Mapping[str, float]]
    checked: int = field(default=0)

    def get(self, item_id: str, order: Sequence[int], metrics: Sequence[str]) -> dict[str, float]:
        """The metrics of ``item_id`` in ``order``, or ``{}`` when the report lacks any of them."""
        found = self.scores.get((item_id, tuple(order)), {})
        return {m: float(found[m]) for m in metrics} if all(m in found for m in metrics) else {}

    def check(self, item_id: str, order: Sequence[int], rescored: Mapping[str, float]) -> None:
        """Raise ``ValueError`` when a rescored trial disagrees with the report."""
        known = self.scores[(item_id, tuple(order))]
        rtol, atol = TOLERANCE
        for metric, value in rescored.items():
            if not np.isclose(value, known[metric], rtol=rtol, atol=atol):
                raise ValueError(
                    f"--reuse {self.source}: item {item_id!r} in order {list(order)} scores "
                    f"{metric}={value:.6g} now and {known[metric]:.6g} in the report; it is not "
                    "a report of this model, precision and items"
                )
        self.checked += 1


def same_model(reported: str, model_id: str) -> bool:
    """Whether a report's model names this scorer's: equal, or the same weights file name and
    dtype (a shipped report drops the machine's directories; older ones, the default
    ``float32``)."""

    def key(name: str) -> tuple[str, str]:
        weights, _, dtype = name.partition("|")
        return Path(weights).name, dtype or "float32"

    return reported == model_id or key(reported) == key(model_id)


def not_a_report(path: str | Path, why: str) -> ValueError:
    """The one-line error for a ``--reuse`` path that is not a readable report."""
    return ValueError(f"--reuse must be a bookend eval report.json, got {str(path)!r} ({why})")


def load_known_scores(path: str | Path, model_id: str) -> KnownScores:
    """The scores of the ``bookend eval`` report at ``path``, checked to be of ``model_id``.

    Raises:
        ValueError: an unreadable report, or one of another model.
    """
    where = str(path)
    try:
        report: Any = read_json(path)
        items = report["items"]
        reported = str(report["model"])
    except (OSError, lzma.LZMAError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise not_a_report(path, str(exc)) from None
    if not same_model(reported, model_id):
        raise ValueError(f"--reuse {where} is a report of {reported!r}, not of {model_id!r}")
    scores: dict[tuple[str, tuple[int, ...]], Mapping[str, float]] = {}
    for item in items:
        for result in item["results"].values():
            if "order" in result:
                scores[(str(item["id"]), tuple(result["order"]))] = result
    return KnownScores(where, scores)
