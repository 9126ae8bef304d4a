"""The ``bookend validate`` summary for the terminal (the JSON report is
:func:`bookend_rag_lab.influence.runner.make_report`'s)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["influence_summary"]


def influence_summary(report: Mapping[str, Any]) -> str:
    """The measured final-token share, each theory comparison and fit, RoPE on against off."""
    lines = [f"measured final-token share {report['measured_final_token_share']:.4f}"]
    for key in ("nominal", "fit", "poisson_fit", "hooks"):
        if key in report:
            b = report[key]
            lines.append(
                f"{key:<12} H={b['depth']:<9.4g} alpha={b['attn_share']:<9.4g} "
                f"spearman={b['spearman']:.4f} (binned {b['spearman_log_binned']:.4f}) "
                f"log_rmse={b['log_rmse']:.4f} W1={b['wasserstein']:.4f} "
                f"(1-alpha)^H={b['final_token_share']:.4f}"
            )
    if "rope_off" in report:
        off = report["rope_off"]
        lines.append(
            f"RoPE on vs off spearman={off['spearman_vs_rope_on']:.4f} "
            f"(binned {off['spearman_log_binned_vs_rope_on']:.4f})"
        )
    lines.append(f"measured in {report['seconds']:.1f} s")
    return "\n".join(lines)
