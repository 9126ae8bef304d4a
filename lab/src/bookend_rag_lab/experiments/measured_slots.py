"""The cross-fitted slot table: where does *this* model read the gold document best, on *these*
items?

Every item whose gold document is known (and that has the run's K documents) is scored with the
gold document moved into slots ``s``, the other documents in retrieval order around it
(:func:`~bookend_rag_lab.reorderers.gold_at_slot`), as ``bookend calibrate`` does on generated
items.
To stay within the budget an item is measured in ``m = ceil(K / 2)`` slots, not all ``K``, and the
design stays stratified: within each fold the ``p``-th (item, slot) pair is item ``p // m`` of the
fold in slot ``p mod K`` (so an item's ``m`` slots are distinct), pairs are grouped into blocks of
``K`` consecutive pairs (each block holds every slot once), and only whole blocks are scored:
every slot gets the same count. Blocks are scored round-robin over the folds while the budget
allows, up to a number of blocks (:func:`measure_slots`; ``tune`` scores
:data:`~bookend_rag_lab.experiments.tune.MEASURE_BLOCKS` per fold: a table that only proposes a
candidate, which the race then judges like any other).

A slot's weight is the mean of the primary metric over its pairs: ``candidate_prob``, or for
``gold_logprob`` (which is negative) ``exp(mean_s - max_t mean_t)``, the geometric-mean
probability of the gold answer relative to the best slot; under the ``slot`` weight rule only the
order of the weights decides a placement. The table judged on fold ``f`` is measured on the other
folds' items only (:meth:`SlotMeasurement.table`), so no item judges a table it helped measure;
the pooled table, measured on every fold, is what a run that chooses it writes.

**The fitted profile from the same pairs** (:meth:`SlotMeasurement.fit`, no further model call).
Every scored pair of an item with candidates is also kept as a
:class:`~bookend_rag_lab.fitting.outcomes.SlotOutcome` (the gold document's token span inside the
documents block, measured as ``bookend calibrate`` measures it:
:func:`~bookend_rag_lab.fitting.outcomes.slot_outcome`); an item without filler sentences counts as
filler :data:`NO_FILLER`, so a user's items of one K form one cell. The outcome model of
:func:`~bookend_rag_lab.fitting.profile.fit_outcomes` is fitted to them with the target
:meth:`SlotMeasurement.fit_target`: ``candidate_prob`` when that is the primary metric, else
``correct`` over the items that have candidates; with neither there is no fitted profile. As for
the tables, the profile judged on fold ``f`` is fitted on the other folds' outcomes only, and the
pooled one is what a run that chooses it writes. A fit needs at least
:data:`OUTCOMES_PER_PARAMETER` outcomes per fitted parameter (four of shape, one intercept per
cell); a part with fewer, or whose optimiser fails, has no profile, and the reason is kept.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import bookend_rag
from bookend_rag_lab.experiments.folds import Folds
from bookend_rag_lab.experiments.judging import Judging
from bookend_rag_lab.experiments.trials import Trial, score_trials
from bookend_rag_lab.fitting.outcomes import SlotOutcome, slot_outcome
from bookend_rag_lab.fitting.profile import OutcomeFit, Target, fit_outcomes
from bookend_rag_lab.items.item import Item
from bookend_rag_lab.progress import progress_bar
from bookend_rag_lab.reorderers import gold_at_slot
from bookend_rag_lab.retrieval import Ranking

__all__ = [
    "NO_FILLER",
    "OUTCOMES_PER_PARAMETER",
    "ProfileFit",
    "SlotMeasurement",
    "measure_slots",
    "slot_blocks",
]

#: One (item, slot) pair to score: the slot and its trial.
Pair = tuple[int, Trial]
#: The filler of an outcome whose item was not generated with filler sentences (a user's item).
NO_FILLER = (0, 0)
#: The outcomes a fit needs per fitted parameter (module docstring).
OUTCOMES_PER_PARAMETER = 2
#: The fitted parameters besides the cells' intercepts: lambda, tau and two masses.
_SHAPE_PARAMETERS = 4


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
class ProfileFit:
    """The fitted profile of one part of a measurement (every fold, or all but one), or why
    there is none.

    Attributes:
        fit: the fit, or ``None``.
        reason: why there is no fit (``None`` when there is one).
        n_outcomes: the outcomes it was (or would have been) fitted on.
    """

    fit: OutcomeFit | None
    reason: str | None
    n_outcomes: int

    @property
    def profile(self) -> bookend_rag.FittedProfile | None:
        """The fitted profile, or ``None``."""
        return None if self.fit is None else self.fit.profile

    def to_json(self) -> dict[str, Any]:
        """The fit's block of a calibrate report (:meth:`OutcomeFit.to_json`), or the reason
        there is none."""
        if self.fit is None:
            return {"n_outcomes": self.n_outcomes, "left_out": self.reason}
        return self.fit.to_json()


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
        outcomes: ``(item index, outcome)`` per scored pair of an item with candidates.
    """

    k: int
    metric: str
    folds: Folds
    pairs: tuple[tuple[int, int, float], ...]
    planned: int
    calls: int
    outcomes: tuple[tuple[int, SlotOutcome], ...] = ()

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

    def table(self, held_out: int | None = None) -> bookend_rag.TabulatedProfile | None:
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
        return bookend_rag.TabulatedProfile(
            weights=tuple(weights.tolist()),
            kind="slot",
            label=f"measured slots (K={self.k}, {per_slot} items per slot from {where})",
            metadata={"metric": self.metric, "slot_means": means, "items_per_slot": per_slot},
        )

    def parts(self) -> list[tuple[str, int | None]]:
        """The parts the tables and fits are measured on, by name: every fold (``"pooled"``,
        ``None``), then each fold held out (``"fold f held out"``, ``f``)."""
        return [("pooled", None), *((f"fold {f} held out", f) for f in range(self.folds.count))]

    def fits(self) -> dict[str, ProfileFit]:
        """:meth:`fit` on every part (:meth:`parts`), by name."""
        return {name: self.fit(held_out) for name, held_out in self.parts()}

    def fit_target(self) -> Target | None:
        """What the fit scores (module docstring): ``candidate_prob`` when it is the primary
        metric, else ``correct`` when some measured item has candidates, else ``None``."""
        if self.metric == "candidate_prob":
            return "candidate_prob"
        return "correct" if self.outcomes else None

    def fit(self, held_out: int | None = None) -> ProfileFit:
        """The profile fitted to the outcomes of items outside fold ``held_out`` (all items for
        ``None``), or why there is none (module docstring); never raises."""
        kept = [o for i, o in self.outcomes if self.folds.of[i] != held_out]
        target = self.fit_target()
        if target is None:
            return ProfileFit(None, "no measured item has candidates to fit an outcome to", 0)
        parameters = _SHAPE_PARAMETERS + len({o.cell for o in kept})
        needed = OUTCOMES_PER_PARAMETER * parameters
        if len(kept) < needed:
            return ProfileFit(
                None,
                f"{len(kept)} outcomes, fewer than the {needed} that {parameters} parameters need",
                len(kept),
            )
        where = "every fold" if held_out is None else f"the folds other than {held_out}"
        try:
            fit = fit_outcomes(
                kept, target=target, label=f"fitted (K={self.k}, {len(kept)} outcomes from {where})"
            )
        except ValueError as exc:  # a non-finite likelihood or parameter, in the optimiser
            return ProfileFit(None, f"the fit failed: {exc}", len(kept))
        return ProfileFit(fit, None, len(kept))

    def to_json(self) -> dict[str, Any]:
        """The design's size and every table's per-slot means (pooled, then per held-out fold)."""
        tables: dict[str, Any] = {}
        for name, held_out in self.parts():
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


