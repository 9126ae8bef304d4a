"""The small-K path: the placement of a few chunks on Python numbers
(:mod:`bookend_rag.placement.small_k`), the array path's placement without its NumPy calls.

It takes plain inputs only (float scores, some possibly ``None``, or none; string texts, or
``equal_lengths``) and returns ``None`` for any other, so that the array path places them and
names any bad input.
:mod:`bookend_rag.place.shortcut` says when it applies (2 to
:data:`~bookend_rag.placement.small_k.SMALL_K_MAX` chunks, settings it places with).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from bookend_rag.arrays import IntArray
from bookend_rag.inputs import equal_lengths, finite_floats, scores_by_policy
from bookend_rag.place.array_path import place_on_arrays
from bookend_rag.place.setup import Setup
from bookend_rag.placement.result import Numbers, Placement
from bookend_rag.placement.small_k import relevance_order, small_k_order
from bookend_rag.placement.sorted_assignment import assign_floats_by_rank, front_to_back_ranks
from bookend_rag.relevance import relevance
from bookend_rag.tokens import all_strings, approx_token_counts
from bookend_rag.weighing import weight_rule_named

__all__ = ["place_few"]

T = TypeVar("T")


def place_few(
    setup: Setup,
    slot_ranks: Callable[[int], IntArray] | None,
    items: list[T],
    scores: Sequence[float | None] | None,
) -> Placement[T] | None:
    """The placement of a few ``items``: per slot the chunk of relevance rank
    ``slot_ranks(K)[slot]`` where the lengths cannot move the order (the lengths then counted
    when read), else the ``bookend`` strategy's slots ranked on the default approximation's
    counts (:func:`~bookend_rag.placement.small_k.small_k_order`), or where those counts are not
    all at the mean length, the array path's placement on them (no text read twice); ``None``
    for inputs it does not place.
    """
    config = setup.config
    n = len(items)
    checked_scores: list[float] | None = None
    item_relevance: Numbers
    notes: Sequence[str] = setup.notices
    if scores is not None:
        checked_scores = finite_floats(scores, n)
        if checked_scores is None:
            if not _floats_and_nones(scores, n):
                return None  # the array path names the bad entry
            # Some scores missing: ``missing_scores`` decides, with its note, as on the array
            # path (which, for this alone, would count every text).
            by_policy, note = scores_by_policy(scores, n, config.missing_scores, config.distance)
            checked_scores = None if by_policy is None else by_policy.tolist()
            notes = setup.notes(note)
    if checked_scores is None:
        by_relevance = list(range(n))
        item_relevance = relevance(None, n, config.distance)
    else:
        signed = [-s for s in checked_scores] if config.distance else checked_scores
        by_relevance, item_relevance = relevance_order(signed)
    item_lengths: Numbers | None
    if slot_ranks is not None:
        item_lengths = setup.reader.deferred_lengths(items)
        if item_lengths is None:
            return None
        # Front to back, the relevance order itself.
        prompt = (
            by_relevance
            if slot_ranks is front_to_back_ranks
            else assign_floats_by_rank(by_relevance, slot_ranks(n).tolist())
        )
        return setup.result(items, prompt, item_relevance, item_lengths, checked_scores, notes)
    # The slot ranking reads the lengths: the default approximation's counts, now.
    counts: list[int] | None = None
    if config.equal_lengths:
        item_lengths = equal_lengths(n, 1.0)
    else:
        texts = setup.reader.texts(items)
        if not all_strings(texts):
            return None
        item_lengths = counts = approx_token_counts(texts)
    total_length = float(n if counts is None else sum(counts))
    rule = weight_rule_named(config.weight_rule)
    order = small_k_order(by_relevance, total_length, setup.profile, rule, setup.layout)
    if order is None:
        # The array path places, on the counts just taken: each text is read once.
        return None if counts is None else place_on_arrays(setup, items, scores, counts)
    return setup.result(items, order, item_relevance, item_lengths, checked_scores, notes)


def _floats_and_nones(scores: Sequence[float | None], n: int) -> bool:
    """Whether ``scores`` (a list or tuple) are ``n`` floats and ``None``, the floats finite:
    what a retriever gives where some items have no score."""
    if type(scores) not in (list, tuple) or len(scores) != n:
        return False
    given = [s for s in scores if s is not None]
    return finite_floats(given, len(given)) is not None
