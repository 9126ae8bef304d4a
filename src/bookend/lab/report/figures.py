"""PNG figures: measured profile against the theory, slot curves of the probe, and the
held-back predictions of fitted profiles."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from bookend.lab.fitting.theory import theory_bins
from bookend.theory import dead_zone

__all__ = ["plot_heldback", "plot_profile", "plot_slots"]


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # files only; never open a window
    import matplotlib.pyplot as plt

    return plt


def plot_profile(
    report: dict[str, Any], path: str | Path, *, title: str, band_label: str = "seed band"
) -> Path:
    """Measured per-position profile with its band, nominal and fitted theory, on log axes.

    Positions ``1..N-1`` are drawn (the final token is reported separately, as in the metrics);
    every curve is renormalised over them. The fitted theory's Dead Zone is shaded.
    """
    plt = _pyplot()
    measured = np.asarray(report["measured"])
    n = measured.size
    head = measured[:-1].sum()
    pos = np.arange(1, n)
    fig, ax = plt.subplots(figsize=(7.5, 4.6), dpi=120)
    fit = report["fit"]
    zone = dead_zone(fit["depth"], fit["attn_share"])
    if zone is not None:
        ax.axvspan(zone[0] * n, n - 1, color="0.9", label="dead zone (fit)")
    low, high = np.asarray(report["band_low"])[:-1], np.asarray(report["band_high"])[:-1]
    ax.fill_between(pos, low / head, high / head, color="tab:blue", alpha=0.25, label=band_label)
    ax.plot(pos, measured[:-1] / head, color="tab:blue", lw=1.2, label="measured")
    for key, colour, style in (("nominal", "tab:gray", "--"), ("fit", "tab:red", "-")):
        block = report[key]
        q = theory_bins(n, block["depth"], block["attn_share"])
        ax.plot(
            pos,
            q / q.sum(),
            color=colour,
            ls=style,
            lw=1.4,
            label=f"{key}: H={block['depth']:.3g}, α={block['attn_share']:.3g} "
            f"(ρ={block['spearman']:.3f})",
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("position j (final token excluded)")
    ax.set_ylabel("share of influence on the final token")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="best")
    return _save(fig, path)


def plot_slots(slots: dict[str, Any], path: str | Path, *, title: str) -> Path:
    """Accuracy and gold log-probability by slot with 95% intervals, chance level marked."""
    plt = _pyplot()
    acc = np.asarray(slots["accuracy"])
    k = np.arange(1, acc.size + 1)
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.0, 3.8), dpi=120)
    ci = np.asarray(slots["accuracy_ci95"])
    left.errorbar(k, acc, yerr=[acc - ci[:, 0], ci[:, 1] - acc], marker="o", capsize=3)
    prob = np.asarray(slots["candidate_prob"])
    left.plot(k, prob, marker="s", ls="--", label="P(gold | candidates)")
    left.axhline(slots["chance_accuracy"], color="0.5", ls=":", label="chance")
    left.set_xlabel("slot of the gold document")
    left.set_ylabel("accuracy")
    left.legend(fontsize=8)
    logp = np.asarray(slots["logprob"])
    lci = np.asarray(slots["logprob_ci95"])
    right.errorbar(k, logp, yerr=[logp - lci[:, 0], lci[:, 1] - logp], marker="o", capsize=3)
    right.set_xlabel("slot of the gold document")
    right.set_ylabel("mean log P(gold answer)")
    fig.suptitle(title, fontsize=10)
    return _save(fig, path)


def plot_heldback(
    report: dict[str, Any], path: str | Path, *, title: str, skip: tuple[str, ...] = ()
) -> Path:
    """Observed accuracy by slot in each held-back cell (95% Wilson intervals) against every
    candidate's prediction (``bookend.lab.fitting.holdout``), one panel per cell; candidates named
    in ``skip`` are left out."""
    from bookend.lab.fitting.slots import wilson_interval

    plt = _pyplot()
    cells = list(report["observed_by_slot"])
    fig, axes = plt.subplots(1, len(cells), figsize=(5.2 * len(cells), 3.9), dpi=120, squeeze=False)
    n_items = report["n_heldback_items"] // len(cells)
    for ax, cell in zip(axes[0], cells, strict=True):
        observed = np.asarray(report["observed_by_slot"][cell])
        k = np.arange(1, observed.size + 1)
        ci = np.array([wilson_interval(round(a * n_items), n_items) for a in observed])
        ax.errorbar(
            k,
            observed,
            yerr=np.clip([observed - ci[:, 0], ci[:, 1] - observed], 0.0, None),  # rounding
            fmt="ko",
            capsize=3,
            label=f"observed ({n_items} items)",
        )
        for name, block in report["profiles"].items():
            if name not in skip:
                ls = "-" if name == "fitted" else "--"
                label = Path(name).stem if name.endswith(".json") else name
                ax.plot(k, block["predicted_by_slot"][cell], ls=ls, marker=".", label=label)
        ax.set_title(cell, fontsize=9)
        ax.set_xlabel("slot of the gold document")
        ax.set_ylabel("accuracy")
        ax.set_ylim(0.0, 1.05)
    axes[0][0].legend(fontsize=7, loc="lower left")
    fig.suptitle(title, fontsize=10)
    return _save(fig, path)


def _save(fig: Any, path: str | Path) -> Path:
    """Lay out, write and close a figure; returns the path."""
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out)
    _pyplot().close(fig)
    return out
