"""Checks of the per-item numbers callers pass the placing API: scores and token lengths.

Each check converts once (NumPy when the input is plain numbers, the common case) and names the
first bad entry otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from bookend.arrays import FloatArray

__all__ = ["equal_lengths", "is_real", "validate_lengths", "validate_scores"]

_REAL_TYPES = (int, float, np.integer, np.floating)


def is_real(value: object) -> bool:
    """A real number: an int, float or NumPy scalar (not a bool, a string or a sequence)."""
    return isinstance(value, _REAL_TYPES) and not isinstance(value, bool)


def _is_sequence(value: object) -> bool:
    return not isinstance(value, (str, bytes)) and hasattr(value, "__len__")


def _plain_numbers(values: Sequence[object], n: int) -> FloatArray | None:
    """``values`` as float64 when they are ``n`` plain numbers (no None, string, bool-only or
    nested entry), else ``None``."""
    try:
        quick = np.asarray(values)
    except ValueError:  # ragged nesting: the caller's slow path names the entry
        return None
    if quick.ndim == 1 and quick.size == n and quick.dtype.kind in "fiu":
        return quick if quick.dtype == np.float64 else quick.astype(np.float64)
    return None


def validate_scores(scores: Sequence[float | None] | None, n_items: int) -> FloatArray | None:
    """The scores as a float array, or ``None`` when there are none to use.

    Missing scores (``None`` entries, as retrievers leave them for some nodes) make the whole list
    unusable: one missing score means the input order is the relevance order for every item, so
    a missing score never sends the best item to the middle. The other entries are still checked.

    Raises:
        ValueError: a wrong count, a value that is not a real number, or NaN or infinite scores.
    """
    if scores is None:
        return None
    if not _is_sequence(scores):
        raise ValueError(f"scores must be a sequence of numbers, got scores={scores!r}")
    if len(scores) != n_items:
        raise ValueError(
            f"scores must have one value per item ({n_items}), got {len(scores)} scores"
        )
    arr = _plain_numbers(scores, n_items)
    if arr is not None:
        _check_finite(arr, range(n_items))
        return arr
    positions = [i for i, s in enumerate(scores) if s is not None]
    for i in positions:
        if not is_real(scores[i]):
            raise ValueError(f"scores must be real numbers or None; scores[{i}]={scores[i]!r}")
    arr = np.asarray([scores[i] for i in positions], dtype=np.float64)
    _check_finite(arr, positions)
    return arr if len(positions) == n_items else None


def _check_finite(arr: FloatArray, positions: Sequence[int]) -> None:
    """Raise naming the first NaN or infinite score (``positions`` maps back to the input)."""
    if arr.size and not (math.isfinite(arr[arr.argmin()]) and math.isfinite(arr[arr.argmax()])):
        # argmin and argmax return a NaN when there is one, an infinity when there is one: two
        # cheap passes (a reduction costs several times as much at small K) before the scan.
        bad = np.flatnonzero(~np.isfinite(arr))
        raise ValueError(
            f"scores must be finite; scores[{positions[bad[0]]}]={float(arr[bad[0]])!r} "
            f"({bad.size} non-finite value{'s' if bad.size > 1 else ''})"
        )


def validate_lengths(lengths: Sequence[float], n_items: int) -> FloatArray:
    """Per-item token counts as a float array: whole numbers >= 1, one per item.

    Raises:
        ValueError: a wrong count, or an entry that is not a whole number >= 1, named.
    """
    if not _is_sequence(lengths):
        raise ValueError(f"lengths must be a sequence of token counts, got {lengths!r}")
    if len(lengths) != n_items:
        raise ValueError(f"lengths must have one value per item ({n_items}), got {len(lengths)}")
    if isinstance(lengths, list | tuple) and n_items and lengths.count(lengths[0]) == n_items:
        # All equal, the common rank-only call: check one value, skip the conversion.
        first = lengths[0]
        if is_real(first) and math.isfinite(first) and first >= 1 and first % 1 == 0:
            return equal_lengths(n_items, float(first))
    arr = _plain_numbers(lengths, n_items)
    if arr is None:
        for i, value in enumerate(lengths):
            if not is_real(value):
                raise ValueError(f"lengths must be numbers; lengths[{i}]={value!r}")
        arr = np.asarray(lengths, dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(arr) | (arr < 1) | (arr % 1 != 0))
    if bad.size:
        raise ValueError(
            f"lengths must be whole token counts >= 1; lengths[{bad[0]}]={lengths[bad[0]]!r}"
        )
    return arr


@lru_cache(maxsize=256)
def equal_lengths(n_items: int, length: float) -> FloatArray:
    """``n_items`` copies of ``length``, read-only and shared between calls."""
    lengths = np.full(n_items, length)
    lengths.flags.writeable = False
    return lengths
