"""Fit a :class:`~bookend_rag.FittedProfile` to calibration outcomes (MLE) or a Jacobian profile
(LSQ).

**Outcome model** (:func:`fit_outcomes`). Item ``i`` of calibration cell ``c`` (one K and one
prompt length) has its gold document at the token span ``[s_i, e_i)`` of a documents block of
``N_i`` tokens. Its relative influence is the profile's mean density over the span against the
uniform one, ``w_i = N_i (F(e_i; N_i) - F(s_i; N_i)) / (e_i - s_i)``, and::

    P(correct_i) = sigmoid(a_c + ln w_i)

so the odds of using the gold document are proportional to its influence. The slope is fixed at
1 on purpose: the profile's own weights are then the quantity that placement should maximise, with
no hidden exponent; its dynamic range is what the floor mass and the window set. The intercept
``a_c`` per cell absorbs how hard the cell is (more candidates, longer prompts) and is not part of
the profile. ``target="correct"`` scores 0/1 outcomes with the Bernoulli likelihood;
``target="candidate_prob"`` uses the gold answer's probability among the candidates as a
fractional outcome ``y`` in the same formula ``y ln p + (1 - y) ln(1 - p)`` (a quasi-likelihood:
same mean model, more information per item, but its Hessian standard errors are only indicative).

Parameters are fitted on unconstrained scales, ``theta = (ln lambda, ln tau, b_r, b_f, a_1..a_m)``
with masses ``softmax(0, b_r, b_f) = (w_p, w_r, w_f)``, by L-BFGS-B from a small grid of starts.
Standard errors come from the observed Fisher information (the numerical Hessian of the negative
log-likelihood at the optimum, intercepts included) and the delta method; when the Hessian is not
positive definite (a component fitted to zero makes its scale unidentifiable) the affected
parameters get no standard error and the fit says so.

**Jacobian profile** (:func:`fit_position_profile`): least squares in log space on positions
``1..N-1`` (the final token's self-influence is excluded, as in
:mod:`bookend_rag_lab.fitting.theory_fit`), with Gauss-Newton standard errors ``s^2 (J^T J)^-1``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from scipy.optimize import least_squares, minimize

from bookend_rag import FittedProfile, InfluenceProfile, TabulatedProfile
from bookend_rag.arrays import FloatArray
from bookend_rag.profiles.fitted import PARAMETERS
from bookend_rag.weighing import slot_weights
from bookend_rag_lab.fitting.outcomes import SlotOutcome

__all__ = [
    "OutcomeFit",
    "bernoulli_log_likelihood",
    "cell_label",
    "fit_outcomes",
    "fit_position_profile",
    "log_influence",
    "outcome_values",
]

Target = Literal["correct", "candidate_prob"]
_TINY = 1e-300
_SHAPE = 4  # ln lambda, ln tau, b_r, b_f
_BOUNDS = [(math.log(0.02), math.log(60.0)), (0.0, math.log(1e5)), (-25.0, 25.0), (-25.0, 25.0)]


def _profile(theta: npt.ArrayLike, reference_tokens: float, **kwargs: Any) -> FittedProfile:
    t = np.asarray(theta, dtype=np.float64)
    masses = np.exp(np.array([0.0, t[2], t[3]]) - max(0.0, t[2], t[3]))
    masses /= masses.sum()
    return FittedProfile(
        lam=math.exp(t[0]),
        tau_tokens=math.exp(t[1]),
        recency_mass=float(masses[1]),
        floor_mass=float(masses[2]),
        reference_tokens=reference_tokens,
        **kwargs,
    )


def _natural(theta: FloatArray) -> FloatArray:
    p = _profile(theta, 1.0)
    return np.array([p.lam, p.tau_tokens, p.primacy_mass, p.recency_mass, p.floor_mass])


def _standard_errors(theta: FloatArray, cov: FloatArray) -> dict[str, float]:
    """Delta-method standard errors of :data:`PARAMETERS` from the covariance of ``theta``."""
    step = 1e-5
    jac = np.empty((len(PARAMETERS), theta.size))
    for j in range(theta.size):
        d = np.zeros(theta.size)
        d[j] = step
        jac[:, j] = (_natural(theta + d) - _natural(theta - d)) / (2 * step)
    var = np.einsum("ij,jk,ik->i", jac, cov, jac)
    return {name: float(math.sqrt(v)) for name, v in zip(PARAMETERS, var, strict=True) if v >= 0}


def _hessian(fun: Callable[[FloatArray], float], x: FloatArray, step: float = 1e-4) -> FloatArray:
    """Central-difference Hessian of ``fun`` at ``x``."""
    n = x.size
    h = np.empty((n, n))
    eye = np.eye(n) * step
    f0 = fun(x)
    for i in range(n):
        h[i, i] = (fun(x + eye[i]) - 2 * f0 + fun(x - eye[i])) / step**2
        for j in range(i):
            h[i, j] = h[j, i] = (
                fun(x + eye[i] + eye[j])
                - fun(x + eye[i] - eye[j])
                - fun(x - eye[i] + eye[j])
                + fun(x - eye[i] - eye[j])
            ) / (4 * step**2)
    return h


def _covariance(hess: FloatArray) -> FloatArray | None:
    """``hess^-1`` when ``hess`` is symmetric positive definite, else ``None``."""
    try:
        chol = np.linalg.cholesky(hess)
    except np.linalg.LinAlgError:
        return None
    inv = np.linalg.inv(chol)
    return np.asarray(inv.T @ inv, dtype=np.float64)


def log_influence(profile: InfluenceProfile, outcomes: Sequence[SlotOutcome]) -> FloatArray:
    """``ln w_i`` of each outcome's gold document under ``profile`` (see the module docstring).

    A :attr:`~bookend_rag.InfluenceProfile.per_document` profile (a slot table) gives slot
    ``k`` of ``K`` its slot weight (``slot_weights(K)``, mean 1), whatever the token lengths.
    """
    if profile.per_document:
        out = np.empty(len(outcomes))
        for k in {o.n_docs for o in outcomes}:
            weights = slot_weights(profile, k)
            for i, o in enumerate(outcomes):
                if o.n_docs == k:
                    out[i] = math.log(max(float(weights[o.slot]), _TINY))
        return out
    s, e, n = (
        np.array([getattr(o, f) for o in outcomes], dtype=np.float64)
        for f in ("gold_start", "gold_end", "n_tokens")
    )
    if isinstance(profile, FittedProfile):
        mass = profile.span_mass_at_tokens(s, e, n)
    else:
        mass = np.array(
            [
                float(np.diff(profile.cdf_at_tokens([a, b], t))[0])
                for a, b, t in zip(s, e, n, strict=True)
            ]
        )
    return np.asarray(np.log(np.maximum(mass * n / (e - s), _TINY)), dtype=np.float64)


def bernoulli_log_likelihood(eta: FloatArray, y: FloatArray) -> FloatArray:
    """``y ln sigmoid(eta) + (1 - y) ln sigmoid(-eta)``, elementwise and overflow-free."""
    return np.asarray(-y * np.logaddexp(0.0, -eta) - (1 - y) * np.logaddexp(0.0, eta))


def outcome_values(outcomes: Sequence[SlotOutcome], target: Target) -> FloatArray:
    """The fitted quantity: 0/1 correctness or the gold answer's candidate probability."""
    if target not in ("correct", "candidate_prob"):
        raise ValueError(f"target must be 'correct' or 'candidate_prob', got target={target!r}")
    if target == "correct":
        return np.array([float(o.correct) for o in outcomes])
    return np.array([o.candidate_prob for o in outcomes])


