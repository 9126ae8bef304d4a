"""Profiles measured on real models and shipped with bookend: the model-aware default.

A model that bookend has measured and for which a measured profile won resolves to that profile,
by any name that :func:`bookend_rag.spec.preset_key` maps to its preset (``"smollm2-135m"``,
``"HuggingFaceTB/SmolLM2-135M-Instruct"``, ...); every other model keeps the theory profile of its
architecture. The theory of a listed model stays one argument away:
``model=ModelSpec.preset("smollm2-135m")``.

Why: no fixed order is best on every model and kind of data. SmolLM2 reads the last of its
documents best on real passages and records, where the theory's order (most relevant first) loses
about 20 points; Gemma 3 reads the first best, where the theory's order is the best measured.
For each measured model the shipped choice is the candidate with the smallest worst-case loss over
its cells, measured on data disjoint from the items that judge it (``bench/RESULTS.md``,
"Real-text suites and the default by its worst case"); the index ``data/measured.json`` names
each profile's file and how it was measured, the profile's own metadata holds the measurement.
"""

from __future__ import annotations

from bookend_rag.datafiles import load_data_json
from bookend_rag.spec import preset_key

__all__ = ["measured_file", "measured_models"]


def _index() -> dict[str, dict[str, str]]:
    index: dict[str, dict[str, str]] = load_data_json("measured.json")["profiles"]
    return index


def measured_models() -> list[str]:
    """The preset names of the models bookend has measured, sorted."""
    return sorted(_index())


def measured_file(name: str) -> str | None:
    """The data file (under ``bookend/data``) of the measured profile of the model ``name``
    names, or ``None`` when bookend has not measured it."""
    entry = _index().get(preset_key(name) or "")
    return None if entry is None else entry["file"]
