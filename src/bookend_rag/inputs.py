"""Checks of the per-item numbers callers pass the placing API: scores and token lengths.

Each check converts once (NumPy when the input is plain numbers, the common case) and names the
first bad entry otherwise. :func:`read_score` reads one score where the framework adapters find
it (a document's field or metadata), so the error can name that place rather than an index into
the core's list.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from contextlib import suppress
from functools import lru_cache
from numbers import Real
from typing import Literal

import numpy as np

from bookend_rag.arrays import FloatArray
from bookend_rag.errors import shown

__all__ = [
    "MAX_TOKENS",
    "SCORE_RULE",
    "MissingScores",
    "equal_lengths",
    "finite_floats",
    "is_real",
    "read_score",
    "scores_by_policy",
    "validate_lengths",
    "validate_scores",
]

#: Largest token count accepted anywhere (a chunk's length, a budget, a prefix or suffix): far
#: beyond any context window, and small enough that sums of thousands of such counts stay exact
#: in float64 (below 2**53).
MAX_TOKENS = 2**40

_REAL_TYPES = (int, float, np.integer, np.floating)


def is_real(value: object) -> bool:
    """A real number a float can hold: an int within float range, a float or a NumPy scalar (not
    a bool, a string or a sequence)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return -sys.float_info.max <= value <= sys.float_info.max
    return isinstance(value, _REAL_TYPES) and not isinstance(value, bool)


def _not_real(name: str, index: int, value: object, want: str) -> ValueError:
    """The error for entry ``index`` of ``name`` that :func:`is_real` refuses."""
    if isinstance(value, int) and not isinstance(value, bool):
        return ValueError(
            f"{name}[{index}] is an int beyond float range ({len(str(value))} digits)"
        )
    return ValueError(f"{name} must be {want}; {name}[{index}]={value!r}")


def _is_sequence(value: object) -> bool:
    """Indexable by position with a length: a list, tuple or array (not a string or mapping)."""
    if type(value) is list or type(value) is tuple:  # the common case, before the ABC check
        return True
    if isinstance(value, str | bytes | Mapping):
        return False
    return hasattr(value, "__len__") and hasattr(value, "__getitem__")


def _plain_numbers(values: Sequence[object], n: int) -> FloatArray | None:
    """``values`` as float64 when they are ``n`` plain numbers (no None, string, bool or nested
    entry, no int beyond float range), else ``None``."""
    try:
        quick = np.asarray(values)
    except ValueError:  # ragged nesting: the caller's slow path names the entry
        return None
    if not (quick.ndim == 1 and quick.size == n and quick.dtype.kind in "fiu"):
        return None
    if isinstance(values, list | tuple) and _may_hold_bools(quick) and bool in map(type, values):
        return None  # NumPy reads [True, 1] as integers; the caller's slow path names the bool
    return quick if quick.dtype == np.float64 else quick.astype(np.float64)


# Up to this many entries, looking at each entry's type is cheaper than any NumPy test.
_TYPE_SCAN_MAX = 100


def _may_hold_bools(numbers: FloatArray) -> bool:
    """Whether a bool may hide among ``numbers`` (converted by NumPy, which reads ``True`` as 1):
    only behind a 0 or a 1. Looking at every entry's type costs about 20 ns an entry, this test
    about 2 us, so it is taken only where it pays."""
    return numbers.size <= _TYPE_SCAN_MAX or bool(np.count_nonzero((numbers == 0) | (numbers == 1)))


