"""Which part of a document order moves the gold answer: a regression within items.

A ``bookend eval`` run scores many orders of the same item (every strategy and the random draws).
For the built-in hard items each document's role is known (``bookend_rag_lab.items.hard.ROLES``),
so a scored order is described by

- the gold document's slot: one indicator per slot, the middle slot ``K // 2`` the reference;
- how many documents of each competing role precede the gold (near-duplicates, entity
  distractors, family distractors);
- how sorted the order is: ``|rho(o)|``, the absolute Spearman correlation between each
  document's slot and its retrieval rank (1 for retrieval order and its reverse, near 0 for a
  shuffle),

and the scores are fit as

    y[i, o] = a[i] + sum_s b[s] [gold of o at s] + sum_r c[r] n_r(o) + d |rho(o)| + e[i, o]

with an effect ``a[i]`` per item (removed by subtracting each item's means, so only differences
between orders of the same item inform ``b``, ``c`` and ``d``). The fitted terms split a
strategy's lead over the random shuffle into a gold-slot, a precedence and a sortedness part;
what they leave is unexplained. Intervals resample items.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from bookend_rag.arrays import FloatArray
from bookend_rag_lab.items.hard import GOLD, ROLES
from placement_quality.expected import slots_of_ranks

__all__ = [
    "COMPETING_ROLES",
    "SORTEDNESS",
    "bootstrap_within_items",
    "feature_names",
    "fit_within_items",
    "order_features",
    "sortedness",
]

#: Roles counted when they precede the gold (``hard_probe.ROLES`` without the gold).
COMPETING_ROLES = tuple(role for role in ROLES if role != GOLD)
SORTEDNESS = "sortedness |rho|"


def feature_names(k: int) -> list[str]:
    """Names of :func:`order_features`' entries for ``k`` documents."""
    reference = k // 2
    slots = [f"gold at slot {s + 1}" for s in range(k) if s != reference]
    return [*slots, *(f"{role}s before the gold" for role in COMPETING_ROLES), SORTEDNESS]


def _checked_permutation(order: Sequence[int], k: int, name: str) -> None:
    if sorted(order) != list(range(k)):
        raise ValueError(f"{name} must be a permutation of range({k}), got {name}={list(order)!r}")


def sortedness(order: Sequence[int], retrieval_order: Sequence[int]) -> float:
    """``|rho|``: the absolute Spearman correlation between the slot of each document in
    ``order`` and its slot in ``retrieval_order`` (both permutations of ``range(K)``, K >= 2)."""
    k = len(order)
    _checked_permutation(order, k, "order")
    _checked_permutation(retrieval_order, k, "retrieval_order")
    slots, ranks = slots_of_ranks(order), slots_of_ranks(retrieval_order)
    # Spearman on untied ranks: 1 - 6 sum d^2 / (K (K^2 - 1)).
    return float(abs(1.0 - 6.0 * np.sum((slots - ranks) ** 2) / (k * (k * k - 1))))


def order_features(
    order: Sequence[int], roles: Sequence[str], retrieval_order: Sequence[int]
) -> FloatArray:
    """The gold's slot indicators (slot ``K // 2`` left out), the count of each competing role
    before the gold and :func:`sortedness`, for ``order`` (document indices) of an item whose
    documents have ``roles`` and were retrieved in ``retrieval_order``.

    Raises:
        ValueError: when ``order`` or ``retrieval_order`` is not a permutation of the documents
            or ``roles`` has no single ``"gold"``.
    """
    k = len(roles)
    _checked_permutation(order, k, "order")
    if list(roles).count(GOLD) != 1:
        raise ValueError(
            f"roles must name exactly one {GOLD!r} document, got roles={list(roles)!r}"
        )
    in_order = [roles[j] for j in order]
    slot = in_order.index(GOLD)
    indicators = np.zeros(k)
    indicators[slot] = 1.0
    before = in_order[:slot]
    counts = [float(before.count(role)) for role in COMPETING_ROLES]
    return np.concatenate(
        [np.delete(indicators, k // 2), counts, [sortedness(order, retrieval_order)]]
    )


def _demeaned(values: FloatArray, groups: NDArray[np.int64]) -> FloatArray:
    """``values`` minus the mean of its group, row by row."""
    _, inverse, counts = np.unique(groups, return_inverse=True, return_counts=True)
    sums = np.zeros((counts.size, *values.shape[1:]))
    np.add.at(sums, inverse, values)
    sizes = counts[inverse].reshape(-1, *[1] * (values.ndim - 1))
    means: FloatArray = sums[inverse] / sizes
    return values - means


def fit_within_items(
    features: FloatArray, scores: FloatArray, groups: NDArray[np.int64]
) -> FloatArray:
    """Least-squares coefficients of ``scores`` on ``features`` with one free intercept per group
    (item): both sides minus their group means, then ``lstsq``.

    Raises:
        ValueError: when the rows of ``features``, ``scores`` and ``groups`` differ in number.
    """
    if not len(features) == len(scores) == len(groups):
        raise ValueError(
            f"features, scores and groups need one row each, got {len(features)}, "
            f"{len(scores)} and {len(groups)}"
        )
    coefficients, *_ = np.linalg.lstsq(
        _demeaned(features, groups), _demeaned(scores, groups), rcond=None
    )
    return np.asarray(coefficients, dtype=np.float64)


def bootstrap_within_items(
    features: FloatArray,
    scores: FloatArray,
    groups: NDArray[np.int64],
    *,
    draws: int = 1000,
    seed: int = 0,
) -> FloatArray:
    """``draws`` refits of :func:`fit_within_items` on items resampled with replacement (each
    drawn item keeps all its rows and counts as a new item); one row of coefficients per draw."""
    rng = np.random.default_rng(seed)
    items = np.unique(groups)
    rows = [np.flatnonzero(groups == item) for item in items]
    fits = []
    for _ in range(draws):
        picked = rng.integers(0, items.size, items.size)
        index = np.concatenate([rows[p] for p in picked])
        relabel = np.repeat(np.arange(items.size), [rows[p].size for p in picked])
        fits.append(fit_within_items(features[index], scores[index], relabel))
    return np.array(fits)
