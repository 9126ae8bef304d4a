"""Chunk-weight rules side by side: the stress set, the curve panel with lengths, real runs.

Which rule turns the influence on a chunk's span into its weight (``bookend_rag.weighing``):
``mass`` (total influence per mean chunk length), ``anchored`` (mean density, point masses per
mean length), ``density`` (mean density, the first design) and ``slot`` (rank-only).

* **Stress set** (no model): random instances, K 3..20, token lengths 20..800, with and without
  scores, on theory presets (the bookend view, ``suffix_tokens=0``, and the whole-prompt view)
  and the ``liu2023:*`` curves. Counts how often the most relevant chunk lands outside the two
  end slots, and how often it misses the slot that the profile's equal-length weights rank
  heaviest.
* **Curve panel with lengths** (no model): each Liu et al. 2023 curve is the truth (accuracy by the
  gold document's slot), the gold document's retrieval rank follows a geometric law, lengths are
  random; bookend places with the theory default under each rule. Expected accuracy per rule, and
  the oracle that knows the curve.
* **Real runs** (``--real``): SmolLM2-135M-Instruct on the plain lookup items (the lab's
  ``lookup`` suite, evaluation split; documents of unequal lengths), BM25 and MiniLM rankings of
  every item, the theory default for its 30 layers under each rule (identical orders share one
  model call: the lab's call cache). Per item the gold
  answer's probability among the candidates (continuous) and 0/1 accuracy; paired differences
  against rank-only (``slot``) with item-bootstrap 95% intervals.

From the repository root::

    python bench/weight_rules.py                       # stress + panel, about a minute
    python bench/weight_rules.py --real --items 80 --k 10   # + real runs (CPU: tens of minutes)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

import bookend_rag
from bookend_rag import WEIGHT_RULES, available_profile_presets, resolve_profile
from bookend_rag.weighing import slot_weights
from bookend_rag_lab.experiments.evaluate import DEFAULT_FAMILIES
from bookend_rag_lab.stats import paired_difference

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

THEORY_PRESETS = ("llama-3.1-8b", "qwen2.5-7b", "smollm2-135m", "gpt2")


def _heaviest_end_profiles() -> dict[str, tuple[Any, dict[str, int]]]:
    """Profiles and layouts of the stress set, all heaviest at an end with equal lengths."""
    out: dict[str, tuple[Any, dict[str, int]]] = {}
    for name in THEORY_PRESETS:
        # The bookend view (the chunks fill the sequence): the rules differ most there.
        out[name] = (resolve_profile(name), {"suffix_tokens": 0})
        out[f"{name} (whole prompt)"] = (
            resolve_profile(name),
            {"prefix_tokens": 150, "suffix_tokens": 40},
        )
    for name in available_profile_presets():
        out[name] = (resolve_profile(name), {})
    return out


def stress(n_instances: int, seed: int) -> dict[str, Any]:
    """Per rule: how often the best chunk lands outside the end slots / off the heaviest slot."""
    rng = np.random.default_rng(seed)
    profiles = _heaviest_end_profiles()
    names = list(profiles)
    counts = {rule: {"middle": 0, "off_heaviest": 0} for rule in WEIGHT_RULES}
    per_profile = {name: {rule: 0 for rule in WEIGHT_RULES} for name in names}
    for index in range(n_instances):
        name = names[index % len(names)]
        profile, layout = profiles[name]
        k = int(rng.integers(3, 21))
        lengths = rng.integers(20, 801, k).tolist()
        scores = rng.random(k).tolist() if index % 2 == 0 else None
        best = int(np.argmax(scores)) if scores is not None else 0
        weights = slot_weights(profile, k, bookend_rag.Layout(**layout))
        heaviest = int(np.argmax(weights))
        for rule in WEIGHT_RULES:
            order = bookend_rag.reorder(
                list(range(k)), scores, model=profile, lengths=lengths, weight_rule=rule, **layout
            ).order
            slot = order.index(best)
            if slot not in (0, k - 1):
                counts[rule]["middle"] += 1
                per_profile[name][rule] += 1
            counts[rule]["off_heaviest"] += slot != heaviest
    return {"instances": n_instances, "rules": counts, "middle_by_profile": per_profile}


def panel(n_instances: int, seed: int) -> dict[str, Any]:
    """Expected accuracy with each Liu curve as the truth and random lengths, per rule."""
    from placement_quality.curves import liu2023_curves
    from placement_quality.expected import expected_accuracy, geometric_ranks, oracle_order

    rng = np.random.default_rng(seed)
    curves = liu2023_curves()
    totals: dict[str, list[float]] = {rule: [] for rule in (*WEIGHT_RULES, "oracle")}
    # The bookend view, as recorded: with the default layout every theory profile places by
    # relevance whatever the rule.
    placer = {
        rule: bookend_rag.Bookend("llama-3.1-8b", weight_rule=rule, suffix_tokens=0)
        for rule in WEIGHT_RULES
    }
    for index in range(n_instances):
        curve = curves[index % len(curves)]
        k = int(rng.integers(3, 21))
        decay = float(rng.choice([0.5, 0.7, 0.85]))
        probs, acc = geometric_ranks(k, decay), curve.slot_accuracy(k)
        scores = [float(k - r) for r in range(k)]  # retrieval order: rank r is document r
        lengths = rng.integers(20, 801, k).tolist()
        for rule, p in placer.items():
            order = p.place(list(range(k)), scores, lengths=lengths).order
            totals[rule].append(expected_accuracy(order, probs, acc))
        totals["oracle"].append(expected_accuracy(oracle_order(probs, acc), probs, acc))
    return {
        "instances": n_instances,
        "mean_expected_accuracy": {r: float(np.mean(v)) for r, v in totals.items()},
        "paired_vs_slot": {
            rule: _paired(np.array(totals[rule]) - np.array(totals["slot"]))
            for rule in WEIGHT_RULES
        },
    }


def _paired(diff: np.ndarray) -> dict[str, float]:
    """Mean paired difference, its item-bootstrap 95% interval and the minimum detectable
    difference at this n (:func:`bookend_rag_lab.stats.paired_difference`)."""
    paired = paired_difference(diff, np.zeros_like(diff))
    return {
        "mean": paired.diff,
        "low": paired.ci_low,
        "high": paired.ci_high,
        "mde": paired.mde,
        "n": paired.n,
    }


def real_runs(n_items: int, k_values: Sequence[int], seed: int, threads: int) -> dict[str, Any]:
    """Every rule on SmolLM2 with BM25 and MiniLM rankings (see the module docstring), through
    the lab's items, retrievers, scorer and metrics."""
    import torch

    from bookend_rag_lab.experiments.trials import plan_trials, rank_items, score_trials
    from bookend_rag_lab.items import suite_items
    from bookend_rag_lab.models import load_scorer
    from bookend_rag_lab.reorderers import bookend_strategy

    torch.set_num_threads(threads)
    scorer = load_scorer("smollm2")
    # Only the rules: the baselines (retrieval order, random shuffle, the frameworks) are
    # ``bookend eval``'s job, and every extra order costs a model call on the CPU.
    strategies = {
        rule: bookend_strategy(
            bookend_rag.PlacementConfig(model="smollm2-135m", weight_rule=rule, suffix_tokens=0)
        )
        for rule in WEIGHT_RULES
    }
    rows: list[dict[str, Any]] = []
    started = time.perf_counter()
    for k in k_values:
        items = suite_items(
            "lookup", n_items, k, seed=seed + k, split="evaluation", families=DEFAULT_FAMILIES
        )
        per_retriever = {}
        for retriever, ranked in rank_items(items, ("bm25", "minilm")).items():
            trials = plan_trials(
                items, ranked, strategies, scorer.token_length, random_draws=0, seed=seed
            )
            values = score_trials(scorer, items, trials, desc=f"K={k} {retriever}", progress=True)
            per_retriever[retriever] = (ranked, trials, values)
        for i, item in enumerate(items):
            for retriever, (ranked, trials, values) in per_retriever.items():
                row: dict[str, Any] = {
                    "k": k,
                    "item": item.item_id,
                    "retriever": retriever,
                    "gold_rank": ranked[i].rank_of(item.gold),
                }
                for t, v in zip(trials, values, strict=True):
                    if t.item == i:
                        row[t.strategy] = {
                            "prob": v["candidate_prob"],
                            "correct": v["accuracy"] == 1,
                        }
                rows.append(row)
    summary: dict[str, Any] = {}
    for k in (*k_values, "all"):
        subset = [r for r in rows if k == "all" or r["k"] == k]
        prob = {s: np.array([r[s]["prob"] for r in subset]) for s in WEIGHT_RULES}
        correct = {
            s: np.array([r[s]["correct"] for r in subset], dtype=float) for s in WEIGHT_RULES
        }
        summary[str(k)] = {
            "n": len(subset),
            "gold_first": float(np.mean([r["gold_rank"] == 0 for r in subset])),
            "mean_prob": {s: float(v.mean()) for s, v in prob.items()},
            "accuracy": {s: float(v.mean()) for s, v in correct.items()},
            "prob_vs_slot": {s: _paired(prob[s] - prob["slot"]) for s in WEIGHT_RULES},
            "accuracy_vs_slot": {s: _paired(correct[s] - correct["slot"]) for s in WEIGHT_RULES},
        }
    return {
        "items_per_k": n_items,
        "k_values": list(k_values),
        "model_calls": scorer.calls,
        "seconds": time.perf_counter() - started,
        "summary": summary,
        "rows": rows,
    }


