"""The ``bookend calibrate`` report: JSON fields and the terminal line of each cell.

Fields of the JSON report:

``settings``
    What was measured (the scorer's ``weights`` id, ``docs``, ``filler``, ``items`` per cell,
    ``families``, ``items_kind``, ``seed``, ``split`` and what the caller adds, such as torch
    ``threads``), or, for a refit, the first source report's settings and ``outcome_reports``.
``cells``
    Per calibration cell (one K and one filler range): ``docs``, ``filler`` and the slot table's
    figures (:meth:`~bookend_rag_lab.fitting.slots.SlotResult.to_json`).
``outcomes``
    Every (item, slot) outcome (:func:`~bookend_rag_lab.fitting.outcomes.outcomes_to_json`); a refit
    reads them back.
``fit``
    The fitted profile and its likelihood
    (:meth:`~bookend_rag_lab.fitting.profile.OutcomeFit.to_json`).
``holdout``
    With held-back cells: :func:`~bookend_rag_lab.fitting.holdout.heldback_report`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bookend_rag_lab.fitting.outcomes import SlotOutcome, outcomes_to_json
from bookend_rag_lab.fitting.slots import summarise

__all__ = ["Cell", "calibration_report", "cell_line"]

#: A calibration cell: ``(K, (lo, hi) filler sentences per document)``.
Cell = tuple[int, tuple[int, int]]


def calibration_report(
    settings: Mapping[str, Any],
    cells: Mapping[Cell, Sequence[SlotOutcome]],
    outcomes: Sequence[SlotOutcome],
) -> dict[str, Any]:
    """The report's ``settings``, ``cells`` and ``outcomes`` (the fit is added later)."""
    return {
        "settings": dict(settings),
        "cells": [
            {"docs": k, "filler": list(f), **summarise(group).to_json()}
            for (k, f), group in cells.items()
        ],
        "outcomes": outcomes_to_json(outcomes),
    }


def cell_line(cell: Cell, outcomes: Sequence[SlotOutcome]) -> str:
    """``K=10 filler 0-1 (median 242 tokens, 10 items): accuracy by slot 0.90 ...``."""
    result = summarise(outcomes)
    tokens = sorted(o.n_tokens for o in outcomes)[len(outcomes) // 2]
    acc = " ".join(f"{a:.2f}" for a in result.accuracy)
    docs, (lo, hi) = cell
    return (
        f"K={docs:<2} filler {lo}-{hi} (median {tokens} tokens, {result.n_items} items): "
        f"accuracy by slot {acc}"
    )