def cell_label(cell: tuple[int, tuple[int, int]]) -> str:
    """``"K=10 filler 0-1"``."""
    return f"K={cell[0]} filler {cell[1][0]}-{cell[1][1]}"


@dataclass(frozen=True)
class OutcomeFit:
    """A maximum-likelihood fit of the outcome model (module docstring)."""

    profile: FittedProfile
    intercepts: Mapping[str, float]
    log_likelihood: float
    n_outcomes: int
    target: Target
    converged: bool
    notes: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        """The fit block of a calibrate report."""
        return {
            "profile": self.profile.to_json(),
            "intercepts": dict(self.intercepts),
            "log_likelihood": self.log_likelihood,
            "log_likelihood_per_outcome": self.log_likelihood / self.n_outcomes,
            "n_outcomes": self.n_outcomes,
            "target": self.target,
            "converged": self.converged,
            "notes": list(self.notes),
        }

    def summary(self) -> str:
        """Parameters with standard errors and the held-in log-likelihood, for the terminal."""
        p, se = self.profile, self.profile.standard_errors

        def fmt(name: str, value: float) -> str:
            err = f" ± {se[name]:.3g}" if name in se else " (no SE)"
            return f"{name}={value:.4g}{err}"

        lines = [
            f"fitted profile ({self.target}, {self.n_outcomes} outcomes, "
            f"reference {p.reference_tokens:.0f} tokens):",
            "  "
            + ", ".join(
                fmt(n, v)
                for n, v in (
                    ("lam", p.lam),
                    ("tau_tokens", p.tau_tokens),
                    ("primacy_mass", p.primacy_mass),
                    ("recency_mass", p.recency_mass),
                    ("floor_mass", p.floor_mass),
                )
            ),
            f"  held-in log-likelihood {self.log_likelihood:.2f} "
            f"({self.log_likelihood / self.n_outcomes:.4f} per outcome)"
            + ("" if self.converged else "  [optimiser did not report convergence]"),
            *(f"  note: {n}" for n in self.notes),
        ]
        return "\n".join(lines)


