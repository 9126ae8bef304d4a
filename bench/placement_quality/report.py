"""From per-run rows to the reported figures: accuracies, paired comparisons, targets, tables.

Rows are the output of :func:`placement_quality.real.evaluate`: one per (strategy, K, item), with
``retriever`` and ``correct``. Items (per K) are the resampling clusters.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from placement_quality.panel import BOOKEND_OWN, ORACLE, max_regret
from placement_quality.stats import accuracy, paired
from placement_quality.strategies import FIXED_NAMES

FRAMEWORK_NAMES = ("langchain", "llamaindex", "haystack")
CALIBRATED = "bookend-calibrated"
THEORY = "bookend-theory"


def select(rows: Iterable[Mapping[str, Any]], **where: Any) -> list[Mapping[str, Any]]:
    """The rows whose fields equal the given values."""
    return [r for r in rows if all(r[key] == value for key, value in where.items())]


def _aligned(rows: Sequence[Mapping[str, Any]], strategy: str) -> tuple[np.ndarray, np.ndarray]:
    """Correctness of one strategy, rows sorted by (K, retriever, item); and the item clusters."""
    mine = sorted(
        select(rows, strategy=strategy), key=lambda r: (r["k"], r["retriever"], r["item"])
    )
    correct = np.array([r["correct"] for r in mine], dtype=bool)
    clusters = np.array([f"{r['k']}:{r['item']}" for r in mine])
    return correct, clusters


def strategy_names(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Strategies in the order they were run."""
    return list(dict.fromkeys(r["strategy"] for r in rows))


