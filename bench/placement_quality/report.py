"""The panel's tables: regret of every strategy against the oracle, as Markdown."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from placement_quality.panel import ORACLE, max_regret


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


def render(
    panel: Mapping[str, Mapping[str, Mapping[str, Mapping[str, float]]]],
    panel_strategies: Sequence[str],
) -> str:
    """The panel tables: published curves, then curves measured by ``bookend eval``."""
    parts = []
    groups = {
        "published curves (Liu et al. 2023)": [m for m in panel if m.startswith("liu2023:")],
        "curves measured by bookend eval": [m for m in panel if not m.startswith("liu2023:")],
    }
    for title, models in groups.items():
        if models:
            subset = {m: panel[m] for m in models}
            parts += [f"### Panel: {title}", panel_table(subset, panel_strategies)]
    return "\n\n".join(parts)
