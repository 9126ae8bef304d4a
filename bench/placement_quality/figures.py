"""The PNG figures of the quality benchmark, drawn from the JSON results (matplotlib, Agg)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from placement_quality.curves import PositionCurve
from placement_quality.panel import regret


def position_curves(
    measured: Mapping[str, Mapping[str, Any]], published: Sequence[PositionCurve], path: Path
) -> Path:
    """SmolLM2 accuracy by gold slot (95% intervals) beside the published curves."""
    fig, (ax_m, ax_p) = plt.subplots(1, 2, figsize=(12, 4.5))
    for k, curve in measured.items():
        for entry, style, label in (
            (curve, "-o", f"K={k}"),
            (curve["transfer"], "--s", f"K={k} (other templates)"),
        ):
            acc = np.asarray(entry["accuracy"])
            slots = np.arange(1, acc.size + 1)
            err = np.abs(np.asarray([entry["ci_low"], entry["ci_high"]]) - acc)
            ax_m.errorbar(slots, acc, yerr=err, fmt=style, capsize=3, label=label, alpha=0.85)
        ax_m.axhline(1.0 / int(k), color="grey", lw=0.8, ls=":")
    ax_m.set(
        xlabel="slot of the gold document (1 = first)",
        ylabel="accuracy",
        title="SmolLM2-135M-Instruct: accuracy by gold slot (95% CI; dotted: chance)",
    )
    ax_m.legend(fontsize=8)
    for curve in published:
        style = "--s" if curve.name.endswith("@10") else "-o"  # Table 5 dashed, Table 6 solid
        ax_p.plot(curve.positions, curve.accuracy, style, ms=3, label=curve.name, alpha=0.8)
    ax_p.set(
        xlabel="normalised position of the gold document",
        ylabel="accuracy",
        title="Liu et al. 2023 (Tables 5 and 6)",
    )
    ax_p.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return path


def strategy_accuracy(strategies: Mapping[str, Mapping[str, float]], path: Path) -> Path:
    """Pooled accuracy per strategy with 95% intervals, best first."""
    names = sorted(strategies, key=lambda n: -strategies[n]["accuracy"])
    acc = np.asarray([strategies[n]["accuracy"] for n in names])
    low = acc - np.asarray([strategies[n]["ci_low"] for n in names])
    high = np.asarray([strategies[n]["ci_high"] for n in names]) - acc
    colours = ["tab:blue" if n.startswith("bookend") else "tab:grey" for n in names]
    fig, ax = plt.subplots(figsize=(10, 4.5))
    ax.bar(names, acc, yerr=[low, high], capsize=4, color=colours)
    ax.set(ylabel="accuracy", title="SmolLM2-135M real runs: accuracy per strategy (95% CI)")
    ax.set_ylim(0, 1)
    plt.setp(ax.get_xticklabels(), rotation=35, ha="right")
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return path


def panel_regret(
    panel: Mapping[str, Mapping[str, Mapping[str, Mapping[str, float]]]],
    strategies: Sequence[str],
    path: Path,
) -> Path:
    """Per strategy, a heat map of regret against the oracle (accuracy points, mean over rank
    laws) by model and K."""
    models = list(panel)
    ks = list(next(iter(panel.values())))
    tables = [regret(panel, s) for s in strategies]
    grids = [100.0 * np.array([[t[m][k] for k in ks] for m in models]) for t in tables]
    top = max(float(g.max()) for g in grids) or 1.0
    cols = 2
    rows = -(-len(strategies) // cols)
    fig, axes = plt.subplots(
        rows,
        cols,
        figsize=(13, 0.6 + (0.6 + 0.17 * len(models)) * rows),
        sharey=True,
        layout="constrained",
    )
    for ax, name, grid in zip(np.ravel(axes), strategies, grids, strict=False):
        image = ax.imshow(grid, aspect="auto", cmap="magma_r", vmin=0, vmax=top)
        ax.set_title(f"{name}: worst cell {grid.max():.2f} pts", fontsize=9)
        ax.set_xticks(range(len(ks)), ks, fontsize=6)
        ax.set_yticks(range(len(models)), models, fontsize=6)
        ax.set_xlabel("K", fontsize=7)
    for ax in np.ravel(axes)[len(strategies) :]:
        ax.axis("off")
    fig.colorbar(image, ax=axes, shrink=0.6, label="regret vs oracle (accuracy points)")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
