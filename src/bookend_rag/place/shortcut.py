"""The shortcuts: when a call can be placed without the array path, and by which of two paths.

Both give the array path's placement (``tests/core/test_small_k.py`` checks it on every setting):

* up to :data:`~bookend_rag.placement.small_k.SMALL_K_MAX` chunks, the small-K path
  (:func:`~bookend_rag.place.small_k_path.place_few`), on Python numbers;
* above, where the lengths cannot move the order, placing by rank
  (:func:`~bookend_rag.place.rank_path.place_by_rank`), on arrays.

A placer decides once (:meth:`Shortcut.of`) whether its settings let either apply: every setting
declares how the shortcuts treat it (:class:`~bookend_rag.config.Shortcuts`, beside its field of
:class:`~bookend_rag.PlacementConfig`), and one the shortcuts do not read sends every call to the
array path unless it holds its default. Each call then takes a shortcut when it drops nothing
(``top_k``) and its lengths are to be counted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from bookend_rag.arrays import IntArray
from bookend_rag.place.rank_path import place_by_rank
from bookend_rag.place.setup import Setup
from bookend_rag.place.small_k_path import place_few
from bookend_rag.placement.result import Placement
from bookend_rag.placement.small_k import SMALL_K_MAX
from bookend_rag.placement.strategies import strategy_named
from bookend_rag.tokens import approx_token_count, counts_on_demand
from bookend_rag.weighing import weight_rule_named

__all__ = ["Shortcut"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Shortcut:
    """The shortcuts a placer's settings allow: ``slot_ranks``, the relevance rank of each
    slot's chunk where the lengths cannot move the order (``None`` where they can), and
    ``top_k``, the most chunks a call may hold to take a shortcut (``None``: any number)."""

    setup: Setup
    slot_ranks: Callable[[int], IntArray] | None
    top_k: int | None

    @classmethod
    def of(cls, setup: Setup) -> Shortcut | None:
        """The shortcuts of ``setup``, ``None`` when its settings allow neither.

        Where the lengths cannot move the order (the strategy's
        :meth:`~bookend_rag.placement.strategies.Strategy.ranks_without_lengths`: a fixed
        pattern, or slots that rank front to back whatever the lengths), counts taken when first
        read serve (the default's, a tokenizer's; a caller's own function is called at once, its
        errors the caller's to see), and the order is a rank per slot; the small-K path also
        places a strategy that sorts by slot weight (``bookend``:
        :attr:`~bookend_rag.placement.strategies.Strategy.sorts_by_slot_weight`) where the slot
        ranking needs the counts, with the default approximation.
        """
        config, reader = setup.config, setup.reader
        # The settings say themselves whether the shortcuts read them
        # (bookend_rag.config.Shortcuts); source groups are no setting but a way to read items.
        if config.array_path_settings() or reader.source is not None:
            return None
        rule = weight_rule_named(config.weight_rule)
        strategy = strategy_named(config.strategy)
        slot_ranks = (
            strategy.ranks_without_lengths(setup.profile, rule, setup.layout)
            if config.equal_lengths or counts_on_demand(reader.count)
            else None
        )
        if slot_ranks is None and not (
            strategy.sorts_by_slot_weight
            and (config.equal_lengths or reader.count is approx_token_count)
        ):
            return None
        return cls(setup, slot_ranks, config.top_k)

    def place(self, items: list[T], scores: Sequence[float | None] | None) -> Placement[T] | None:
        """The placement of ``items`` (two or more, lengths to be counted) by a shortcut, or
        ``None``: the array path places them (and names any bad input)."""
        n = len(items)
        if self.top_k is not None and self.top_k < n:
            return None
        if n <= SMALL_K_MAX:
            return place_few(self.setup, self.slot_ranks, items, scores)
        if self.slot_ranks is not None:
            return place_by_rank(self.setup, self.slot_ranks, items, scores)
        return None
