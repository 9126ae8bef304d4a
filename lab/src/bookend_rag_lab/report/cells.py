"""Table cells of the lab's Markdown reports: a metric's value, an estimate, a paired difference.

``gold_logprob`` is shown in nats (three decimals); probabilities and accuracies in percent, and
their differences in points.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["difference_cell", "difference_unit", "estimate_cell", "value_cell"]


def value_cell(metric: str, value: float) -> str:
    """A value of ``metric``: nats for ``gold_logprob``, else percent."""
    return f"{100 * value:.1f}" if metric != "gold_logprob" else f"{value:.3f}"


def difference_unit(metric: str) -> str:
    """The unit of a difference of ``metric`` as :func:`difference_cell` and :func:`value_cell`
    show it: nats for ``gold_logprob``, else points."""
    return "nats" if metric == "gold_logprob" else "points"


def estimate_cell(metric: str, e: Mapping[str, Any]) -> str:
    """``mean [ci_low, ci_high]`` of an estimate."""
    low, high = value_cell(metric, e["ci_low"]), value_cell(metric, e["ci_high"])
    return f"{value_cell(metric, e['mean'])} [{low}, {high}]"


def difference_cell(metric: str, d: Mapping[str, Any]) -> str:
    """``diff [ci_low, ci_high]`` of a paired difference, ▲/▼ when its verdict is
    ``better``/``worse``, and its MDE."""
    sign = {"better": " ▲", "worse": " ▼"}.get(d["verdict"], "")
    scale = 1.0 if metric == "gold_logprob" else 100.0
    return (
        f"{scale * d['diff']:+.2f} [{scale * d['ci_low']:+.2f}, {scale * d['ci_high']:+.2f}]"
        f"{sign} (MDE {scale * d['mde']:.2f})"
    )
