"""Why an order wins: the gold's slot, the competitors before it, and sortedness, in eval runs.

Refits every scored order of one or more ``bookend eval`` reports on built-in hard items (whose
document roles the generator records) with the regression of ``placement_quality.order_effects``:
the gold document's slot, how many near-duplicates, entity distractors and family distractors
come before it, and how sorted by retrieval rank the order is, within items. Prints, per report,
the fitted terms with 95% item bootstrap intervals and each strategy's lead over the random
shuffle split into those three parts and the rest; writes ``bench/eval_orders.json``. From the
repository root::

    python bench/eval_orders.py bench/eval/smollm2-k10/report.json bench/eval/gemma3-k10/report.json
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from placement_quality.order_effects import (
    COMPETING_ROLES,
    bootstrap_within_items,
    feature_names,
    fit_within_items,
    order_features,
)

from bookend_rag_lab.items.hard import hard_items
from bookend_rag_lab.runfiles import read_json

BENCH = Path(__file__).resolve().parent
RANDOM = "random"


def _item_roles(report: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    """The roles of every item of a report, regenerated from its settings."""
    settings = report["settings"]
    # Reports written before the suites were named ran the hard items only.
    suite = settings.get("suite", "hard")
    if settings["items"] != "built-in" or suite != "hard":
        raise ValueError(
            f"needs a report on the built-in hard items, got items={settings['items']!r}, "
            f"suite={suite!r}"
        )
    items = hard_items(
        settings["n_items"],
        settings["k"],
        seed=settings["seed"],
        split=settings["split"],
        families=settings["families"],
    )
    return {item.item_id: item.roles for item in items}


def analyse(report: dict[str, Any], metric: str, draws: int) -> dict[str, Any]:
    """Fit, intervals and per-strategy attribution of one report."""
    roles = _item_roles(report)
    k = report["settings"]["k"]
    rows: dict[tuple[int, tuple[int, ...]], tuple[np.ndarray, float]] = {}
    by_strategy: dict[str, list[tuple[np.ndarray, float]]] = {}
    for index, item in enumerate(report["items"]):
        retrieval_order = item["results"]["retrieval"]["order"]
        for name, result in item["results"].items():
            if name == RANDOM:  # the draws' average; the draws themselves are rows
                continue
            described = order_features(result["order"], roles[item["id"]], retrieval_order)
            row = (described, result[metric])
            rows[(index, tuple(result["order"]))] = row
            strategy = RANDOM if name.startswith(f"{RANDOM}#") else name
            by_strategy.setdefault(strategy, []).append(row)
    if RANDOM not in by_strategy:
        raise ValueError("needs a report with random draws (bookend eval --random-draws >= 1)")
    groups = np.array([index for index, _ in rows])
    features = np.array([row[0] for row in rows.values()])
    scores = np.array([row[1] for row in rows.values()])
    coefficients = fit_within_items(features, scores, groups)
    low, high = np.percentile(
        bootstrap_within_items(features, scores, groups, draws=draws), [2.5, 97.5], axis=0
    )
    # Column blocks of order_features: gold slots, competitors before the gold, sortedness.
    parts = {"gold_slot": slice(0, k - 1), "precedence": slice(k - 1, -1), "sortedness": -1}

    def means(strategy: str) -> tuple[np.ndarray, float]:
        mean_features = np.mean([row[0] for row in by_strategy[strategy]], axis=0)
        return mean_features, float(np.mean([row[1] for row in by_strategy[strategy]]))

    random_features, random_score = means(RANDOM)
    attribution = {}
    for strategy in by_strategy:
        if strategy == RANDOM:
            continue
        mean_features, score = means(strategy)
        shift = (mean_features - random_features) * coefficients
        split = {part: float(np.sum(shift[columns])) for part, columns in parts.items()}
        lead = score - random_score
        attribution[strategy] = {
            "lead": lead,
            **split,
            "unexplained": lead - sum(split.values()),
        }
    terms = {
        name: {"coef": float(c), "ci_low": float(lo), "ci_high": float(hi)}
        for name, c, lo, hi in zip(feature_names(k), coefficients, low, high, strict=True)
    }
    return {
        "model": Path(report["model"]).name,
        "k": k,
        "families": report["settings"]["families"],
        "n_items": report["n_items"],
        "rows": len(scores),
        "metric": metric,
        "terms": terms,
        "attribution": attribution,
    }


def render(result: dict[str, Any]) -> str:
    """Markdown for one :func:`analyse` result (points: the metric times 100)."""
    k, terms = result["k"], result["terms"]

    def term(name: str) -> str:
        t = terms[name]
        return f"{100 * t['coef']:+.1f} [{100 * t['ci_low']:+.1f}, {100 * t['ci_high']:+.1f}]"

    lines = [
        f"#### {result['model']}, K = {k}, {'/'.join(result['families'])}, "
        f"n = {result['n_items']} ({result['rows']} orders)",
        "",
        "| term | points |",
        "|---|---|",
    ]
    lines += [f"| {name} | {term(name)} |" for name in terms if not name.startswith("gold at")]
    curve = [
        "0" if s == k // 2 else f"{100 * terms[f'gold at slot {s + 1}']['coef']:+.0f}"
        for s in range(k)
    ]
    lines += [f"| gold slot 1..{k} (slot {k // 2 + 1} = 0) | {' '.join(curve)} |", ""]
    lines += [
        "| strategy | lead over random | gold slot | precedence | sortedness | unexplained |",
        "|---|---|---|---|---|---|",
    ]
    for strategy, part in result["attribution"].items():
        keys = ("lead", "gold_slot", "precedence", "sortedness", "unexplained")
        cells = (part[key] for key in keys)
        lines.append(f"| {strategy} | " + " | ".join(f"{100 * v:+.1f}" for v in cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", type=Path, nargs="+", help="bookend eval report.json files")
    parser.add_argument("--metric", default="candidate_prob")
    parser.add_argument("--draws", type=int, default=1000, help="item bootstrap draws")
    parser.add_argument("--out", type=Path, default=BENCH / "eval_orders.json")
    args = parser.parse_args(argv)
    results = [analyse(read_json(path), args.metric, args.draws) for path in args.reports]
    args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}; competing roles: {', '.join(COMPETING_ROLES)}")
    for result in results:
        print("\n" + render(result))


if __name__ == "__main__":
    main()
