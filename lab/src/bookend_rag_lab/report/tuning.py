"""The ``bookend tune`` report: JSON, Markdown, the tuned config with its provenance, one figure.

Files written:

``tuned.json``
    ``{"config": {...}, "provenance": {...}}``. ``config`` is the chosen
    :class:`~bookend_rag.PlacementConfig` as JSON; ``provenance`` says where it comes from (fields
    below). The two are kept apart because a placement config rejects unknown fields.
    :func:`bookend_rag.load_config` reads the file (or a plain config) into a
    :class:`~bookend_rag.TunedConfig`, and every ``config=`` of the core and the adapters takes it.
``report.json``
    Every field below, the candidates' configs, the slot measurement and per-item results.
``report.md``, ``tune.png``
    The tables, and the candidates' means with their intervals.

Fields of ``report.json`` (``report_version`` 1): ``model``, ``settings`` (with ``source``, the
kind of items that decided: :mod:`~bookend_rag_lab.report.source`), ``metric`` (the
primary metric, ``candidate_prob`` or ``gold_logprob``), ``n_items``, ``n_judged``, ``stopped``
(``settled``, ``items``, ``calls``, ``tokens`` or ``minutes``), ``settled`` (why the race stopped
before the items ran out, or ``null``), ``candidates`` (per candidate: ``estimate`` ``{"mean",
"ci_low", "ci_high", "n"}`` with a 95% bootstrap interval over the items it was judged on,
``eliminated_at`` (items judged when the race eliminated it, or ``null``), ``versus_default``
(the paired comparison against the default on the same items at ``confidence``, uncorrected;
fields of :class:`~bookend_rag_lab.decision.Comparison`), ``config``), ``random`` (the baseline's
estimate), ``decision`` (``chosen``, ``switched``, ``best``, ``guard``: the Bonferroni-corrected
comparison that decided, ``reason``), ``chosen`` (``versus_default``, ``versus_framework``: against
the best framework pattern other than itself, ``versus_random``), ``measurement`` (the slot
table's design and per-slot means; ``fits``: the fitted profiles' ``target`` and, per part
(``pooled``, ``fold f held out``), the fit as ``bookend calibrate`` reports it, or ``n_outcomes``
and ``left_out``: why there is none), ``provenance``, ``timing`` and ``items``.

``provenance``: ``model``, ``model_sha256`` (of the model file, or of a model directory's files;
``null`` for a scorer without local weights), ``items_sha256``, ``n_items``, ``n_judged``,
``chosen``, ``switched``, ``decision``, ``metric``, ``confidence``, ``versus_default``,
``versus_framework``, ``current`` (the candidate that places as the user does today) and
``versus_current``, ``guard``, ``settings``, ``date`` (UTC, ISO 8601), ``bookend_version``.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

import bookend_rag
from bookend_rag_lab.decision import Comparison, Decision, compare
from bookend_rag_lab.report.cells import difference_cell, difference_unit, estimate_cell, value_cell
from bookend_rag_lab.report.source import probe_caution, source_sentence
from bookend_rag_lab.stats import estimate

__all__ = [
    "REPORT_VERSION",
    "build_report",
    "decision_sentence",
    "markdown",
    "tuned_config",
    "write",
]

REPORT_VERSION = 1


def decision_sentence(metric: str, reason: str, guard: Mapping[str, Any] | None) -> str:
    """The decision's ``reason`` with the guard's comparison (a
    :class:`~bookend_rag_lab.decision.Comparison` as JSON) in ``metric``'s units: points for a
    probability, nats for ``gold_logprob``."""
    if guard is None:
        return reason
    return (
        f"{reason}: {difference_cell(metric, guard)} at {guard['level']:.2%} "
        f"(Bonferroni-corrected), n = {guard['n']}"
    )


def _versus(
    scores: Mapping[str, Sequence[float]], a: str, b: str, level: float
) -> dict[str, Any] | None:
    """``a`` minus ``b`` on the items both were judged on (a prefix of the judging order)."""
    n = min(len(scores[a]), len(scores[b]))
    if a == b or n < 2:
        return None
    return compare(scores[a][:n], scores[b][:n], level=level, names=(a, b)).to_json()


def _best_other(
    scores: Mapping[str, Sequence[float]], names: Sequence[str], not_: str
) -> str | None:
    rivals = [n for n in names if n != not_ and len(scores[n]) > 0]
    return max(rivals, key=lambda n: float(np.mean(scores[n])), default=None)


def _estimate(values: Sequence[float]) -> dict[str, float | int] | None:
    return estimate(values).to_json() if values else None


def _guard(comparison: Comparison | None) -> dict[str, Any] | None:
    return None if comparison is None else comparison.to_json()


def build_report(
    *,
    model_id: str,
    settings: Mapping[str, Any],
    metric: str,
    candidates: Sequence[str],
    configs: Mapping[str, Any],
    default: str,
    current: str,
    frameworks: Sequence[str],
    scores: Mapping[str, Sequence[float]],
    baseline: str,
    eliminated: Mapping[str, int],
    decision: Decision,
    confidence: float,
    n_items: int,
    stopped: str,
    settled: str | None,
    measurement: Mapping[str, Any],
    hashes: Mapping[str, str | None],
    item_rows: Sequence[Mapping[str, Any]],
    timing: Mapping[str, Any],
) -> dict[str, Any]:
    """Assemble the report (fields in the module docstring); ``scores`` holds every candidate's
    and the ``baseline``'s per-item values, ``hashes`` the ``model_sha256`` and
    ``items_sha256``."""
    chosen = decision.chosen
    framework = _best_other(scores, frameworks, chosen)
    versus = {
        "versus_default": _versus(scores, chosen, default, confidence),
        "versus_framework": None
        if framework is None
        else _versus(scores, chosen, framework, confidence),
        "versus_random": _versus(scores, chosen, baseline, confidence),
        "versus_current": _versus(scores, chosen, current, confidence),
    }
    n_judged = len(scores[default])
    decided = {
        "chosen": chosen,
        "switched": decision.switched,
        "best": decision.best,
        "guard": _guard(decision.guard),
        "reason": decision.reason,
    }
    provenance = {
        "model": model_id,
        **hashes,
        "n_items": n_items,
        "n_judged": n_judged,
        "chosen": chosen,
        "switched": decision.switched,
        "decision": decision.reason,
        "metric": metric,
        "confidence": confidence,
        "versus_default": versus["versus_default"],
        "versus_framework": versus["versus_framework"],
        "current": current,
        "versus_current": versus["versus_current"],
        "guard": decided["guard"],
        "settings": dict(settings),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "bookend_version": bookend_rag.__version__,
    }
    return {
        "report_version": REPORT_VERSION,
        "bookend_version": bookend_rag.__version__,
        "model": model_id,
        "settings": dict(settings),
        "metric": metric,
        "confidence": confidence,
        "n_items": n_items,
        "n_judged": n_judged,
        "stopped": stopped,
        "settled": settled,
        "candidates": {
            name: {
                "estimate": _estimate(scores[name]),
                "eliminated_at": eliminated.get(name),
                "versus_default": _versus(scores, name, default, confidence),
                "versus_current": _versus(scores, name, current, confidence),
                "config": configs.get(name),
            }
            for name in candidates
        },
        "random": _estimate(scores[baseline]),
        "decision": decided,
        "chosen": {"name": chosen, "framework": framework, "current": current, **versus},
        "measurement": dict(measurement),
        "provenance": provenance,
        "timing": dict(timing),
        "items": list(item_rows),
    }


def tuned_config(config: bookend_rag.PlacementConfig, report: Mapping[str, Any]) -> dict[str, Any]:
    """The ``tuned.json`` document: the chosen config and the report's provenance."""
    return bookend_rag.TunedConfig(config, report["provenance"]).to_json()


