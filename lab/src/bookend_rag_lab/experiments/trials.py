"""Trials: an item's documents in one strategy's order, scored by the model. The steps that
``evaluate`` (and ``tune``) chain.

1. **Rank** (:func:`retriever_names`, :func:`rank_items`, :func:`assign_retrievers`): every item
   is ranked by every retriever of the run and scored with one of them.
2. **Plan** (:func:`plan_trials`): every strategy orders each item's retrieved list, and seeded
   random shuffles add ``random#d`` trials; each trial is rendered into its prompt.
3. **Score** (:func:`score_trials`): each distinct prompt is scored once through the scorer (its
   call cache answers repeats), and every trial gets its metrics (:mod:`bookend_rag_lab.metrics`).
4. **Record** (:func:`record`): per item and strategy, the order, the gold document's slot and the
   metrics.
5. **Curve and oracle** (:func:`position_curve`, :func:`oracle_trials`): the mean score with the
   gold document in each slot, from the random shuffles (unconfounded by rank), and the oracle's
   trials that put the gold document in the best slot of that curve.
6. **Average** (:func:`average_random`): the ``random`` strategy is the mean of its draws.

:class:`Ranked` bundles step 1 and :func:`run_trials` steps 3 to 6.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bookend_rag_lab.experiments.reuse import CHECKED, KnownScores
from bookend_rag_lab.items.item import Item
from bookend_rag_lab.metrics import item_metrics, metric_names, primary_metric
from bookend_rag_lab.models.scorer import Prompt, Scorer, capabilities, score_all
from bookend_rag_lab.reorderers import ORACLE, RANDOM, Reorderer, best_slot_order, random_orders
from bookend_rag_lab.retrieval import RETRIEVERS, Ranking, make_retriever, rank
from bookend_rag_lab.stats import estimate

__all__ = [
    "Measured",
    "Ranked",
    "Results",
    "Trial",
    "assign_retrievers",
    "average_random",
    "gold_ranks",
    "oracle_trials",
    "plan_trials",
    "position_curve",
    "rank_items",
    "record",
    "retriever_names",
    "reused_metrics",
    "run_trials",
    "score_trials",
]

#: Per item, per strategy: ``{"order", "gold_slot", <metric>: value, ...}``.
Results = list[dict[str, dict[str, Any]]]
#: Per K and metric, one ``{"mean", "ci_low", "ci_high", "n"}`` per slot, or ``None``.
Curve = dict[str, dict[str, list[dict[str, float | int] | None]]]


@dataclass(frozen=True)
class Trial:
    """One item (its index in the run) in one strategy's order (document indices)."""

    item: int
    strategy: str
    order: list[int]
    prompt: Prompt


def retriever_names(items: Sequence[Item], retrievers: Sequence[str] | None) -> list[str]:
    """The retrievers of a run: ``retrievers`` checked, or by default ``"file"`` when every
    document of every item has a score, else BM25 and MiniLM.

    Raises:
        ValueError: for an unknown retriever, or ``"file"`` with unscored documents.
    """
    if retrievers is None:
        return ["file"] if all(i.scores is not None for i in items) else ["bm25", "minilm"]
    names = list(retrievers)
    bad = [r for r in names if r not in RETRIEVERS]
    if not names or bad:
        raise ValueError(f"retrievers must be drawn from {RETRIEVERS}, got retrievers={names!r}")
    if "file" in names and any(i.scores is None for i in items):
        raise ValueError("retriever 'file' needs a score on every document of every item")
    return names


def rank_items(items: Sequence[Item], names: Sequence[str]) -> dict[str, list[Ranking]]:
    """Every item ranked by every retriever named (one retriever model loaded per name)."""
    out: dict[str, list[Ranking]] = {}
    for name in names:
        if name == "file":
            out[name] = [rank(item.scores or ()) for item in items]
        else:
            retriever = make_retriever(name)
            out[name] = [rank(retriever(item.question, item.documents)) for item in items]
    return out