def measure_slots(
    judging: Judging, *, k: int, share: float, blocks: int | None = None
) -> SlotMeasurement:
    """Score the first ``blocks`` blocks of :func:`slot_blocks` (all for ``None``) in turn while
    the ``share`` of the run's budget affords the next one (identical prompts are scored once and
    cached)."""
    items, budget = judging.items, judging.budget.share(share)
    design = slot_blocks(items, judging.rankings, judging.folds, k)[:blocks]
    scored: list[tuple[int, int, float]] = []
    outcomes: list[tuple[int, SlotOutcome]] = []
    bar = progress_bar(len(design) * k, "measure slots", unit="prompt", enabled=judging.progress)
    with bar:
        for block in design:
            trials = [t for _, t in block]
            if not budget.take(
                budget.cost({t.prompt: items[t.item].continuations for t in trials})
            ):
                break
            values = score_trials(judging.scorer, items, trials, desc="measure", progress=False)
            for (slot, t), v in zip(block, values, strict=True):
                scored.append((t.item, slot, v[judging.metric]))
                item = items[t.item]
                if item.candidates is not None:
                    filler = NO_FILLER if item.filler is None else item.filler
                    outcome = slot_outcome(
                        item, t.order, slot, v, judging.scorer.token_length, filler
                    )
                    outcomes.append((t.item, outcome))
            bar.update(len(block))
    return SlotMeasurement(
        k,
        judging.metric,
        judging.folds,
        tuple(scored),
        len(design) * k,
        budget.calls,
        tuple(outcomes),
    )