def _estimate_or_dash(metric: str, e: Mapping[str, Any] | None) -> str:
    return "—" if e is None else estimate_cell(metric, e)


def _difference(metric: str, d: Mapping[str, Any] | None) -> str:
    return "—" if d is None else f"{difference_cell(metric, d)}, n = {d['n']}"


def _candidate_table(report: Mapping[str, Any]) -> str:
    metric = report["metric"]
    lines = [
        "| candidate | mean [95% CI] | items judged | eliminated after | minus default "
        f"| minus your order ({report['chosen']['current']}) |",
        "|---|---|---|---|---|---|",
    ]
    for name, c in report["candidates"].items():
        marker = " **(chosen)**" if name == report["decision"]["chosen"] else ""
        out = "—" if c["eliminated_at"] is None else f"{c['eliminated_at']} items"
        n = 0 if c["estimate"] is None else c["estimate"]["n"]
        lines.append(
            f"| {name}{marker} | {_estimate_or_dash(metric, c['estimate'])} | {n} | {out} | "
            f"{_difference(metric, c['versus_default'])} | "
            f"{_difference(metric, c['versus_current'])} |"
        )
    r = report["random"]
    n = 0 if r is None else r["n"]
    lines.append(
        f"| random (baseline, never chosen) | {_estimate_or_dash(metric, r)} | {n} | — | — | — |"
    )
    return "\n".join(lines)


