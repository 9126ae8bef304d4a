"""Rank the slots, sort the chunks into them: the default path, and exact when slots are fixed.

When every chunk has the same length in the weigher's frame (equal token lengths, the ``slot``
rule whatever the lengths, or a per-document profile) the slot weights do not depend on the order,
so the most relevant chunk into the heaviest slot, the second into the second heaviest and so on
is optimal (rearrangement inequality).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from bookend_rag.arrays import FloatArray, IntArray
from bookend_rag.placement.orders import rank_order, weight_tiers
from bookend_rag.placement.problem import Problem
from bookend_rag.profiles.base import InfluenceProfile
from bookend_rag.weighing import ChunkWeigher, Frame, WeightRule

__all__ = ["assign_by_rank", "frame_slot_ranks", "slot_ranks", "sorted_assignment"]


def sorted_assignment(problem: Problem) -> IntArray:
    """The optimal order when every chunk has one length in the weigher's frame
    (``problem.weigher.equal_lengths``)."""
    weigher = problem.weigher
    return assign_by_rank(problem.relevance, slot_ranks(weigher, float(weigher.lengths[0])))


def assign_by_rank(relevance: FloatArray, ranks: IntArray) -> IntArray:
    """The order that gives slot ``s`` the chunk of relevance rank ``ranks[s]`` (0 the most
    relevant; ties between chunks keep input order)."""
    return rank_order(relevance)[ranks]


def slot_ranks(weigher: ChunkWeigher, length: float) -> IntArray:
    """Per slot of ``weigher``'s chunks, its rank by weight (0 the heaviest; ties within
    :data:`~bookend_rag.placement.orders.WEIGHT_TIE`: the earlier slot first) when each chunk has
    frame length ``length`` in the same sequence."""
    return _ranks(
        weigher.profile, weigher.rule, weigher.prefix, weigher.total, weigher.lengths.size, length
    )


def frame_slot_ranks(profile: InfluenceProfile, rule: WeightRule, frame: Frame, k: int) -> IntArray:
    """:func:`slot_ranks` of ``k`` chunks that all count at the mean length of ``frame``
    (``frame.at_mean_length``): the small-K path's slots, ranked by the same rule and cache."""
    return _ranks(profile, rule, frame.prefix, frame.total, k, frame.mean)


@lru_cache(maxsize=512)
def _ranks(
    profile: InfluenceProfile, rule: WeightRule, prefix: float, total: float, k: int, length: float
) -> IntArray:
    """Keyed on what repeats between calls: no entry per distinct set of lengths."""
    lengths = np.full(k, length)
    # With equal lengths every weight rule gives the mean density (WeightRule's contract): the
    # length divides the whole span mass.
    weigher = ChunkWeigher(profile, rule, lengths, prefix, total, lengths, None)
    ranks = np.empty(k, dtype=np.int64)
    # Tied slots (within WEIGHT_TIE) rank in slot order, so they take chunks in relevance order.
    tiers = weight_tiers(weigher.weights_of_orders(np.arange(k)))
    ranks[np.lexsort((np.arange(k), tiers))] = np.arange(k)
    ranks.flags.writeable = False
    return ranks
