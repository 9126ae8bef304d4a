"""Rotated ends: a base order with the best choice of final chunk.

The final slot is special: it holds the point masses (the theory's Recency Delta when the chunks
fill the sequence) and, under the ``mass`` rule, rewards long chunks. So an order is tried with
each likely chunk moved to the end, and the best kept. :func:`ratio_order` does so for the order
by relevance per divisor (Smith's rule): where the density is locally linear and decreasing,
``a`` before ``b`` gains ``d · (r_a l_b - r_b l_a)`` under mean density, so chunks go in
decreasing ``r / l``; under ``mass`` (divisor ``lbar``) they go in decreasing ``r``.
"""

from __future__ import annotations

import numpy as np

from bookend_rag.arrays import IntArray
from bookend_rag.placement.orders import first_best
from bookend_rag.placement.problem import Problem

__all__ = ["END_CANDIDATES", "best_rotation", "end_candidates", "ratio_order"]

#: Above twice this many chunks, only the likeliest chunks are tried at the end.
END_CANDIDATES = 32


def ratio_order(problem: Problem) -> IntArray:
    """Chunks by relevance per divisor (``r / l``, or ``r / lbar`` under ``mass``), with the best
    final chunk."""
    ratio = problem.relevance / problem.weigher.continuous_divisor
    return best_rotation(problem, np.argsort(-ratio, kind="stable").astype(np.int64))


def best_rotation(problem: Problem, base: IntArray) -> IntArray:
    """Of the orders ``base`` without chunk ``j``, then ``j``, for every likely ``j``
    (:func:`end_candidates`), the one of highest objective (the earliest candidate on ties)."""
    ends = end_candidates(problem)
    k = base.size
    keep = base[None, :] != ends[:, None]
    rest = base[None, :].repeat(ends.size, axis=0)[keep].reshape(ends.size, k - 1)
    rotations = np.concatenate((rest, ends[:, None]), axis=1).astype(np.int64, copy=False)
    return np.asarray(rotations[first_best(problem.objective(rotations))], dtype=np.int64)


def end_candidates(problem: Problem) -> IntArray:
    """Chunks worth trying in the final slot: all of them up to ``2·END_CANDIDATES``; beyond, the
    ``END_CANDIDATES / 4`` best by relevance, by relevance per divisor, by relevance times length
    and by length."""
    relevance, weigher = problem.relevance, problem.weigher
    k = relevance.size
    if k <= 2 * END_CANDIDATES:
        return np.arange(k, dtype=np.int64)
    lengths = weigher.lengths
    keys = (relevance, relevance / weigher.continuous_divisor, relevance * lengths, lengths)
    best = [np.argsort(-key, kind="stable")[: END_CANDIDATES // 4] for key in keys]
    return np.unique(np.concatenate(best)).astype(np.int64)
