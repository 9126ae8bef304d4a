"""``bookend.evaluate``: does placement help on *your* model and data?

For every item, each retriever's ranking of the documents is handed to every strategy; the model
scores the gold answer after each resulting prompt (identical prompts share one call, and calls are
cached on disk); the scores are compared item by item. The result is a versioned JSON report
(:mod:`bookend.lab.report.evaluation`), a Markdown table and PNG figures.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import bookend
from bookend.lab.items.item import EvalItem, from_probe, load_jsonl
from bookend.lab.models.local import CallCache, Continuations, ModelScorer
from bookend.lab.report import evaluation as report_mod
from bookend.lab.retrieval import RETRIEVERS, Ranking, make_retriever, rank
from bookend.lab.strategies import (
    ORACLE,
    RANDOM,
    Strategy,
    bookend_strategy,
    fixed_strategies,
    oracle_order,
    random_orders,
)

__all__ = ["DEFAULT_FAMILIES", "EvalResult", "evaluate"]

#: Template families of the built-in evaluation items; ``product`` and ``pet_colour`` stay out so a
#: profile calibrated on these two can be evaluated on templates it never saw (a transfer check).
DEFAULT_FAMILIES = ("birthplace", "access_code")
THEORY = "bookend-theory"
RANK_ONLY = "bookend-rank-only"


@dataclass
class EvalResult:
    """What :func:`evaluate` returns.

    Attributes:
        report: the JSON report (fields documented in :mod:`bookend.lab.report.evaluation`).
        markdown: the Markdown tables.
        files: the files written (empty without ``out_dir``).
        calls: model calls made by this run (cache misses).
    """

    report: dict[str, Any]
    markdown: str
    files: list[Path] = field(default_factory=list)
    calls: int = 0


@dataclass
class _Request:
    item: int
    strategy: str
    order: list[int]  # document indices in prompt order
    prompt: str


def _load_items(
    items: str | Path | Sequence[EvalItem] | None,
    k: int,
    n_items: int,
    seed: int,
    families: Sequence[str],
    split: str,
) -> list[EvalItem]:
    if items is None:
        from bookend.lab.items.hard import generate_hard_items

        probes = generate_hard_items(n_items, k, seed=seed, split=split, families=families)
        return [from_probe(p) for p in probes]
    if isinstance(items, (str, Path)):
        return load_jsonl(items)
    out = list(items)
    if not out:
        raise ValueError("items must not be empty")
    return out


def _strategies(
    theory: bookend.ModelLike,
    profiles: Mapping[str, bookend.ModelLike | bookend.PlacementConfig],
) -> dict[str, Strategy]:
    out = {
        THEORY: bookend_strategy(theory),
        RANK_ONLY: bookend_strategy(theory, rank_only=True),
    }
    for name, profile in profiles.items():
        out[f"bookend-{name}"] = bookend_strategy(profile)
    out.update(fixed_strategies())
    return out


def _retriever_names(items: Sequence[EvalItem], retrievers: Sequence[str] | None) -> list[str]:
    if retrievers is None:
        return ["file"] if all(i.scores is not None for i in items) else ["bm25", "minilm"]
    names = list(retrievers)
    bad = [r for r in names if r not in RETRIEVERS]
    if not names or bad:
        raise ValueError(f"retrievers must be drawn from {RETRIEVERS}, got retrievers={names!r}")
    if "file" in names and any(i.scores is None for i in items):
        raise ValueError("retriever 'file' needs a score on every document of every item")
    return names


def _rankings(items: Sequence[EvalItem], names: Sequence[str]) -> dict[str, list[Ranking]]:
    out: dict[str, list[Ranking]] = {}
    for name in names:
        if name == "file":
            out[name] = [rank(item.scores or ()) for item in items]
        else:
            scorer = make_retriever(name)
            out[name] = [rank(scorer(item.question, item.documents)) for item in items]
    return out


def _assigned(index: int, names: Sequence[str], n_families: int) -> str:
    """One retriever per item, alternating per round of template families (every retriever sees
    every family): independent items buy more evidence per model call than two retrievers on one
    item."""
    return names[(index // n_families) % len(names)]


def _metrics(item: EvalItem, result: Continuations) -> dict[str, float]:
    scores = np.asarray(result.logprob, dtype=np.float64)
    gold = item.answer_index
    out = {"gold_logprob": float(scores[gold])}
    if item.candidates is not None:
        probs = np.exp(scores - scores.max())
        probs /= probs.sum()
        out["candidate_prob"] = float(probs[gold])
        out["accuracy"] = float(int(np.argmax(scores)) == gold)
    else:
        out["accuracy"] = float(result.greedy[gold])
    return out


def _progress(total: int, desc: str, enabled: bool) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="call", file=sys.stderr, disable=not enabled)


def _score_all(
    scorer: ModelScorer,
    items: Sequence[EvalItem],
    requests: Sequence[_Request],
    desc: str,
    progress: bool,
) -> dict[str, Continuations]:
    """Score every distinct prompt once (cached prompts first, so the ETA counts real calls)."""
    unique: dict[str, tuple[str, ...]] = {}
    for r in requests:
        unique.setdefault(r.prompt, items[r.item].continuations)
    todo = [(p, c) for p, c in unique.items() if not scorer.is_cached(p, c)]
    out = {p: scorer.score(p, c) for p, c in unique.items() if scorer.is_cached(p, c)}
    with _progress(len(todo), desc, progress) as bar:
        for prompt, continuations in todo:
            out[prompt] = scorer.score(prompt, continuations)
            bar.update()
    return out


def _position_curve(
    rows: Sequence[tuple[int, int, dict[str, float]]], metrics: Sequence[str]
) -> dict[str, dict[str, list[dict[str, float | int] | None]]]:
    """Per K and metric, the mean with the gold document in each slot (random-shuffle draws)."""
    from bookend.lab.stats import estimate

    out: dict[str, dict[str, list[dict[str, float | int] | None]]] = {}
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


def _describe(source: Any) -> Any:
    """How an input appears in the report's settings (a placement config: its JSON form)."""
    if isinstance(source, bookend.PlacementConfig):
        try:
            return source.model_dump(mode="json")
        except ValueError:  # a profile object without a JSON form
            return repr(source)
    if source is None:
        return "built-in"
    if isinstance(source, (str, Path)):
        return str(source)
    if isinstance(source, Sequence):
        return "given"
    return str(getattr(source, "label", None) or type(source).__name__)


