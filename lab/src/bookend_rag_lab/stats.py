"""Every interval of the lab: bootstrap over items, paired differences, Wilson and normal bands.

Strategies are scored on the same items, so they are compared item by item (paired): item
difficulty cancels out of the difference. The bootstrap resamples items with replacement:
``scipy.stats.bootstrap`` draws the resamples from a fixed seed (the same values always give the
same interval) and the 2.5% and 97.5% quantiles of the resampled means are the interval.
Resampling *clusters* (an item scored in several slots) keeps the outcomes of one item together.
The minimum detectable difference comes from the standard error of the paired differences. For
per-slot accuracies of a calibration: the Wilson score interval; for per-slot means, the normal
interval ``mean ± z sd / sqrt(n)`` with ``z = Z95``.

Paired 0/1 outcomes (two strategies right or wrong on the same items, as generated answers give):
McNemar's exact test on the discordant pairs, the paired bootstrap interval of the difference in
accuracy (:func:`paired_accuracy`), and the items a wanted difference needs
(:func:`mcnemar_sample_size`, Connor 1987).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, cast

import numpy as np
import numpy.typing as npt
from scipy import stats

from bookend_rag.arrays import FloatArray

__all__ = [
    "MDE_FACTOR",
    "N_BOOT",
    "Z95",
    "Estimate",
    "Interval",
    "PairedAccuracy",
    "PairedDifference",
    "bootstrap_means",
    "cluster_interval",
    "estimate",
    "mcnemar_exact",
    "mcnemar_sample_size",
    "minimum_detectable_difference",
    "normal_interval",
    "paired_accuracy",
    "paired_difference",
    "wilson_interval",
]

#: ``z_{0.975}``, the two-sided 95% normal quantile.
Z95 = float(stats.norm.ppf(0.975))
#: ``z_{0.975} + z_{0.80}``: a true paired difference of ``MDE_FACTOR`` standard errors is found
#: significant at 5% (two-sided) with 80% power.
MDE_FACTOR = 2.8
N_BOOT = 4000


def _mean(values: FloatArray, axis: int = -1) -> FloatArray:
    return np.asarray(values.mean(axis=axis), dtype=np.float64)


def bootstrap_means(values: npt.ArrayLike, n_boot: int = N_BOOT, seed: int = 0) -> FloatArray:
    """Means of ``values`` over ``n_boot`` resamples of the items (with replacement).

    One item resamples to itself: ``n_boot`` copies of its value.
    """
    vals = np.asarray(values, dtype=np.float64)
    if vals.ndim != 1 or vals.size == 0:
        raise ValueError(f"values must be a non-empty 1-D array, got shape {vals.shape}")
    if vals.size == 1:
        return np.full(n_boot, vals[0])
    result = stats.bootstrap(
        (vals,), _mean, n_resamples=n_boot, method="percentile", rng=np.random.default_rng(seed)
    )
    return np.asarray(result.bootstrap_distribution, dtype=np.float64)


@dataclass(frozen=True)
class Estimate:
    """A mean over items with its 95% bootstrap interval."""

    mean: float
    ci_low: float
    ci_high: float
    n: int

    def to_json(self) -> dict[str, float | int]:
        """JSON-ready fields."""
        return asdict(self)


def estimate(values: npt.ArrayLike, n_boot: int = N_BOOT) -> Estimate:
    """Mean of per-item values and its 95% percentile interval."""
    vals = np.asarray(values, dtype=np.float64)
    low, high = np.quantile(bootstrap_means(vals, n_boot), [0.025, 0.975])
    return Estimate(float(vals.mean()), float(low), float(high), int(vals.size))


def minimum_detectable_difference(diffs: npt.ArrayLike) -> float:
    """``MDE_FACTOR`` times the standard error ``sd(d) / sqrt(n)`` of the mean paired difference.

    Raises:
        ValueError: with fewer than two differences (no standard deviation).
    """
    d = np.asarray(diffs, dtype=np.float64)
    if d.size < 2:
        raise ValueError(f"need at least 2 paired differences, got {d.size}")
    return float(MDE_FACTOR * d.std(ddof=1) / np.sqrt(d.size))


class Interval:
    """What a paired comparison with an interval ``[ci_low, ci_high]`` of its difference says;
    mixed into the frozen dataclasses that hold one."""

    ci_low: float
    ci_high: float

    @property
    def verdict(self) -> str:
        """``"better"``/``"worse"`` when the interval excludes 0, else ``"no difference"``."""
        if self.ci_low > 0.0:
            return "better"
        if self.ci_high < 0.0:
            return "worse"
        return "no difference"

    def to_json(self) -> dict[str, float | int | str]:
        """JSON-ready fields, with the verdict."""
        fields: dict[str, float | int | str] = asdict(cast(Any, self))
        return {**fields, "verdict": self.verdict}


@dataclass(frozen=True)
class PairedDifference(Interval):
    """Strategy A minus strategy B on the same items.

    Attributes:
        diff: mean of the per-item differences.
        ci_low, ci_high: its 95% bootstrap interval.
        p_bootstrap: two-sided bootstrap p-value of ``diff = 0``.
        mde: minimum detectable difference at this n (:func:`minimum_detectable_difference`).
        n: items.
    """

    diff: float
    ci_low: float
    ci_high: float
    p_bootstrap: float
    mde: float
    n: int


def paired_difference(a: npt.ArrayLike, b: npt.ArrayLike, n_boot: int = N_BOOT) -> PairedDifference:
    """Compare per-item values ``a`` and ``b`` (same items, same order).

    Raises:
        ValueError: when the two arrays differ in length or hold fewer than two items.
    """
    va, vb = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if va.shape != vb.shape:
        raise ValueError(f"a and b must have one value per item each, got {va.shape}, {vb.shape}")
    d = va - vb
    mde = minimum_detectable_difference(d)
    boot = bootstrap_means(d, n_boot)
    low, high = np.quantile(boot, [0.025, 0.975])
    p = min(1.0, 2.0 * min(float(np.mean(boot <= 0)), float(np.mean(boot >= 0))))
    return PairedDifference(
        diff=float(d.mean()),
        ci_low=float(low),
        ci_high=float(high),
        p_bootstrap=p,
        mde=mde,
        n=int(d.size),
    )


def cluster_interval(
    clusters: npt.ArrayLike, values: npt.ArrayLike, n_boot: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """95% percentile interval of the mean of ``values`` when whole clusters are resampled.

    ``clusters[i]`` is the integer label of the cluster of ``values[i]`` (an item scored in
    several slots). A resample draws clusters with replacement (in the order of their labels);
    its mean is the sum of the drawn clusters' values over their number of values.
    """
    labels = np.asarray(clusters, dtype=np.int64)
    vals = np.asarray(values, dtype=np.float64)
    ids = np.unique(labels)
    sums = np.array([vals[labels == i].sum() for i in ids])
    counts = np.array([(labels == i).sum() for i in ids], dtype=np.float64)

    def ratio(s: FloatArray, c: FloatArray, axis: int = -1) -> FloatArray:
        return np.asarray(s.sum(axis=axis) / c.sum(axis=axis), dtype=np.float64)

    result = stats.bootstrap(
        (sums, counts),
        ratio,
        paired=True,
        n_resamples=n_boot,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    low, high = np.percentile(result.bootstrap_distribution, [2.5, 97.5])
    return float(low), float(high)


def wilson_interval(successes: int, trials: int) -> tuple[float, float]:
    """The 95% Wilson score interval ``(p + z²/2n ± z sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)``.

    Raises:
        ValueError: for ``trials < 1``.
    """
    if trials < 1:
        raise ValueError(f"trials must be >= 1, got trials={trials!r}")
    ci = stats.binomtest(successes, trials).proportion_ci(confidence_level=0.95, method="wilson")
    return float(ci.low), float(ci.high)


def normal_interval(values: npt.ArrayLike) -> tuple[float, float, float]:
    """``(mean, low, high)`` with ``mean ± Z95 sd / sqrt(n)``; infinite for a single value."""
    vals = np.asarray(values, dtype=np.float64)
    mean = float(vals.mean())
    half = Z95 * float(vals.std(ddof=1)) / math.sqrt(vals.size) if vals.size > 1 else math.inf
    return mean, mean - half, mean + half


def _outcomes(values: npt.ArrayLike, name: str) -> npt.NDArray[np.bool_]:
    vals = np.asarray(values)
    if vals.ndim != 1 or not np.isin(vals, (0, 1)).all():
        raise ValueError(f"{name} must be a 1-D array of 0/1 outcomes, got {vals!r:.80}")
    return vals.astype(bool)


def mcnemar_exact(a: npt.ArrayLike, b: npt.ArrayLike) -> tuple[int, int, float]:
    """McNemar's exact test of paired 0/1 outcomes ``a`` and ``b`` (same items, same order).

    Only the discordant items count: ``n_ab`` where A is right and B wrong, ``n_ba`` the reverse.
    Under the null of equal accuracy each discordant item is A's with probability 1/2, so the
    two-sided p-value is ``scipy.stats.binomtest(n_ab, n_ab + n_ba, 0.5).pvalue`` (1 when there
    is no discordant item).

    Returns:
        ``(n_ab, n_ba, p_value)``.

    Raises:
        ValueError: when the arrays differ in length or hold values other than 0 and 1.
    """
    va, vb = _outcomes(a, "a"), _outcomes(b, "b")
    if va.shape != vb.shape:
        raise ValueError(f"a and b must have one value per item each, got {va.shape}, {vb.shape}")
    n_ab, n_ba = int(np.sum(va & ~vb)), int(np.sum(~va & vb))
    if n_ab + n_ba == 0:
        return n_ab, n_ba, 1.0
    return n_ab, n_ba, float(stats.binomtest(n_ab, n_ab + n_ba, 0.5).pvalue)


@dataclass(frozen=True)
class PairedAccuracy(Interval):
    """Strategy A's accuracy minus strategy B's on the same items (0/1 outcomes).

    Attributes:
        diff: ``accuracy_a - accuracy_b = (n_ab - n_ba) / n``.
        ci_low, ci_high: its 95% paired bootstrap interval (:func:`paired_difference`).
        p_mcnemar: McNemar's exact two-sided p-value (:func:`mcnemar_exact`).
        n_ab: items A gets right and B wrong; n_ba: the reverse.
        n: items.
    """

    diff: float
    ci_low: float
    ci_high: float
    p_mcnemar: float
    n_ab: int
    n_ba: int
    n: int


def paired_accuracy(a: npt.ArrayLike, b: npt.ArrayLike, n_boot: int = N_BOOT) -> PairedAccuracy:
    """Compare 0/1 outcomes ``a`` and ``b`` (same items, same order): the difference in accuracy,
    its paired bootstrap interval (the items resampled, as :func:`paired_difference` does) and
    McNemar's exact p-value.

    Raises:
        ValueError: when the arrays differ in length, hold values other than 0 and 1, or fewer
            than two items.
    """
    n_ab, n_ba, p = mcnemar_exact(a, b)
    paired = paired_difference(np.asarray(a, float), np.asarray(b, float), n_boot)
    return PairedAccuracy(
        diff=paired.diff,
        ci_low=paired.ci_low,
        ci_high=paired.ci_high,
        p_mcnemar=p,
        n_ab=n_ab,
        n_ba=n_ba,
        n=paired.n,
    )


def mcnemar_sample_size(
    p_ab: float, p_ba: float, *, alpha: float = 0.05, power: float = 0.8
) -> int:
    """Items McNemar's test needs to find a difference ``p_ab - p_ba`` in accuracy (two-sided
    level ``alpha``, the given ``power``), Connor (1987, Biometrics 43:207-211):

        n = ( z_{1-alpha/2} sqrt(psi) + z_{power} sqrt(psi - delta^2) )^2 / delta^2,

    with ``p_ab`` the share of items A gets right and B wrong, ``p_ba`` the reverse,
    ``psi = p_ab + p_ba`` (the discordant share) and ``delta = p_ab - p_ba``; rounded up.

    Raises:
        ValueError: for shares outside [0, 1], ``psi > 1``, ``delta = 0`` (no difference to
            find), or ``alpha``/``power`` outside (0, 1).
    """
    psi, delta = p_ab + p_ba, p_ab - p_ba
    if not (0.0 <= p_ab <= 1.0 and 0.0 <= p_ba <= 1.0 and psi <= 1.0):
        raise ValueError(
            f"p_ab and p_ba must be shares in [0, 1] summing to at most 1, got p_ab={p_ab!r}, "
            f"p_ba={p_ba!r}"
        )
    if delta == 0.0:
        raise ValueError(f"p_ab = p_ba = {p_ab!r}: there is no difference to detect")
    if not (0.0 < alpha < 1.0 and 0.0 < power < 1.0):
        raise ValueError(f"alpha and power must be in (0, 1), got {alpha!r}, {power!r}")
    z_alpha = float(stats.norm.ppf(1.0 - alpha / 2.0))
    z_power = float(stats.norm.ppf(power))
    root = z_alpha * math.sqrt(psi) + z_power * math.sqrt(psi - delta**2)
    return math.ceil(root**2 / delta**2)
