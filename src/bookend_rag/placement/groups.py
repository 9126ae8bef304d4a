"""Source groups: chunks that must keep their original relative order (precedence constraints).

Exact in the subset programme, kept by every move of the local search; the fixed patterns give
each group's positions to its members in input order (:func:`repair_groups`).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
import numpy.typing as npt

from bookend_rag.arrays import IntArray

__all__ = ["group_ids", "repair_groups", "respects_groups"]


def group_ids(groups: Sequence[Hashable | None] | None, k: int) -> IntArray | None:
    """Per chunk, a group id (or -1 for no constraint); ``None`` when nothing is constrained."""
    if groups is None or all(g is None for g in groups):
        return None
    if len(groups) != k:
        raise ValueError(f"groups must have one key per chunk ({k}), got {len(groups)} keys")
    ids: dict[Hashable, int] = {}
    out = np.full(k, -1, dtype=np.int64)
    for i, g in enumerate(groups):
        if g is not None:
            out[i] = ids.setdefault(g, len(ids))
    return out


def respects_groups(orders: IntArray, group_id: IntArray) -> npt.NDArray[np.bool_]:
    """Whether each row of ``orders`` keeps every group's chunks in increasing input order."""
    ok = np.ones(orders.shape[0], dtype=bool)
    for g in np.unique(group_id[group_id >= 0]):
        members = group_id[orders] == g  # (M, K)
        seq = np.where(members, orders, -1)
        # Within a row, the members' indices read left to right must increase.
        running = np.maximum.accumulate(seq, axis=1)
        ok &= np.all(~members | (seq >= running), axis=1)
    return ok


def repair_groups(order: IntArray, group_id: IntArray | None) -> IntArray:
    """``order`` with each group's positions reassigned to its members in input order."""
    if group_id is None:
        return order
    out = order.copy()
    for g in np.unique(group_id[group_id >= 0]):
        pos = np.flatnonzero(group_id[order] == g)
        out[pos] = np.sort(order[pos])
    return out
