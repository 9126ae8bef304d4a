"""The strategies: how the kept chunks are ordered, each one :class:`Strategy` object selected by
its name (``strategy=``).

The strategies bookend ships (:data:`STRATEGIES`) are ``bookend`` (the optimal order under the
profile, the default) and the fixed patterns ``alternate`` and ``relevance``
(:class:`PatternStrategy`), each registered by its entry in ``_REGISTRY``. A new strategy is a
:class:`Strategy` subclass (a fixed pattern: a :class:`PatternStrategy`) and its entry there;
from outside the package, :func:`register_strategy`. Nothing else names a strategy: the
``strategy`` setting takes the name (:class:`~bookend_rag.PlacementConfig`, and through it
``reorder``, ``Bookend``, the adapters and ``bookend reorder --strategy``), the array path calls
:meth:`Strategy.order`, the shortcuts read :meth:`Strategy.ranks_without_lengths` and
:attr:`Strategy.sorts_by_slot_weight`, ``explain()`` prints :meth:`Strategy.decided_by`, and
``bookend tune`` races every strategy with :attr:`Strategy.tune_candidate`.

Every strategy keeps source groups in input order: a fixed pattern gives each group's positions
to its members in input order.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Annotated, ClassVar

from pydantic import BeforeValidator, Field

from bookend_rag.arrays import IntArray
from bookend_rag.layout import Layout
from bookend_rag.placement.competing import competing_order
from bookend_rag.placement.groups import repair_groups
from bookend_rag.placement.linear import linear_order
from bookend_rag.placement.orders import alternate_ranks
from bookend_rag.placement.problem import Problem
from bookend_rag.placement.sorted_assignment import (
    assign_by_rank,
    front_to_back_ranks,
    slots_front_to_back,
)
from bookend_rag.profiles.base import InfluenceProfile
from bookend_rag.registry import Registry
from bookend_rag.weighing import WeightRule

__all__ = [
    "DEFAULT_STRATEGY",
    "STRATEGIES",
    "AlternateStrategy",
    "BookendStrategy",
    "PatternStrategy",
    "RelevanceStrategy",
    "Strategy",
    "StrategyName",
    "optimal_order",
    "register_strategy",
    "strategy_named",
    "strategy_names",
    "strategy_order",
    "unregister_strategy",
]

#: Per slot of ``k``, the relevance rank of its chunk (0 the most relevant).
SlotRanks = Callable[[int], IntArray]


class Strategy(ABC):
    """How the kept chunks are ordered: one object per strategy, selected by its :attr:`name`
    (``strategy=``) once registered (:func:`register_strategy`).

    A subclass sets :attr:`name` and :meth:`order`, and says in its docstring what order it
    gives; the other members say how the rest of bookend treats it, each with a default that is
    right for any strategy (the array path places it, ``bookend tune`` does not race it).
    """

    #: What ``strategy=`` calls it.
    name: ClassVar[str]
    #: It sorts the chunks into the slots ranked by weight, the profile's optimum wherever every
    #: chunk counts at the mean length, so the small-K path may rank the slots itself on the
    #: default approximation's counts (:func:`~bookend_rag.placement.small_k.small_k_order`).
    sorts_by_slot_weight: ClassVar[bool] = False
    #: ``bookend tune`` races it as a candidate (``PlacementConfig(model=theory,
    #: strategy=name)``) against the default.
    tune_candidate: ClassVar[bool] = False

    @abstractmethod
    def order(self, problem: Problem) -> IntArray:
        """The order of ``problem``'s chunks (indices into them, prompt order), keeping its
        source groups (``problem.groups``) in input order."""

    def ranks_without_lengths(
        self, profile: InfluenceProfile, rule: WeightRule, layout: Layout
    ) -> SlotRanks | None:
        """Where it orders chunks (no source groups, nothing fixed or competing) without reading
        their lengths, the function that gives, per slot of ``k``, the relevance rank of its chunk
        (:func:`~bookend_rag.placement.sorted_assignment.assign_by_rank`): the shortcuts then
        place by it. ``None`` (the default) where the lengths can move the order."""
        return None

    def decided_by(self) -> str | None:
        """What ``explain()`` adds to its "decided by" line, ``None`` for nothing."""
        return None

    def __repr__(self) -> str:
        return f"<strategy {self.name!r}>"


class BookendStrategy(Strategy):
    """``bookend``, the default: the linear objective's optimal order under the profile
    (:func:`~bookend_rag.placement.linear.linear_order`), or with ``competition`` set the
    competing-chunks order (:func:`~bookend_rag.placement.competing.competing_order`)."""

    name = "bookend"
    sorts_by_slot_weight = True

    def order(self, problem: Problem) -> IntArray:
        """The optimal order (class docstring)."""
        if problem.competition is None:
            return linear_order(problem)
        return competing_order(problem)

    def ranks_without_lengths(
        self, profile: InfluenceProfile, rule: WeightRule, layout: Layout
    ) -> SlotRanks | None:
        """Front to back where the slots rank front to back whatever the lengths
        (:func:`~bookend_rag.placement.sorted_assignment.slots_front_to_back`), else ``None``."""
        return front_to_back_ranks if slots_front_to_back(profile, rule, layout) else None


class PatternStrategy(Strategy):
    """A fixed pattern: per slot the chunk of a fixed relevance rank (:meth:`slot_ranks`),
    whatever the profile and the lengths, so the shortcuts always place it; each source group's
    positions go to its members in input order."""

    @staticmethod
    @abstractmethod
    def slot_ranks(k: int) -> IntArray:
        """Per slot of ``k``, the relevance rank of its chunk (0 the most relevant; a
        permutation of ``range(k)``)."""

    def order(self, problem: Problem) -> IntArray:
        """The pattern, source groups kept in input order."""
        pattern = assign_by_rank(problem.relevance, self.slot_ranks(problem.relevance.size))
        return repair_groups(pattern, problem.groups)

    def ranks_without_lengths(
        self, profile: InfluenceProfile, rule: WeightRule, layout: Layout
    ) -> SlotRanks | None:
        """:meth:`slot_ranks`, whatever the profile, rule and layout."""
        return self.slot_ranks

    def decided_by(self) -> str | None:
        """That the pattern, not the weights, decided."""
        return f"the {self.name} strategy fixes the pattern"


class AlternateStrategy(PatternStrategy):
    """``alternate``: the classic lost-in-the-middle pattern, best first, second best last,
    inwards (:func:`~bookend_rag.placement.orders.alternate_ranks`); Haystack's
    ``LostInTheMiddleRanker``."""

    name = "alternate"
    tune_candidate = True
    slot_ranks = staticmethod(alternate_ranks)


class RelevanceStrategy(PatternStrategy):
    """``relevance``: most relevant first."""

    name = "relevance"
    tune_candidate = True
    # The shortcuts know this function: front to back is the relevance order itself.
    slot_ranks = staticmethod(front_to_back_ranks)


#: Every strategy ``strategy=`` takes, by name: the ones bookend ships, then the registered ones.
_REGISTRY: Registry[Strategy] = Registry(
    "strategy",
    "strategy",
    Strategy,
    (BookendStrategy(), AlternateStrategy(), RelevanceStrategy()),
    argument="strategy",
)
#: The names of the strategies bookend ships (:func:`strategy_names` adds the registered ones).
STRATEGIES: tuple[str, ...] = _REGISTRY.shipped
#: The strategy of every placement that names none.
DEFAULT_STRATEGY: str = BookendStrategy.name

#: A setting that names a registered strategy (``PlacementConfig.strategy``): a ``str`` checked
#: against the registry when validated, so a registered strategy is accepted everywhere.
StrategyName = Annotated[
    str, BeforeValidator(_REGISTRY.validated), Field(json_schema_extra=_REGISTRY.schema)
]


def register_strategy(strategy: Strategy) -> Strategy:
    """Make ``strategy`` a value of ``strategy=`` under ``strategy.name`` (in ``reorder``,
    ``Bookend``, ``PlacementConfig``, the adapters and ``bookend tune``'s candidates when it is a
    :attr:`~Strategy.tune_candidate`); returns ``strategy``.

    Raises:
        TypeError: ``strategy`` is not a :class:`Strategy` instance (a class, say).
        ValueError: a strategy already has that name.
    """
    return _REGISTRY.register(strategy)


def unregister_strategy(name: str) -> None:
    """Withdraw the strategy registered as ``name``: ``strategy=name`` raises again.

    Raises:
        ValueError: no strategy has that name, or it is one bookend ships (placement's default
            and its saved configurations name them).
    """
    _REGISTRY.unregister(name)


def strategy_names() -> tuple[str, ...]:
    """The names ``strategy=`` takes: the strategies bookend ships, then the registered ones."""
    return _REGISTRY.names()


def strategy_named(name: object) -> Strategy:
    """The strategy ``strategy=name`` selects, else a ``ValueError`` naming the parameter and the
    value."""
    return _REGISTRY.named(name)


def strategy_order(strategy: str, problem: Problem) -> IntArray:
    """The order the strategy named ``strategy`` gives (:meth:`Strategy.order`)."""
    return strategy_named(strategy).order(problem)


def optimal_order(problem: Problem) -> IntArray:
    """The ``bookend`` strategy's order (:class:`BookendStrategy`)."""
    return _REGISTRY.named(BookendStrategy.name).order(problem)
