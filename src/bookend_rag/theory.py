"""Cesàro influence theory of position bias at initialisation (arXiv 2603.10123).

At initialisation the expected attention of token ``i`` is uniform over tokens ``1..i``: the
Cesàro matrix ``C[i, j] = 1/i`` for ``j <= i``. One residual layer with attention share ``alpha``
is ``M = (1 - alpha) I + alpha C``; ``H`` layers give ``M^H``. The influence of position ``j`` on
the final token is the last row of ``M^H``.

Every function here is pure and works on plain floats and NumPy arrays. ``depth`` is ``H``
(real values >= 1 are allowed in the continuous functions, which a fit needs) and ``attn_share``
is ``alpha`` in ``(0, 1]``.

The continuous limit (``x = j / N`` in ``[0, 1]``) is a mixture over the number ``k`` of
attention hops, ``k ~ Binomial(H, alpha)``::

    rho(x) = w_0 · delta(1 - x) + sum_{k>=1} w_k (ln 1/x)^(k-1) / (k-1)!,
    w_k    = binom(H, k) alpha^k (1 - alpha)^(H - k).

``w_0 = (1 - alpha)^H`` is the Recency Delta on the final token, the ``k >= 1`` terms form the
Primacy Tail (diverging like ``(ln 1/x)^(H-1)`` at ``x -> 0``), and the middle, where the density
is suppressed like ``1/(H-1)!``, is the Dead Zone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from bookend_rag.arrays import FloatArray

__all__ = [
    "MAX_DEPTH",
    "InfluenceComponents",
    "components",
    "dead_zone",
    "hop_weights",
    "influence_cdf",
    "influence_dense",
    "influence_density",
    "influence_exact",
    "poisson_cdf",
    "recency_delta",
    "span_mass",
    "validate_depth_share",
]


def _lgamma(values: FloatArray) -> FloatArray:
    """``log Gamma`` elementwise with :func:`math.lgamma`: the short arrays here do not justify
    importing ``scipy.special`` (a third of ``import bookend_rag``)."""
    return np.array([math.lgamma(v) for v in values.tolist()], dtype=np.float64)


#: Largest depth ``H`` the closed form accepts. The hop weights and the CDF's polynomial hold
#: ``floor(H) + 2`` terms, so work and memory grow with ``H`` per evaluated point (a placement
#: at this depth takes about 0.15 s); real decoders have at most a few hundred blocks, the lab's
#: fits stop at 2000, and the Poisson limit is checked against ``H = 20000``.
MAX_DEPTH = 100_000


def validate_depth_share(depth: float, attn_share: float) -> None:
    """Raise ``ValueError`` naming the parameter unless ``1 <= depth <= MAX_DEPTH`` and
    ``0 < attn_share <= 1``."""
    if not math.isfinite(depth) or not 1 <= depth <= MAX_DEPTH:
        raise ValueError(f"depth must be a number in [1, {MAX_DEPTH}], got depth={depth!r}")
    if not math.isfinite(attn_share) or not 0.0 < attn_share <= 1.0:
        raise ValueError(f"attn_share must lie in (0, 1], got attn_share={attn_share!r}")


@lru_cache(maxsize=1024)
def _hop_weights_cached(depth: float, attn_share: float) -> tuple[float, ...]:
    if attn_share == 1.0:
        # Limit alpha -> 1: every layer attends, so all mass sits on k = ceil(H) hops.
        weights = np.zeros(math.ceil(depth) + 1)
        weights[-1] = 1.0
        return tuple(weights.tolist())
    # k runs to floor(H) + 1 so that the weights are continuous in real H: the extra term's
    # 1/Gamma(H - k + 1) vanishes as H approaches an integer from above.
    k = np.arange(math.floor(depth) + 2, dtype=np.float64)
    k = k[depth - k + 1 > 0]
    log_w = (
        math.lgamma(depth + 1)
        - _lgamma(k + 1)
        - _lgamma(depth - k + 1)
        + k * math.log(attn_share)
        + (depth - k) * math.log1p(-attn_share)
    )
    weights = np.exp(log_w - log_w.max())
    return tuple((weights / weights.sum()).tolist())


def hop_weights(depth: float, attn_share: float) -> FloatArray:
    """Mixture weights ``w_k = binom(H, k) alpha^k (1 - alpha)^(H - k)`` for ``k = 0, 1, ...``.

    For integer ``H`` these are the Binomial(H, alpha) probabilities. For real ``H`` the binomial
    coefficient is taken through the Gamma function over ``k = 0..floor(H) + 1`` and the weights are
    renormalised to sum to 1, which makes them continuous in ``H``. Computed in log space, so
    ``H`` up to several thousand neither overflows nor underflows to NaN.
    """
    validate_depth_share(depth, attn_share)
    return np.array(_hop_weights_cached(float(depth), float(attn_share)))


def recency_delta(depth: float, attn_share: float) -> float:
    """Weight of the Recency Delta on the final token, ``w_0 = (1 - alpha)^H``."""
    return float(hop_weights(depth, attn_share)[0])


@lru_cache(maxsize=1024)
def _tail_poly_coefficients(depth: float, attn_share: float) -> tuple[float, ...]:
    """Coefficients ``c_m = T_m / m!``, ``T_m = sum_{k > m} w_k`` (see :func:`influence_cdf`),
    highest degree first, as Horner's rule consumes them."""
    w = hop_weights(depth, attn_share)
    tails = np.cumsum(w[::-1])[::-1][1:]  # T_m for m = 0 .. kmax-1
    m = np.arange(tails.size, dtype=np.float64)
    coeffs = np.exp(np.log(np.maximum(tails, 1e-300)) - _lgamma(m + 1))
    return tuple(coeffs[::-1].tolist())


