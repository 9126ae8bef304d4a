"""Local search: swap and insertion moves from several starts, for unequal lengths beyond the exact
programme's reach.

The starts are the other optimisers' orders: relevance per divisor with the best final chunk
(:func:`~bookend_rag.placement.rotated_ends.ratio_order`), the sorted assignment into the slots of
equal chunks of the mean length, the alternate pattern and the relevance order, each with source
groups repaired. The search keeps the best, so it is never worse than any of them. Moves that
would reorder chunks of one group are never taken.

What it promises against the exact programme (the tests compare the two at K <= 11): where the
profile's density falls to the final token (every theory profile), the search from the best start
reaches the optimum. Where the density rises again (a measured U, a table's rising final bin) the
search runs from every start and ends in a local optimum, with no bound on its gap: on 2,000
random problems per shape the best end fell up to 1.2% short of the optimum on a measured U and
4.6% on a table whose final bin rises (``bench/heuristic_gap.py``). Placement takes the exact
programme up to ``exact_max_k`` chunks, so such a gap is possible above it only.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from bookend_rag.arrays import IntArray
from bookend_rag.placement.groups import repair_groups, respects_groups
from bookend_rag.placement.orders import TIE, alternate_order, first_best, rank_order
from bookend_rag.placement.problem import Optimiser, Problem
from bookend_rag.placement.rotated_ends import ratio_order
from bookend_rag.placement.sorted_assignment import assign_by_rank, slot_ranks

__all__ = [
    "FULL_NEIGHBOURHOOD_MAX_K",
    "MAX_SWEEP_PAIRS",
    "MIN_SWEEPS",
    "STARTS",
    "local_search",
    "local_search_order",
    "neighbourhood",
    "sweep_limit",
]

#: Full swap-and-insert neighbourhoods are evaluated up to this many chunks; above it only
#: adjacent swaps, which cost O(K) per pass.
FULL_NEIGHBOURHOOD_MAX_K = 32
_MAX_ROUNDS = 200

#: The adjacent-swap passes evaluate at most this many neighbour pairs in all (about a second):
#: ``2K + 2`` passes of ``K / 2`` pairs each below ``K`` of about 1,400, fewer passes beyond, at
#: least :data:`MIN_SWEEPS`. Odd-even passes need up to ``K`` passes to carry a chunk across the
#: sequence, which at K = 30,000 took minutes; the capped search still never ends worse than
#: its start, but above the cap it may stop before a local optimum.
MAX_SWEEP_PAIRS = 1_000_000
#: The fewest adjacent-swap passes, whatever ``K``.
MIN_SWEEPS = 64


def local_search_order(problem: Problem) -> IntArray:
    """The best order local search reaches from the starts of the module docstring."""
    starts = np.vstack([repair_groups(start(problem), problem.groups) for start in STARTS])
    if (
        problem.weigher.profile.density_falls_to_final_token
        or problem.size > FULL_NEIGHBOURHOOD_MAX_K
    ):
        return local_search(starts[first_best(problem.objective(starts))], problem)
    # A density that rises again (a measured U, a table's rising final bin: it spans many tokens)
    # has several local optima: search from every start (on 300 random instances this reached the
    # exact optimum where the best single start missed by up to 3%).
    ends = np.vstack([local_search(start, problem) for start in starts])
    return np.asarray(ends[first_best(problem.objective(ends))], dtype=np.int64)


def _slots_at_mean_length(problem: Problem) -> IntArray:
    weigher = problem.weigher
    return assign_by_rank(problem.relevance, slot_ranks(weigher, float(weigher.lengths.mean())))


#: The starts of the search (module docstring), in the order they are tried.
STARTS: tuple[Optimiser, ...] = (
    ratio_order,
    _slots_at_mean_length,
    lambda problem: alternate_order(problem.relevance),
    lambda problem: rank_order(problem.relevance),
)


def local_search(start: IntArray, problem: Problem) -> IntArray:
    """Improve ``start`` by swap and insertion moves until no move improves the objective.

    Up to :data:`FULL_NEIGHBOURHOOD_MAX_K` chunks every pairwise swap and every insertion is
    evaluated (best improvement first); above it, odd-even adjacent-swap passes, at most
    :func:`sweep_limit` of them (so the time grows about linearly in K). The result is never
    worse than ``start``.
    """
    cur = _adjacent_swap_passes(start, problem)
    if cur.size > FULL_NEIGHBOURHOOD_MAX_K or cur.size < 3:
        return cur
    cur_val = float(problem.objective(cur))
    scale = max(float(np.abs(problem.relevance).max(initial=0.0)), 1e-300) * cur.size
    for _ in range(_MAX_ROUNDS):
        cands = neighbourhood(cur)
        if problem.groups is not None:
            cands = cands[respects_groups(cands, problem.groups)]
            if cands.shape[0] == 0:
                break
        values = problem.objective(cands)
        best = first_best(values)
        if values[best] <= cur_val + TIE * scale:
            break
        cur, cur_val = cands[best], float(values[best])
    return cur


def neighbourhood(order: IntArray) -> IntArray:
    """Every order one swap or one insertion away from ``order``."""
    return order[_move_templates(order.size)]


@lru_cache(maxsize=64)
def _move_templates(k: int) -> IntArray:
    """Position permutations of every pairwise swap and every insertion move on ``k`` slots.

    Row ``m`` maps new positions to old ones, so ``order[templates]`` lists all neighbours.
    """
    identity = np.arange(k)
    i, j = np.triu_indices(k, 1)
    swaps = np.tile(identity, (i.size, 1))
    swaps[np.arange(i.size), i] = j
    swaps[np.arange(i.size), j] = i
    # Moving the chunk at src to dst (dst == src - 1 would repeat an adjacent swap).
    src, dst = np.meshgrid(identity, identity, indexing="ij")
    keep = (dst != src) & (dst != src - 1)
    src, dst = src[keep], dst[keep]
    pos = identity[None, :]
    lo, hi = np.minimum(src, dst)[:, None], np.maximum(src, dst)[:, None]
    shift = np.where(dst[:, None] > src[:, None], 1, -1)
    inserts = np.where((pos >= lo) & (pos <= hi), pos + shift, pos)
    inserts[np.arange(src.size), dst] = src
    templates = np.vstack((swaps, inserts)).astype(np.int64)
    templates.flags.writeable = False
    return templates


def sweep_limit(k: int) -> int:
    """How many odd-even passes :func:`local_search` makes at most over ``k`` chunks: ``2k + 2``
    (enough to converge) while the pairs they evaluate stay within :data:`MAX_SWEEP_PAIRS`."""
    return min(2 * k + 2, max(MIN_SWEEPS, 2 * MAX_SWEEP_PAIRS // max(k, 1)))


def _adjacent_swap_passes(order: IntArray, problem: Problem) -> IntArray:
    """Odd-even transposition: apply every improving adjacent swap, alternating parities, for at
    most :func:`sweep_limit` passes."""
    cur = order.copy()
    relevance, weigher, group_id = problem.relevance, problem.weigher, problem.groups
    lengths = weigher.lengths
    scale = max(float(np.abs(relevance).max(initial=0.0)), 1e-300)
    idle = 0
    for sweep in range(sweep_limit(cur.size)):
        left = np.arange(sweep % 2, cur.size - 1, 2)
        if left.size == 0:
            break
        edges = weigher.prefix + np.concatenate(([0.0], np.cumsum(lengths[cur])))
        a, b = cur[left], cur[left + 1]
        e0, e1, e2 = edges[left], edges[left + 1], edges[left + 2]
        mid = e0 + lengths[b]
        pair = np.concatenate((a, b, b, a))
        w = weigher.span_weights(
            pair, np.concatenate((e0, e1, e0, mid)), np.concatenate((e1, e2, mid, e2))
        ).reshape(4, -1)
        old = relevance[a] * w[0] + relevance[b] * w[1]
        new = relevance[b] * w[2] + relevance[a] * w[3]
        improve = new - old > TIE * scale
        if group_id is not None:
            ga, gb = group_id[a], group_id[b]
            improve &= (ga < 0) | (ga != gb)
        if np.any(improve):
            sel = left[improve]
            cur[sel], cur[sel + 1] = cur[sel + 1].copy(), cur[sel].copy()
            idle = 0
        else:
            idle += 1
            if idle >= 2:
                break
    return cur
