"""The named strategies: ``bookend`` (the optimal order under the profile) and the fixed patterns.

Every strategy keeps source groups in input order: the fixed patterns give each group's positions
to its members in input order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, TypeAlias, get_args

from bookend_rag.arrays import IntArray
from bookend_rag.layout import Layout
from bookend_rag.placement.competing import competing_order
from bookend_rag.placement.groups import repair_groups
from bookend_rag.placement.linear import linear_order
from bookend_rag.placement.orders import alternate_order, alternate_ranks, rank_order
from bookend_rag.placement.problem import Problem
from bookend_rag.placement.sorted_assignment import front_to_back_ranks, slots_front_to_back
from bookend_rag.profiles.base import InfluenceProfile
from bookend_rag.weighing import WeightRule

__all__ = [
    "STRATEGIES",
    "StrategyName",
    "optimal_order",
    "ranks_without_lengths",
    "strategy_order",
]

StrategyName: TypeAlias = Literal["bookend", "alternate", "relevance"]
STRATEGIES: tuple[StrategyName, ...] = get_args(StrategyName)


def optimal_order(problem: Problem) -> IntArray:
    """The ``bookend`` strategy: the linear objective's optimal order, or with ``competition``
    set the competing-chunks order."""
    if problem.competition is None:
        return linear_order(problem)
    return competing_order(problem)


def strategy_order(strategy: StrategyName, problem: Problem) -> IntArray:
    """The order a named strategy gives: ``bookend`` (:func:`optimal_order`), ``alternate`` (best
    first, second best last, inwards) or ``relevance`` (most relevant first)."""
    if strategy == "bookend":
        return optimal_order(problem)
    if strategy == "alternate":
        pattern = alternate_order(problem.relevance)
    elif strategy == "relevance":
        pattern = rank_order(problem.relevance)
    else:
        raise ValueError(f"strategy must be one of {STRATEGIES}, got strategy={strategy!r}")
    return repair_groups(pattern, problem.groups)


def ranks_without_lengths(
    strategy: StrategyName, profile: InfluenceProfile, rule: WeightRule, layout: Layout
) -> Callable[[int], IntArray] | None:
    """Where ``strategy`` orders chunks (no source groups, nothing fixed or competing) without
    reading their lengths, the function that gives, per slot of ``k``, the relevance rank of its
    chunk (:func:`~bookend_rag.placement.sorted_assignment.assign_by_rank`): ``relevance``, and
    ``bookend`` when the slots rank front to back whatever the lengths
    (:func:`~bookend_rag.placement.sorted_assignment.slots_front_to_back`), rank front to back;
    ``alternate`` in its pattern. ``None`` where the lengths can move the order."""
    if strategy == "alternate":
        return alternate_ranks
    if strategy == "relevance" or slots_front_to_back(profile, rule, layout):
        return front_to_back_ranks
    return None