def _leading_negligible(coeffs: tuple[float, ...], u_max: float) -> int:
    """How many highest-degree coefficients (first in ``coeffs``) stay below ``1e-17 · c_0``
    for every ``u <= u_max``; all terms are positive, so dropping them changes ``F`` by less."""
    thresholds = _relevance_thresholds(coeffs)
    # Coefficient i matters once u reaches thresholds[i]; skip the leading ones that do not.
    log_u = math.log(max(u_max, 1e-300))
    for skipped, threshold in enumerate(thresholds):
        if log_u >= threshold:
            return skipped
    return len(coeffs) - 1


@lru_cache(maxsize=1024)
def _relevance_thresholds(coeffs: tuple[float, ...]) -> tuple[float, ...]:
    """Per coefficient ``c_m`` (highest degree first), the ``ln u`` from which
    ``c_m u^m >= 1e-17 · c_0``; ``inf`` for zero coefficients and the constant term's index is
    never consulted."""
    degree = len(coeffs) - 1
    log_floor = math.log(1e-17 * coeffs[-1])
    out = []
    for skipped, c in enumerate(coeffs[:-1]):
        power = degree - skipped
        out.append((log_floor - math.log(c)) / power if c > 0 else math.inf)
    return tuple(out)


def _as_unit_interval(x: npt.ArrayLike, name: str) -> FloatArray:
    arr = np.asarray(x, dtype=np.float64)
    # Comparisons with NaN are false, so two reductions also reject NaN and infinities.
    if arr.size and not (arr.min() >= 0.0 and arr.max() <= 1.0):
        raise ValueError(f"{name} must lie in [0, 1], got {name}={x!r}")
    return arr