def assign_retrievers(items: Sequence[Item], names: Sequence[str]) -> list[str]:
    """One retriever per item, alternating per round of template families (every retriever sees
    every family): independent items buy more evidence per model call than two retrievers on one
    item."""
    n_families = len(dict.fromkeys(item.family for item in items))
    return [names[(index // n_families) % len(names)] for index in range(len(items))]


def gold_ranks(
    items: Sequence[Item], rankings: Mapping[str, Sequence[Ranking]]
) -> dict[str, list[int]]:
    """Per retriever, the retrieval rank of every known gold document."""
    return {
        name: [
            r.rank_of(it.gold) for r, it in zip(ranked, items, strict=True) if it.gold is not None
        ]
        for name, ranked in rankings.items()
    }


@dataclass(frozen=True)
class Ranked:
    """The rank step of a run: every item ranked by every retriever, and the one it is scored
    with (:func:`assign_retrievers`)."""

    rankings: dict[str, list[Ranking]]
    assigned: list[str]

    @classmethod
    def of(cls, items: Sequence[Item], names: Sequence[str]) -> Ranked:
        """Rank ``items`` with the retrievers ``names`` (:func:`rank_items`)."""
        return cls(rank_items(items, names), assign_retrievers(items, names))

    @property
    def per_item(self) -> list[Ranking]:
        """Each item's ranking by its assigned retriever."""
        return [self.rankings[name][i] for i, name in enumerate(self.assigned)]


def plan_trials(
    items: Sequence[Item],
    rankings: Sequence[Ranking],
    strategies: Mapping[str, Reorderer],
    token_length: Callable[[str], int],
    *,
    random_draws: int,
    seed: int,
) -> list[Trial]:
    """Every strategy's order of each item's ranked documents (``rankings[i]`` ranks item ``i``)
    and ``random_draws`` shuffles ``random#d`` seeded by ``"SEED:ITEM_ID"``; the strategies see
    the documents' texts and their token lengths under ``token_length``."""
    trials = []
    for i, (item, ranking) in enumerate(zip(items, rankings, strict=True)):
        documents = [item.documents[d] for d in ranking.indices]
        lengths = [float(token_length(text)) for text in documents]
        chosen = {
            name: choose(list(ranking.scores), lengths, documents)
            for name, choose in strategies.items()
        }
        draws = random_orders(len(item.documents), random_draws, f"{seed}:{item.item_id}")
        for d, order in enumerate(draws):
            chosen[f"{RANDOM}#{d}"] = order
        for name, ranks in chosen.items():
            order = [ranking.indices[r] for r in ranks]
            trials.append(Trial(i, name, order, item.prompt(order)))
    return trials


def reused_metrics(
    known: KnownScores | None,
    items: Sequence[Item],
    trials: Sequence[Trial],
    metrics: Sequence[str],
) -> list[dict[str, float]]:
    """Per trial, its ``metrics`` in ``known`` (``{}`` when it lacks one, or without ``known``)."""
    if known is None:
        return [{} for _ in trials]
    return [known.get(items[t.item].item_id, t.order, metrics) for t in trials]


def score_trials(
    scorer: Scorer,
    items: Sequence[Item],
    trials: Sequence[Trial],
    *,
    desc: str,
    progress: bool,
    known: KnownScores | None = None,
) -> list[dict[str, float]]:
    """The metrics of every trial; each distinct prompt is scored once. With ``known`` (the
    scores of a previous report, :mod:`~bookend_rag_lab.experiments.reuse`), a trial it holds takes
    its metrics from there once the first :data:`~bookend_rag_lab.experiments.reuse.CHECKED` of
    those in the run, scored again, agree."""
    generated = capabilities(scorer).generation_only
    reused = reused_metrics(known, items, trials, metric_names(items, generated=generated))
    wanted = 0 if known is None else max(CHECKED - known.checked, 0)
    reused_prompts = {t.prompt: t for t, r in zip(trials, reused, strict=True) if r}
    checked = dict(itertools.islice(reused_prompts.items(), wanted))
    requests: dict[Prompt, Sequence[str]] = {}
    for t, r in zip(trials, reused, strict=True):
        if not r or t.prompt in checked:
            requests.setdefault(t.prompt, items[t.item].continuations)
    scored = score_all(scorer, requests, desc=desc, progress=progress)

    def scored_metrics(t: Trial) -> dict[str, float]:
        item = items[t.item]
        return item_metrics(
            scored[t.prompt],
            item.answer_index,
            candidates=item.candidates is not None,
            answers=item.continuations,
        )

    if known is not None:
        for t in checked.values():
            known.check(items[t.item].item_id, t.order, scored_metrics(t))
    return [r or scored_metrics(t) for t, r in zip(trials, reused, strict=True)]


def record(
    results: Results,
    items: Sequence[Item],
    trials: Sequence[Trial],
    values: Sequence[Mapping[str, float]],
) -> None:
    """Enter each trial's order, gold slot and metrics into ``results`` (per item, strategy)."""
    for t, metrics in zip(trials, values, strict=True):
        gold = items[t.item].gold
        gold_slot = None if gold is None else t.order.index(gold)
        results[t.item][t.strategy] = {"order": t.order, "gold_slot": gold_slot, **metrics}


def position_curve(items: Sequence[Item], results: Results, metrics: Sequence[str]) -> Curve:
    """Per K and metric, the mean (95% bootstrap interval) with the gold document in each slot,
    over the random-shuffle draws."""
    rows = [
        (len(item.documents), r["gold_slot"], r)
        for item, per_strategy in zip(items, results, strict=True)
        for name, r in per_strategy.items()
        if name.startswith(f"{RANDOM}#") and r["gold_slot"] is not None
    ]
    out: Curve = {}
    for k in sorted({k for k, _, _ in rows}):
        per_metric: dict[str, list[dict[str, float | int] | None]] = {}
        for metric in metrics:
            slots: list[dict[str, float | int] | None] = []
            for slot in range(k):
                vals = [m[metric] for kk, s, m in rows if kk == k and s == slot]
                slots.append(estimate(vals).to_json() if vals else None)
            per_metric[metric] = slots
        out[str(k)] = per_metric
    return out


def oracle_trials(
    items: Sequence[Item], rankings: Sequence[Ranking], curve: Curve, metric: str
) -> list[Trial]:
    """The oracle's trial of every item whose gold document is known and whose K has a curve:
    the gold document in the slot of the best mean ``metric``, the others in retrieval order."""
    trials = []
    for i, (item, ranking) in enumerate(zip(items, rankings, strict=True)):
        means = curve.get(str(len(item.documents)), {}).get(metric)
        if item.gold is None or means is None:
            continue
        slot_means = {s: float(e["mean"]) for s, e in enumerate(means) if e is not None}
        ranks = best_slot_order(ranking.rank_of(item.gold), len(item.documents), slot_means)
        order = [ranking.indices[r] for r in ranks]
        trials.append(Trial(i, ORACLE, order, item.prompt(order)))
    return trials


@dataclass
class Measured:
    """The scored trials of a run: per-item results, the position curve, every trial."""

    results: Results
    curve: Curve
    trials: list[Trial]


def run_trials(
    scorer: Scorer,
    items: Sequence[Item],
    rankings: Sequence[Ranking],
    trials: Sequence[Trial],
    metrics: Sequence[str],
    *,
    oracle: bool,
    progress: bool,
    known: KnownScores | None = None,
) -> Measured:
    """Score and record ``trials``, measure the position curve on the shuffles, add the oracle
    (when asked; its best slot by the primary metric) and the ``random`` average; ``known``
    answers the trials a previous report scored (:func:`score_trials`)."""
    results: Results = [{} for _ in items]
    done = list(trials)
    scored = score_trials(scorer, items, done, desc="eval", progress=progress, known=known)
    record(results, items, done, scored)
    curve = position_curve(items, results, metrics)
    if oracle:
        extra = oracle_trials(items, rankings, curve, primary_metric(metrics))
        scored = score_trials(scorer, items, extra, desc="oracle", progress=progress, known=known)
        record(results, items, extra, scored)
        done += extra
    average_random(results, metrics)
    return Measured(results, curve, done)


def average_random(results: Results, metrics: Sequence[str]) -> None:
    """Add the ``random`` strategy to every item that has random draws: each metric averaged
    over its draws."""
    for per_strategy in results:
        shuffled = [v for s, v in per_strategy.items() if s.startswith(f"{RANDOM}#")]
        if shuffled:
            per_strategy[RANDOM] = {m: float(np.mean([d[m] for d in shuffled])) for m in metrics}
