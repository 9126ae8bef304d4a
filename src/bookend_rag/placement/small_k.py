"""The small-K path: the default placement of a few chunks decided on Python numbers.

Sorting libraries switch algorithms by size, and so does placement. At the K of a retrieval call
each NumPy call costs more than its arithmetic (about twenty of them, 0.15 to 0.8 us each, against
a few microseconds for the whole of a framework's reorderer), so up to :data:`SMALL_K_MAX` chunks
a call with plain settings (nothing dropped, repeated or competing, no source groups) decides on
Python numbers, as the array path does:

* the chunks in relevance order (:func:`relevance_order`: the scores sorted, which is the order of
  their relevance unless two different scores round to one relevance; then the relevance sorted);
* per slot the relevance rank of its chunk: where the lengths cannot move the order (the fixed
  patterns, and the ``bookend`` strategy with slots that rank front to back whatever the lengths:
  the strategy's :meth:`~bookend_rag.placement.strategies.Strategy.ranks_without_lengths`), those
  ranks; else the ``bookend`` strategy's slots ranked by the array path's function
  (:func:`~bookend_rag.placement.sorted_assignment.frame_slot_ranks`, on the frame of
  :func:`bookend_rag.weighing.chunk_frame` and the counts of
  :func:`bookend_rag.tokens.approx_token_counts`), under a rule that counts every chunk at the
  mean length (:func:`small_k_order`);
* the chunks assigned to the slots by rank
  (:func:`~bookend_rag.placement.sorted_assignment.assign_floats_by_rank`, the list form of
  :func:`~bookend_rag.placement.sorted_assignment.assign_by_rank`).

Only the arithmetic differs, and it gives the same doubles: ``tests/core/test_small_k.py`` checks
on random inputs (scores, lengths, profiles, every setting) that both paths give the same
placement, and above :data:`SMALL_K_MAX` that placing by rank
(:mod:`bookend_rag.place.rank_path`, on arrays) does too. The relevance and the token counts
that the order did not need are computed when a placement's arrays are first read.
"""

from __future__ import annotations

import math
import operator
import sys
from collections.abc import Callable, Iterator
from functools import partial

from bookend_rag.layout import Layout
from bookend_rag.placement.sorted_assignment import assign_floats_by_rank, frame_slot_ranks
from bookend_rag.profiles.base import InfluenceProfile
from bookend_rag.relevance import normalised_floats
from bookend_rag.weighing import WeightRule, chunk_frame

__all__ = ["SMALL_K_MAX", "relevance_order", "small_k_order"]

#: The most chunks the small-K path places: per-item Python work grows with K, NumPy's per-call
#: cost does not. Measured (default settings, new documents on every call, one process, the path
#: switched on and off): the small-K path takes 0.43x the array path's time at K = 20, 0.72x at
#: 64, 0.90x at 100 and 128, 1.15x at 200; 64 keeps it well inside the range where it pays.
SMALL_K_MAX = 64

#: Two different scores closer than this share of their range can round to one relevance (its
#: grid has twelve decimal digits, :func:`bookend_rag.relevance.normalised`); farther apart they
#: are at least ten grid steps apart, far beyond the rounding of the arithmetic.
_DISTINCT_SHARE = 1e-11


def relevance_order(
    signed: list[float],
) -> tuple[list[int], list[float] | Callable[[], list[float]]]:
    """The chunks from most to least relevant (ties in input order, as
    :func:`~bookend_rag.placement.orders.rank_order` orders the relevance) and their relevance
    (:func:`~bookend_rag.relevance.normalised_floats` of ``signed``, the scores negated for
    distances), deferred when the order did not need it.

    Sorting the scores themselves gives that order unless two different scores round to one
    relevance, which needs them closer than :data:`_DISTINCT_SHARE` of the range; then the
    relevance is computed and sorted.
    """
    # The extremes' values only: normalised_floats reads no sign of a zero lowest score.
    values = sorted(signed, reverse=True)
    hi, lo = values[0], values[-1]
    closest = (hi - lo) * _DISTINCT_SHARE
    # The usual case, no gap below ``closest``, in one C loop that keeps no list of the gaps;
    # else no gap above 0 and below it (equal scores are ties either way).
    if hi == lo or (
        sys.float_info.min <= closest < math.inf
        and (min(_gaps(values)) >= closest or not any(0.0 < gap < closest for gap in _gaps(values)))
    ):
        order = sorted(range(len(signed)), key=signed.__getitem__, reverse=True)
        return order, partial(normalised_floats, signed, lo, hi)
    rel = normalised_floats(signed, lo, hi)
    return sorted(range(len(rel)), key=rel.__getitem__, reverse=True), rel


def small_k_order(
    by_relevance: list[int],
    total_length: float,
    profile: InfluenceProfile,
    rule: WeightRule,
    layout: Layout,
) -> list[int] | None:
    """The optimal order of chunks of ``total_length`` tokens in all, ``None`` unless every chunk
    counts at the mean length (then :func:`~bookend_rag.placement.linear.optimiser_for` would
    choose another optimiser, and the array path places).

    Args:
        by_relevance: the chunks from most to least relevant (:func:`relevance_order`; two
            chunks or more).
        total_length: the sum of the chunks' whole token counts.
        profile: the influence profile.
        rule: the weight rule.
        layout: tokens before and after the chunks.
    """
    k = len(by_relevance)
    frame = chunk_frame(profile, rule, total_length, k, layout)
    if not frame.at_mean_length:
        return None
    return assign_floats_by_rank(by_relevance, frame_slot_ranks(profile, rule, frame, k).tolist())


def _gaps(values: list[float]) -> Iterator[float]:
    """The differences of neighbours in ``values``."""
    return map(operator.sub, values, values[1:])