def _print(results: dict[str, Any]) -> None:
    s = results["stress"]
    print(f"\nStress set: {s['instances']} instances (K 3-20, lengths 20-800, half without scores)")
    print(f"{'rule':<10} {'best outside the ends':>22} {'best off the heaviest slot':>28}")
    for rule, c in s["rules"].items():
        print(
            f"{rule:<10} {c['middle']:>14} ({100 * c['middle'] / s['instances']:4.1f}%)"
            f" {c['off_heaviest']:>19} ({100 * c['off_heaviest'] / s['instances']:4.1f}%)"
        )
    p = results["panel"]
    print(f"\nCurve panel with lengths: {p['instances']} instances (Liu et al. curves as truth)")
    for rule, value in p["mean_expected_accuracy"].items():
        d = p["paired_vs_slot"].get(rule)
        extra = (
            f"  vs slot {100 * d['mean']:+.2f} [{100 * d['low']:+.2f}, {100 * d['high']:+.2f}]"
            if d
            else ""
        )
        print(f"  {rule:<10} {100 * value:6.2f}%{extra}")
    real = results.get("real")
    if real:
        for k, cell in real["summary"].items():
            print(f"\nReal runs, K = {k}: n = {cell['n']}, gold first {cell['gold_first']:.0%}")
            for name in cell["mean_prob"]:
                dp, da = cell["prob_vs_slot"][name], cell["accuracy_vs_slot"][name]
                print(
                    f"  {name:<10} prob {cell['mean_prob'][name]:.3f} "
                    f"({dp['mean']:+.3f} [{dp['low']:+.3f}, {dp['high']:+.3f}], "
                    f"mde {dp['mde']:.3f})"
                    f"  acc {100 * cell['accuracy'][name]:5.1f}% "
                    f"({100 * da['mean']:+.1f} [{100 * da['low']:+.1f}, {100 * da['high']:+.1f}])"
                )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--instances", type=int, default=6000, help="stress and panel instances")
    parser.add_argument("--real", action="store_true", help="also run SmolLM2 (needs validate)")
    parser.add_argument("--items", type=int, default=150, help="real-run items per K")
    parser.add_argument("--k", type=int, nargs="+", default=[10, 20], help="real-run K values")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=BENCH / "weight_rules.json")
    args = parser.parse_args(argv)
    results: dict[str, Any] = {
        "command": "python bench/weight_rules.py "
        + " ".join(sys.argv[1:] if argv is None else argv),
        "stress": stress(args.instances, args.seed),
        "panel": panel(args.instances, args.seed),
    }
    if args.real:
        results["real"] = real_runs(args.items, args.k, args.seed, args.threads)
    args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    _print(results)


if __name__ == "__main__":
    main()
