"""The race of ``tune``: the candidates judged batch by batch, the clearly-behind left behind.

Items are judged in the folds' order (:class:`~bookend_rag_lab.experiments.folds.Folds`), ``batch``
at a time. For each item every live candidate orders its retrieved list with its config for the
item's fold (the cross-fitted ``measured-slots`` and ``fitted`` are judged only on items they were
not measured on), a seeded random shuffle joins as the baseline of the report (scored on the
first :data:`RANDOM_ITEMS` judged items, never a candidate), and the prompts are scored: the plan
and score steps of :mod:`~bookend_rag_lab.experiments.trials`, so an identical prompt is scored
once and every call is cached. After each batch the :class:`~bookend_rag_lab.decision.Race`
eliminates the candidates clearly behind the leader. Its intervals are anytime-valid (planned for
every item), so a look after every batch keeps their error rates.

The race stops when the decision is settled (:func:`~bookend_rag_lab.decision.settled`: a winner,
or no rival that could win by what judging every item would detect), when the items run out, or
when the budget does not afford the next item: an item is judged only when its uncached prompts
fit in the calls left (counted before scoring, so the calls never exceed ``max_calls``), and no
batch starts once the minutes are up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from bookend_rag_lab.decision import (
    Decision,
    Race,
    decide,
    hold_to_current,
    settled,
    split_level,
)
from bookend_rag_lab.experiments.budget import Budget, Cost
from bookend_rag_lab.experiments.candidates import DEFAULT, Candidates
from bookend_rag_lab.experiments.judging import Judging
from bookend_rag_lab.experiments.trials import (
    Results,
    Trial,
    average_random,
    plan_trials,
    record,
    score_trials,
)
from bookend_rag_lab.items.item import Item
from bookend_rag_lab.models.scorer import Prompt
from bookend_rag_lab.progress import progress_bar
from bookend_rag_lab.reorderers import RANDOM, Reorderer, bookend_strategy

__all__ = ["FIRST_LOOK", "RANDOM_DRAWS", "RANDOM_ITEMS", "RaceRun", "random_draws", "run_race"]

#: Random shuffles per judged item: the floor every choice is reported against.
RANDOM_DRAWS = 1
#: The judged items the random baseline is scored on (the first ones, the race's first look):
#: a floor for the report, which no decision reads; ``bookend eval`` measures it on every item.
RANDOM_ITEMS = 10
#: Items judged before the first elimination or stop: the anytime-valid intervals are asymptotic,
#: so their paired spread is read on at least this many items.
FIRST_LOOK = 10


def random_draws(position: int) -> int:
    """The random shuffles of the item judged at ``position`` (0 first): :data:`RANDOM_DRAWS`
    on the first :data:`RANDOM_ITEMS`, none after."""
    return RANDOM_DRAWS if position < RANDOM_ITEMS else 0


@dataclass
class RaceRun:
    """What the race measured.

    Attributes:
        candidates: every candidate, the default first.
        race: the race, with its eliminations.
        judged: indices of the items judged, in judging order.
        scores: per candidate and for ``random``, the primary metric on the judged items (an
            eliminated candidate's stop where it was eliminated).
        results: per judged item, per strategy: order, gold slot and metrics (as ``eval``).
        stopped: ``"settled"`` (the decision was settled before the items ran out),
            ``"items"`` (all judged), ``"calls"``, ``"tokens"`` or ``"minutes"`` (the budget).
        settled: why the race stopped early (:func:`~bookend_rag_lab.decision.settled`), or
            ``None``.
    """

    candidates: list[str]
    race: Race
    judged: list[int] = field(default_factory=list)
    scores: dict[str, list[float]] = field(default_factory=dict)
    results: Results = field(default_factory=list)
    stopped: str = "items"
    settled: str | None = None

    def decide(self, confidence: float, current: str | None = None) -> Decision:
        """The guard (:func:`~bookend_rag_lab.decision.decide`) among the candidates still alive,
        corrected for every candidate the race started with; then, with the user's ``current``
        order, a kept default measurably behind it gives way to it
        (:func:`~bookend_rag_lab.decision.hold_to_current`). The error rate ``1 - confidence``
        is split (:func:`~bookend_rag_lab.decision.split_level`): a race that stopped early reads
        the anytime-valid intervals at the looks' share of it, one that judged its items to the
        end (or to its budget) the fixed-n intervals at the rest."""
        n = len(self.judged)
        if n < 2:
            reason = f"keep the default ({DEFAULT}): only {n} items judged within the budget"
            return Decision(DEFAULT, DEFAULT, False, None, None, reason)
        early = self.stopped == "settled"
        level = split_level(confidence, early=early)
        planned = self.race.planned if early else None
        alive = self.race.alive
        decision = decide(
            {c: self.scores[c] for c in alive},
            DEFAULT,
            confidence=level,
            comparisons=len(self.candidates) - 1,
            planned=planned,
        )
        if current is None:
            return decision
        return hold_to_current(decision, self.scores, current, confidence=level, planned=planned)


def _plan(
    judging: Judging, index: int, strategies: Mapping[str, Reorderer], random_draws: int
) -> list[Trial]:
    """The trials of item ``index``: every strategy's order and ``random_draws`` random ones."""
    trials = plan_trials(
        [judging.items[index]],
        [judging.rankings[index]],
        strategies,
        judging.scorer.token_length,
        random_draws=random_draws,
        seed=judging.seed,
    )
    return [replace(t, item=index) for t in trials]


def _affordable(
    planned: Mapping[int, Sequence[Trial]], items: Sequence[Item], budget: Budget
) -> list[int]:
    """The items of ``planned``, in order, as long as their uncached prompts fit the budget (whose
    tokens they then spend)."""
    kept: list[int] = []
    seen: set[Prompt] = set()
    taken = Cost(0, 0)
    for index, trials in planned.items():
        # Each item is priced once, on the prompts no earlier item of the batch asks for.
        new = {t.prompt: items[index].continuations for t in trials if t.prompt not in seen}
        cost = taken + budget.cost(new)
        if not budget.affords(cost):
            break
        kept.append(index)
        seen |= new.keys()
        taken = cost
    budget.take(taken)
    return kept


def run_race(
    judging: Judging,
    candidates: Candidates,
    *,
    batch: int,
    confidence: float,
    current: str | None = None,
) -> RaceRun:
    """Judge the items batch by batch until the decision is settled at the guard's
    ``confidence``, or the items or the budget run out (module docstring); the ``current``
    candidate (the user's order today) is never eliminated."""
    items, folds, metric = judging.items, judging.folds, judging.metric
    per_fold = [
        {name: bookend_strategy(config) for name, config in candidates.of_fold(f).items()}
        for f in range(folds.count)
    ]
    protected = () if current is None else (current,)
    planned = len(folds.order)
    race = Race(candidates.names, DEFAULT, kept=protected, min_items=FIRST_LOOK, planned=planned)
    run = RaceRun(candidates.names, race)
    run.scores = {name: [] for name in [*run.candidates, RANDOM]}
    results: Results = [{} for _ in items]
    with progress_bar(len(folds.order), "tune", unit="item", enabled=judging.progress) as bar:
        for start in range(0, len(folds.order), batch):
            alive = run.race.alive
            planned_trials = {
                i: _plan(
                    judging,
                    i,
                    {name: per_fold[folds.of[i]][name] for name in alive},
                    random_draws(start + offset),
                )
                for offset, i in enumerate(folds.order[start : start + batch])
            }
            kept = _affordable(planned_trials, items, judging.budget)
            trials = [t for i in kept for t in planned_trials[i]]
            scored = score_trials(judging.scorer, items, trials, desc="tune", progress=False)
            record(results, items, trials, scored)
            average_random([results[i] for i in kept], judging.metrics)
            for i in kept:
                for name in [*alive, RANDOM]:
                    if name in results[i]:
                        run.scores[name].append(results[i][name][metric])
            run.judged += kept
            live = run.race.update({name: run.scores[name] for name in alive})
            bar.update(len(kept))
            bar.set_postfix(calls=judging.budget.calls, alive=len(live))
            if len(kept) < len(planned_trials):
                run.stopped = judging.budget.stopped_by()
                break
            if len(run.judged) < FIRST_LOOK:
                continue
            run.settled = settled(
                {name: run.scores[name] for name in live},
                DEFAULT,
                confidence=confidence,
                comparisons=len(run.candidates) - 1,
                planned=planned,
            )
            if run.settled is not None and len(run.judged) < planned:
                run.stopped = "settled"
                break
    run.results = [results[i] for i in run.judged]
    return run
