"""The ``bookend eval`` report: JSON (versioned), Markdown tables and the files written.

Fields of ``report.json`` (``report_version`` 1):

``report_version``, ``bookend_version``, ``model`` (the scorer's ``model_id``: for local weights
the loaded path and dtype, ``PATH|float32``; for a served model ``BASE_URL/NAME``), ``settings``
(what was run: the items and their ``source``, the kind that decided, labelled items, a built-in
suite or probes from retrievals (:mod:`~bookend_rag_lab.report.source`); the suite, K, seed,
families, split, retrievers, random draws, oracle, profiles, theory, device, dtype, and
``endpoint``: for a served model how it was scored, ``method``, ``tokenizer``, ``top_logprobs``,
``completion_requests``, ``scored_tokens`` and ``bounded_tokens``, the tokens outside the top
``top_logprobs`` scored by their upper bound)
``metrics``
    The per-item scores, in order: ``gold_logprob`` (log-probability of ``" " + answer`` after the
    prompt, nats), ``candidate_prob`` (the gold answer's probability among the candidates, when
    every item has candidates), ``accuracy`` (1 when the gold answer scores highest among the
    candidates; without candidates, when greedy decoding reproduces it). The ``random`` strategy
    averages its draws, so its per-item accuracy may be fractional.
``primary_metric``
    ``candidate_prob`` when present, else ``gold_logprob``: the continuous score the targets use.
``n_items``, ``strategies``
    Per strategy and metric, ``{"mean", "ci_low", "ci_high", "n"}``: the mean over items with a
    95% bootstrap interval over items.
``paired``
    ``"A vs B"`` for every bookend strategy A and every baseline B (framework reorderers,
    ``random``, ``retrieval``, ``reversed``) and the oracle: per metric ``{"diff", "ci_low",
    "ci_high", "p_bootstrap", "mde", "n", "verdict"}``, where ``diff`` is the mean of A minus B on
    the same items, ``mde`` the minimum detectable difference at this n (2.8 standard errors of
    the paired difference), ``verdict`` ``better``/``worse`` when the 95% interval excludes 0.
    For generated answers (0/1 outcomes) also ``n_ab``, ``n_ba`` (items only A, only B gets
    right), ``p_mcnemar`` (McNemar's exact test) and ``items_needed`` (McNemar's sample size for
    the observed difference at 80% power, Connor 1987; ``null`` without a difference).
``by_retriever``
    The same ``strategies`` and ``paired`` blocks for the items of each retriever.
``gold_rank``
    Per retriever, over all items whose gold document is known: ``counts[r]`` items with the gold
    document at retrieval rank ``r`` (0 = top), and ``first`` the share ranked first.
``position_curve``
    Per K and metric, one ``{"mean", "ci_low", "ci_high", "n"}`` per slot (or ``null``): the score
    with the gold document in that slot, from the random-shuffle draws (unconfounded by rank).
``items``
    Per item: ``id``, ``family``, ``k``, ``retriever``, ``gold_rank`` and ``results[strategy]``
    with ``order`` (document indices in prompt order), ``gold_slot`` and the metrics.
``timing``
    ``seconds``, ``load_seconds``, ``requests`` (prompts asked for), ``distinct_prompts``,
    ``model_calls`` (cache misses of this run) and ``seconds_per_call``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import bookend_rag
from bookend_rag_lab.reorderers import BASELINES
from bookend_rag_lab.report.cells import difference_cell, estimate_cell
from bookend_rag_lab.report.source import source_sentence
from bookend_rag_lab.stats import estimate, mcnemar_exact, mcnemar_sample_size, paired_difference

__all__ = ["REPORT_VERSION", "build_report", "markdown", "write"]

REPORT_VERSION = 1


def _strategy_names(items: Sequence[Mapping[str, Any]]) -> list[str]:
    names = list(dict.fromkeys(s for row in items for s in row["results"] if "#" not in s))
    ours = [s for s in names if s.startswith("bookend")]
    rest = [s for s in BASELINES if s in names]
    tail = [s for s in names if s not in ours and s not in rest]
    return [*ours, *rest, *tail]


def _values(items: Sequence[Mapping[str, Any]], strategy: str, metric: str) -> list[float]:
    return [float(row["results"][strategy][metric]) for row in items]


def _having(items: Sequence[Mapping[str, Any]], *names: str) -> list[Mapping[str, Any]]:
    return [row for row in items if all(s in row["results"] for s in names)]


def _blocks(
    items: Sequence[Mapping[str, Any]], metrics: Sequence[str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Per-strategy estimates and paired differences over ``items``; a strategy missing on some
    items (the oracle, where the gold document is unknown) is scored on the items it has."""
    names = _strategy_names(items)
    generated = "exact_match" in metrics
    strategies = {}
    for s in names:
        rows = _having(items, s)
        strategies[s] = {m: estimate(_values(rows, s, m)).to_json() for m in metrics}
    paired: dict[str, Any] = {}
    for a in (s for s in names if s.startswith("bookend")):
        for b in (s for s in names if not s.startswith("bookend")):
            rows = _having(items, a, b)
            if len(rows) >= 2:
                paired[f"{a} vs {b}"] = {
                    m: paired_difference(_values(rows, a, m), _values(rows, b, m)).to_json()
                    | _zero_one(_values(rows, a, m), _values(rows, b, m), generated)
                    for m in metrics
                }
    return strategies, paired


