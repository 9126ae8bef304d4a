"""Which chunks to keep before placing: at most ``top_k`` of the most relevant, within a budget."""

from __future__ import annotations

import numpy as np

from bookend_rag.arrays import FloatArray, IntArray
from bookend_rag.placement.orders import rank_order

__all__ = ["select_chunks"]


def select_chunks(
    relevance: FloatArray,
    lengths: FloatArray,
    *,
    top_k: int | None,
    budget: int | None,
    repeat_top: bool,
    drop: tuple[int, ...] = (),
) -> tuple[IntArray | None, bool, tuple[int, ...]]:
    """The input indices kept, ascending (``None`` when every chunk is), whether a repeat of the
    top kept chunk fits (``repeat_top`` asked for and within the budget), and the indices
    ``top_k`` left out, ascending (the budget left out the other dropped ones).

    The chunks in ``drop`` go first (look-alikes of a more relevant chunk); ``top_k`` keeps the
    most relevant of the others; then ``budget`` takes them greedily by relevance, skipping
    those that do not fit, and a repeated top chunk counts twice (its copy is paid before any
    further chunk).

    Raises:
        ValueError: a budget smaller than every chunk it is offered.
    """
    if not drop and budget is None and (top_k is None or top_k >= relevance.size):
        return None, repeat_top, ()
    order = rank_order(relevance)
    if drop:
        order = order[~np.isin(order, drop)]
    ranked = order[:top_k]
    cut = tuple(sorted(order[top_k:].tolist())) if top_k is not None else ()
    if budget is None:
        return np.sort(ranked), repeat_top, cut
    kept: list[int] = []
    used = 0.0
    repeat = repeat_top
    for i in ranked.tolist():
        if used + lengths[i] > budget:
            continue
        if not kept:
            repeat = repeat and 2 * lengths[i] <= budget
            used += lengths[i] * (2 if repeat else 1)
        else:
            used += lengths[i]
        kept.append(i)
    if not kept and ranked.size:
        # Name the chunks the budget was offered: with top_k, the shortest overall may not be one.
        which = "every chunk" if ranked.size == order.size else f"every chunk top_k={top_k} keeps"
        raise ValueError(
            f"budget={budget} is smaller than {which}"
            f" (shortest is {int(lengths[ranked].min())} tokens)"
        )
    return np.asarray(sorted(kept), dtype=np.int64), repeat, cut
