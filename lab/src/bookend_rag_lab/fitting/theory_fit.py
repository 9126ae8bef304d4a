"""Compare a measured influence profile with the Cesàro theory, and fit the theory to it.

The theory's prediction for position ``j`` of ``N`` is the continuous bin mass
``q_j = F(j/N) - F((j-1)/N)`` with ``F`` = :func:`bookend_rag.theory.influence_cdf`. The final token
carries the Recency Delta ``(1 - alpha)^H`` whose measured counterpart depends on how the final
position's own path is normalised, so it is reported separately: every shape metric here compares
positions ``1..N-1``, each profile renormalised to sum to 1 over them.

Metrics (``p`` measured, ``q`` theory, both renormalised over positions ``1..N-1``):

- ``spearman``: rank correlation of ``p`` and ``q``.
- ``log_rmse``: ``sqrt(mean_j (ln p_j - ln q_j)^2)``, the quantity the fits minimise.
- ``wasserstein``: ``W1 = (1/(N-1)) sum_j |P_j - Q_j|`` with ``P, Q`` the cumulative sums: the
  earth-mover distance with positions scaled to ``[0, 1]`` (0 identical, at most 1).
- ``final_token_share``: the theory's ``(1 - alpha)^H``, beside the measured final-token share.
- ``spearman_log_binned``: Spearman over 32 log-spaced bins of positions (bin means). Per-position
  ranks in a nearly flat tail are decided by measurement noise; the binned value shows whether
  the *shape* agrees beyond that noise.

Fits: ``(H, alpha)`` by least squares in log space over ``H`` in ``[1, max_depth]`` (the best fits
often sit at large ``H`` and small ``alpha`` with ``lambda = H alpha`` of 1 to 5); and the
one-parameter Poisson limit ``H -> inf`` with ``H alpha = lambda`` fixed, where the hop weights
become ``w_k = e^(-lambda) lambda^k / k!``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.optimize import minimize, minimize_scalar
from scipy.stats import spearmanr

from bookend_rag import ModelSpec
from bookend_rag.arrays import FloatArray
from bookend_rag.theory import influence_cdf, poisson_cdf, recency_delta

__all__ = [
    "POISSON_DEPTH",
    "Comparison",
    "compare",
    "fit_depth_share",
    "fit_poisson",
    "log_binned",
    "poisson_cdf",
    "theory_bins",
]


# Depth standing in for H -> infinity when a Poisson fit is turned into a ModelSpec; the binomial
# weights differ from the Poisson ones by O(lambda^2 / H), below 1e-3 for lambda <= 1.
POISSON_DEPTH = 5000.0
_FLOOR = 1e-300


def _check_profile(measured: npt.ArrayLike) -> FloatArray:
    p = np.asarray(measured, dtype=np.float64)
    if p.ndim != 1 or p.size < 3:
        raise ValueError(f"measured must be a 1-D profile of >= 3 positions, got shape {p.shape}")
    if not np.all(np.isfinite(p)) or np.any(p < 0) or p[:-1].sum() <= 0:
        raise ValueError(
            "measured must be finite and non-negative with mass before the final token"
        )
    return p


def theory_bins(n_tokens: int, depth: float, attn_share: float) -> FloatArray:
    """Continuous bin masses ``F(j/N) - F((j-1)/N)``, ``j = 1..N-1`` (final token excluded)."""
    edges = np.arange(n_tokens, dtype=np.float64) / n_tokens
    return np.diff(influence_cdf(edges, depth, attn_share))


def _poisson_bins(n_tokens: int, lam: float) -> FloatArray:
    edges = np.arange(n_tokens, dtype=np.float64) / n_tokens
    return np.diff(poisson_cdf(edges, lam))


def _normalise(v: FloatArray) -> FloatArray:
    return np.asarray(v / v.sum(), dtype=np.float64)


def _log_rmse(p: FloatArray, q: FloatArray) -> float:
    diff = np.log(np.maximum(p, _FLOOR)) - np.log(np.maximum(q, _FLOOR))
    return float(np.sqrt(np.mean(diff**2)))


@dataclass(frozen=True)
class Comparison:
    """How well one theory spec matches a measured profile (see the module docstring)."""

    spec: ModelSpec
    spearman: float
    log_rmse: float
    wasserstein: float
    final_token_share: float
    spearman_log_binned: float
    lam: float | None = None

    def to_json(self) -> dict[str, Any]:
        """The report block: depth, attn_share, the metrics (and lambda for a Poisson fit)."""
        out: dict[str, Any] = {
            "depth": self.spec.depth,
            "attn_share": self.spec.alpha,
            "spearman": self.spearman,
            "log_rmse": self.log_rmse,
            "wasserstein": self.wasserstein,
            "final_token_share": self.final_token_share,
            "spearman_log_binned": self.spearman_log_binned,
        }
        if self.lam is not None:
            out["lambda"] = self.lam
        return out


def log_binned(profile: npt.ArrayLike, n_bins: int = 32) -> FloatArray:
    """Means of ``profile`` over up to ``n_bins`` log-spaced position bins (empty bins merged)."""
    v = np.asarray(profile, dtype=np.float64)
    starts = np.unique(np.geomspace(1, v.size + 1, n_bins + 1).astype(np.int64)) - 1
    starts = starts[starts < v.size]
    sums = np.add.reduceat(v, starts)
    widths = np.diff(np.append(starts, v.size))
    return np.asarray(sums / widths, dtype=np.float64)


def _compare_bins(p: FloatArray, q: FloatArray, spec: ModelSpec, delta: float) -> Comparison:
    ph, qh = _normalise(p[:-1]), _normalise(np.maximum(q, 0.0))
    rho = spearmanr(ph, qh).statistic
    rho_binned = spearmanr(log_binned(ph), log_binned(qh)).statistic
    w1 = float(np.abs(np.cumsum(ph) - np.cumsum(qh)).sum() / ph.size)
    return Comparison(
        spec=spec,
        spearman=float(rho),
        log_rmse=_log_rmse(ph, qh),
        wasserstein=w1,
        final_token_share=delta,
        spearman_log_binned=float(rho_binned),
    )


def compare(measured: npt.ArrayLike, spec: ModelSpec) -> Comparison:
    """Compare a measured per-position profile (position 1 first) with the theory of ``spec``."""
    p = _check_profile(measured)
    q = theory_bins(p.size, spec.depth, spec.alpha)
    return _compare_bins(p, q, spec, recency_delta(spec.depth, spec.alpha))


def fit_depth_share(
    measured: npt.ArrayLike,
    *,
    max_depth: float = 2000.0,
    name: str | None = None,
) -> Comparison:
    """Fit ``(H, alpha)`` minimising the log-space RMS error over positions ``1..N-1``.

    A coarse grid over ``ln H`` and ``ln lambda`` (``lambda = H alpha`` in ``[0.02, 40]``) finds
    the basin; Nelder-Mead in ``(ln H, ln alpha)`` refines it, clipped to ``1 <= H <= max_depth``
    and ``0 < alpha <= 1``.
    """
    p = _check_profile(measured)
    if not max_depth >= 1:
        raise ValueError(f"max_depth must be >= 1, got max_depth={max_depth!r}")
    n = p.size
    target = _normalise(p[:-1])

    def loss(theta: FloatArray) -> float:
        depth = float(np.clip(math.exp(theta[0]), 1.0, max_depth))
        share = float(np.clip(math.exp(theta[1]), 1e-9, 1.0))
        return _log_rmse(target, _normalise(np.maximum(theory_bins(n, depth, share), 0.0)))

    best = (math.inf, np.zeros(2))
    for depth in np.geomspace(1.0, max_depth, 24):
        for lam in np.geomspace(0.02, 40.0, 24):
            share = lam / depth
            if share > 1.0:
                continue
            theta = np.array([math.log(depth), math.log(share)])
            value = loss(theta)
            if value < best[0]:
                best = (value, theta)
    result = minimize(loss, best[1], method="Nelder-Mead", options={"xatol": 1e-4, "fatol": 1e-7})
    theta = result.x if result.fun <= best[0] else best[1]
    depth = float(np.clip(math.exp(theta[0]), 1.0, max_depth))
    share = float(np.clip(math.exp(theta[1]), 1e-9, 1.0))
    spec = ModelSpec(depth=depth, attn_share=share, name=name or "fit")
    return compare(p, spec)


def fit_poisson(measured: npt.ArrayLike, *, name: str | None = None) -> Comparison:
    """Fit the Poisson limit's ``lambda`` (``0.01 <= lambda <= 60``) in log space.

    The returned spec stands in for ``H -> inf`` with ``depth = POISSON_DEPTH`` and
    ``alpha = lambda / POISSON_DEPTH``; its metrics use the exact Poisson bins.
    """
    p = _check_profile(measured)
    n = p.size
    target = _normalise(p[:-1])

    def loss(log_lam: float) -> float:
        return _log_rmse(target, _normalise(np.maximum(_poisson_bins(n, math.exp(log_lam)), 0.0)))

    grid = np.linspace(math.log(0.01), math.log(60.0), 40)
    start = grid[int(np.argmin([loss(v) for v in grid]))]
    step = grid[1] - grid[0]
    result = minimize_scalar(loss, bounds=(start - step, start + step), method="bounded")
    lam = float(math.exp(result.x))
    spec = ModelSpec(
        depth=POISSON_DEPTH, attn_share=lam / POISSON_DEPTH, name=name or "poisson fit"
    )
    comparison = _compare_bins(p, _poisson_bins(n, lam), spec, math.exp(-lam))
    return Comparison(
        spec=spec,
        spearman=comparison.spearman,
        log_rmse=comparison.log_rmse,
        wasserstein=comparison.wasserstein,
        final_token_share=comparison.final_token_share,
        spearman_log_binned=comparison.spearman_log_binned,
        lam=lam,
    )
