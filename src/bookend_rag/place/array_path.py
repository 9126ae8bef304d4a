"""The array path: the placement of any call, on NumPy arrays, every setting applied.

It reads top to bottom: the scores become relevance (:mod:`bookend_rag.relevance`), the items get
token lengths (:class:`~bookend_rag.place.items.ItemReader`), look-alikes, ``top_k`` and the
budget choose the chunks to keep (:mod:`bookend_rag.placement.selection`), the strategy orders
them (:mod:`bookend_rag.placement.strategies`), ``repeat_top`` copies the top chunk to both ends,
and :meth:`~bookend_rag.place.setup.Setup.result` holds the result. Every bad input is named here;
the shortcuts (:mod:`bookend_rag.place.shortcut`) hand such calls to this path.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

import numpy as np

from bookend_rag.arrays import FloatArray, IntArray
from bookend_rag.inputs import scores_by_policy
from bookend_rag.lookalikes import lookalike_groups
from bookend_rag.place.setup import Setup
from bookend_rag.placement.orders import rank_order
from bookend_rag.placement.problem import Problem
from bookend_rag.placement.result import Placement
from bookend_rag.placement.selection import select_chunks
from bookend_rag.placement.strategies import strategy_order
from bookend_rag.relevance import relevance

__all__ = ["place_on_arrays"]

T = TypeVar("T")


def place_on_arrays(
    setup: Setup,
    items: list[T],
    scores: Sequence[float | None] | None,
    lengths: Sequence[float] | None,
) -> Placement[T]:
    """The placement of ``items`` (see :meth:`bookend_rag.Bookend.place` for the arguments).

    Raises:
        ValueError: a bad score (or a missing one under ``missing_scores="error"``), length,
            text or source key, in one line naming it.
    """
    config = setup.config
    n = len(items)
    checked_scores, score_note = scores_by_policy(scores, n, config.missing_scores, config.distance)
    item_relevance = relevance(checked_scores, n, config.distance)
    item_lengths = setup.reader.lengths(items, lengths)
    notes = setup.notes(score_note)
    lookalikes = _lookalike_drops(setup, items, item_relevance) if config.drop_lookalikes else ()
    kept, repeat_fits, cut_by_top_k = select_chunks(
        item_relevance,
        item_lengths,
        top_k=config.top_k,
        budget=config.budget,
        repeat_top=config.repeat_top,
        drop=lookalikes,
    )
    chosen = range(n) if kept is None else kept.tolist()
    groups = setup.reader.source_keys(items, chosen)
    if config.repeat_top and not repeat_fits and len(chosen) >= 2:
        notes.append("repeat_top: no room in the budget for a second copy of the top chunk")
    kept_relevance, kept_lengths = (
        (item_relevance, item_lengths)
        if kept is None
        else (item_relevance[kept], item_lengths[kept])
    )
    local, repeated = _arrange(setup, kept_relevance, kept_lengths, groups, repeat_fits, notes)
    if kept is None:
        prompt = local.tolist()
        dropped: tuple[int, ...] = ()
    else:
        prompt = kept[local].tolist()
        dropped = tuple(sorted(set(range(n)) - set(kept.tolist())))
    return setup.result(
        items,
        prompt,
        item_relevance,
        item_lengths,
        checked_scores,
        notes,
        dropped,
        cut_by_top_k,
        lookalikes,
        repeated,
    )


def _lookalike_drops(setup: Setup, items: list[T], item_relevance: FloatArray) -> tuple[int, ...]:
    """Every item that is a look-alike of a more relevant one (ties: the earlier stays)."""
    values = setup.reader.texts(items)
    texts = [v for v in values if isinstance(v, str)]
    if len(texts) < len(values):
        i = next(i for i, v in enumerate(values) if not isinstance(v, str))
        raise ValueError(
            f"drop_lookalikes=True compares texts: items[{i}] of type "
            f"{type(items[i]).__name__} has none (pass text=)"
        )
    members: dict[int, list[int]] = {}
    threshold = setup.config.lookalike_threshold
    for i, label in enumerate(lookalike_groups(texts, threshold=threshold)):
        members.setdefault(label, []).append(i)
    drops: list[int] = []
    for group in members.values():
        keep = max(group, key=lambda i: (item_relevance[i], -i))
        drops.extend(i for i in group if i != keep)
    return tuple(sorted(drops))


def _arrange(
    setup: Setup,
    kept_relevance: FloatArray,
    kept_lengths: FloatArray,
    groups: list[Hashable | None] | None,
    repeat: bool,
    notes: list[str],
) -> tuple[IntArray, bool]:
    """Positions into the kept arrays in prompt order, and whether the top one is repeated.

    ``repeat_top`` is a final step: the top chunk goes to both ends (only if its source order
    allows a copy before and after every other chunk of its source), and the others are
    placed between the two copies, which count as fixed chunks there.
    """
    strategy = setup.config.strategy
    if repeat and kept_relevance.size >= 2:
        top = int(rank_order(kept_relevance)[0])
        inner = np.delete(np.arange(kept_relevance.size), top)
        alone = groups is None or all(groups[i] != groups[top] for i in inner)
        if alone or (groups is not None and groups[top] is None):
            inner_groups = None if groups is None else [groups[i] for i in inner]
            copy = float(kept_lengths[top])
            problem = _problem(
                setup, kept_relevance[inner], kept_lengths[inner], inner_groups, (copy, copy)
            )
            inner_order = strategy_order(strategy, problem)
            return np.concatenate(([top], inner[inner_order], [top])), True
        notes.append(
            "repeat_top: the top chunk's source has other chunks here, and a copy at both "
            "ends would break their order"
        )
    problem = _problem(setup, kept_relevance, kept_lengths, groups)
    return strategy_order(strategy, problem), False


def _problem(
    setup: Setup,
    kept_relevance: FloatArray,
    kept_lengths: FloatArray,
    groups: list[Hashable | None] | None,
    fixed: tuple[float, float] = (0.0, 0.0),
) -> Problem:
    config = setup.config
    return Problem.build(
        kept_relevance,
        kept_lengths,
        setup.profile,
        setup.layout,
        rule=config.weight_rule,
        groups=groups,
        fixed=fixed,
        competition=config.competition,
        exact_max_k=config.exact_max_k,
    )