def influence_cdf(x: npt.ArrayLike, depth: float, attn_share: float) -> FloatArray:
    """Influence mass on ``[0, x]`` of the continuous profile, Recency Delta included at ``x = 1``.

    ``F(x) = sum_{k>=1} w_k Q(k, ln 1/x)`` for ``x < 1`` and ``F(1) = 1``, with ``Q`` the
    regularized upper incomplete gamma function. Since ``k`` is an integer,
    ``Q(k, u) = e^{-u} sum_{m<k} u^m / m!``, so with ``u = ln 1/x``::

        F(x) = x · sum_{m>=0} T_m u^m / m!,     T_m = sum_{k>m} w_k,

    a polynomial of degree ``floor(H) + 1`` with positive terms (no cancellation), evaluated by
    Horner's rule: ``O(H)`` per point and independent of the sequence length. Terms that cannot
    reach ``1e-17`` of the constant term at the largest ``u`` in the batch are skipped.

    Args:
        x: fractions of the sequence in ``[0, 1]`` (scalar or array).
        depth: number of layers ``H >= 1`` (real values allowed).
        attn_share: attention share ``alpha`` in ``(0, 1]``.

    Returns:
        ``F(x)`` with the shape of ``x``; non-decreasing, ``F(0) = 0``, ``F(1) = 1``.
    """
    xs = _as_unit_interval(x, "x")
    validate_depth_share(depth, attn_share)
    coeffs = _tail_poly_coefficients(float(depth), float(attn_share))
    inner = (xs > 0.0) & (xs < 1.0)
    u = -np.log(np.where(inner, xs, 0.5))
    poly = np.zeros_like(u)
    for c in coeffs[_leading_negligible(coeffs, float(u.max(initial=0.0))) :]:
        poly = poly * u + c
    out = np.where(inner, xs * poly, 0.0)
    out = np.where(xs >= 1.0, 1.0, out)
    return np.asarray(np.minimum(out, 1.0), dtype=np.float64)


def span_mass(
    start: npt.ArrayLike, end: npt.ArrayLike, depth: float, attn_share: float
) -> FloatArray:
    """Influence mass of the span ``[start, end)`` of the sequence: ``F(end) - F(start)``.

    ``start`` and ``end`` are fractions in ``[0, 1]`` (broadcast together); a span ending at 1
    includes the Recency Delta. ``O(H)`` per span.
    """
    a = _as_unit_interval(start, "start")
    b = _as_unit_interval(end, "end")
    if np.any(b < a):
        raise ValueError(f"end must be >= start, got start={start!r}, end={end!r}")
    return np.asarray(
        influence_cdf(b, depth, attn_share) - influence_cdf(a, depth, attn_share),
        dtype=np.float64,
    )


@lru_cache(maxsize=256)
def _poisson_poly_coefficients(lam: float) -> tuple[float, ...]:
    """``c_m = T_m / m!`` with ``T_m = P(Poisson(lambda) > m)``, highest degree first."""
    from scipy.special import (
        gammainc,
        gammaln,
    )  # cached per lambda; keeps `import bookend_rag` light

    m = np.arange(int(lam + 12.0 * math.sqrt(lam) + 40.0), dtype=np.float64)
    coeffs = np.exp(np.log(np.maximum(gammainc(m + 1, lam), 1e-300)) - gammaln(m + 1))
    return tuple(coeffs[::-1].tolist())


