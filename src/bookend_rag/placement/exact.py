"""The exact subset programme: optimal for any lengths, rule and groups, in ``O(2^K · K)``.

A chunk's span, and so its weight under every rule, depends only on the total length placed before
it. So ``dp[T] = max_{j in T} dp[T - j] + r_j · w_j(end of T - j, end of T)`` is the best value of
placing the set ``T`` first, and the optimal order is read back from the choices. Chunks of one
group enter only after their predecessors in that group.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from bookend_rag.arrays import IntArray
from bookend_rag.placement.problem import Problem

__all__ = ["exact_order"]


def exact_order(problem: Problem) -> IntArray:
    """The optimal order by dynamic programming over subsets (module docstring)."""
    k = problem.size
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    relevance, weigher, group_id = problem.relevance, problem.weigher, problem.groups
    subsets = np.arange(1 << k)
    sums = np.zeros(1 << k)
    for j in range(k):
        sums += ((subsets >> j) & 1) * weigher.lengths[j]
    continuous, point = weigher.parts(weigher.prefix + sums)
    pred = np.zeros(k, dtype=np.int64)
    if group_id is not None:
        for j in range(k):
            if group_id[j] >= 0:
                earlier = np.flatnonzero(group_id[:j] == group_id[j])
                pred[j] = int(np.sum(1 << earlier)) if earlier.size else 0
    per_continuous, per_point = weigher.unit_weights(np.arange(k))
    gain = relevance * per_continuous
    point_gain = None if point is None or per_point is None else relevance * per_point
    dp = np.full(1 << k, -np.inf)
    dp[0] = 0.0
    choice = np.full(1 << k, -1, dtype=np.int64)
    for targets in _subsets_by_size(k):
        best = np.full(targets.size, -np.inf)
        arg = np.full(targets.size, -1, dtype=np.int64)
        for j in range(k):
            before = targets ^ (1 << j)
            valid = ((targets >> j) & 1).astype(bool) & ((before & pred[j]) == pred[j])
            value = gain[j] * (continuous[targets] - continuous[before])
            if point_gain is not None and point is not None:
                value = value + point_gain[j] * (point[targets] - point[before])
            cand = np.where(valid, dp[before] + value, -np.inf)
            better = cand > best
            best = np.where(better, cand, best)
            arg = np.where(better, j, arg)
        dp[targets] = best
        choice[targets] = arg
    order = np.empty(k, dtype=np.int64)
    state = (1 << k) - 1
    for pos in range(k - 1, -1, -1):
        j = int(choice[state])
        order[pos] = j
        state ^= 1 << j
    return order


@lru_cache(maxsize=32)
def _subsets_by_size(k: int) -> tuple[IntArray, ...]:
    """The bit masks of the subsets of ``k`` chunks with 1, 2, ..., ``k`` members."""
    subsets = np.arange(1 << k)
    popcount = np.zeros(1 << k, dtype=np.int64)
    for j in range(k):
        popcount += (subsets >> j) & 1
    return tuple(subsets[popcount == size] for size in range(1, k + 1))