def _gold_ranks(
    items: Sequence[EvalItem], rankings: Mapping[str, Sequence[Ranking]]
) -> dict[str, list[int]]:
    """Per retriever, the retrieval rank of every known gold document."""
    return {
        name: [
            r.rank_of(it.gold) for r, it in zip(ranked, items, strict=True) if it.gold is not None
        ]
        for name, ranked in rankings.items()
    }


def evaluate(
    items: str | Path | Sequence[EvalItem] | None = None,
    *,
    weights: str | Path = "smollm2",
    model: Any = None,
    k: int = 10,
    n_items: int = 100,
    seed: int = 0,
    families: Sequence[str] = DEFAULT_FAMILIES,
    split: str = "evaluation",
    retrievers: Sequence[str] | None = None,
    profiles: Mapping[str, bookend.ModelLike | bookend.PlacementConfig] | None = None,
    theory: bookend.ModelLike | None = None,
    random_draws: int = 3,
    oracle: bool = True,
    device: str = "cpu",
    dtype: str = "float32",
    cache: str | Path | None = None,
    out_dir: str | Path | None = None,
    progress: bool = True,
    log: Callable[[str], None] | None = None,
) -> EvalResult:
    """Compare placement strategies on a model and items; see ``bookend eval --help``.

    Args:
        items: a JSONL path (format in :mod:`bookend.lab.items.item`), a list of
            :class:`~bookend.lab.items.item.EvalItem`, or ``None`` for ``n_items`` built-in hard
            items of ``k`` documents (:mod:`bookend.lab.items.hard`; ``seed``, ``families``
            and ``split`` select them).
        weights: a local model directory, a ``.gguf`` file, ``"smollm2"`` or ``"gemma3-270m"``.
        model: an already loaded model with ``lm``, ``tokenizer`` and ``name`` attributes
            (:class:`~bookend.lab.models.weights.TrainedModel`); overrides ``weights``.
        retrievers: from ``"bm25"``, ``"minilm"``, ``"file"`` (the documents' own scores);
            items take them in turn. Default: ``"file"`` when every document has a score, else
            BM25 and MiniLM.
        profiles: extra bookend strategies ``"bookend-NAME"``: a profile path, preset or object,
            or a :class:`~bookend.PlacementConfig` (its profile with its other settings).
        theory: the model for ``bookend-theory`` and ``bookend-rank-only``; default: the theory
            spec read from the model's config (its depth).
        random_draws: seeded random orders per item, averaged (the ``random`` strategy).
        oracle: add the oracle (the gold document in the best slot of the measured position
            curve, the other documents in retrieval order).
        device, dtype: where and in what precision the model runs (``load_trained``).
        cache: JSONL file of model calls (default ``out_dir/calls.jsonl``; ``None`` without
            ``out_dir``: in memory only).
        out_dir: write ``report.json``, ``report.md`` and the PNG figures there.
        progress: show tqdm progress bars (on stderr).
        log: where to send one-line status messages (default: nowhere).

    Raises:
        ValueError: for malformed items, unknown retrievers, or bad sizes.
    """
    say = log or (lambda _message: None)
    if random_draws < 1:
        raise ValueError(f"random_draws must be >= 1, got random_draws={random_draws!r}")
    started = time.perf_counter()
    loaded = _load_items(items, k, n_items, seed, families, split)
    names = _retriever_names(loaded, retrievers)
    if model is None:
        from bookend.lab.models.weights import load_trained

        say(f"loading {weights} ({device}, {dtype})")
        model = load_trained(weights, device=device, dtype=dtype)
    load_seconds = time.perf_counter() - started
    if theory is None:
        theory = bookend.ModelSpec.from_hf_config(model.lm.config.to_dict())
    strategies = _strategies(theory, profiles or {})
    out_path = None if out_dir is None else Path(out_dir)
    cache_path = cache if cache is not None else (out_path / "calls.jsonl" if out_path else None)
    scorer = ModelScorer(model.lm, model.tokenizer, f"{model.name}|{dtype}", CallCache(cache_path))

    say(f"ranking {len(loaded)} items with {', '.join(names)}")
    rankings = _rankings(loaded, names)
    n_families = len(dict.fromkeys(item.family for item in loaded))
    requests: list[_Request] = []
    item_rows: list[dict[str, Any]] = []
    for i, item in enumerate(loaded):
        retriever = _assigned(i, names, n_families)
        ranking = rankings[retriever][i]
        lengths = [float(scorer.token_length(item.documents[d])) for d in ranking.indices]
        chosen = {
            name: choose(list(ranking.scores), lengths) for name, choose in strategies.items()
        }
        draws = random_orders(len(item.documents), random_draws, f"{seed}:{item.item_id}")
        for d, order in enumerate(draws):
            chosen[f"{RANDOM}#{d}"] = order
        for name, ranks in chosen.items():
            order = [ranking.indices[r] for r in ranks]
            requests.append(_Request(i, name, order, item.prompt(order)))
        item_rows.append(
            {
                "id": item.item_id,
                "family": item.family,
                "k": len(item.documents),
                "retriever": retriever,
                "gold_rank": None if item.gold is None else ranking.rank_of(item.gold),
            }
        )
    say(f"{len(requests)} prompts, {len({r.prompt for r in requests})} distinct")
    scored = _score_all(scorer, loaded, requests, "eval", progress)

    metrics = ["gold_logprob", "accuracy"]
    if all(item.candidates is not None for item in loaded):
        metrics.insert(1, "candidate_prob")
    results: list[dict[str, dict[str, Any]]] = [{} for _ in loaded]
    curve_rows: list[tuple[int, int, dict[str, float]]] = []
    for r in requests:
        item = loaded[r.item]
        values = _metrics(item, scored[r.prompt])
        gold_slot = None if item.gold is None else r.order.index(item.gold)
        results[r.item][r.strategy] = {"order": r.order, "gold_slot": gold_slot, **values}
        if r.strategy.startswith(f"{RANDOM}#") and gold_slot is not None:
            curve_rows.append((len(item.documents), gold_slot, values))
    curve = _position_curve(curve_rows, metrics)

    primary = metrics[1] if "candidate_prob" in metrics else metrics[0]
    if oracle and curve_rows:
        extra = []
        for i, item in enumerate(loaded):
            gold_rank = item_rows[i]["gold_rank"]
            means = curve.get(str(len(item.documents)), {}).get(primary)
            if gold_rank is None or means is None:
                continue  # no gold document, or no curve at this K: no oracle for the item
            slot_means = {s: float(e["mean"]) for s, e in enumerate(means) if e is not None}
            ranking = rankings[item_rows[i]["retriever"]][i]
            ranks = oracle_order(gold_rank, len(item.documents), slot_means)
            order = [ranking.indices[r] for r in ranks]
            extra.append(_Request(i, ORACLE, order, item.prompt(order)))
        scored.update(_score_all(scorer, loaded, extra, "oracle", progress))
        for r in extra:
            item = loaded[r.item]
            values = _metrics(item, scored[r.prompt])
            gold_slot = r.order.index(item.gold) if item.gold is not None else None
            results[r.item][ORACLE] = {"order": r.order, "gold_slot": gold_slot, **values}
        requests += extra

    for row, per_strategy in zip(item_rows, results, strict=True):
        shuffled = [v for s, v in per_strategy.items() if s.startswith(f"{RANDOM}#")]
        per_strategy[RANDOM] = {m: float(np.mean([d[m] for d in shuffled])) for m in metrics}
        row["results"] = per_strategy
    seconds = time.perf_counter() - started
    settings = {
        "items": _describe(items),
        "k": k if items is None else None,
        "n_items": len(loaded),
        "seed": seed,
        "families": list(families) if items is None else None,
        "split": split if items is None else None,
        "retrievers": names,
        "random_draws": random_draws,
        "oracle": oracle,
        "profiles": {name: _describe(p) for name, p in (profiles or {}).items()},
        "theory": str(theory),
        "device": device,
        "dtype": dtype,
    }
    timing = {
        "seconds": seconds,
        "load_seconds": load_seconds,
        "requests": len(requests),
        "distinct_prompts": len({r.prompt for r in requests}),
        "model_calls": scorer.calls,
        "seconds_per_call": (seconds - load_seconds) / scorer.calls if scorer.calls else math.nan,
    }
    rep = report_mod.build_report(
        model_id=model.name,
        settings=settings,
        metrics=metrics,
        primary=primary,
        item_rows=item_rows,
        rankings=_gold_ranks(loaded, rankings),
        position_curve=curve,
        timing=timing,
    )
    markdown = report_mod.markdown(rep)
    files: list[Path] = []
    if out_path is not None:
        files = report_mod.write(rep, markdown, out_path)
    return EvalResult(report=rep, markdown=markdown, files=files, calls=scorer.calls)
