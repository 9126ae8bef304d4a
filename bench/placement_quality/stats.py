"""Confidence intervals and paired comparisons for per-item correctness.

Rows are runs on items; should an item appear in several rows (say once per retriever), rows are
not independent. Both the accuracy interval and the paired comparison therefore resample *items*
(a cluster bootstrap), and McNemar's exact test on the discordant rows is reported beside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb

import numpy as np
import numpy.typing as npt

BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]


def _cluster_weights(clusters: npt.ArrayLike, n_boot: int, seed: int) -> tuple[IntArray, IntArray]:
    """Per bootstrap replicate, how often each cluster is drawn; and each row's cluster index."""
    _, row_cluster = np.unique(np.asarray(clusters), return_inverse=True)
    n_clusters = int(row_cluster.max()) + 1
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_clusters, size=(n_boot, n_clusters))
    counts = np.zeros((n_boot, n_clusters), dtype=np.int64)
    np.add.at(counts, (np.arange(n_boot)[:, None], draws), 1)
    return counts, row_cluster.astype(np.int64)


def bootstrap_means(
    values: npt.ArrayLike, clusters: npt.ArrayLike, n_boot: int = 4000, seed: int = 0
) -> npt.NDArray[np.float64]:
    """Means of ``values`` over ``n_boot`` cluster-bootstrap replicates."""
    vals = np.asarray(values, dtype=np.float64)
    counts, row_cluster = _cluster_weights(clusters, n_boot, seed)
    weights = counts[:, row_cluster]  # (n_boot, n_rows): how often each row is drawn
    return np.asarray((weights @ vals) / weights.sum(axis=1), dtype=np.float64)


@dataclass(frozen=True)
class Accuracy:
    """Accuracy with a 95% cluster-bootstrap percentile interval."""

    accuracy: float
    ci_low: float
    ci_high: float
    n: int

    def to_json(self) -> dict[str, float | int]:
        return {
            "accuracy": self.accuracy,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "n": self.n,
        }


def accuracy(correct: npt.ArrayLike, clusters: npt.ArrayLike, n_boot: int = 4000) -> Accuracy:
    """Mean correctness and its 95% interval, resampling clusters (items)."""
    values = np.asarray(correct, dtype=np.float64)
    boot = bootstrap_means(values, clusters, n_boot)
    low, high = np.quantile(boot, [0.025, 0.975])
    return Accuracy(float(values.mean()), float(low), float(high), int(values.size))


@dataclass(frozen=True)
class Paired:
    """A paired comparison of strategy A against B on the same rows.

    Attributes:
        diff: accuracy of A minus accuracy of B.
        ci_low, ci_high: 95% cluster-bootstrap interval of ``diff``.
        p_bootstrap: two-sided bootstrap p-value of ``diff = 0``.
        a_only, b_only: rows only A (only B) got right, the discordant pairs.
        p_mcnemar: McNemar's exact two-sided p-value on the discordant rows.
    """

    diff: float
    ci_low: float
    ci_high: float
    p_bootstrap: float
    a_only: int
    b_only: int
    p_mcnemar: float

    @property
    def significant(self) -> bool:
        """A is better than B at 95%: the whole interval of the difference is above 0."""
        return self.ci_low > 0.0

    def to_json(self) -> dict[str, float | int | bool]:
        return {**vars(self), "significant": self.significant}


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value: a binomial test of the discordant pairs at 1/2."""
    n = a_only + b_only
    if n == 0:
        return 1.0
    k = min(a_only, b_only)
    tail = sum(comb(n, i) for i in range(k + 1)) / 2.0**n
    return float(min(1.0, 2.0 * tail))


def paired(
    a: npt.ArrayLike, b: npt.ArrayLike, clusters: npt.ArrayLike, n_boot: int = 4000
) -> Paired:
    """Compare correctness ``a`` and ``b`` row by row (see :class:`Paired`)."""
    ca, cb = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    diff = ca.astype(np.float64) - cb.astype(np.float64)
    boot = bootstrap_means(diff, clusters, n_boot)
    low, high = np.quantile(boot, [0.025, 0.975])
    p_boot = min(1.0, 2.0 * min(float(np.mean(boot <= 0)), float(np.mean(boot >= 0))))
    a_only, b_only = int(np.sum(ca & ~cb)), int(np.sum(~ca & cb))
    return Paired(
        diff=float(diff.mean()),
        ci_low=float(low),
        ci_high=float(high),
        p_bootstrap=p_boot,
        a_only=a_only,
        b_only=b_only,
        p_mcnemar=mcnemar_exact(a_only, b_only),
    )
