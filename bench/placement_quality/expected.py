"""Expected accuracy of a prompt order, without running a model.

With the gold document at retrieval rank ``r`` with probability ``P(r)`` and a model that answers
correctly with probability ``acc[s]`` when the gold document sits in slot ``s``, an order that puts
rank ``r`` into slot ``slot(r)`` has expected accuracy ``sum_r P(r) · acc[slot(r)]``.

The oracle maximises this over all K! orders; by the rearrangement inequality it pairs the likeliest
rank with the most accurate slot, the second likeliest with the second best, and so on.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from bookend_rag.arrays import FloatArray


def slots_of_ranks(order: Sequence[int]) -> npt.NDArray[np.int64]:
    """Inverse of a prompt order: ``order[s]`` is the rank in slot ``s``; returns ``slot[r]``."""
    idx = np.asarray(order, dtype=np.int64)
    if sorted(idx.tolist()) != list(range(idx.size)):
        raise ValueError(f"order must be a permutation of 0..K-1, got {list(order)!r}")
    slots = np.empty(idx.size, dtype=np.int64)
    slots[idx] = np.arange(idx.size)
    return slots


def expected_accuracy(
    order: Sequence[int], rank_probs: npt.ArrayLike, slot_accuracy: npt.ArrayLike
) -> float:
    """``sum_r P(r) · acc[slot(r)]`` for a prompt order of ranks (rank 0 is the top result)."""
    probs = np.asarray(rank_probs, dtype=np.float64)
    acc = np.asarray(slot_accuracy, dtype=np.float64)
    if not (probs.size == acc.size == len(order)):
        raise ValueError(
            f"order, rank_probs and slot_accuracy must have one entry per slot, got "
            f"{len(order)}, {probs.size} and {acc.size}"
        )
    return float(probs @ acc[slots_of_ranks(order)])


def oracle_order(rank_probs: npt.ArrayLike, slot_accuracy: npt.ArrayLike) -> list[int]:
    """The order maximising :func:`expected_accuracy`: likeliest rank into the best slot, ...

    Ties go to the better retrieval rank and the earlier slot (stable sorts).
    """
    probs = np.asarray(rank_probs, dtype=np.float64)
    acc = np.asarray(slot_accuracy, dtype=np.float64)
    ranks = np.argsort(-probs, kind="stable")
    slots = np.argsort(-acc, kind="stable")
    order = np.empty(acc.size, dtype=np.int64)
    order[slots] = ranks
    return [int(v) for v in order]


def geometric_ranks(k: int, decay: float) -> FloatArray:
    """``P(r) ∝ decay^r`` over ranks ``0..K-1`` (normalised): a retriever of a given sharpness."""
    if not 0.0 < decay <= 1.0:
        raise ValueError(f"decay must be in (0, 1], got decay={decay!r}")
    weights = decay ** np.arange(k, dtype=np.float64)
    return np.asarray(weights / weights.sum(), dtype=np.float64)


def truncated_ranks(counts: npt.ArrayLike, k: int) -> FloatArray | None:
    """``P(rank = r | gold in the top K)`` from counts of the gold document's rank (rank 0 first).

    ``None`` when no count falls inside the top K.
    """
    top = np.asarray(counts, dtype=np.float64)[:k]
    if top.size < k:
        raise ValueError(f"need counts for at least K={k} ranks, got {top.size}")
    total = top.sum()
    return None if total <= 0 else np.asarray(top / total, dtype=np.float64)