def _against_default(report: Mapping[str, Any]) -> str:
    """The guard's line: the chosen candidate against the default, or when the default is kept,
    the best rival against it (with the MDE that comparison had)."""
    d, metric = report["decision"], report["metric"]
    if d["guard"] is None:
        return "- against the default: no rival was judged"
    corrected = d["guard"]["level"] > report["confidence"]
    level = f"at {d['guard']['level']:.2%}{', Bonferroni-corrected' if corrected else ''}"
    if d["switched"]:
        return f"- against the default ({level}): {_difference(metric, d['guard'])}"
    guard = d["guard"]
    # The MDE falls as 1/sqrt(n): what a kept default would need to see a smaller effect.
    more = f"{value_cell(metric, guard['mde'] / 2)} {difference_unit(metric)}"
    return (
        f"- the best rival, {d['best']}, against the default ({level}): "
        f"{_difference(metric, guard)}\n"
        f"- an effect smaller than the MDE goes unseen: {4 * guard['n']} items (4x) would halve "
        f"it, to about {more}"
    )


def _measurement(m: Mapping[str, Any]) -> str:
    pooled = m["tables"]["pooled"]
    head = (
        f"{m['scored_pairs']} of {m['planned_pairs']} planned (item, slot) pairs scored "
        f"(K = {m['k']}, metric `{m['metric']}`)."
    )
    if pooled is None:
        return f"{head} Too few to give every slot a measurement: `measured-slots` was left out."
    means = ", ".join(value_cell(m["metric"], v) for v in pooled["slot_means"])
    return f"{head} Pooled means by slot (1 first, {pooled['items_per_slot']} items each): {means}."


def _fits(fits: Mapping[str, Any]) -> str:
    """The fitted profiles: the pooled parameters, or why `fitted` was left out."""
    if fits["target"] is None:
        return "No item has candidates to fit an outcome to: `fitted` was left out."
    parts = {name: f for name, f in fits.items() if name != "target"}
    missing = [f"{name}: {f['left_out']}" for name, f in parts.items() if "left_out" in f]
    if missing:
        return (
            f"Target `{fits['target']}`. `fitted` was left out (it needs a fit of every part): "
            + "; ".join(missing)
            + "."
        )
    p = parts["pooled"]["profile"]["parameters"]
    return (
        f"Target `{fits['target']}`, {parts['pooled']['n_outcomes']} outcomes. Pooled: "
        f"primacy {p['primacy_mass']:.2f} (lambda {p['lam']:.3g}), recency {p['recency_mass']:.2f} "
        f"(window {p['tau_tokens']:.3g} tokens), floor {p['floor_mass']:.2f}, at "
        f"{p['reference_tokens']:.0f} tokens."
    )


def _answers(report: Mapping[str, Any]) -> str:
    """The self-answer probes' answer requests, made before the budget started (none: empty)."""
    answers = report["settings"].get("source", {}).get("generated_answers")
    if not answers:
        return ""
    return f"; before these, {answers} answer requests built the probes (outside the budget)"


#: The steps of ``timing.step_seconds``, as the report names them.
STEP_NAMES = {
    "loading": "loading the model",
    "items": "the items (and the probes' answers)",
    "measure": "measuring the slots",
    "race": "the race",
}


