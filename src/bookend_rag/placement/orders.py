"""The fixed orders every optimiser starts from or compares with, and the tie rule they share."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from bookend_rag.arrays import FloatArray, IntArray

__all__ = [
    "TIE",
    "WEIGHT_TIE",
    "alternate_order",
    "alternate_ranks",
    "first_best",
    "rank_order",
    "weight_tiers",
]

#: Relative tolerance under which two objective values count as equal: moves and starts are then
#: chosen by their fixed enumeration order, so rounding noise (a rescaled score) cannot flip them.
TIE = 1e-10


#: Relative tolerance under which two slot weights count as equal: a flat or partly flat profile
#: gives weights that differ by rounding alone, and tied slots must take chunks in relevance
#: order, not in the order of that noise.
WEIGHT_TIE = 1e-9


def weight_tiers(weights: FloatArray) -> IntArray:
    """Per slot its tier by weight, 0 the heaviest: slots whose weights lie within
    :data:`WEIGHT_TIE` (relative) of the heaviest slot of their run share a tier.

    Sorted heaviest first, a run starts at weight ``w_0`` and holds every next weight
    ``w >= w_0 - WEIGHT_TIE · |w_0|``; each run is one tier. Slots by ``(tier, slot)`` are the
    slots by weight with ties in slot order.
    """
    order = (-weights).argsort(kind="stable")
    tiers = np.empty(weights.size, dtype=np.int64)
    tier, leader = -1, np.inf
    for slot in order.tolist():
        w = float(weights[slot])
        if w < leader - WEIGHT_TIE * abs(leader) or tier < 0:
            tier, leader = tier + 1, w
        tiers[slot] = tier
    return tiers


def rank_order(relevance: FloatArray) -> IntArray:
    """Indices by relevance, highest first; ties keep input order."""
    # The method, not np.argsort: the function's dispatch wrapper costs as much as the sort at
    # the K of a retrieval call.
    return (-relevance).argsort(kind="stable")


def alternate_order(relevance: FloatArray) -> IntArray:
    """The classic lost-in-the-middle pattern, stable in the parity of K.

    Best first, second best last, third second, fourth second to last, and so on inwards.
    """
    return rank_order(relevance)[alternate_ranks(relevance.size)]


@lru_cache(maxsize=512)
def alternate_ranks(k: int) -> IntArray:
    """Per slot of :func:`alternate_order`, the relevance rank of its chunk (0 the most relevant):
    0, 2, 4, ..., 5, 3, 1 (read-only, cached)."""
    ranks = np.arange(k)
    pattern = np.concatenate((ranks[0::2], ranks[1::2][::-1]))
    pattern.flags.writeable = False
    return pattern


def first_best(values: FloatArray) -> int:
    """Index of the first value within :data:`TIE` (relative) of the maximum."""
    top = float(values.max())
    return int(np.argmax(values >= top - TIE * max(abs(top), 1e-300)))