def validate_scores(scores: Sequence[float | None] | None, n_items: int) -> FloatArray | None:
    """The scores as a float array, or ``None`` when there are none to use.

    Missing scores (``None`` entries, as retrievers leave them for some nodes) make the whole list
    unusable: one missing score means the input order is the relevance order for every item, so
    a missing score never sends the best item to the middle. The other entries are still checked.

    Raises:
        ValueError: a wrong count, a value that is not a real number (a bool, or an int beyond
            float range, is not), or NaN or infinite scores.
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
            raise _not_real("scores", i, scores[i], "real numbers or None")
    arr = np.asarray([scores[i] for i in positions], dtype=np.float64)
    _check_finite(arr, positions)
    return arr if len(positions) == n_items else None


#: What a placement does when some scores are ``None`` and others are not (the setting
#: ``missing_scores``): ``"error"`` raises, ``"rank"`` ranks every item without a score below
#: every item with one, ``"drop_scores"`` drops every score (the input order is the relevance
#: order). Each but ``"error"`` says what it did in ``Placement.notes``.
MissingScores = Literal["error", "rank", "drop_scores"]


def scores_by_policy(
    scores: Sequence[float | None] | None, n_items: int, policy: MissingScores, distance: bool
) -> tuple[FloatArray | None, str | None]:
    """The scores to place by (:func:`validate_scores`), with ``None`` entries handled by
    ``policy`` (:data:`MissingScores`), and the note that says what was done (``None``: nothing
    to say).

    Under ``"rank"`` a missing score counts as ``lo - (hi - lo)`` (``lo``, ``hi``: the lowest and
    highest score given; ``lo - 1`` when they are equal), mirrored for distances, so after the
    min-max normalisation of :func:`bookend_rag.relevance.relevance` every item without a score
    has relevance 0, below every item with one (the lowest given gets 0.5), and ties keep the
    input order.

    Raises:
        ValueError: what :func:`validate_scores` raises, and, under ``"error"``, a ``None``
            among numbers.
    """
    raw = validate_scores(scores, n_items)
    if raw is not None or scores is None or not n_items:
        return raw, None
    missing = [i for i, score in enumerate(scores) if score is None]
    if len(missing) == n_items:
        return None, "scores: every score is None, so the input order is the relevance order"
    where = f"{len(missing)} of {n_items} missing (scores[{missing[0]}] is None)"
    if policy == "error":
        raise ValueError(
            f"scores: {where} among numbers: give every item a score or none, or set "
            "missing_scores='rank' (rank them last) or 'drop_scores' (use the input order)"
        )
    if policy == "drop_scores":
        return None, (
            f"scores: {where}, so the input order is the relevance order and the other scores "
            "are not used (missing_scores='drop_scores'; 'rank' ranks them last, 'error' raises)"
        )
    given = [float(score) for score in scores if score is not None]
    lo, hi = min(given), max(given)
    spread = hi - lo if hi > lo else 1.0
    fill = hi + spread if distance else lo - spread
    if not math.isfinite(fill):
        raise ValueError(
            f"scores: missing_scores='rank' places a missing score a spread beyond the given ones "
            f"({lo!r} to {hi!r}), which is beyond float range; rescale the scores"
        )
    filled = np.asarray([fill if score is None else score for score in scores], dtype=np.float64)
    return filled, (
        f"scores: {where}, ranked below every given score in their input order "
        "(missing_scores='rank')"
    )


def finite_floats(scores: object, n_items: int) -> list[float] | None:
    """``scores`` as a new list when they are ``n_items`` floats (the type itself, as retrievers
    give them) whose sum is finite, else ``None``: the small-K path
    (:mod:`bookend_rag.placement.small_k`) takes these, and :func:`validate_scores` everything
    else, naming any bad entry.

    A finite sum rules out NaN and the infinities in one C loop (either makes the sum NaN or
    infinite); finite scores whose sum overflows go to :func:`validate_scores` too.
    """
    if type(scores) is not list and type(scores) is not tuple:
        return None
    # Floats exactly: a NumPy float's arithmetic would warn where a float's does not. Counted,
    # not gathered in a set: a list's count compares by identity first (a third faster).
    if len(scores) != n_items or list(map(type, scores)).count(float) != n_items:
        return None
    if not math.isfinite(sum(scores)):
        return None
    return list(scores)


#: What a score is, as the error for a value that is not one says it.
SCORE_RULE = "a score must be a finite real number, or None"


def read_score(value: object, name: str, *parts: object, rule: str = SCORE_RULE) -> float | None:
    """One item's score as a float, ``None`` when it has none.

    A score is a real number (any :class:`numbers.Real`: a bool is a flag, not a score, and a
    string is refused rather than parsed) that is finite as a float. The adapters read each
    score where their framework keeps it with this, so a bad one is named there: ``name`` is a
    :meth:`str.format` template filled with ``parts`` (``"documents[{}].score", i``) only then,
    as building the name for every item would cost more than the check.

    Raises:
        ValueError: ``{name}={value} is not a score: {rule}``.
    """
    if value is None:
        return None
    if type(value) is float and math.isfinite(value):  # the common case, without the ABC check
        return value
    if isinstance(value, Real) and not isinstance(value, bool):
        with suppress(OverflowError):  # an int beyond float range falls through to the error
            number = float(value)
            if math.isfinite(number):
                return number
    raise ValueError(f"{name.format(*parts)}={shown(value)} is not a score: {rule}")


def _check_finite(arr: FloatArray, positions: Sequence[int]) -> None:
    """Raise naming the first NaN or infinite score (``positions`` maps back to the input)."""
    # argmin and argmax find a NaN when there is one, and the infinities: finite there, finite
    # everywhere. No arithmetic (a sum can overflow and warn), and no NumPy reduction, which costs
    # several times as much at the K of a retrieval call.
    if arr.size and not (math.isfinite(arr[arr.argmin()]) and math.isfinite(arr[arr.argmax()])):
        bad = np.flatnonzero(~np.isfinite(arr))
        raise ValueError(
            f"scores must be finite; scores[{positions[bad[0]]}]={float(arr[bad[0]])!r} "
            f"({bad.size} non-finite value{'s' if bad.size > 1 else ''})"
        )


def validate_lengths(lengths: Sequence[float], n_items: int) -> FloatArray:
    """Per-item token counts as a float array: whole numbers in ``[1, MAX_TOKENS]``, one per item.

    Raises:
        ValueError: a wrong count, or an entry that is not a whole number in that range, named.
    """
    if not _is_sequence(lengths):
        raise ValueError(f"lengths must be a sequence of token counts, got {lengths!r}")
    if len(lengths) != n_items:
        raise ValueError(f"lengths must have one value per item ({n_items}), got {len(lengths)}")
    if isinstance(lengths, list | tuple) and n_items and lengths.count(lengths[0]) == n_items:
        # All equal, the common rank-only call: check one value, skip the conversion.
        first = lengths[0]
        whole = is_real(first) and math.isfinite(first) and 1 <= first <= MAX_TOKENS
        # count() compares with ==, so a True among 1s is equal: bools go to the slow path.
        if whole and first % 1 == 0 and bool not in map(type, lengths):
            return equal_lengths(n_items, float(first))
    arr = _plain_numbers(lengths, n_items)
    if arr is None:
        for i, value in enumerate(lengths):
            if not is_real(value):
                raise _not_real("lengths", i, value, "numbers")
        arr = np.asarray(lengths, dtype=np.float64)
    with np.errstate(invalid="ignore"):  # NaN and infinities are named below, not warned of
        bad = np.flatnonzero(~np.isfinite(arr) | (arr < 1) | (arr > MAX_TOKENS) | (arr % 1 != 0))
    if bad.size:
        raise ValueError(
            f"lengths must be whole token counts in [1, {MAX_TOKENS}]; "
            f"lengths[{bad[0]}]={lengths[bad[0]]!r}"
        )
    return arr


@lru_cache(maxsize=256)
def equal_lengths(n_items: int, length: float) -> FloatArray:
    """``n_items`` copies of ``length``, read-only and shared between calls."""
    lengths = np.full(n_items, length)
    lengths.flags.writeable = False
    return lengths