def _steps(timing: Mapping[str, Any]) -> str:
    """Where the time went, in parentheses (nothing for a report without step times)."""
    steps = timing.get("step_seconds")
    if not steps:
        return ""
    return " (" + ", ".join(f"{STEP_NAMES[k]} {v:.0f} s" for k, v in steps.items()) + ")"


def markdown(report: Mapping[str, Any]) -> str:
    """The report as Markdown: the decision, the candidates, the chosen one's comparisons."""
    metric = report["metric"]
    d, c, t = report["decision"], report["chosen"], report["timing"]
    units = "gold_logprob in nats" if metric == "gold_logprob" else f"{metric} in percent (points)"
    stop = {
        "settled": f"stopped early, the decision settled: {report.get('settled')}",
        "items": "every item was judged",
        "calls": "the calls budget ran out",
        "tokens": "the token budget ran out",
        "minutes": "the time budget ran out",
    }[report["stopped"]]
    framework = c["framework"] or "none"
    parts = [
        f"## bookend tune: {Path(report['model']).name}, {report['n_judged']} of "
        f"{report['n_items']} items judged",
        f"**Decision.** {decision_sentence(metric, d['reason'], d['guard'])}.",
        source_sentence(report["settings"]),
        *filter(None, [probe_caution(report["settings"], d["chosen"])]),
        f"Written: `{d['chosen']}` (`tuned.json`: the config and its provenance).",
        f"### Candidates on `{metric}` ({units})",
        _candidate_table(report),
        "Means: 95% bootstrap intervals over the items each candidate was judged on. "
        f"Minus default: paired t-interval at {report['confidence']:.0%} on the same items "
        "(uncorrected; the decision's guard is Bonferroni-corrected over every candidate). "
        "▲/▼: the interval excludes 0. MDE: the smallest difference detected with 80% power.",
        f"### `{d['chosen']}` against the others",
        "\n".join(
            [
                _against_default(report),
                f"- against your current order ({c['current']}): "
                f"{_difference(metric, c['versus_current'])}",
                f"- against the best framework pattern ({framework}): "
                f"{_difference(metric, c['versus_framework'])}",
                f"- against random shuffles: {_difference(metric, c['versus_random'])}",
            ]
        ),
        "### Measured slot table",
        _measurement(report["measurement"]),
        "### Fitted profile",
        _fits(report["measurement"]["fits"]),
        "### Notes",
        "- `alternate` is Haystack's LostInTheMiddleRanker pattern; `langchain` is LangChain's "
        "LongContextReorder, which LlamaIndex's equals when the retriever's scores are given.\n"
        f"- The slot tables (`reversed`, `langchain`, `measured-slots`) are built for K = "
        f"{report['settings']['k_candidates']}.\n"
        "- `fitted` is a parametric profile (primacy, a recency window in tokens, a floor) fitted "
        "to the slot measurement's outcomes, no further model call; like `measured-slots` it is "
        "cross-fitted: judged on each fold with the fit of the other folds.",
        f"Time: {t['seconds']:.0f} s{_steps(t)}, {t['model_calls']} model calls "
        f"({t['measure_calls']} to measure the slots, {t['race_calls']} in the race), "
        f"{t.get('prompt_tokens', 0):,} prompt tokens; {stop}{_answers(report)}.",
    ]
    return "\n\n".join(parts) + "\n"


def write(
    report: Mapping[str, Any], text: str, config: bookend_rag.PlacementConfig, directory: Path
) -> list[Path]:
    """Write ``tuned.json``, ``report.json``, ``report.md`` and ``tune.png`` (when matplotlib is
    installed) into ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    tuned = directory / "tuned.json"
    tuned.write_text(json.dumps(tuned_config(config, report), indent=2) + "\n", encoding="utf-8")
    json_path = directory / "report.json"
    json_path.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    md_path = directory / "report.md"
    md_path.write_text(text, encoding="utf-8")
    files = [tuned, json_path, md_path]
    from bookend_rag.plot import matplotlib_available

    if matplotlib_available():
        from bookend_rag_lab.report.figures import candidate_means

        files.append(candidate_means(report, directory / "tune.png"))
    return files
