"""``bookend_rag.tune``: the placement for *your* model and *your* items, chosen by measurement.

A short pipeline of named steps:

1. **Items** are loaded and ranked by their retrievers (the rank step of
   :mod:`~bookend_rag_lab.experiments.trials`), then split into folds by the hash of their ids
   (:mod:`~bookend_rag_lab.experiments.folds`).
2. **Measure**, when asked (``measure_blocks``), a slot table on a few items, cross-fitted (one
   per fold, measured on the other folds), that many blocks of K prompts per fold within half of
   the budget (:mod:`~bookend_rag_lab.experiments.measured_slots`).
3. **Candidates**, each a :class:`~bookend_rag.PlacementConfig`
   (:mod:`~bookend_rag_lab.experiments.candidates`): the default, relevance order, its reverse, the
   bookend view of the theory, Haystack's and LangChain's patterns, the measured slot table and
   the profile fitted to the same measurement (both cross-fitted).
4. **Race** (:mod:`~bookend_rag_lab.experiments.race`): batches of items judge the candidates still
   alive; the clearly-behind stop being scored, until the decision is settled
   (:func:`~bookend_rag_lab.decision.settled`) or the items or the budget run out.
5. **Guard** (:func:`~bookend_rag_lab.decision.decide`): the best candidate replaces the default
   only when its Bonferroni-corrected paired interval against it excludes 0, on the primary metric
   (``candidate_prob`` when every item has candidates, else ``gold_logprob``); the interval is
   anytime-valid, so the guarantee holds however early the race stopped. Random shuffles are the
   report's baseline, never a choice.
6. **Write** the chosen config with its provenance, the report and its figure
   (:mod:`~bookend_rag_lab.report.tuning`).
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import bookend_rag
from bookend_rag_lab import deps
from bookend_rag_lab.decision import Decision
from bookend_rag_lab.experiments.budget import Budget, request_tokens
from bookend_rag_lab.experiments.candidates import (
    CURRENT_CANDIDATES,
    DEFAULT,
    FITTED,
    FRAMEWORK_PATTERNS,
    MEASURED,
    Candidates,
    fixed_candidates,
)
from bookend_rag_lab.experiments.cost import Estimate, estimate
from bookend_rag_lab.experiments.folds import Folds
from bookend_rag_lab.experiments.judging import Judging
from bookend_rag_lab.experiments.measured_slots import SlotMeasurement, measure_slots, slot_blocks
from bookend_rag_lab.experiments.race import RANDOM_DRAWS, RaceRun, random_draws, run_race
from bookend_rag_lab.experiments.runspec import RunSpec
from bookend_rag_lab.experiments.setup import (
    default_model,
    device_settings,
    model_sha256,
    theory_spec,
)
from bookend_rag_lab.experiments.trials import Ranked, plan_trials
from bookend_rag_lab.experiments.wall_time import TIMED_CALLS, time_calls
from bookend_rag_lab.items.item import Item, items_sha256
from bookend_rag_lab.items.self_answer import ANSWER_TOKENS
from bookend_rag_lab.metrics import metric_names
from bookend_rag_lab.models import Scorer
from bookend_rag_lab.models.backends import ScorerSpec, scorer_for
from bookend_rag_lab.models.scorer import Prompt, capabilities, endpoint_settings
from bookend_rag_lab.reorderers import RANDOM, bookend_strategy
from bookend_rag_lab.report.source import source_sentence
from bookend_rag_lab.report.tuning import build_report, decision_sentence, markdown, write
from bookend_rag_lab.runfiles import writing

#: The candidates measured on the user's items, whose orders are known only after measuring.
CROSS_FITTED = (MEASURED, FITTED)

__all__ = ["MEASURE_BLOCKS", "MEASURE_SHARE", "TuneResult", "tune"]

#: The share of the budget (calls and minutes) the slot measurement may take; the race has the
#: rest.
MEASURE_SHARE = 0.5
#: The blocks of the slot measurement per fold (K prompts each, every slot once) that
#: ``--measure-blocks`` suggests: its table and fit only propose two candidates, which the race
#: judges like the others, so a few items suffice. Off by default: over the 20 committed cells of
#: two families and the third family's two, neither measured candidate was ever chosen, and they
#: cost a third of a run's calls (bench/RESULTS.md, issue 49).
MEASURE_BLOCKS = 3


@dataclass
class TuneResult:
    """What :func:`tune` returns.

    Attributes:
        config: the chosen placement config (the default unless the guard let another through).
        decision: the guard's decision and its reason.
        report: the JSON report (fields in :mod:`bookend_rag_lab.report.tuning`).
        markdown: the Markdown report.
        files: the files written (empty without ``out_dir``).
        calls: model calls made by this run (cache misses).
    """

    config: bookend_rag.PlacementConfig
    decision: Decision
    report: dict[str, Any]
    markdown: str
    files: list[Path] = field(default_factory=list)
    calls: int = 0


def tune(
    run: RunSpec | None = None,
    scorer: Scorer | ScorerSpec | None = None,
    *,
    theory: bookend_rag.ModelLike | None = None,
    folds: int = 2,
    measure_blocks: int = 0,
    max_calls: int | None = None,
    max_tokens: int | None = None,
    minutes: float | None = None,
    batch: int = 5,
    confidence: float = 0.95,
    current: str = "retrieval",
    dry_run: bool = False,
    out_dir: str | Path | None = None,
    progress: bool = True,
    log: Callable[[str], None] | None = None,
) -> TuneResult:
    """Choose the placement config for a model and items; see ``bookend tune --help``.

    Args:
        run: the items and their prompt, as for
            :func:`~bookend_rag_lab.experiments.evaluate.evaluate`, but built-in items by default
            the first 60 of the ``calibration`` split, so that ``eval`` can confirm the choice on
            the disjoint ``evaluation`` split. ``tuned.json`` records the template's name and
            hash, and a tuned config later judged in another prompt warns.
        scorer: the model, as for ``evaluate``; its calls are cached (a spec's ``cache``, default
            ``out_dir/calls.jsonl``), so a second run resumes.
        theory: the model of the theory candidates; default: the local model's own spec.
        folds: cross-fitting folds (>= 2).
        measure_blocks: blocks of K prompts per fold that measure a slot table on the items,
            which adds two cross-fitted candidates, ``measured-slots`` and ``fitted``
            (:data:`MEASURE_BLOCKS` is a sensible number); 0 (default): no measurement, no such
            candidate.
        max_calls, max_tokens, minutes: the budget (model calls, their prompt tokens, wall
            minutes; ``None``: no limit). Half of it may go to the slot measurement, and the
            race stops when the rest runs out. The report gives the calls and tokens spent.
        batch: items judged between two looks of the race (each look may stop it).
        confidence: the guard's level before its Bonferroni correction.
        current: what the user does today (:data:`~bookend_rag_lab.experiments.candidates.
            CURRENT_CANDIDATES`: ``"retrieval"``, the retriever's order, or ``"langchain"``,
            ``"llamaindex"``, ``"haystack"``, that framework's reorderer): every candidate is
            compared with it, and a kept default measurably behind it gives way to it.
        dry_run: judge nothing: the report's ``dry_run`` bounds the model calls and prompt
            tokens the run would spend (every candidate on every item, within the budget;
            :mod:`~bookend_rag_lab.experiments.cost`) and estimates its wall time from a few
            timed calls, which the call cache keeps
            (:mod:`~bookend_rag_lab.experiments.wall_time`); the config is the default's.
        out_dir: write ``tuned.json``, ``report.json``, ``report.md`` and ``tune.png`` there.
        progress, log: progress bars on stderr; where one-line status messages go.

    Raises:
        MissingDependencyError: torch or transformers is not installed (``pip install
            "bookend-rag[lab]"`` brings them, as the message says).
        ValueError: for a bad argument (before any model is loaded), malformed items, unknown
            retrievers or suites, or too few items for the folds.
    """
    deps.check_available()  # the extra first: one line naming it, not an import deep down
    say = log or (lambda _message: None)
    _check(
        folds=folds,
        measure_blocks=measure_blocks,
        max_calls=max_calls,
        max_tokens=max_tokens,
        minutes=minutes,
        batch=batch,
        confidence=confidence,
    )
    if current not in CURRENT_CANDIDATES:
        raise ValueError(
            f"current must be one of {list(CURRENT_CANDIDATES)}, got current={current!r}"
        )
    current_name = CURRENT_CANDIDATES[current]
    started = time.perf_counter()
    run = run or RunSpec()
    loaded = run.load(suite="hard", n_items=60, split="calibration")
    if loaded.pending is None:  # probes are counted once built, with the model's tokenizer
        Folds.of_items(loaded.items, folds)
    with writing(out_dir), scorer_for(scorer or ScorerSpec(), out_dir, say) as model:
        clock = {"loading": time.perf_counter() - started}
        loaded = loaded.for_model(model, say, answer=not dry_run, progress=progress)
        clock["items"] = time.perf_counter() - started - clock["loading"]
        folded = Folds.of_items(loaded.items, folds)
        spec = theory_spec(theory, model)
        default = default_model(theory, model)
        budget = Budget(model, max_calls, minutes, started, max_tokens=max_tokens)
        ranked = Ranked.of(loaded.items, loaded.retrievers)
        metrics = metric_names(loaded.items, generated=capabilities(model).generation_only)
        judging = Judging(model, loaded.items, ranked, folded, metrics, budget, run.seed, progress)
        run_k = _common_k(loaded.items)
        if dry_run:
            bound, plan = _upper_cost(judging, spec, default, run_k, measure_blocks)
            cost = loaded.dry_run(model, bound.capped(max_calls, max_tokens), budgeted=True)
            say(f"timing {TIMED_CALLS} scoring calls and a batch of answers for the wall time")
            timed = time_calls(
                model,
                plan,
                cost.scoring.prompt_tokens,
                loaded.unanswered,
                ANSWER_TOKENS,
                loading=clock["loading"],
                batch=run_k,
            )
            cost = replace(cost, wall_time=timed)
            kept = Decision(DEFAULT, DEFAULT, False, None, None, "dry run: nothing was scored")
            config = bookend_rag.PlacementConfig(model=default)
            found = {"dry_run": cost.to_json(), "source": loaded.settings["source"]}
            text = f"{cost.markdown('tune')}\n{source_sentence(loaded.settings)}\n"
            return TuneResult(config, kept, found, text)
        if measure_blocks:
            say(
                f"measuring the slots of K={run_k}: {measure_blocks} blocks of {run_k} prompts "
                f"in each of {folds} folds"
            )
        mark = time.perf_counter()
        measurement = measure_slots(
            judging, k=run_k, share=MEASURE_SHARE, blocks=measure_blocks * folds
        )
        clock["measure"] = time.perf_counter() - mark
        candidates = Candidates.build(spec, run_k, measurement, default)
        say(f"racing {', '.join(candidates.names)} on {judging.metric}")
        mark = time.perf_counter()
        race = run_race(
            judging, candidates, batch=batch, confidence=confidence, current=current_name
        )
        clock["race"] = time.perf_counter() - mark
        decision = race.decide(confidence, current_name)
        if race.settled is not None and race.stopped == "settled":
            say(f"stopped after {len(race.judged)} of {len(loaded.items)} items: {race.settled}")
        guard = None if decision.guard is None else decision.guard.to_json()
        say(decision_sentence(judging.metric, decision.reason, guard))
        settings = loaded.settings | dict(
            retrievers=loaded.retrievers,
            theory=str(spec),
            default=str(default),
            k_candidates=run_k,
            folds=folds,
            measure_blocks=measure_blocks,
            batch=batch,
            max_calls=max_calls,
            max_tokens=max_tokens,
            minutes=minutes,
            confidence=confidence,
            random_draws=RANDOM_DRAWS,
            **device_settings(scorer),
            endpoint=endpoint_settings(model),
            template=loaded.template.to_json(),
            current={"order": current, "candidate": current_name},
        )
        report = _report(
            judging, candidates, measurement, race, decision, settings, confidence, clock
        )
        text = markdown(report)
        config = candidates.written(decision.chosen)
        files = [] if out_dir is None else write(report, text, config, Path(out_dir))
    return TuneResult(config, decision, report, text, files, budget.calls)


def _upper_cost(
    judging: Judging,
    spec: bookend_rag.ModelLike,
    default: bookend_rag.ModelLike,
    k: int,
    measure_blocks: int,
) -> tuple[Estimate, dict[Prompt, Sequence[str]]]:
    """A bound on what tune spends: the slot measurement's prompts, every fixed candidate on every
    item and the random draws on the first :data:`~bookend_rag_lab.experiments.race.RANDOM_ITEMS`
    (a race that stops early spends less), and the two cross-fitted candidates priced at each
    item's costliest order; and the plan of prompts it prices."""
    items = judging.items
    measured = slot_blocks(items, judging.rankings, judging.folds, k)
    plan: dict[Prompt, Sequence[str]] = {
        t.prompt: items[t.item].continuations
        for block in measured[: measure_blocks * judging.folds.count]
        for _, t in block
    }
    strategies = {n: bookend_strategy(c) for n, c in fixed_candidates(spec, k, default).items()}
    trials = [
        replace(t, item=index)
        for position, index in enumerate(judging.folds.order)
        for t in plan_trials(
            [items[index]],
            [judging.rankings[index]],
            strategies,
            judging.scorer.token_length,
            random_draws=random_draws(position),
            seed=judging.seed,
        )
    ]
    tokens = {
        t.prompt: request_tokens(judging.scorer, t.prompt, items[t.item].continuations)
        for t in trials
    }
    plan |= {t.prompt: items[t.item].continuations for t in trials}
    found = estimate(judging.scorer, plan, upper_bound=True, tokens=tokens)
    per_item: dict[int, int] = {}
    for t in trials:
        per_item[t.item] = max(per_item.get(t.item, 0), tokens[t.prompt])
    costliest = per_item.values()
    extra = len(CROSS_FITTED) if measure_blocks else 0
    bound = Estimate(
        found.requests + extra * len(items),
        found.calls + extra * len(items),
        found.prompt_tokens + extra * sum(costliest),
        True,
        found.tokenizer,
    )
    return bound, plan


def _check(
    *,
    folds: int,
    measure_blocks: int,
    max_calls: int | None,
    max_tokens: int | None,
    minutes: float | None,
    batch: int,
    confidence: float,
) -> None:
    """Refuse bad run arguments in one line, before any item or model is loaded."""
    _check_integer("folds", folds, 2)
    _check_integer("measure_blocks", measure_blocks, 0)
    _check_integer("max_calls", max_calls, 1, optional=True)
    _check_integer("max_tokens", max_tokens, 1, optional=True)
    if minutes is not None and (
        isinstance(minutes, bool)
        or not isinstance(minutes, (int, float))
        or not math.isfinite(minutes)
        or minutes <= 0
    ):
        raise ValueError(f"minutes must be a number > 0 or None, got minutes={minutes!r}")
    _check_integer("batch", batch, 1)
    if isinstance(confidence, bool) or not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got confidence={confidence!r}")


def _check_integer(name: str, value: object, least: int, *, optional: bool = False) -> None:
    """Refuse ``value`` unless it is an integer (not a bool) of at least ``least``, or ``None``
    when ``optional``, naming the parameter ``name``."""
    if optional and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        either = " or None" if optional else ""
        raise ValueError(f"{name} must be an integer >= {least}{either}, got {name}={value!r}")


def _common_k(items: Sequence[Item]) -> int:
    """The documents per item the tables are built for: the most common K (the larger on a
    tie); items of another K are placed with them as they are."""
    counts = Counter(len(item.documents) for item in items)
    return max(counts, key=lambda k: (counts[k], k))


def _report(
    judging: Judging,
    candidates: Candidates,
    measurement: SlotMeasurement,
    run: RaceRun,
    decision: Decision,
    settings: Mapping[str, Any],
    confidence: float,
    clock: Mapping[str, float],
) -> dict[str, Any]:
    """The JSON report (:func:`~bookend_rag_lab.report.tuning.build_report`); ``clock``: the wall
    seconds of each step (loading the model, building the items, measuring, racing)."""
    items, budget = judging.items, judging.budget
    rows = [
        {
            "id": items[i].item_id,
            "fold": judging.folds.of[i],
            "k": len(items[i].documents),
            "retriever": judging.ranked.assigned[i],
            "results": results,
        }
        for i, results in zip(run.judged, run.results, strict=True)
    ]
    timing = {
        "seconds": budget.seconds,
        "model_calls": budget.calls,
        "prompt_tokens": budget.tokens,
        "requests": budget.requests,
        "request_tokens": budget.request_tokens,
        "measure_calls": measurement.calls,
        "race_calls": budget.calls - measurement.calls,
        "step_seconds": {step: round(seconds, 3) for step, seconds in clock.items()},
    }
    return build_report(
        model_id=judging.scorer.model_id,
        settings=settings,
        metric=judging.metric,
        candidates=run.candidates,
        configs=candidates.to_json(),
        default=DEFAULT,
        current=settings["current"]["candidate"],
        frameworks=FRAMEWORK_PATTERNS,
        scores=run.scores,
        baseline=RANDOM,
        eliminated=run.race.eliminated,
        decision=decision,
        confidence=confidence,
        n_items=len(items),
        stopped=run.stopped,
        settled=run.settled,
        measurement={**measurement.to_json(), "fits": candidates.fits_to_json()},
        hashes={
            "model_sha256": model_sha256(judging.scorer),
            "items_sha256": items_sha256(items),
            "template": settings["template"]["name"],
            "template_sha256": settings["template"]["sha256"],
        },
        item_rows=rows,
        timing=timing,
    )