def _zero_one(a: Sequence[float], b: Sequence[float], generated: bool) -> dict[str, Any]:
    """For generated answers (0/1 outcomes on both sides): McNemar's exact test and the items
    McNemar's test would need to find the observed difference with 80% power (Connor 1987;
    ``None`` without a difference); ``{}`` otherwise (the random strategy averages its draws)."""
    if not generated or not all(v in (0.0, 1.0) for v in (*a, *b)):
        return {}
    n_ab, n_ba, p = mcnemar_exact(a, b)
    n = len(a)
    needed = None if n_ab == n_ba else mcnemar_sample_size(n_ab / n, n_ba / n)
    return {"n_ab": n_ab, "n_ba": n_ba, "p_mcnemar": p, "items_needed": needed}


def build_report(
    *,
    model_id: str,
    settings: Mapping[str, Any],
    metrics: Sequence[str],
    primary: str,
    item_rows: Sequence[Mapping[str, Any]],
    rankings: Mapping[str, Sequence[int]],
    position_curve: Mapping[str, Any],
    timing: Mapping[str, Any],
) -> dict[str, Any]:
    """Assemble the report (fields in the module docstring)."""
    strategies, paired = _blocks(item_rows, metrics)
    by_retriever = {}
    for name in dict.fromkeys(row["retriever"] for row in item_rows):
        subset = [row for row in item_rows if row["retriever"] == name]
        s, p = _blocks(subset, metrics)
        by_retriever[name] = {"n": len(subset), "strategies": s, "paired": p}
    gold_rank = {}
    for name, ranks in rankings.items():
        longest = max((row["k"] for row in item_rows), default=0)
        counts = [sum(1 for r in ranks if r == i) for i in range(longest)]
        gold_rank[name] = {"counts": counts, "first": counts[0] / len(ranks) if ranks else None}
    return {
        "report_version": REPORT_VERSION,
        "bookend_version": bookend_rag.__version__,
        "model": model_id,
        "settings": dict(settings),
        "metrics": list(metrics),
        "primary_metric": primary,
        "n_items": len(item_rows),
        "strategies": strategies,
        "paired": paired,
        "by_retriever": by_retriever,
        "gold_rank": gold_rank,
        "position_curve": dict(position_curve),
        "items": list(item_rows),
        "timing": dict(timing),
    }


def strategy_table(strategies: Mapping[str, Any], metrics: Sequence[str]) -> str:
    """Strategies as rows, one column per metric: mean [95% interval]."""
    lines = ["| strategy | " + " | ".join(metrics) + " |", "|---|" + "---|" * len(metrics)]
    for name, per_metric in strategies.items():
        cells = [estimate_cell(m, per_metric[m]) for m in metrics]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def paired_table(paired: Mapping[str, Any], metrics: Sequence[str]) -> str:
    """Comparisons as rows: mean difference [95% interval], ▲/▼ when it excludes 0, and MDE."""
    lines = ["| comparison | " + " | ".join(metrics) + " |", "|---|" + "---|" * len(metrics)]
    for name, per_metric in paired.items():
        lines.append(
            f"| {name} | " + " | ".join(difference_cell(m, per_metric[m]) for m in metrics) + " |"
        )
    return "\n".join(lines)


