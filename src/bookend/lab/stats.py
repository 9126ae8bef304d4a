"""Every interval of the lab: bootstrap over items, paired differences, Wilson and normal bands.

Strategies are scored on the same items, so they are compared item by item (paired): item
difficulty cancels out of the difference. The bootstrap resamples items with replacement:
``scipy.stats.bootstrap`` draws the resamples from a fixed seed (the same values always give the
same interval) and the 2.5% and 97.5% quantiles of the resampled means are the interval.
Resampling *clusters* (an item scored in several slots) keeps the outcomes of one item together.
The minimum detectable difference comes from the standard error of the paired differences. For
per-slot accuracies of a calibration: the Wilson score interval; for per-slot means, the normal
interval ``mean ± z sd / sqrt(n)`` with ``z = Z95``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, cast

import numpy as np
import numpy.typing as npt
from scipy import stats

from bookend.arrays import FloatArray

__all__ = [
    "MDE_FACTOR",
    "N_BOOT",
    "Z95",
    "Estimate",
    "Interval",
    "PairedDifference",
    "bootstrap_means",
    "cluster_interval",
    "estimate",
    "minimum_detectable_difference",
    "normal_interval",
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
