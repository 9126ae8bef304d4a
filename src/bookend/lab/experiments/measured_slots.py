"""The cross-fitted slot table: where does *this* model read the gold document best, on *these*
items?

Every item whose gold document is known (and that has the run's K documents) is scored with the
gold document moved into slots ``s``, the other documents in retrieval order around it
(:func:`~bookend.lab.strategies.gold_at_slot`), as ``bookend calibrate`` does on generated items.
To stay within the budget an item is measured in ``m = ceil(K / 2)`` slots, not all ``K``, and the
design stays stratified: within each fold the ``p``-th (item, slot) pair is item ``p // m`` of the
fold in slot ``p mod K`` (so an item's ``m`` slots are distinct), pairs are grouped into blocks of
``K`` consecutive pairs (each block holds every slot once), and only whole blocks are scored:
every slot gets the same count. Blocks are scored round-robin over the folds while the budget
allows (:func:`measure_slots`).

A slot's weight is the mean of the primary metric over its pairs: ``candidate_prob``, or for
``gold_logprob`` (which is negative) ``exp(mean_s - max_t mean_t)``, the geometric-mean
probability of the gold answer relative to the best slot; under the ``slot`` weight rule only the
order of the weights decides a placement. The table judged on fold ``f`` is measured on the other
folds' items only (:meth:`SlotMeasurement.table`), so no item judges a table it helped measure;
the pooled table, measured on every fold, is what a run that chooses it writes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import bookend
from bookend.lab.experiments.folds import Folds
from bookend.lab.experiments.judging import Judging
from bookend.lab.experiments.trials import Trial, score_trials
from bookend.lab.items.item import Item
from bookend.lab.progress import progress_bar
from bookend.lab.retrieval import Ranking
from bookend.lab.strategies import gold_at_slot

__all__ = ["SlotMeasurement", "measure_slots", "slot_blocks"]

#: One (item, slot) pair to score: the slot and its trial.
Pair = tuple[int, Trial]


def slot_blocks(
    items: Sequence[Item], rankings: Sequence[Ranking], folds: Folds, k: int
) -> list[list[Pair]]:
    """The blocks of (item, slot) pairs of the design (module docstring), round-robin over the
    folds: block ``b`` of fold 0, block ``b`` of fold 1, ..., then block ``b + 1``."""
    slots_each = math.ceil(k / 2)
    by_fold = []
    for fold in range(folds.count):
        measured = [
            (i, gold)
            for i in folds.members(fold)
            if (gold := items[i].gold) is not None and len(items[i].documents) == k
        ]
        pairs = []
        for p in range(len(measured) * slots_each // k * k):
            (i, gold), slot = measured[p // slots_each], p % k
            ranks = gold_at_slot(rankings[i].rank_of(gold), k, slot)
            order = [rankings[i].indices[r] for r in ranks]
            pairs.append((slot, Trial(i, f"slot#{slot}", order, items[i].prompt(order))))
        by_fold.append([pairs[b : b + k] for b in range(0, len(pairs), k)])
    rounds = max((len(blocks) for blocks in by_fold), default=0)
    return [blocks[b] for b in range(rounds) for blocks in by_fold if b < len(blocks)]


@dataclass(frozen=True)
class SlotMeasurement:
    """The scored pairs of a slot measurement.

    Attributes:
        k: documents per measured item.
        metric: the primary metric measured.
        folds: the run's folds.
        pairs: ``(item index, slot, value)`` per scored pair.
        planned: pairs in the design before the budget cut it.
        calls: the model calls the measurement made.
    """

    k: int
    metric: str
    folds: Folds
    pairs: tuple[tuple[int, int, float], ...]
    planned: int
    calls: int

    def slot_means(self, held_out: int | None = None) -> tuple[list[float], int] | None:
        """Per slot, the metric's mean over the pairs of items outside fold ``held_out`` (all
        items for ``None``), and the pairs per slot (the same in every slot, by design);
        ``None`` when a slot has none."""
        kept = [(s, v) for i, s, v in self.pairs if self.folds.of[i] != held_out]
        counts = [sum(1 for s, _ in kept if s == slot) for slot in range(self.k)]
        if min(counts, default=0) == 0:
            return None
        means = [float(np.mean([v for s, v in kept if s == slot])) for slot in range(self.k)]
        return means, counts[0]

    def table(self, held_out: int | None = None) -> bookend.TabulatedProfile | None:
        """The slot table measured outside fold ``held_out`` (module docstring), or ``None``
        when a slot has no pair or every weight is 0."""
        found = self.slot_means(held_out)
        if found is None:
            return None
        means, per_slot = found
        values = np.asarray(means)
        weights = np.exp(values - values.max()) if self.metric == "gold_logprob" else values
        if not np.any(weights > 0):
            return None
        where = "every fold" if held_out is None else f"the folds other than {held_out}"
        return bookend.TabulatedProfile(
            weights=tuple(weights.tolist()),
            kind="slot",
            label=f"measured slots (K={self.k}, {per_slot} items per slot from {where})",
            metadata={"metric": self.metric, "slot_means": means, "items_per_slot": per_slot},
        )

    def to_json(self) -> dict[str, Any]:
        """The design's size and every table's per-slot means (pooled, then per held-out fold)."""
        tables: dict[str, Any] = {}
        for name, held_out in [
            ("pooled", None),
            *((f"fold {f} held out", f) for f in range(self.folds.count)),
        ]:
            found = self.slot_means(held_out)
            tables[name] = (
                None if found is None else {"slot_means": found[0], "items_per_slot": found[1]}
            )
        return {
            "k": self.k,
            "metric": self.metric,
            "planned_pairs": self.planned,
            "scored_pairs": len(self.pairs),
            "calls": self.calls,
            "tables": tables,
        }


def measure_slots(judging: Judging, *, k: int, share: float) -> SlotMeasurement:
    """Score the blocks of :func:`slot_blocks` in turn while the ``share`` of the run's budget
    affords the next one (identical prompts are scored once and cached)."""
    items, budget = judging.items, judging.budget.share(share)
    blocks = slot_blocks(items, judging.rankings, judging.folds, k)
    scored: list[tuple[int, int, float]] = []
    bar = progress_bar(len(blocks) * k, "measure slots", unit="prompt", enabled=judging.progress)
    with bar:
        for block in blocks:
            trials = [t for _, t in block]
            if not budget.affords(
                budget.cost({t.prompt: items[t.item].continuations for t in trials})
            ):
                break
            values = score_trials(judging.scorer, items, trials, desc="measure", progress=False)
            scored += [
                (t.item, slot, v[judging.metric])
                for (slot, t), v in zip(block, values, strict=True)
            ]
            bar.update(len(block))
    return SlotMeasurement(
        k, judging.metric, judging.folds, tuple(scored), len(blocks) * k, budget.calls
    )
