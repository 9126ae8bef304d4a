"""The PNG figures of the lab's reports (matplotlib, Agg backend, files only).

- ``bookend eval``: :func:`position_curve` (the primary metric by the gold document's slot) and
  :func:`strategy_comparison` (every strategy's mean and bookend's paired differences);
- ``bookend tune``: :func:`candidate_means` (every candidate's mean, the chosen one marked, the
  random baseline as a band);
- ``bookend validate``: :func:`plot_profile` (the measured influence profile against the theory);
- ``bookend calibrate``: :func:`plot_slots` (the slot table) and :func:`plot_heldback` (held-back
  accuracy by slot against every profile's prediction);
- the documentation site: :func:`order_effects` (every order against the retriever's own, per
  cell; :mod:`~bookend_rag_lab.report.evidence`) and :func:`position_influence` (measured and
  theory slot curves, and where each model's default puts the chunks).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bookend_rag.plot import pyplot
from bookend_rag.theory import dead_zone
from bookend_rag_lab.fitting.theory_fit import theory_bins
from bookend_rag_lab.stats import wilson_interval

__all__ = [
    "candidate_means",
    "order_effects",
    "plot_heldback",
    "plot_profile",
    "plot_slots",
    "position_curve",
    "position_influence",
    "strategy_comparison",
]


def _label(metric: str) -> str:
    return {
        "gold_logprob": "log P(gold answer), nats",
        "candidate_prob": "P(gold | candidates)",
        "accuracy": "accuracy",
    }[metric]


#: Fewest draws per slot for a position curve to be drawn as a line.
MIN_CURVE_N = 10


def curve_is_measured(counts: Sequence[int], k: int) -> bool:
    """Whether a position curve may be drawn as a line: every one of the ``k`` slots measured, each
    at least :data:`MIN_CURVE_N` times (else its points stand alone, each labelled with its n)."""
    return len(counts) == k and min(counts, default=0) >= MIN_CURVE_N


def position_curve(report: Mapping[str, Any], path: Path) -> Path:
    """The primary metric by slot of the gold document (random-shuffle draws, 95% intervals), each
    point labelled with its n; a line joins the points only when :func:`curve_is_measured`."""
    plt = pyplot()
    metric = report["primary_metric"]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    sparse = False
    for k, per_metric in report["position_curve"].items():
        points = [(s + 1, e) for s, e in enumerate(per_metric[metric]) if e is not None]
        if not points:
            continue
        slots = np.array([s for s, _ in points])
        mean = np.array([e["mean"] for _, e in points])
        err = np.array([[e["mean"] - e["ci_low"], e["ci_high"] - e["mean"]] for _, e in points]).T
        counts = [int(e["n"]) for _, e in points]
        line = curve_is_measured(counts, int(k))
        sparse = sparse or not line
        ax.errorbar(slots, mean, yerr=err, fmt="-o" if line else "o", capsize=3, label=f"K={k}")
        for x, y, n in zip(slots, mean, counts, strict=True):
            ax.annotate(f"n={n}", (x, y), textcoords="offset points", xytext=(4, 4), fontsize=6)
    if sparse:
        ax.text(
            0.01,
            0.01,
            f"fewer than {MIN_CURVE_N} draws in some slot: points, not a measured curve",
            transform=ax.transAxes,
            fontsize=7,
        )
    ax.set(
        xlabel="slot of the gold document (1 = first)",
        ylabel=_label(metric),
        title=f"{Path(report['model']).name}: score by gold slot (95% CI)",
    )
    ax.legend(fontsize=8)
    return _save(fig, path, dpi=130)


def strategy_comparison(report: Mapping[str, Any], path: Path) -> Path:
    """Left: every strategy's mean (95% CI). Right: paired differences of the bookend strategies
    against each baseline (95% CI; the dotted band is ± the minimum detectable difference)."""
    plt = pyplot()
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
    return _save(fig, path, dpi=130)


def candidate_means(report: Mapping[str, Any], path: Path) -> Path:
    """Every candidate's mean (95% CI) on the items it was judged on: the chosen one green,
    eliminated ones grey, the random baseline's interval shaded."""
    plt = pyplot()
    metric = report["metric"]
    rows = [(n, c) for n, c in report["candidates"].items() if c["estimate"] is not None]
    fig, ax = plt.subplots(figsize=(7.5, 1.2 + 0.4 * len(rows)))
    for y, (name, c) in enumerate(rows):
        e = c["estimate"]
        colour = (
            "tab:green"
            if name == report["decision"]["chosen"]
            else "tab:grey"
            if c["eliminated_at"] is not None
            else "tab:blue"
        )
        err = [[e["mean"] - e["ci_low"]], [e["ci_high"] - e["mean"]]]
        ax.errorbar(e["mean"], y, xerr=err, fmt="o", color=colour, capsize=3)
    if report["random"] is not None:
        r = report["random"]
        ax.axvspan(r["ci_low"], r["ci_high"], color="tab:orange", alpha=0.15, lw=0)
        ax.axvline(r["mean"], color="tab:orange", lw=1, label="random shuffles (95% CI)")
        ax.legend(fontsize=8, loc="best")
    ax.set_yticks(range(len(rows)), [n for n, _ in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set(
        xlabel=_label(metric),
        title=f"{Path(report['model']).name}: candidates, {report['n_judged']} items (95% CI)",
    )
    return _save(fig, path, dpi=130)


def plot_profile(
    report: dict[str, Any], path: str | Path, *, title: str, band_label: str = "seed band"
) -> Path:
    """Measured per-position profile with its band, nominal and fitted theory, on log axes.

    Positions ``1..N-1`` are drawn (the final token is reported separately, as in the metrics);
    every curve is renormalised over them. The fitted theory's Dead Zone is shaded.
    """
    plt = pyplot()
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
    plt = pyplot()
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
    candidate's prediction (:mod:`bookend_rag_lab.fitting.holdout`), one panel per cell; candidates
    named in ``skip`` are left out."""
    plt = pyplot()
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


#: How :func:`order_effects` draws each order: label, colour, marker.
ORDER_STYLE: dict[str, tuple[str, str, str]] = {
    "default": ("bookend, default", "tab:blue", "o"),
    "tuned": ("bookend, tuned (bookend tune)", "tab:green", "D"),
    "langchain": ("LangChain LongContextReorder", "0.35", "s"),
    "llamaindex": ("LlamaIndex LongContextReorder", "0.55", "^"),
    "haystack": ("Haystack LostInTheMiddleRanker", "0.2", "v"),
    "random": ("random shuffle", "tab:orange", "x"),
}


def order_effects(
    panels: Mapping[str, Mapping[str, Mapping[str, Mapping[str, Any]]]],
    path: str | Path,
    *,
    metric: str = "candidate_prob",
) -> Path:
    """One panel per model, one row per cell (every panel's cells in the order first met, their
    names on the left; a row a model was not measured on says so): each order's paired difference
    with the retriever's own order, in points of ``metric`` with its 95% interval.
    ``panels[model][cell]`` is :func:`~bookend_rag_lab.report.evidence.against_current`'s result.
    """
    names = list(dict.fromkeys(name for cells in panels.values() for name in cells))
    plt = pyplot()
    rows = len(names)
    fig, axes = plt.subplots(
        1, len(panels), figsize=(1.3 + 3.0 * len(panels), 1.3 + 0.42 * rows),
        sharex=True, sharey=True, squeeze=False,
    )  # fmt: skip
    offsets = np.linspace(-0.32, 0.32, len(ORDER_STYLE))
    for ax, (model, cells) in zip(axes[0], panels.items(), strict=True):
        for y, name in enumerate(names):
            if y % 2:
                ax.axhspan(y - 0.5, y + 0.5, color="0.95", lw=0)
            cell = cells.get(name, {})
            if not cell:
                ax.text(0.5, y, "not measured", transform=ax.get_yaxis_transform(),
                        ha="center", va="center", fontsize=7, color="0.5")  # fmt: skip
            for dy, (order, (label, colour, marker)) in zip(
                offsets, ORDER_STYLE.items(), strict=True
            ):
                if order in cell:
                    e = cell[order]
                    err = [[100 * (e["diff"] - e["ci_low"])], [100 * (e["ci_high"] - e["diff"])]]
                    ax.errorbar(100 * e["diff"], y + dy, xerr=err, fmt=marker, color=colour,
                                ms=4, capsize=1.5, lw=1, label=label)  # fmt: skip
        ax.axvline(0.0, color="black", lw=1)
        ax.set_xlabel("← worse      points      better →", fontsize=7)
        ax.set_title(model, fontsize=9)
        ax.grid(axis="x", color="0.85", lw=0.6)
        ax.tick_params(labelsize=7)
    axes[0][0].set_yticks(range(rows), names, fontsize=8)
    axes[0][0].set_ylim(rows - 0.5, -0.5)
    fig.suptitle(
        f"{_label(metric)} against your retriever's own order (0): points, 95% CI", fontsize=9
    )
    handles: dict[str, Any] = {}
    for ax in axes[0]:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(lab, h)
    order_of = [s[0] for s in ORDER_STYLE.values()]
    labels_in = sorted(handles, key=order_of.index)
    fig.legend([handles[lab] for lab in labels_in], labels_in, loc="lower center", ncol=3,
               fontsize=7, frameon=False)  # fmt: skip
    fig.tight_layout(rect=(0, 0.42 / (1.3 + 0.42 * rows), 1, 1))
    out = Path(path)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def position_influence(
    measured: Mapping[str, Mapping[str, Sequence[Mapping[str, Any] | None]]],
    theory: Mapping[str, Sequence[float]],
    placed: Mapping[str, Sequence[int]],
    path: str | Path,
) -> Path:
    """Top: how strongly each slot is read, measured (the gold answer's probability by the gold
    document's slot, 95% CI, a line per model and prompt) and in theory (each model's slot
    weights, dotted), every curve divided by its own mean over the slots so that shapes compare
    (1 = an average slot). Bottom: where each row's order puts the chunks: per slot the rank of
    the chunk placed there (1 = most relevant, darker = more relevant).

    Args:
        measured: model -> prompt -> per slot ``{"mean", "ci_low", "ci_high", "n"}`` (a report's
            ``position_curve`` entry; ``None`` for a slot never measured).
        theory: model -> slot weights.
        placed: row label -> per slot the 1-based relevance rank of the chunk placed there.
        path: the PNG to write.
    """
    plt = pyplot()
    fig, (top, bottom) = plt.subplots(
        2, 1, figsize=(7.2, 6.2), gridspec_kw={"height_ratios": [2.6, 0.3 * len(placed) + 0.4]}
    )
    models = list(dict.fromkeys([*measured, *theory]))
    colours = dict(zip(models, plt.get_cmap("tab10").colors, strict=False))
    for model, prompts in measured.items():
        for (prompt, curve), style in zip(prompts.items(), ("-o", "--s", "-.^"), strict=False):
            points = [(s + 1, e) for s, e in enumerate(curve) if e is not None]
            scale = float(np.mean([e["mean"] for _, e in points]))
            x = np.array([s for s, _ in points])
            mean = np.array([e["mean"] for _, e in points]) / scale
            err = np.array([[e["mean"] - e["ci_low"], e["ci_high"] - e["mean"]] for _, e in points])
            top.errorbar(x, mean, yerr=err.T / scale, fmt=style, ms=4, capsize=2, lw=1.3,
                         color=colours[model], label=f"{model}, {prompt}", alpha=0.85)  # fmt: skip
    for model, weights in theory.items():
        w = np.asarray(weights, dtype=np.float64)
        top.plot(np.arange(1, w.size + 1), w / w.mean(), ":", color=colours[model], lw=2.2,
                 label=f"{model}, theory")  # fmt: skip
    top.axhline(1.0, color="0.6", lw=0.8)
    top.set_yscale("log")
    ticks = [
        t for t in (0.125, 0.25, 0.5, 1, 2, 4, 8) if top.get_ylim()[0] <= t <= top.get_ylim()[1]
    ]
    top.set_yticks(ticks, [f"{t:g}×" for t in ticks])
    top.minorticks_off()
    top.set(
        xlabel="slot of the document in the prompt (1 = first)",
        ylabel="how strongly the slot is read\n(relative to the average slot)",
    )
    k = max(len(v) for v in [*theory.values(), *(c for p in measured.values() for c in p.values())])
    top.set_xticks(range(1, k + 1))
    top.legend(fontsize=7, loc="upper center", ncol=2)
    top.set_title("Where models read: measured per slot (95% CI) and in theory", fontsize=10)
    cmap = plt.get_cmap("Blues")
    for row, ranks in enumerate(placed.values()):
        k = len(ranks)
        for slot, rank in enumerate(ranks):
            shade = cmap(0.95 - 0.75 * (rank - 1) / max(k - 1, 1))
            bottom.add_patch(plt.Rectangle((slot + 0.55, row - 0.4), 0.9, 0.8, color=shade))
            bottom.text(slot + 1, row, str(rank), ha="center", va="center", fontsize=8,
                        color="white" if rank <= k / 2 else "black")  # fmt: skip
    bottom.set_xlim(top.get_xlim())
    bottom.set_ylim(len(placed) - 0.5, -0.5)
    bottom.set_yticks(range(len(placed)), list(placed), fontsize=8)
    bottom.set_xticks([])
    bottom.set_title("Where the chunks go (1 = the most relevant chunk)", fontsize=10)
    for side in ("top", "right", "bottom", "left"):
        bottom.spines[side].set_visible(False)
    return _save(fig, path, dpi=110)


def _save(fig: Any, path: str | Path, dpi: int | None = None) -> Path:
    """Lay out, write (at ``dpi``, default the figure's own) and close a figure; returns the
    path."""
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out, dpi=dpi)
    pyplot().close(fig)
    return out
