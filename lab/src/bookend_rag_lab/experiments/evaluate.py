"""``bookend_rag.evaluate``: does placement help on *your* model and data?

For every item, the retriever it is assigned ranks its documents and every strategy orders them;
the model scores the gold answer after each resulting prompt (identical prompts share one call,
and calls are cached on disk); the scores are compared item by item. The steps are those of
:mod:`bookend_rag_lab.experiments.trials`; the result is a versioned JSON report
(:mod:`bookend_rag_lab.report.evaluation`), a Markdown table and PNG figures.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import bookend_rag
from bookend_rag_lab import deps
from bookend_rag_lab.experiments.cost import estimate
from bookend_rag_lab.experiments.reuse import CHECKED, load_known_scores
from bookend_rag_lab.experiments.runspec import RunSpec
from bookend_rag_lab.experiments.setup import (
    DEFAULT_FAMILIES,
    default_model,
    describe,
    device_settings,
    theory_spec,
    warn_on_other_models,
)
from bookend_rag_lab.experiments.trials import (
    Measured,
    Ranked,
    Results,
    Trial,
    gold_ranks,
    plan_trials,
    reused_metrics,
    run_trials,
)
from bookend_rag_lab.items.item import Item
from bookend_rag_lab.metrics import metric_names, primary_metric
from bookend_rag_lab.models import Scorer
from bookend_rag_lab.models.backends import ScorerSpec, scorer_for
from bookend_rag_lab.models.scorer import capabilities, endpoint_settings
from bookend_rag_lab.reorderers import CURRENT_ORDERS, eval_strategies
from bookend_rag_lab.report.evaluation import build_report, markdown, write
from bookend_rag_lab.report.source import source_sentence
from bookend_rag_lab.runfiles import writing

__all__ = ["DEFAULT_FAMILIES", "EvalResult", "evaluate"]


@dataclass
class EvalResult:
    """What :func:`evaluate` returns.

    Attributes:
        report: the JSON report (fields documented in :mod:`bookend_rag_lab.report.evaluation`).
        markdown: the Markdown tables.
        files: the files written (empty without ``out_dir``).
        calls: model calls made by this run (cache misses).
    """

    report: dict[str, Any]
    markdown: str
    files: list[Path] = field(default_factory=list)
    calls: int = 0


def evaluate(
    run: RunSpec | None = None,
    scorer: Scorer | ScorerSpec | None = None,
    *,
    profiles: Mapping[
        str, bookend_rag.ModelLike | bookend_rag.PlacementConfig | bookend_rag.TunedConfig
    ]
    | None = None,
    theory: bookend_rag.ModelLike | None = None,
    random_draws: int = 3,
    oracle: bool = True,
    reuse: str | Path | None = None,
    current: str = "retrieval",
    dry_run: bool = False,
    out_dir: str | Path | None = None,
    progress: bool = True,
    log: Callable[[str], None] | None = None,
) -> EvalResult:
    """Compare placement strategies on a model and items; see ``bookend eval --help``.

    Args:
        run: the items and their prompt (:class:`~bookend_rag_lab.experiments.runspec.RunSpec`);
            by default the first 100 items of K = 10 documents of the ``hard`` suite's
            ``evaluation`` split, of the template families :data:`DEFAULT_FAMILIES` (generated
            suites).
        scorer: the model: a :class:`~bookend_rag_lab.models.Scorer`, or a
            :class:`~bookend_rag_lab.models.backends.ScorerSpec` built once the items are loaded
            and closed at the end, its calls cached in its ``cache`` (default
            ``out_dir/calls.jsonl``; in memory without ``out_dir``); default: ``smollm2``
            in-process on the CPU in float32.
        profiles: extra bookend strategies ``"bookend-NAME"``: a profile path, preset or object,
            a :class:`~bookend_rag.PlacementConfig` (its profile with its other settings), or a
            :class:`~bookend_rag.TunedConfig` (:func:`bookend_rag.load_config` of a ``tuned.json``),
            which warns when the weights' SHA-256 is not the one it was tuned on.
        theory: the model for ``bookend-theory`` and ``bookend-rank-only``; default: the theory
            spec read from the local model's config (its depth).
        random_draws: seeded random orders per item, averaged (the ``random`` strategy).
        oracle: add the oracle (the gold document in the best slot of the measured position
            curve, the other documents in retrieval order).
        reuse: a previous ``report.json`` of this model on these items: every ``(item, order)``
            it scored takes its metrics from there, and only new orders call the model
            (:mod:`~bookend_rag_lab.experiments.reuse`; a few are rescored first as a check).
        current: the order the user has today, which the report's verdicts lead with:
            ``"retrieval"`` (the retriever's order), ``"langchain"``, ``"llamaindex"`` or
            ``"haystack"`` (that framework's reorderer).
        dry_run: score nothing: the report's ``dry_run`` states the requests, model calls and
            prompt tokens the run would spend (:mod:`~bookend_rag_lab.experiments.cost`).
        out_dir: write ``report.json``, ``report.md`` and the PNG figures there.
        progress: show tqdm progress bars (on stderr).
        log: where to send one-line status messages (default: nowhere).

    Raises:
        MissingDependencyError: torch or transformers is not installed (``pip install
            "bookend-rag[lab]"`` brings them, as the message says).
        ValueError: for malformed items, unknown retrievers or suites, bad sizes, a scorer
            without a model config and no ``theory``, or a ``reuse`` report of another model or
            items.
    """
    deps.check_available()  # the extra first: one line naming it, not an import deep down
    say = log or (lambda _message: None)
    if current not in CURRENT_ORDERS:
        raise ValueError(f"current must be one of {CURRENT_ORDERS}, got current={current!r}")
    if random_draws < 1:
        raise ValueError(f"random_draws must be >= 1, got random_draws={random_draws!r}")
    started = time.perf_counter()
    run = run or RunSpec()
    loaded = run.load(suite="hard", n_items=100, split="evaluation")
    with writing(out_dir), scorer_for(scorer or ScorerSpec(), out_dir, say) as model:
        loaded = loaded.for_model(model, say, answer=not dry_run, progress=progress)
        items, names = loaded.items, loaded.retrievers
        warn_on_other_models((profiles or {}).values(), model, loaded.template)
        load_seconds = time.perf_counter() - started
        spec = theory_spec(theory, model)
        say(f"ranking {len(items)} items with {', '.join(names)}")
        ranked = Ranked.of(items, names)
        strategies = eval_strategies(spec, profiles or {}, default=default_model(theory, model))
        trials = plan_trials(
            items,
            ranked.per_item,
            strategies,
            model.token_length,
            random_draws=random_draws,
            seed=run.seed,
        )
        say(f"{len(trials)} prompts, {len({t.prompt for t in trials})} distinct")
        if dry_run:
            plan = {t.prompt: items[t.item].continuations for t in trials}
            cost = loaded.dry_run(model, estimate(model, plan, upper_bound=bool(loaded.unanswered)))
            found = {"dry_run": cost.to_json(), "source": loaded.settings["source"]}
            text = f"{cost.markdown('eval')}\n{source_sentence(loaded.settings)}\n"
            return EvalResult(report=found, markdown=text)
        metrics = metric_names(items, generated=capabilities(model).generation_only)
        known = None if reuse is None else load_known_scores(reuse, model.model_id)
        if known is not None:
            taken = sum(map(bool, reused_metrics(known, items, trials, metrics)))
            checked = min(taken, CHECKED)
            say(f"{taken} of {len(trials)} trials scored in {known.source}; {checked} rescored")
        measured = run_trials(
            model,
            items,
            ranked.per_item,
            trials,
            metrics,
            oracle=oracle,
            progress=progress,
            known=known,
        )
        settings = loaded.settings | _design(names, random_draws, oracle, profiles, spec)
        settings |= device_settings(scorer)
        settings["template"] = loaded.template.to_json()
        settings["current"] = current
        settings["endpoint"] = endpoint_settings(model)
        settings["reused"] = None if known is None else known.source
        timing = _timing(started, load_seconds, measured.trials, model.calls)
        report = _report(model.model_id, settings, items, ranked, measured, metrics, timing)
        text = markdown(report)
        files = [] if out_dir is None else write(report, text, Path(out_dir))
    return EvalResult(report=report, markdown=text, files=files, calls=model.calls)


def _design(
    retrievers: Sequence[str],
    random_draws: int,
    oracle: bool,
    profiles: Mapping[
        str, bookend_rag.ModelLike | bookend_rag.PlacementConfig | bookend_rag.TunedConfig
    ]
    | None,
    theory: bookend_rag.ModelLike,
) -> dict[str, Any]:
    """The settings that say what was compared, and on what."""
    return {
        "retrievers": list(retrievers),
        "random_draws": random_draws,
        "oracle": oracle,
        "profiles": {name: describe(p) for name, p in (profiles or {}).items()},
        "theory": str(theory),
    }


def _report(
    model_id: str,
    settings: dict[str, Any],
    items: Sequence[Item],
    ranked: Ranked,
    measured: Measured,
    metrics: Sequence[str],
    timing: dict[str, Any],
) -> dict[str, Any]:
    """The JSON report of a run (:func:`~bookend_rag_lab.report.evaluation.build_report`)."""
    return build_report(
        model_id=model_id,
        settings=settings,
        metrics=metrics,
        primary=primary_metric(metrics),
        item_rows=_item_rows(items, ranked, measured.results),
        rankings=gold_ranks(items, ranked.rankings),
        position_curve=measured.curve,
        timing=timing,
    )


def _item_rows(items: Sequence[Item], ranked: Ranked, results: Results) -> list[dict[str, Any]]:
    """The report's per-item rows: id, family, K, retriever, the gold's rank and the results."""
    return [
        {
            "id": item.item_id,
            "family": item.family,
            "k": len(item.documents),
            "retriever": retriever,
            "gold_rank": None if item.gold is None else ranking.rank_of(item.gold),
            "results": per_strategy,
        }
        for item, retriever, ranking, per_strategy in zip(
            items, ranked.assigned, ranked.per_item, results, strict=True
        )
    ]


def _timing(
    started: float, load_seconds: float, trials: Sequence[Trial], calls: int
) -> dict[str, Any]:
    """Wall time, prompts asked for and distinct, model calls and seconds per call."""
    seconds = time.perf_counter() - started
    return {
        "seconds": seconds,
        "load_seconds": load_seconds,
        "requests": len(trials),
        "distinct_prompts": len({t.prompt for t in trials}),
        "model_calls": calls,
        "seconds_per_call": (seconds - load_seconds) / calls if calls else math.nan,
    }
