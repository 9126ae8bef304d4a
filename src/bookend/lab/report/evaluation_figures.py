"""The PNG figures of a ``bookend eval`` report (matplotlib, Agg backend, files only)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["position_curve", "strategy_comparison"]


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _label(metric: str) -> str:
    return {
        "gold_logprob": "log P(gold answer), nats",
        "candidate_prob": "P(gold | candidates)",
        "accuracy": "accuracy",
    }[metric]


def position_curve(report: Mapping[str, Any], path: Path) -> Path:
    """The primary metric by slot of the gold document (random-shuffle draws, 95% intervals)."""
    plt = _pyplot()
    metric = report["primary_metric"]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for k, per_metric in report["position_curve"].items():
        points = [(s + 1, e) for s, e in enumerate(per_metric[metric]) if e is not None]
        if not points:
            continue
        slots = np.array([s for s, _ in points])
        mean = np.array([e["mean"] for _, e in points])
        err = np.array([[e["mean"] - e["ci_low"], e["ci_high"] - e["mean"]] for _, e in points]).T
        ax.errorbar(slots, mean, yerr=err, fmt="-o", capsize=3, label=f"K={k}")
    ax.set(
        xlabel="slot of the gold document (1 = first)",
        ylabel=_label(metric),
        title=f"{Path(report['model']).name}: score by gold slot (95% CI)",
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return path


def strategy_comparison(report: Mapping[str, Any], path: Path) -> Path:
    """Left: every strategy's mean (95% CI). Right: paired differences of the bookend strategies
    against each baseline (95% CI; the dotted band is ± the minimum detectable difference)."""
    plt = _pyplot()
    metric = report["primary_metric"]
    names = list(report["strategies"])
    means = np.array([report["strategies"][n][metric]["mean"] for n in names])
    low = means - np.array([report["strategies"][n][metric]["ci_low"] for n in names])
    high = np.array([report["strategies"][n][metric]["ci_high"] for n in names]) - means
    pairs = list(report["paired"])
    fig, (ax_s, ax_p) = plt.subplots(1, 2, figsize=(13, 0.9 + 0.28 * max(len(names), len(pairs))))
    colours = ["tab:blue" if n.startswith("bookend") else "tab:grey" for n in names]
    y = np.arange(len(names))
    ax_s.barh(y, means, xerr=[low, high], color=colours, capsize=3)
    ax_s.set_yticks(y, names, fontsize=8)
    ax_s.invert_yaxis()
    ax_s.set(xlabel=_label(metric), title=f"mean per strategy, n = {report['n_items']}")
    if pairs:
        d = [report["paired"][p][metric] for p in pairs]
        diff = np.array([x["diff"] for x in d])
        err = np.array([[x["diff"] - x["ci_low"], x["ci_high"] - x["diff"]] for x in d]).T
        yp = np.arange(len(pairs))
        colour = [
            {"better": "tab:green", "worse": "tab:red"}.get(x["verdict"], "tab:grey") for x in d
        ]
        for i, c in enumerate(colour):
            ax_p.errorbar(diff[i], yp[i], xerr=err[:, i : i + 1], fmt="o", color=c, capsize=3)
        mde = float(np.median([x["mde"] for x in d]))
        ax_p.axvspan(-mde, mde, color="grey", alpha=0.12, lw=0)
        ax_p.axvline(0.0, color="black", lw=0.8)
        ax_p.set_yticks(yp, pairs, fontsize=7)
        ax_p.invert_yaxis()
        ax_p.set(xlabel=f"paired difference in {metric} (shaded: ± median MDE)")
        ax_p.set_title("bookend minus baseline, same items (95% CI)")
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return path
