"""The registry of published accuracy-by-position curves (Liu et al. 2023, arXiv 2307.03172),
usable as ``model="liu2023:<model>"``."""

from __future__ import annotations

import difflib
from typing import Any

import numpy as np

from bookend_rag.datafiles import load_data_json
from bookend_rag.profiles.tabulated import TabulatedProfile

__all__ = ["PUBLISHED_PREFIX", "available_profile_presets", "published_curves", "published_profile"]

#: The prefix naming a published curve: ``"liu2023:gpt-3.5-turbo"``.
PUBLISHED_PREFIX = "liu2023:"


def published_curves() -> dict[str, dict[str, Any]]:
    """The bundled curves by model key (``n_documents``, ``gold_positions``, ``accuracy``,
    ``source``); callers must not mutate them."""
    curves: dict[str, dict[str, Any]] = load_data_json("liu2023.json")["curves"]
    return curves


def available_profile_presets() -> list[str]:
    """Names of the published position curves usable as ``model=`` (``liu2023:<model>``)."""
    return sorted(PUBLISHED_PREFIX + name for name in published_curves())


def published_profile(name: str) -> TabulatedProfile:
    """The slot profile of a published curve, ``name`` being ``"liu2023:<model>"``.

    Raises:
        ValueError: an unknown model, with the closest names.
    """
    key = name.split(":", 1)[1].strip().lower()
    curves = published_curves()
    if key not in curves:
        close = difflib.get_close_matches(key, curves, n=3, cutoff=0.3)
        hint = f"; did you mean {', '.join(repr(PUBLISHED_PREFIX + c) for c in close)}?"
        raise ValueError(f"unknown published curve model={name!r}{hint if close else ''}")
    entry = curves[key]
    n_docs = int(entry["n_documents"])
    gold = np.asarray(entry["gold_positions"], dtype=np.float64)
    return TabulatedProfile.from_points(
        positions=((gold - 0.5) / n_docs).tolist(),
        values=entry["accuracy"],
        n_bins=n_docs,
        label=PUBLISHED_PREFIX + key,
        metadata={"source": entry["source"], **{k: v for k, v in entry.items() if k != "source"}},
    )