def poisson_cdf(x: npt.ArrayLike, lam: float) -> FloatArray:
    """Influence mass on ``[0, x]`` in the Poisson limit, delta included at ``x = 1``.

    The limit ``H -> inf`` with ``H alpha = lambda`` fixed: the hop weights become
    ``w_k = e^(-lambda) lambda^k / k!`` and the Recency Delta ``e^(-lambda)``, so
    ``F(x) = sum_{k>=1} e^(-lambda) lambda^k / k! · Q(k, ln 1/x)`` for ``x < 1`` and ``F(1) = 1``
    (``Q`` the regularized upper incomplete gamma function). As in :func:`influence_cdf` this is
    the positive polynomial ``F(x) = x · sum_m T_m u^m / m!`` in ``u = ln 1/x`` with the Poisson
    tail ``T_m = P(K > m)``, evaluated by Horner's rule and cut at ``m = lambda + 12 sqrt(lambda)
    + 40``, where the tail is below 1e-16 (the cut keeps ``F`` non-decreasing). As there, terms
    that cannot reach ``1e-17`` of the constant term at the largest ``u`` in the batch are skipped.
    """
    if not math.isfinite(lam) or lam <= 0:
        raise ValueError(f"lam must be a finite number > 0, got lam={lam!r}")
    xs = np.asarray(x, dtype=np.float64)
    inner = (xs > 0.0) & (xs < 1.0)
    u = -np.log(np.where(inner, xs, 0.5))
    coeffs = _poisson_poly_coefficients(float(lam))
    poly = np.zeros_like(u)
    for c in coeffs[_leading_negligible(coeffs, float(u.max(initial=0.0))) :]:
        poly = poly * u + c
    out = np.where(inner, xs * poly, np.where(xs >= 1.0, 1.0, 0.0))
    return np.asarray(np.clip(out, 0.0, 1.0), dtype=np.float64)


def influence_density(x: npt.ArrayLike, depth: float, attn_share: float) -> FloatArray:
    """Continuous density of the Primacy Tail, ``sum_{k>=1} w_k (ln 1/x)^(k-1) / (k-1)!``.

    Excludes the Recency Delta (see :func:`recency_delta`). Evaluated as a log-sum-exp over
    ``k`` so that large ``H`` is stable; ``+inf`` at ``x = 0`` when any ``k >= 2`` term has weight.
    With ``alpha = 1`` it is the paper's ``(ln 1/x)^(H-1) / (H-1)!``.
    """
    from scipy.special import gammaln, logsumexp, xlogy  # the CDF path needs none of it

    xs = _as_unit_interval(x, "x")
    w = hop_weights(depth, attn_share)[1:]
    k = np.arange(1, w.size + 1, dtype=np.float64)
    keep = w > 0
    log_w, k = np.log(w[keep]), k[keep]
    with np.errstate(divide="ignore"):
        u = -np.log(xs)
    u_safe = np.where(np.isfinite(u), u, 1.0)
    terms = log_w + xlogy(k - 1, u_safe[..., None]) - gammaln(k)
    dens = np.exp(logsumexp(terms, axis=-1))
    unbounded = bool(np.any(k > 1))
    return np.asarray(
        np.where(np.isfinite(u), dens, np.inf if unbounded else w.sum()), dtype=np.float64
    )


def influence_exact(n_tokens: int, depth: int, attn_share: float) -> FloatArray:
    """Exact discrete influence of every position on the final token: the last row of ``M^H``.

    ``M = (1 - alpha) I + alpha C`` with the Cesàro matrix ``C[i, j] = 1/i`` for ``j <= i``. A row
    vector times ``C`` is a reversed cumulative sum, ``(v C)_j = sum_{i >= j} v_i / i``, so
    starting from ``v = e_N`` and applying ``v <- (1 - alpha) v + alpha · revcumsum(v / i)``
    ``H`` times gives the profile in ``O(N · H)`` time and ``O(N)`` memory; no ``N x N`` matrix
    is built.

    Returns:
        Array of length ``n_tokens``, position 1 first, summing to 1.
    """
    if isinstance(n_tokens, bool) or not isinstance(n_tokens, int | np.integer) or n_tokens < 1:
        raise ValueError(f"n_tokens must be an integer >= 1, got n_tokens={n_tokens!r}")
    if isinstance(depth, bool) or not isinstance(depth, int | np.integer):
        raise ValueError(f"depth must be an integer for the discrete profile, got depth={depth!r}")
    validate_depth_share(float(depth), float(attn_share))
    inv_pos = 1.0 / np.arange(1, n_tokens + 1, dtype=np.float64)
    v = np.zeros(n_tokens)
    v[-1] = 1.0
    keep = 1.0 - attn_share
    for _ in range(int(depth)):
        spread = np.cumsum((v * inv_pos)[::-1])[::-1]
        v = keep * v + attn_share * spread
    return v


