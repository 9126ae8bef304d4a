"""Plots of influence profiles and placements (needs the ``plot`` extra: matplotlib)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from bookend_rag.layout import Layout
from bookend_rag.profiles.base import InfluenceProfile
from bookend_rag.profiles.theoretical import TheoryProfile
from bookend_rag.theory import dead_zone
from bookend_rag.weighing import slot_weights

if TYPE_CHECKING:
    from bookend_rag.placement.result import Placement

__all__ = ["matplotlib_available", "plot_file", "plot_placement", "pyplot"]


def matplotlib_available() -> bool:
    """Whether matplotlib can be imported (the ``plot`` extra is installed)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend, files only (the one entry point of every figure,
    the lab's included)."""
    try:
        import matplotlib
    except ImportError:
        raise ImportError("plots need matplotlib: pip install matplotlib") from None
    matplotlib.use("Agg")  # files only; never open a window
    import matplotlib.pyplot as plt

    return plt


def plot_file(path: str | Path, name: str = "path") -> Path:
    """The file a plot of ``path`` is written to: ``path`` itself, with ``.png`` appended when it
    has no suffix. ``name`` is what the errors call it (a command line option, say).

    Raises:
        ValueError: ``path`` is a directory, or its folder does not exist.
    """
    out = Path(path).expanduser()
    if out.is_dir():
        raise ValueError(
            f"{name}={str(path)!r} is a directory; name a file such as {str(out / 'plot.png')!r}"
        )
    if not out.suffix:
        out = out.with_suffix(".png")
    if not out.resolve().parent.is_dir():
        raise ValueError(
            f"{name}={str(path)!r}: the folder {str(out.resolve().parent)!r} does not exist"
        )
    return out


def plot_placement(
    placement: Placement[Any] | None,
    path: str | Path,
    *,
    profile: InfluenceProfile | None = None,
    n_slots: int | None = None,
    layout: Layout | None = None,
    labels: list[str] | None = None,
) -> Path:
    """Draw the influence density over the sequence and the slot weights; save a PNG (or the
    format ``path``'s suffix names) and return the file written.

    Top panel: the profile's density (finite differences of its CDF) against the position in the
    sequence, with the Dead Zone shaded for theory profiles. Bottom panel: each prompt slot's
    weight, coloured by the relevance of the chunk placed there (equal slots if no placement).

    Args:
        placement: a result to draw; or ``None`` with ``profile`` and ``n_slots``.
        path: the file to write (see :func:`plot_file`).
        profile, n_slots, layout: what to draw without a placement.
        labels: per input index a short label for the bars.
    """
    plt = pyplot()
    prof = placement.profile if placement is not None else profile
    if prof is None:
        raise ValueError("plot_placement needs a placement or a profile")
    lay = placement.layout if placement is not None else (layout or Layout())
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6.5), constrained_layout=True)

    # Density as CDF differences on a geometric grid that stops short of the final token, whose
    # point mass (the Recency Delta of theory profiles) is annotated separately.
    edges = np.geomspace(1e-4, 1.0 - 1e-6, 400)
    density = np.diff(prof.cdf(edges)) / np.diff(edges)
    top.plot(np.sqrt(edges[:-1] * edges[1:]), density, color="C0", label="influence density")
    if isinstance(prof, TheoryProfile):
        delta = prof.spec.recency_delta
        top.axvline(
            1.0, color="C3", linewidth=2, label=f"Recency Delta on the final token: {delta:.2f}"
        )
        zone = dead_zone(prof.spec.depth, prof.spec.alpha)
        if zone is not None:
            top.axvspan(zone[0], zone[1], color="0.85", label="dead zone")
    top.set_xscale("log")
    top.set_yscale("log")
    top.set_xlabel("position in the analysed sequence (fraction)")
    top.set_ylabel("density")
    top.set_title(f"Influence profile: {prof.name}")
    top.legend(loc="upper right", fontsize=8)

    if placement is not None:
        weights = placement.weights
        rel = placement.relevance[np.asarray(placement.order, dtype=np.int64)]
        names = [labels[i] if labels is not None else str(i) for i in placement.order]
    else:
        k = n_slots or 10
        weights = slot_weights(prof, k, lay)
        rel = np.ones(k)
        names = [str(i) for i in range(k)]
    colours = plt.get_cmap("viridis")(rel / max(float(rel.max(initial=0.0)), 1e-12))
    slots = np.arange(len(weights))
    bottom.bar(slots, weights, color=colours)
    bottom.axhline(1.0, color="0.4", linestyle=":", linewidth=1, label="uniform share")
    bottom.set_xticks(slots, names, rotation=45, ha="right", fontsize=7)
    bottom.set_xlabel("prompt slot (label: chunk)")
    bottom.set_ylabel("weight (mean density)")
    title = "Slot weights" if placement is None else "Placement: colour = relevance"
    bottom.set_title(title)
    bottom.legend(loc="upper center", fontsize=8)
    out = plot_file(path)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out
