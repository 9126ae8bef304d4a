"""Relevance: the caller's scores as the numbers the objective multiplies by the slot weights."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from bookend_rag.arrays import FloatArray
from bookend_rag.inputs import MissingScores, scores_by_policy

__all__ = ["normalised", "normalised_floats", "relevance", "relevance_from_scores"]


def relevance_from_scores(
    scores: Sequence[float | None] | None,
    n_items: int,
    *,
    distance: bool = False,
    missing_scores: MissingScores = "drop_scores",
) -> FloatArray:
    """The relevance the objective uses, from the caller's scores.

    * With scores: min-max normalised to ``[0, 1]`` (1 for the best), so positive scaling and
      shifting of scores change nothing; ``distance=True`` means lower is better. Equal scores all
      get relevance 1 and keep their input order.
    * Without scores, or with every score ``None``: the input order is the relevance order, and
      a reciprocal-rank prior gives the chunk at input position ``i`` (0-based) relevance
      ``1 / (i + 1)``. With some ``None`` among numbers, ``missing_scores`` decides
      (:func:`bookend_rag.inputs.scores_by_policy`): by default, as without scores.

    Raises:
        ValueError: scores of the wrong count, NaN or infinite scores, or some ``None`` under
            ``missing_scores="error"``.
    """
    raw, _ = scores_by_policy(scores, n_items, missing_scores, distance)
    return relevance(raw, n_items, distance)


def relevance(scores: FloatArray | None, n_items: int, distance: bool) -> FloatArray:
    """:func:`relevance_from_scores` of scores already checked
    (:func:`bookend_rag.inputs.validate_scores`)."""
    if scores is None:
        return _rank_prior(n_items)
    if scores.size == 0:
        return scores
    signed = -scores if distance else scores
    # argmin and argmax, not min and max: at small K a reduction costs several times as much.
    return normalised(signed, float(signed[signed.argmin()]), float(signed[signed.argmax()]))


def normalised(signed: FloatArray, lo: float, hi: float) -> FloatArray:
    """The relevance of ``signed`` (the scores, negated for distances) whose lowest and highest
    values are ``lo`` and ``hi`` (:func:`relevance`; the small-K path,
    :mod:`bookend_rag.placement.small_k`, reads them off the sorted scores: whichever of two
    equal extremes is taken, a zero's sign included, the relevance is the same)."""
    if hi == lo:
        return np.ones(signed.size)
    lo = lo or _NEGATIVE_ZERO
    span = hi - lo
    if not math.isfinite(span):
        # Scores near both float limits: halved first, the span fits (halving is exact).
        signed, lo, span = signed / 2, lo / 2, hi / 2 - lo / 2
    rel = signed - lo
    rel /= span
    # Rounded to a fixed grid: scaling or shifting the scores moves the quotient by a few ulps,
    # which must not change any decision downstream. In place, the three steps of
    # np.round(rel, 12) without its wrappers (a third of this function's time at K = 20),
    # by a 0-d array: a Python number costs each ufunc a conversion longer than the arithmetic.
    np.multiply(rel, _GRID, out=rel)
    np.rint(rel, out=rel)
    np.divide(rel, _GRID, out=rel)
    return rel


#: The grid of :func:`relevance`: twelve decimal digits.
_GRID = np.array(1e12)

#: The lowest score when it is zero: ``s - (-0.0)`` is ``s + 0.0``, never a negative zero, which
#: the array path would keep and :func:`normalised_floats`' rounding would not (a -0.0 score
#: below a 0.0 one).
_NEGATIVE_ZERO = -0.0

#: ``2**52``: a float ``v`` in ``[0, 2**52)`` plus this, minus this, is ``v`` rounded to an
#: integer, half to even, as ``np.rint`` rounds it (the sum has no bits below the unit).
_ROUND_TO_INTEGER = 4503599627370496.0


def normalised_floats(signed: list[float], lo: float, hi: float) -> list[float]:
    """:func:`normalised` on Python floats, the same doubles: the small-K path's relevance
    (:mod:`bookend_rag.placement.small_k`), where a NumPy call costs more than its arithmetic.

    The same operations in the same order, each rounded as NumPy rounds it; ``np.rint`` becomes
    two additions (:data:`_ROUND_TO_INTEGER`), exact for the grid's values in ``[0, 1e12]``.
    """
    if hi == lo:
        return [1.0] * len(signed)
    lo = lo or _NEGATIVE_ZERO
    span = hi - lo
    if not math.isfinite(span):
        signed, lo, span = [s / 2 for s in signed], lo / 2, hi / 2 - lo / 2
    grid, rounder = 1e12, _ROUND_TO_INTEGER
    return [((s - lo) / span * grid + rounder - rounder) / grid for s in signed]


@lru_cache(maxsize=256)
def _rank_prior(n_items: int) -> FloatArray:
    prior = 1.0 / np.arange(1, n_items + 1, dtype=np.float64)
    prior.flags.writeable = False
    return prior
