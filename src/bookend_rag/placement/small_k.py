"""The small-K path: the default placement of a few chunks decided on Python numbers.

Sorting libraries switch algorithms by size, and so does placement. At the K of a retrieval call
each NumPy call costs more than its arithmetic (about twenty of them, 0.15 to 0.8 us each, against
a few microseconds for the whole of a framework's reorderer), so up to :data:`SMALL_K_MAX` chunks
the default call (the ``bookend`` strategy under a rule that counts every chunk at the mean
length, nothing dropped or repeated, no source groups) computes the relevance, the token counts
and the frame on Python numbers (:func:`bookend_rag.relevance.normalised_floats`,
:func:`bookend_rag.tokens.approx_token_counts`, :func:`bookend_rag.weighing.chunk_frame`), and
then decides as the array path does: the slots ranked by the same function
(:func:`~bookend_rag.placement.sorted_assignment.frame_slot_ranks`), the chunks assigned to them
by rank on lists (:func:`~bookend_rag.placement.sorted_assignment.assign_floats_by_rank`, the
list form of :func:`~bookend_rag.placement.sorted_assignment.assign_by_rank`). Only the
arithmetic differs, and it gives the same doubles: ``tests/core/test_small_k.py`` checks on
random inputs (scores, lengths, profiles, every setting) that both paths give the same
placement. The result keeps the Python lists; :class:`~bookend_rag.Placement` makes its arrays
when they are first read.
"""

from __future__ import annotations

from bookend_rag.layout import Layout
from bookend_rag.placement.sorted_assignment import assign_floats_by_rank, frame_slot_ranks
from bookend_rag.profiles.base import InfluenceProfile
from bookend_rag.weighing import WeightRule, chunk_frame

__all__ = ["SMALL_K_MAX", "small_k_order"]

#: The most chunks the small-K path places: per-item Python work grows with K, NumPy's per-call
#: cost does not. Measured (default settings, new documents on every call, one process, the path
#: switched on and off): the small-K path takes 0.43x the array path's time at K = 20, 0.72x at
#: 64, 0.90x at 100 and 128, 1.15x at 200; 64 keeps it well inside the range where it pays.
SMALL_K_MAX = 64


def small_k_order(
    relevance: list[float],
    total_length: float,
    profile: InfluenceProfile,
    rule: WeightRule,
    layout: Layout,
) -> list[int] | None:
    """The optimal order of chunks of ``total_length`` tokens in all, ``None`` unless every chunk
    counts at the mean length (then :func:`~bookend_rag.placement.linear.optimiser_for` would
    choose another optimiser, and the array path places).

    Args:
        relevance: per chunk, higher is better (two chunks or more).
        total_length: the sum of the chunks' whole token counts.
        profile: the influence profile.
        rule: the weight rule.
        layout: tokens before and after the chunks.
    """
    k = len(relevance)
    frame = chunk_frame(profile, rule, total_length, k, layout)
    if not frame.at_mean_length:
        return None
    return assign_floats_by_rank(relevance, frame_slot_ranks(profile, rule, frame, k).tolist())
