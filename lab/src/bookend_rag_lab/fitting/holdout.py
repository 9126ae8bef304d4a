"""Held-back check: does a profile predict calibration cells (a K, a prompt length) it never saw?

Each candidate profile ``P`` predicts a held-back outcome through the same link as the fit
(:mod:`bookend_rag_lab.fitting.profile`)::

    P(correct_i) = sigmoid(a_c + b_P ln w_P(i))

- ``w_P(i)``: the gold document's relative influence under ``P``: the fitted profile's mean
  density over the gold span in tokens; for the slot table, its weights stretched to the held-back
  K (``slot_weights(K)``, how placement uses a table measured at another K), with every slot's
  accuracy floored at ``0.5 / n_items`` (the add-half rule, so that a slot with no correct item
  does not predict probability 0); the uniform profile has ``w = 1``.
- ``b_P``: fitted on the *training* outcomes with one intercept per training cell (each profile
  gets its best slope; the fitted profile is also scored with the slope 1 it was fitted with).
- ``a_c``: one intercept per held-back cell, fitted on that cell for every profile alike: the
  cell's overall accuracy, which no position profile claims to predict.

Scores on the held-back outcomes: mean log-likelihood per outcome (higher is better) and the
Brier score (mean squared error of the probability, lower is better), and the in-sample
log-likelihood on the training outcomes for comparison; the fitted profile's paired differences
against every other candidate get a 95% bootstrap interval over held-back items (2000 resamples,
seed 0). With few items that interval is rough: it treats items, not slots, as independent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.optimize import minimize

from bookend_rag import InfluenceProfile, TabulatedProfile
from bookend_rag.arrays import FloatArray
from bookend_rag_lab.fitting.outcomes import SlotOutcome
from bookend_rag_lab.fitting.profile import (
    OutcomeFit,
    bernoulli_log_likelihood,
    cell_label,
    log_influence,
    outcome_values,
)
from bookend_rag_lab.stats import cluster_interval

__all__ = ["heldback_report", "heldback_summary"]


def _fit_link(
    x: FloatArray, y: FloatArray, cells: npt.NDArray[np.int64], slope: float | None
) -> tuple[float, FloatArray]:
    """Maximum-likelihood ``(b, a_c)`` of ``sigmoid(a_c + b x)``; ``b`` fixed when given."""
    n_cells = int(cells.max()) + 1

    def nll(theta: FloatArray) -> float:
        b = theta[0] if slope is None else slope
        eta = theta[cells + (1 if slope is None else 0)] + b * x
        return -float(bernoulli_log_likelihood(eta, y).sum())

    x0 = np.zeros(n_cells + (1 if slope is None else 0))
    theta = minimize(nll, x0, method="L-BFGS-B", bounds=[(-30.0, 30.0)] * x0.size).x
    if slope is None:
        return float(theta[0]), np.asarray(theta[1:], dtype=np.float64)
    return slope, np.asarray(theta, dtype=np.float64)


def _cell_index(outcomes: Sequence[SlotOutcome]) -> npt.NDArray[np.int64]:
    cells = sorted({o.cell for o in outcomes})
    return np.array([cells.index(o.cell) for o in outcomes], dtype=np.int64)


def _floored_table(table: TabulatedProfile) -> TabulatedProfile:
    n_items = int(table.metadata.get("n_items_per_slot", 0))
    floor = 0.5 / n_items if n_items else 0.0
    return TabulatedProfile(
        weights=tuple(max(w, floor) for w in table.weights),
        kind="slot",
        label=f"{table.label} (floored at {floor:.3g})",
    )


def _score(
    profile: InfluenceProfile,
    train: Sequence[SlotOutcome],
    heldback: Sequence[SlotOutcome],
    slope: float | None,
) -> tuple[dict[str, Any], FloatArray, FloatArray]:
    """The JSON block of one candidate, and its per-outcome held-back log-likelihood and squared
    error (for the paired differences)."""
    y_train = outcome_values(train, "correct")
    y_held = outcome_values(heldback, "correct")
    x_train, train_cells = log_influence(profile, train), _cell_index(train)
    b, a_train = _fit_link(x_train, y_train, train_cells, slope)
    x_held = log_influence(profile, heldback)
    cells = _cell_index(heldback)
    _, a = _fit_link(x_held, y_held, cells, b)
    eta = a[cells] + b * x_held
    prob = 1.0 / (1.0 + np.exp(-eta))
    log_lik = bernoulli_log_likelihood(eta, y_held)
    squared = (prob - y_held) ** 2
    block = {
        "slope": b,
        "train_log_likelihood_per_outcome": float(
            bernoulli_log_likelihood(a_train[train_cells] + b * x_train, y_train).mean()
        ),
        "log_likelihood_per_outcome": float(log_lik.mean()),
        "brier": float(squared.mean()),
        "predicted_by_slot": _by_cell_and_slot(heldback, prob),
    }
    return block, log_lik, squared


def _by_cell_and_slot(
    outcomes: Sequence[SlotOutcome], values: FloatArray
) -> dict[str, list[float]]:
    """Mean of ``values`` per slot, for each cell (keyed by :func:`cell_label`)."""
    out = {}
    for cell in sorted({o.cell for o in outcomes}):
        rows = [i for i, o in enumerate(outcomes) if o.cell == cell]
        slots = np.array([outcomes[i].slot for i in rows])
        vals = values[rows]
        out[cell_label(cell)] = [float(vals[slots == k].mean()) for k in range(cell[0])]
    return out


def heldback_report(
    fit: OutcomeFit,
    table: TabulatedProfile,
    train: Sequence[SlotOutcome],
    heldback: Sequence[SlotOutcome],
    others: Mapping[str, InfluenceProfile] | None = None,
) -> dict[str, Any]:
    """Score the fitted profile, the stretched slot table, the uniform profile and any
    ``others`` (each with its own slope) on held-back outcomes (module docstring); JSON-ready."""
    if not heldback or not train:
        raise ValueError("both train and heldback outcomes are needed")
    floored = _floored_table(table)
    uniform = TabulatedProfile(weights=(1.0,), kind="slot", label="uniform")
    candidates: dict[str, tuple[InfluenceProfile, float | None]] = {
        "fitted": (fit.profile, None),
        "fitted (slope 1)": (fit.profile, 1.0),
        "slot table (stretched)": (floored, None),
        "uniform": (uniform, 0.0),
    }
    candidates.update({name: (p, None) for name, p in (others or {}).items()})
    scored = {name: _score(p, train, heldback, slope) for name, (p, slope) in candidates.items()}
    y = outcome_values(heldback, "correct")
    # An item is one (cell, item id): cells reuse ids for different items. Items are numbered in
    # order of appearance (cells in order, items as measured).
    keys = {key: n for n, key in enumerate(dict.fromkeys((o.cell, o.item_id) for o in heldback))}
    items = np.array([keys[(o.cell, o.item_id)] for o in heldback], dtype=np.int64)
    _, fit_ll, fit_sq = scored["fitted"]
    differences = {}
    for name, (_, log_lik, squared) in scored.items():
        if name != "fitted":
            differences[name] = {
                "log_likelihood_per_outcome": float((fit_ll - log_lik).mean()),
                "log_likelihood_ci95": list(cluster_interval(items, fit_ll - log_lik)),
                "brier": float((fit_sq - squared).mean()),
                "brier_ci95": list(cluster_interval(items, fit_sq - squared)),
            }
    return {
        "protocol": "see bookend_rag_lab.fitting.holdout",
        "train_cells": sorted({cell_label(o.cell) for o in train}),
        "heldback_cells": sorted({cell_label(o.cell) for o in heldback}),
        "n_train_outcomes": len(train),
        "n_heldback_outcomes": len(heldback),
        "n_heldback_items": int(np.unique(items).size),
        "table": {"label": table.label, "floored_label": floored.label},
        "observed_by_slot": _by_cell_and_slot(heldback, y),
        "profiles": {name: block for name, (block, _, _) in scored.items()},
        "fitted_minus": differences,
    }


def heldback_summary(report: Mapping[str, Any]) -> str:
    """The held-back figures for the terminal."""
    lines = [
        f"held back {', '.join(report['heldback_cells'])} "
        f"({report['n_heldback_outcomes']} outcomes, {report['n_heldback_items']} items); "
        f"fitted on {', '.join(report['train_cells'])}",
        "  held-back log-lik/outcome, Brier, slope; fitted minus this profile [95% CI]",
    ]
    for name, s in report["profiles"].items():
        line = (
            f"  {name}: {s['log_likelihood_per_outcome']:.4f}, {s['brier']:.4f}, {s['slope']:.3g}"
        )
        if name in report["fitted_minus"]:
            d = report["fitted_minus"][name]
            lo, hi = d["log_likelihood_ci95"]
            blo, bhi = d["brier_ci95"]
            line += (
                f"; log-lik {d['log_likelihood_per_outcome']:+.4f} [{lo:+.4f}, {hi:+.4f}], "
                f"Brier {d['brier']:+.4f} [{blo:+.4f}, {bhi:+.4f}]"
            )
        lines.append(line)
    return "\n".join(lines)
