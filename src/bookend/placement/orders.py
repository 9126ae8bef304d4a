"""The fixed orders every optimiser starts from or compares with, and the tie rule they share."""

from __future__ import annotations

import numpy as np

from bookend.arrays import FloatArray, IntArray

__all__ = ["TIE", "alternate_order", "first_best", "rank_order"]

#: Relative tolerance under which two objective values count as equal: moves and starts are then
#: chosen by their fixed enumeration order, so rounding noise (a rescaled score) cannot flip them.
TIE = 1e-10


def rank_order(relevance: FloatArray) -> IntArray:
    """Indices by relevance, highest first; ties keep input order."""
    # The method, not np.argsort: the function's dispatch wrapper costs as much as the sort at
    # the K of a retrieval call.
    return (-relevance).argsort(kind="stable")


def alternate_order(relevance: FloatArray) -> IntArray:
    """The classic lost-in-the-middle pattern, stable in the parity of K.

    Best first, second best last, third second, fourth second to last, and so on inwards.
    """
    ranked = rank_order(relevance)
    return np.concatenate((ranked[0::2], ranked[1::2][::-1]))


def first_best(values: FloatArray) -> int:
    """Index of the first value within :data:`TIE` (relative) of the maximum."""
    top = float(values.max())
    return int(np.argmax(values >= top - TIE * max(abs(top), 1e-300)))