def markdown(report: Mapping[str, Any]) -> str:
    """The report's tables as Markdown."""
    metrics = report["metrics"]
    units = (
        "gold_logprob in nats; candidate_prob and accuracy in percent (differences in points). "
        "Intervals: 95% bootstrap over items. ▲/▼: the paired interval excludes 0. MDE: minimum "
        "detectable difference at this n (2.8 standard errors of the paired difference)."
    )
    if "exact_match" in metrics:
        units = (
            "**Accuracy only**: the answers were generated (the API gave no log-probabilities), "
            "so there is no gold_logprob or candidate_prob. exact_match: the normalised output "
            "equals the gold answer; accuracy: it contains it (SQuAD normalisation). " + units
        )
    ranks = [
        f"- {name}: gold ranked first in {100 * (g['first'] or 0):.1f}% of items; counts by rank "
        f"{g['counts']}"
        for name, g in report["gold_rank"].items()
    ]
    primary = report["primary_metric"]
    verdicts = []
    for name in (s for s in report["strategies"] if s.startswith("bookend")):
        by_verdict: dict[str, list[str]] = {"better": [], "worse": [], "no difference": []}
        for pair, per_metric in report["paired"].items():
            a, _, b = pair.partition(" vs ")
            if a == name:
                by_verdict[per_metric[primary]["verdict"]].append(b)
        verdicts.append(
            f"- **{name}**: significantly ahead of {', '.join(by_verdict['better']) or 'none'}; "
            f"behind {', '.join(by_verdict['worse']) or 'none'}; no detectable difference from "
            f"{', '.join(by_verdict['no difference']) or 'none'}."
        )
    current = report["settings"].get("current", "retrieval")
    against = []
    for pair, per_metric in report["paired"].items():
        a, _, b = pair.partition(" vs ")
        if b == current:
            cell = per_metric[primary]
            exact = (
                f"; McNemar p = {cell['p_mcnemar']:.3g} ({cell['n_ab']} items only {a} answers, "
                f"{cell['n_ba']} only {b}), items needed for this difference: "
                f"{cell['items_needed'] or 'none (no difference)'}"
                if "p_mcnemar" in cell
                else ""
            )
            against.append(f"- {a}: {difference_cell(primary, cell)}{exact}")
    parts = [
        f"## bookend eval: {Path(report['model']).name}, n = {report['n_items']} items",
        source_sentence(report["settings"]),
        f"### Against your current order ({current}), on `{primary}`",
        "\n".join(against) or f"- no strategy was compared with {current}",
        f"### Verdicts on `{primary}` (95% paired intervals)",
        "\n".join(verdicts),
        f"Primary metric: `{report['primary_metric']}`. {units}",
        "### Strategies",
        strategy_table(report["strategies"], metrics),
        "### Paired differences (A minus B, same items)",
        paired_table(report["paired"], metrics),
        "### Gold-document retrieval rank",
        "\n".join(ranks),
    ]
    for name, block in report["by_retriever"].items():
        parts += [
            f"### Items ranked by {name} (n = {block['n']})",
            strategy_table(block["strategies"], metrics),
        ]
    t = report["timing"]
    parts.append(
        f"Time: {t['seconds']:.0f} s ({t['model_calls']} model calls, {t['distinct_prompts']} "
        f"distinct prompts of {t['requests']} requested)."
    )
    return "\n\n".join(parts) + "\n"


def write(report: Mapping[str, Any], text: str, directory: Path) -> list[Path]:
    """Write ``report.json``, ``report.md`` and the figures (when matplotlib is installed)."""
    directory.mkdir(parents=True, exist_ok=True)
    json_path = directory / "report.json"
    json_path.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    md_path = directory / "report.md"
    md_path.write_text(text, encoding="utf-8")
    files = [json_path, md_path]
    from bookend_rag.plot import matplotlib_available

    if matplotlib_available():
        from bookend_rag_lab.report import figures

        files += [
            figures.position_curve(report, directory / "position_curve.png"),
            figures.strategy_comparison(report, directory / "strategies.png"),
        ]
    return files
