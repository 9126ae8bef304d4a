"""Held-back check: does a profile predict calibration cells (a K, a prompt length) it never saw?

Each candidate profile ``P`` predicts a held-back outcome through the same link as the fit
(:mod:`bookend.validate.fit_profile`)::

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
Brier score (mean squared error of the probability, lower is better); the fitted-minus-table
differences get a 95% bootstrap interval over held-back items (2000 resamples, seed 0).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.optimize import minimize

from bookend.profile import InfluenceProfile, TabulatedProfile
from bookend.validate.fit_profile import (
    OutcomeFit,
    bernoulli_log_likelihood,
    cell_label,
    log_influence,
    outcome_values,
)
from bookend.validate.outcomes import SlotOutcome

__all__ = ["heldback_report", "heldback_summary"]

FloatArray = npt.NDArray[np.float64]
_BOOTSTRAP = 2000


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
) -> dict[str, Any]:
    y_train = outcome_values(train, "correct")
    y_held = outcome_values(heldback, "correct")
    b, _ = _fit_link(log_influence(profile, train), y_train, _cell_index(train), slope)
    x_held = log_influence(profile, heldback)
    cells = _cell_index(heldback)
    _, a = _fit_link(x_held, y_held, cells, b)
    prob = 1.0 / (1.0 + np.exp(-(a[cells] + b * x_held)))
    slots = np.array([o.slot for o in heldback])
    return {
        "slope": b,
        "log_likelihood_per_outcome": float(
            bernoulli_log_likelihood(a[cells] + b * x_held, y_held).mean()
        ),
        "brier": float(np.mean((prob - y_held) ** 2)),
        "predicted_by_slot": [float(prob[slots == k].mean()) for k in range(slots.max() + 1)],
        "_prob": prob,
    }


def _bootstrap(
    items: npt.NDArray[np.int64], diff: FloatArray, seed: int = 0
) -> tuple[float, float]:
    """95% percentile interval of the mean of ``diff`` resampling items with replacement."""
    ids = np.unique(items)
    sums = np.array([diff[items == i].sum() for i in ids])
    counts = np.array([(items == i).sum() for i in ids])
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, ids.size, size=(_BOOTSTRAP, ids.size))
    means = sums[draws].sum(axis=1) / counts[draws].sum(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


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
    scores = {name: _score(p, train, heldback, slope) for name, (p, slope) in candidates.items()}
    y = outcome_values(heldback, "correct")
    items = np.array([o.item_id for o in heldback], dtype=np.int64)
    p_fit, p_tab = scores["fitted"].pop("_prob"), scores["slot table (stretched)"].pop("_prob")
    for block in scores.values():
        block.pop("_prob", None)
    ll_diff = bernoulli_log_likelihood(np.log(p_fit / (1 - p_fit)), y) - bernoulli_log_likelihood(
        np.log(p_tab / (1 - p_tab)), y
    )
    brier_diff = (p_fit - y) ** 2 - (p_tab - y) ** 2
    slots = np.array([o.slot for o in heldback])
    return {
        "protocol": "see bookend.validate.holdout",
        "train_cells": sorted({cell_label(o.cell) for o in train}),
        "heldback_cells": sorted({cell_label(o.cell) for o in heldback}),
        "n_heldback_outcomes": len(heldback),
        "n_heldback_items": int(np.unique(items).size),
        "table": {"label": table.label, "floored_label": floored.label},
        "observed_by_slot": [float(y[slots == k].mean()) for k in range(slots.max() + 1)],
        "profiles": scores,
        "fitted_minus_table": {
            "log_likelihood_per_outcome": float(ll_diff.mean()),
            "log_likelihood_ci95": list(_bootstrap(items, ll_diff)),
            "brier": float(brier_diff.mean()),
            "brier_ci95": list(_bootstrap(items, brier_diff)),
        },
    }


def heldback_summary(report: Mapping[str, Any]) -> str:
    """The held-back figures for the terminal."""
    lines = [
        f"held back {', '.join(report['heldback_cells'])} "
        f"({report['n_heldback_outcomes']} outcomes, {report['n_heldback_items']} items); "
        f"fitted on {', '.join(report['train_cells'])}"
    ]
    for name, s in report["profiles"].items():
        lines.append(
            f"  {name:<28} log-lik/outcome {s['log_likelihood_per_outcome']:.4f}  "
            f"Brier {s['brier']:.4f}  slope {s['slope']:.3g}"
        )
    d = report["fitted_minus_table"]
    lo, hi = d["log_likelihood_ci95"]
    blo, bhi = d["brier_ci95"]
    lines.append(
        f"  fitted - table: log-lik/outcome {d['log_likelihood_per_outcome']:+.4f} "
        f"[{lo:+.4f}, {hi:+.4f}], Brier {d['brier']:+.4f} [{blo:+.4f}, {bhi:+.4f}]"
    )
    return "\n".join(lines)