def fit_outcomes(
    outcomes: Sequence[SlotOutcome],
    *,
    target: Target = "correct",
    label: str = "fitted",
    settings: Mapping[str, Any] | None = None,
) -> OutcomeFit:
    """Maximum-likelihood fit of the outcome model (module docstring) to calibration outcomes.

    Raises:
        ValueError: for no outcomes or an unknown ``target``.
    """
    if not outcomes:
        raise ValueError("outcomes must not be empty")
    y = outcome_values(outcomes, target)
    cells = sorted({o.cell for o in outcomes})
    cell_index = np.array([cells.index(o.cell) for o in outcomes])
    s, e, n = (
        np.array([getattr(o, f) for o in outcomes], dtype=np.float64)
        for f in ("gold_start", "gold_end", "n_tokens")
    )
    reference = float(np.median(n))

    def nll(theta: FloatArray) -> float:
        mass = _profile(theta[:_SHAPE], reference).span_mass_at_tokens(s, e, n)
        eta = theta[_SHAPE:][cell_index] + np.log(np.maximum(mass * n / (e - s), _TINY))
        return -float(bernoulli_log_likelihood(eta, y).sum())

    cell_mean = np.array([y[cell_index == c].mean() for c in range(len(cells))])
    start_icpt = np.log(np.clip(cell_mean, 0.02, 0.98) / (1 - np.clip(cell_mean, 0.02, 0.98)))
    starts = [
        np.concatenate(([math.log(lam), math.log(tau), b_r, b_f], start_icpt))
        for lam in (0.5, 1.5, 4.0)
        for tau in (20.0, 100.0, 400.0)
        for b_r, b_f in ((0.0, 0.0), (0.0, -2.0))
    ]
    starts.sort(key=nll)
    bounds = _BOUNDS + [(-30.0, 30.0)] * len(cells)
    best = None
    for x0 in starts[:3]:
        result = minimize(nll, x0, method="L-BFGS-B", bounds=bounds)
        if best is None or result.fun < best.fun:
            best = result
    assert best is not None
    theta = np.asarray(best.x, dtype=np.float64)
    cov = _covariance(_hessian(nll, theta))
    notes = []
    if cov is None:
        notes.append("the Hessian is not positive definite: no standard errors")
        errors: dict[str, float] = {}
    else:
        errors = _standard_errors(theta[:_SHAPE], cov[:_SHAPE, :_SHAPE])
    at_bound = [
        name
        for name, v, (lo, hi) in zip(("lam", "tau", "b_r", "b_f"), theta, _BOUNDS, strict=False)
        if min(v - lo, hi - v) < 1e-3
    ]
    if at_bound:
        notes.append(f"at a search bound: {', '.join(at_bound)}")
    intercepts = {cell_label(c): float(a) for c, a in zip(cells, theta[_SHAPE:], strict=True)}
    log_lik = -float(best.fun)
    metadata = {
        "frame": (
            "documents block: token offsets from the first document, N = its length; "
            "evaluate with the chunks filling the sequence: Layout(suffix_tokens=0)"
        ),
        "model": (settings or {}).get("weights"),
        "data": _data_summary(outcomes, settings or {}),
        "fit": {
            "method": "maximum likelihood, P(correct) = sigmoid(a_cell + ln w)",
            "target": target,
            "log_likelihood": log_lik,
            "n_outcomes": len(outcomes),
            "intercepts": intercepts,
            "converged": bool(best.success),
            "notes": notes,
        },
    }
    profile = _profile(
        theta[:_SHAPE], reference, label=label, standard_errors=errors, metadata=metadata
    )
    return OutcomeFit(
        profile=profile,
        intercepts=intercepts,
        log_likelihood=log_lik,
        n_outcomes=len(outcomes),
        target=target,
        converged=bool(best.success),
        notes=tuple(notes),
    )


