"""Relevance: the caller's scores as the numbers the objective multiplies by the slot weights."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from bookend_rag.arrays import FloatArray
from bookend_rag.inputs import validate_scores

__all__ = ["relevance", "relevance_from_scores"]


def relevance_from_scores(
    scores: Sequence[float | None] | None, n_items: int, *, distance: bool = False
) -> FloatArray:
    """The relevance the objective uses, from the caller's scores.

    * With scores: min-max normalised to ``[0, 1]`` (1 for the best), so positive scaling and
      shifting of scores change nothing; ``distance=True`` means lower is better. Equal scores all
      get relevance 1 and keep their input order.
    * Without scores, or with any score missing (``None``): the input order is the relevance
      order, and a reciprocal-rank prior gives the chunk at input position ``i`` (0-based)
      relevance ``1 / (i + 1)``.

    Raises:
        ValueError: scores of the wrong count, or NaN or infinite scores.
    """
    return relevance(validate_scores(scores, n_items), n_items, distance)


def relevance(scores: FloatArray | None, n_items: int, distance: bool) -> FloatArray:
    """:func:`relevance_from_scores` of scores already checked
    (:func:`bookend_rag.inputs.validate_scores`)."""
    if scores is None:
        return _rank_prior(n_items)
    if scores.size == 0:
        return scores
    signed = -scores if distance else scores
    # argmin and argmax, not min and max: at small K a reduction costs several times as much.
    lo, hi = float(signed[signed.argmin()]), float(signed[signed.argmax()])
    if hi == lo:
        return np.ones(scores.size)
    span = hi - lo
    if not math.isfinite(span):
        # Scores near both float limits: halved first, the span fits (halving is exact).
        signed, lo, span = signed / 2, lo / 2, hi / 2 - lo / 2
    normalised = signed - lo
    normalised /= span
    # Rounded to a fixed grid: scaling or shifting the scores moves the quotient by a few ulps,
    # which must not change any decision downstream. In place, the three steps of
    # np.round(normalised, 12) without its wrappers (a third of this function's time at K = 20),
    # by a 0-d array: a Python number costs each ufunc a conversion longer than the arithmetic.
    np.multiply(normalised, _GRID, out=normalised)
    np.rint(normalised, out=normalised)
    np.divide(normalised, _GRID, out=normalised)
    return normalised


#: The grid of :func:`relevance`: twelve decimal digits.
_GRID = np.array(1e12)


@lru_cache(maxsize=256)
def _rank_prior(n_items: int) -> FloatArray:
    prior = 1.0 / np.arange(1, n_items + 1, dtype=np.float64)
    prior.flags.writeable = False
    return prior
