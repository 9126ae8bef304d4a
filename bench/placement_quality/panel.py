"""The curve panel: expected accuracy of every strategy on every model curve, K and rank law.

No model runs here. For each position curve, each K and each rank distribution, every strategy
orders a retrieved list of K documents (equal lengths, strictly decreasing scores: only the ranks
matter), and :func:`~placement_quality.expected.expected_accuracy` scores the order. Regret is the
oracle's expected accuracy minus the strategy's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from tqdm import tqdm

from bookend_rag.arrays import FloatArray
from placement_quality.curves import PositionCurve
from placement_quality.expected import expected_accuracy, geometric_ranks, truncated_ranks
from placement_quality.strategies import (
    FIXED_NAMES,
    bookend_strategy,
    fixed_strategies,
    oracle_strategy,
)

K_RANGE = range(3, 21)
GEOMETRIC_DECAYS = (0.5, 0.7, 0.85)
ORACLE = "oracle"
BOOKEND_OWN = "bookend-own-curve"
BOOKEND_THEORY = "bookend-theory"
#: The strategies of the panel besides the oracle, in report order.
PANEL_STRATEGIES = (BOOKEND_OWN, BOOKEND_THEORY, *FIXED_NAMES)
#: Equal token lengths: in the panel a document is a slot, so only the ranks matter.
PANEL_LENGTH = 100.0


@dataclass(frozen=True)
class PanelModel:
    """A curve in the panel and the theory spec bookend would use for that model by default."""

    curve: PositionCurve
    theory_model: str


def rank_distributions(
    k: int, empirical_counts: Mapping[str, npt.ArrayLike] | None = None
) -> dict[str, FloatArray]:
    """Geometric rank laws and, where given, the empirical ones (counts of the gold rank)."""
    out = {f"geometric-{d}": geometric_ranks(k, d) for d in GEOMETRIC_DECAYS}
    for name, counts in (empirical_counts or {}).items():
        probs = truncated_ranks(counts, k)
        if probs is not None:
            out[name] = probs
    return out


def panel_cell(model: PanelModel, k: int, rank_probs: FloatArray) -> dict[str, float]:
    """Expected accuracy (a fraction) of every strategy for one model, K and rank law."""
    acc = model.curve.slot_accuracy(k)
    scores = [float(k - r) for r in range(k)]
    lengths = [PANEL_LENGTH] * k
    strategies = {
        BOOKEND_OWN: bookend_strategy(model.curve.profile(k)),
        BOOKEND_THEORY: bookend_strategy(model.theory_model),
        **fixed_strategies(),
        ORACLE: oracle_strategy(rank_probs, acc),
    }
    return {
        name: expected_accuracy(strategy(scores, lengths), rank_probs, acc)
        for name, strategy in strategies.items()
    }


def run_panel(
    models: Iterable[PanelModel],
    empirical_counts: Mapping[str, npt.ArrayLike] | None = None,
    k_values: Iterable[int] = K_RANGE,
) -> dict[str, dict[str, dict[str, dict[str, float]]]]:
    """``panel[model][K][rank law][strategy]`` = expected accuracy (a fraction)."""
    models = list(models)
    ks = list(k_values)
    out: dict[str, dict[str, dict[str, dict[str, float]]]] = {}
    with tqdm(total=len(models) * len(ks), desc="panel", unit="cell") as bar:
        for model in models:
            per_k: dict[str, dict[str, dict[str, float]]] = {}
            for k in ks:
                per_k[str(k)] = {
                    law: panel_cell(model, k, probs)
                    for law, probs in rank_distributions(k, empirical_counts).items()
                }
                bar.update()
            out[model.curve.name] = per_k
    return out


def regret(
    panel: Mapping[str, Mapping[str, Mapping[str, Mapping[str, float]]]], strategy: str
) -> dict[str, dict[str, float]]:
    """``regret[model][K]``: oracle minus strategy, averaged over the rank laws (a fraction)."""
    return {
        model: {
            k: float(np.mean([cell[ORACLE] - cell[strategy] for cell in laws.values()]))
            for k, laws in per_k.items()
        }
        for model, per_k in panel.items()
    }


def max_regret(
    panel: Mapping[str, Mapping[str, Mapping[str, Mapping[str, float]]]], strategy: str
) -> tuple[float, str]:
    """The largest regret of a strategy over every model, K and rank law, and where it is."""
    worst, where = 0.0, "-"
    for model, per_k in panel.items():
        for k, laws in per_k.items():
            for law, cell in laws.items():
                gap = cell[ORACLE] - cell[strategy]
                if gap > worst + 1e-12:  # below that, floating-point noise of equal orders
                    worst, where = gap, f"{model}, K={k}, {law}"
    return worst, where