def accuracies(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per strategy, pooled accuracy with its 95% interval and n."""
    out = {}
    for name in strategy_names(rows):
        correct, clusters = _aligned(rows, name)
        out[name] = accuracy(correct, clusters).to_json()
    return out


def accuracies_by(rows: Sequence[Mapping[str, Any]], key: str) -> dict[str, dict[str, Any]]:
    """Per value of ``key`` (``"k"`` or ``"retriever"``), :func:`accuracies` of those rows."""
    values = list(dict.fromkeys(r[key] for r in rows))
    return {str(v): accuracies(select(rows, **{key: v})) for v in values}


def comparisons(
    rows: Sequence[Mapping[str, Any]], ours: Sequence[str], baselines: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """Paired comparisons ``"A vs B"``, pooled and per K."""
    out: dict[str, dict[str, Any]] = {}
    ks = sorted({r["k"] for r in rows})
    for a in ours:
        for b in baselines:
            if a == b:
                continue
            entry: dict[str, Any] = {"pooled": _pair(rows, a, b)}
            for k in ks:
                entry[f"K={k}"] = _pair(select(rows, k=k), a, b)
            out[f"{a} vs {b}"] = entry
    return out


def _pair(rows: Sequence[Mapping[str, Any]], a: str, b: str) -> dict[str, Any]:
    ca, clusters = _aligned(rows, a)
    cb, _ = _aligned(rows, b)
    return paired(ca, cb, clusters).to_json()


def targets(
    by_k: Mapping[str, Mapping[str, Mapping[str, Any]]],
    by_k_retriever: Mapping[str, Mapping[str, Mapping[str, Mapping[str, Any]]]],
    pairs: Mapping[str, Mapping[str, Any]],
    panel: Mapping[str, Any],
) -> dict[str, dict[str, Any]]:
    """The issue's targets, each with ``met`` and the figures behind it."""
    at_least = {}
    for k, acc in by_k.items():
        best = max(FRAMEWORK_NAMES, key=lambda n: acc[n]["accuracy"])
        at_least[k] = {
            "calibrated": acc[CALIBRATED]["accuracy"],
            "best_framework": best,
            "best_framework_accuracy": acc[best]["accuracy"],
            "met": acc[CALIBRATED]["accuracy"] >= acc[best]["accuracy"],
        }
    significant = {n: pairs[f"{CALIBRATED} vs {n}"]["pooled"] for n in FRAMEWORK_NAMES}
    theory = {
        f"K={k}, {retriever}": {
            "theory": acc[THEORY]["accuracy"],
            "retrieval": acc["retrieval"]["accuracy"],
            "met": acc[THEORY]["accuracy"] >= acc["retrieval"]["accuracy"],
        }
        for k, per_retriever in by_k_retriever.items()
        for retriever, acc in per_retriever.items()
    }
    own, own_where = max_regret(panel, BOOKEND_OWN)
    fixed = {name: max_regret(panel, name) for name in FIXED_NAMES}
    return {
        "calibrated_at_least_best_framework_every_k": {
            "met": all(v["met"] for v in at_least.values()),
            "per_k": at_least,
        },
        "calibrated_significantly_better_than_each_framework_pooled": {
            "met": all(v["significant"] for v in significant.values()),
            "per_framework": significant,
        },
        "panel_own_curve_matches_oracle": {
            "met": own < 1e-9,
            "max_regret": own,
            "where": own_where,
        },
        "panel_every_fixed_pattern_regrets": {
            "met": all(v[0] > 1e-9 for v in fixed.values()),
            "max_regret": {n: {"regret": v[0], "where": v[1]} for n, v in fixed.items()},
        },
        "theory_never_worse_than_retrieval": {
            "met": all(v["met"] for v in theory.values()),
            "per_run": theory,
        },
    }


def markdown_table(
    table: Mapping[str, Mapping[str, Mapping[str, Any]]], columns: Sequence[str]
) -> str:
    """Strategies as rows, one accuracy column (with its interval) per entry of ``table``."""
    names = list(next(iter(table.values())))
    lines = [
        "| strategy | " + " | ".join(columns) + " |",
        "|---|" + "---|" * len(columns),
    ]
    for name in names:
        cells = [_pct(column[name]) for column in table.values()]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _pct(a: Mapping[str, Any]) -> str:
    return f"{100 * a['accuracy']:.1f} [{100 * a['ci_low']:.1f}, {100 * a['ci_high']:.1f}]"


def curve_table(position_curve: Mapping[str, Mapping[str, Any]]) -> str:
    """Accuracy by gold slot (95% Wilson interval), in-domain and with the other templates."""
    ks = list(position_curve)
    header = " | ".join(f"K={k} | K={k} other templates" for k in ks)
    lines = [f"| slot | {header} |", "|---|" + "---|---|" * len(ks)]
    longest = max(len(c["accuracy"]) for c in position_curve.values())
    for slot in range(longest):
        cells = []
        for k in ks:
            for entry in (position_curve[k], position_curve[k]["transfer"]):
                if slot < len(entry["accuracy"]):
                    a = {key: entry[key][slot] for key in ("accuracy", "ci_low", "ci_high")}
                    cells.append(_pct(a))
                else:
                    cells.append("")
        lines.append(f"| {slot + 1} | " + " | ".join(cells) + " |")
    n = {k: position_curve[k]["n_items"] for k in ks}
    n_other = {k: position_curve[k]["transfer"]["n_items"] for k in ks}
    lines.append("")
    lines.append(f"Items per slot: {n} in-domain, {n_other} other templates.")
    return "\n".join(lines)


def paired_table(pairs: Mapping[str, Mapping[str, Any]]) -> str:
    """Each comparison: accuracy difference (points, 95% interval), discordant rows, p-values."""
    keys = list(next(iter(pairs.values())))
    lines = [
        "| comparison | " + " | ".join(keys) + " | discordant (pooled) | p McNemar | p bootstrap |",
        "|---|" + "---|" * (len(keys) + 3),
    ]
    for name, entry in pairs.items():
        cells = [
            f"{100 * entry[key]['diff']:+.1f} [{100 * entry[key]['ci_low']:+.1f}, "
            f"{100 * entry[key]['ci_high']:+.1f}]" + (" *" if entry[key]["significant"] else "")
            for key in keys
        ]
        pooled = entry["pooled"]
        lines.append(
            f"| {name} | "
            + " | ".join(cells)
            + f" | {pooled['a_only']} vs {pooled['b_only']} | {pooled['p_mcnemar']:.3g}"
            + f" | {pooled['p_bootstrap']:.3g} |"
        )
    lines.append("")
    lines.append("Differences in accuracy points; * = the 95% interval lies above zero.")
    return "\n".join(lines)


def panel_table(
    panel: Mapping[str, Mapping[str, Mapping[str, Mapping[str, float]]]],
    strategies: Sequence[str],
) -> str:
    """Per strategy: worst regret against the oracle and where, mean regret, cells that regret."""
    lines = [
        "| strategy | worst regret (pts) | where | mean regret (pts) | cells regretting > 0.05 |",
        "|---|---|---|---|---|",
    ]
    for name in strategies:
        gaps = np.array(
            [
                cell[ORACLE] - cell[name]
                for per_k in panel.values()
                for laws in per_k.values()
                for cell in laws.values()
            ]
        )
        worst, where = max_regret(panel, name)
        lines.append(
            f"| {name} | {100 * worst:.2f} | {where} | {100 * gaps.mean():.2f} | "
            f"{int(np.sum(gaps > 5e-4))} / {gaps.size} |"
        )
    return "\n".join(lines)


def targets_list(results: Mapping[str, Mapping[str, Any]]) -> str:
    """One line per target: met or not met."""
    return "\n".join(
        f"- {name}: {'met' if target['met'] else 'NOT met'}" for name, target in results.items()
    )


def render(results: Mapping[str, Any], panel_strategies: Sequence[str]) -> str:
    """Every table of the results, as Markdown."""
    parts = []
    if "position_curve" in results:
        parts += ["### Position curves", curve_table(results["position_curve"])]
    if "strategies" in results:
        by_k = {f"K={k}": acc for k, acc in results["strategies_by_k"].items()}
        table = {**by_k, "pooled": results["strategies"]}
        parts += ["### Accuracy per strategy", markdown_table(table, list(table))]
        for k, per_retriever in results["strategies_by_k_retriever"].items():
            parts.append(markdown_table(per_retriever, [f"K={k} {r}" for r in per_retriever]))
        parts += ["### Paired comparisons", paired_table(results["paired"])]
        parts += ["### Targets", targets_list(results["targets"])]
    panel = results["panel"]
    groups = {
        "published curves (Liu et al. 2023)": [m for m in panel if m.startswith("liu2023:")],
        "SmolLM2 curves measured here": [m for m in panel if not m.startswith("liu2023:")],
    }
    for title, models in groups.items():
        if models:
            subset = {m: panel[m] for m in models}
            parts += [f"### Panel: {title}", panel_table(subset, panel_strategies)]
    return "\n\n".join(parts)
