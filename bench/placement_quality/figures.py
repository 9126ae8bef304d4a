"""The panel's PNG figure, drawn from the JSON results (matplotlib, Agg)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from placement_quality.panel import regret


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
