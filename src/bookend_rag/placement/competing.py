"""Competing chunks (``competition=c``): maximise the expected share of the answer drawn from the
right chunk, by Dinkelbach's method over the linear placement.

The model draws its answer from the chunks in proportion to weight times pull, and chunk ``i``
holds the answer with probability ``pi_i = r_i / sum(r)``; its pull is ``pi_i + c`` (an irrelevant
chunk still pulls ``c``). The objective is

    J(o) = sum_p pi[o_p] (pi[o_p] + c) w_p / sum_p (pi[o_p] + c) w_p.

Dinkelbach: place by the linear objective with relevance ``(pi + c)(pi - J)`` and repeat from the
new ``J`` until it stops rising. Chunks likelier than ``J`` go to heavy slots; plausible chunks
below it (near-duplicates, distractors) to light ones. Exact when each linear step is (rules
``slot`` and ``mass``, whose total weight no order changes); ``c`` large gives the linear
objective's order.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from bookend_rag.arrays import FloatArray, IntArray
from bookend_rag.placement.linear import linear_order
from bookend_rag.placement.orders import TIE
from bookend_rag.placement.problem import Problem
from bookend_rag.weighing import ChunkWeigher

__all__ = ["answer_shares", "competing_order"]

# Dinkelbach's method converges superlinearly; a handful of steps reach the fixed point.
_DINKELBACH_STEPS = 20


def competing_order(problem: Problem) -> IntArray:
    """The order maximising ``J`` (module docstring) for ``problem.competition``, starting from
    the linear objective's order; never returns an order with a lower ``J`` than that start."""
    c = problem.competition
    if not (isinstance(c, int | float) and c >= 0 and np.isfinite(c)):
        raise ValueError(f"competition must be a finite number >= 0, got competition={c!r}")
    order = linear_order(problem)
    if problem.size <= 1:
        return order
    pi = _answer_probabilities(problem.relevance)
    best = float(_shares(order, pi, problem.weigher, c))
    for _ in range(_DINKELBACH_STEPS):
        gain = (pi + c) * (pi - best)
        # Shifted to be non-negative, as the structured paths assume; the rules this is exact
        # for give every order the same total weight, so the shift changes no decision.
        step = linear_order(problem.with_relevance(np.round(gain - gain.min(), 12)))
        value = float(_shares(step, pi, problem.weigher, c))
        if value <= best * (1 + TIE):
            break
        order, best = step, value
    return order


def answer_shares(
    orders: npt.ArrayLike, relevance: FloatArray, weigher: ChunkWeigher, competition: float
) -> FloatArray:
    """Per row of ``orders``, the expected share of the answer drawn from the right chunk, ``J``
    with ``pi = relevance / sum(relevance)`` and ``c = competition`` (module docstring)."""
    return _shares(
        np.asarray(orders, dtype=np.int64), _answer_probabilities(relevance), weigher, competition
    )


def _answer_probabilities(relevance: FloatArray) -> FloatArray:
    total = float(relevance.sum())
    if total <= 0:
        return np.full(relevance.size, 1.0 / relevance.size)
    return np.asarray(relevance / total, dtype=np.float64)


def _shares(idx: IntArray, pi: FloatArray, weigher: ChunkWeigher, competition: float) -> FloatArray:
    """:func:`answer_shares` with the answer probabilities ``pi`` already computed."""
    pull = (pi + competition)[idx] * weigher.weights_of_orders(idx)
    total = pull.sum(axis=-1)
    return np.asarray(
        np.divide((pi[idx] * pull).sum(axis=-1), total, out=np.zeros_like(total), where=total > 0),
        dtype=np.float64,
    )