def influence_dense(n_tokens: int, depth: int, attn_share: float) -> FloatArray:
    """Reference implementation: the last row of the dense ``M^H`` by ``np.linalg.matrix_power``.

    ``O(N^2)`` memory and ``O(N^3 log H)`` time; exists to verify :func:`influence_exact`.
    """
    if n_tokens < 1:
        raise ValueError(f"n_tokens must be >= 1, got n_tokens={n_tokens!r}")
    validate_depth_share(float(depth), float(attn_share))
    rows = np.arange(1, n_tokens + 1, dtype=np.float64)
    cesaro = np.tril(np.ones((n_tokens, n_tokens))) / rows[:, None]
    layer = (1.0 - attn_share) * np.eye(n_tokens) + attn_share * cesaro
    return np.asarray(np.linalg.matrix_power(layer, int(depth))[-1], dtype=np.float64)


def dead_zone(
    depth: float,
    attn_share: float,
    *,
    fraction: float = 0.5,
    reference: float = 0.05,
) -> tuple[float, float] | None:
    """The Dead Zone: the span of ``x`` where the density falls below ``fraction · rho(reference)``.

    The continuous density is non-increasing in ``x`` (every ``(ln 1/x)^(k-1)`` term is), so the
    zone is ``[x*, 1)`` with ``rho(x*) = fraction · rho(reference)``; it ends where the Recency
    Delta on the final token begins. Returns ``None`` when the density never falls that low (for
    example ``H = 1``, where it is flat).
    """
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"fraction must lie in (0, 1), got fraction={fraction!r}")
    if not 0.0 < reference < 1.0:
        raise ValueError(f"reference must lie in (0, 1), got reference={reference!r}")
    threshold = fraction * float(influence_density(reference, depth, attn_share))
    right = float(influence_density(1.0, depth, attn_share))
    if right >= threshold:
        return None
    lo, hi = reference, 1.0
    for _ in range(200):  # bisection on a monotone function; 200 halvings reach machine precision
        mid = 0.5 * (lo + hi)
        if float(influence_density(mid, depth, attn_share)) < threshold:
            hi = mid
        else:
            lo = mid
        if hi - lo < 1e-12:
            break
    return hi, 1.0


@dataclass(frozen=True)
class InfluenceComponents:
    """The three named components of the profile for one ``(H, alpha)``.

    Attributes:
        recency_delta: mass on the final token, ``(1 - alpha)^H``.
        primacy_mass: mass of the Primacy Tail on the first ``primacy_span`` of the sequence.
        primacy_span: the fraction of the sequence counted as the primacy region.
        dead_zone: ``(start, end)`` of the Dead Zone as fractions, or ``None``.
        dead_zone_mass: influence mass inside the Dead Zone (0 when there is none).
    """

    recency_delta: float
    primacy_mass: float
    primacy_span: float
    dead_zone: tuple[float, float] | None
    dead_zone_mass: float


def components(
    depth: float,
    attn_share: float,
    *,
    primacy_span: float = 0.1,
    fraction: float = 0.5,
    reference: float = 0.05,
) -> InfluenceComponents:
    """Summarise the Primacy Tail, Recency Delta and Dead Zone of one ``(H, alpha)``."""
    zone = dead_zone(depth, attn_share, fraction=fraction, reference=reference)
    zone_mass = 0.0
    if zone is not None:
        # The zone is open at 1: its mass excludes the delta.
        zone_mass = float(
            influence_cdf(np.nextafter(1.0, 0.0), depth, attn_share)
            - influence_cdf(zone[0], depth, attn_share)
        )
    return InfluenceComponents(
        recency_delta=recency_delta(depth, attn_share),
        primacy_mass=float(influence_cdf(primacy_span, depth, attn_share)),
        primacy_span=primacy_span,
        dead_zone=zone,
        dead_zone_mass=zone_mass,
    )