def _data_summary(outcomes: Sequence[SlotOutcome], settings: Mapping[str, Any]) -> dict[str, Any]:
    cells = sorted({o.cell for o in outcomes})
    per_cell = []
    for cell in cells:
        group = [o for o in outcomes if o.cell == cell]
        per_cell.append(
            {
                "docs": cell[0],
                "filler": list(cell[1]),
                "items": len({o.item_id for o in group}),
                "outcomes": len(group),
                "median_documents_tokens": float(np.median([o.n_tokens for o in group])),
                "median_prompt_tokens": float(np.median([o.prompt_tokens for o in group])),
            }
        )
    return {
        "docs": sorted({c[0] for c in cells}),
        "cells": per_cell,
        "families": sorted({o.family for o in outcomes}),
        "seed": settings.get("seed"),
        "split": settings.get("split"),
    }


def fit_position_profile(
    measured: TabulatedProfile, *, label: str = "fitted (Jacobian)"
) -> FittedProfile:
    """Least-squares fit in log space to a per-position profile (module docstring).

    The profile's positions are taken as tokens, so ``N`` is its number of weights and the
    result's ``reference_tokens`` is ``N``.

    Raises:
        ValueError: for a slot profile or fewer than 8 positions.
    """
    if measured.kind != "position" or len(measured.weights) < 8:
        raise ValueError(
            "measured must be a position profile of >= 8 positions, got "
            f"kind={measured.kind!r} with {len(measured.weights)} weights"
        )
    p = np.asarray(measured.weights[:-1], dtype=np.float64)
    keep = p > 0
    n = len(measured.weights)
    target = np.log(p[keep] / p.sum())
    edges = np.arange(n, dtype=np.float64)

    def residuals(theta: FloatArray) -> FloatArray:
        mass = _profile(theta, float(n)).span_mass_at_tokens(edges[:-1], edges[1:], float(n))
        q = np.maximum(mass, _TINY)
        return np.asarray(np.log(q[keep] / q.sum()) - target, dtype=np.float64)

    lo, hi = (np.array(b) for b in zip(*_BOUNDS, strict=True))
    starts = [
        np.array([math.log(lam), math.log(tau), 0.0, b_f])
        for lam in (0.5, 1.5, 4.0)
        for tau in (5.0, 50.0)
        for b_f in (0.0, -3.0)
    ]
    fits = [least_squares(residuals, x0, bounds=(lo, hi)) for x0 in starts]
    best = min(fits, key=lambda r: float(r.cost))
    theta = np.asarray(best.x, dtype=np.float64)
    dof = max(1, int(keep.sum()) - theta.size)
    s2 = 2.0 * float(best.cost) / dof
    cov = _covariance(best.jac.T @ best.jac / s2)
    errors = {} if cov is None else _standard_errors(theta, cov)
    metadata = {
        "frame": "whole measured sequence: token offsets, N = its length",
        "source": {"label": measured.label, "n_tokens": n, **dict(measured.metadata)},
        "fit": {
            "method": "least squares in log space, positions 1..N-1",
            "log_rmse": float(math.sqrt(2.0 * float(best.cost) / keep.sum())),
            "converged": bool(best.success),
        },
    }
    return _profile(theta, float(n), label=label, standard_errors=errors, metadata=metadata)
