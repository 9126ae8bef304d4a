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
from bookend_rag.layout import Layout
from bookend_rag.placement.orders import rank_order, weight_tiers
from bookend_rag.placement.problem import Problem
from bookend_rag.profiles.base import InfluenceProfile
from bookend_rag.weighing import ChunkWeigher, Frame, WeightRule

__all__ = [
    "assign_by_rank",
    "assign_floats_by_rank",
    "frame_slot_ranks",
    "front_to_back_ranks",
    "ranks_front_to_back",
    "slot_ranks",
    "slots_front_to_back",
    "sorted_assignment",
]


def sorted_assignment(problem: Problem) -> IntArray:
    """The optimal order when every chunk has one length in the weigher's frame
    (``problem.weigher.equal_lengths``)."""
    weigher = problem.weigher
    return assign_by_rank(problem.relevance, slot_ranks(weigher, float(weigher.lengths[0])))


def assign_by_rank(relevance: FloatArray, ranks: IntArray) -> IntArray:
    """The order that gives slot ``s`` the chunk of relevance rank ``ranks[s]`` (0 the most
    relevant; ties between chunks keep input order)."""
    return rank_order(relevance)[ranks]


def assign_floats_by_rank(by_relevance: list[int], ranks: list[int]) -> list[int]:
    """:func:`assign_by_rank` on Python lists (the small-K path,
    :mod:`bookend_rag.placement.small_k`), given the chunks' relevance order ``by_relevance``
    (:func:`~bookend_rag.placement.orders.rank_order`'s, ties in input order)."""
    return [by_relevance[rank] for rank in ranks]


def ranks_front_to_back(profile: InfluenceProfile, tokens_after_chunks: float) -> bool:
    """Whether the slots rank front to back without weighing them, whatever the chunks' lengths:
    equal spans of a density that never rises before the final token weigh less from front to
    back, and that token lies after the chunks.

    ``tokens_after_chunks`` is a whole number in exact arithmetic (the layout's suffix and any
    fixed chunk after the movable ones); half a token absorbs the rounding of the frame's sums.
    """
    return tokens_after_chunks >= 0.5 and profile.density_falls_to_final_token


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


def _ranks(
    profile: InfluenceProfile, rule: WeightRule, prefix: float, total: float, k: int, length: float
) -> IntArray:
    """Per slot its rank by weight when ``k`` chunks of ``length`` follow ``prefix`` tokens in a
    sequence of ``total``."""
    if ranks_front_to_back(profile, total - (prefix + k * length)):
        # The theory's case with the default layout, where a cache keyed on the lengths would
        # miss on every new call.
        return front_to_back_ranks(k)
    return _weighed_ranks(profile, rule, prefix, total, k, length)


def slots_front_to_back(profile: InfluenceProfile, rule: WeightRule, layout: Layout) -> bool:
    """Whether the slots rank front to back whatever the chunks' lengths (with nothing fixed
    around them): ``rule`` counts every chunk at the mean length, so the tokens after them are the
    layout's suffix, and :func:`ranks_front_to_back` holds for them. Then the order is the
    relevance order, and the token counts matter only to a caller who reads a placement's
    lengths."""
    return (
        rule.at_mean_length
        and not profile.per_document
        and ranks_front_to_back(profile, layout.suffix_tokens)
    )


@lru_cache(maxsize=512)
def front_to_back_ranks(k: int) -> IntArray:
    """The ranks of ``k`` slots that weigh less from front to back (read-only, cached)."""
    ranks = np.arange(k)
    ranks.flags.writeable = False
    return ranks


@lru_cache(maxsize=512)
def _weighed_ranks(
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
