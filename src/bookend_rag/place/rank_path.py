"""Placing by rank: the placement of chunks whose lengths cannot move their order, on arrays.

Where the strategy's :meth:`~bookend_rag.placement.strategies.Strategy.ranks_without_lengths`
gives the relevance rank of each slot's chunk whatever the lengths, the order is that assignment
(:func:`~bookend_rag.placement.sorted_assignment.assign_by_rank`, the array path's rule); the
token counts are taken only if the placement's lengths are read. :mod:`bookend_rag.place.shortcut`
says when this path applies (above :data:`~bookend_rag.placement.small_k.SMALL_K_MAX` chunks).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from bookend_rag.arrays import IntArray
from bookend_rag.inputs import scores_by_policy
from bookend_rag.place.setup import Setup
from bookend_rag.placement.orders import rank_order
from bookend_rag.placement.result import Placement
from bookend_rag.placement.sorted_assignment import assign_by_rank, front_to_back_ranks
from bookend_rag.relevance import relevance

__all__ = ["place_by_rank"]

T = TypeVar("T")


def place_by_rank(
    setup: Setup,
    slot_ranks: Callable[[int], IntArray],
    items: list[T],
    scores: Sequence[float | None] | None,
) -> Placement[T] | None:
    """The placement of ``items``: per slot the chunk of relevance rank ``slot_ranks(K)[slot]``;
    ``None`` when a text is not a string (the array path names it).

    Raises:
        ValueError: a bad score (or a missing one under ``missing_scores="error"``), in one
            line naming it.
    """
    n = len(items)
    item_lengths = setup.reader.deferred_lengths(items)
    if item_lengths is None:
        return None
    config = setup.config
    checked_scores, score_note = scores_by_policy(scores, n, config.missing_scores, config.distance)
    item_relevance = relevance(checked_scores, n, config.distance)
    notes = setup.notes(score_note)
    # Front to back, the relevance order itself (no gather by the identity ranks).
    by_rank = (
        rank_order(item_relevance)
        if slot_ranks is front_to_back_ranks
        else assign_by_rank(item_relevance, slot_ranks(n))
    )
    prompt = by_rank.tolist()
    return setup.result(items, prompt, item_relevance, item_lengths, checked_scores, notes)
