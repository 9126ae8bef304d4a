"""Profiles measured on real models and shipped with bookend: the model-aware default.

A model that bookend has measured resolves to its measured profile, by any name that
:func:`bookend.spec.preset_key` maps to its preset (``"smollm2-135m"``,
``"HuggingFaceTB/SmolLM2-135M-Instruct"``, ...); every other model keeps the theory profile of its
architecture. The theory of a measured model stays one argument away:
``model=ModelSpec.preset("smollm2-135m")``.

Why: no fixed order is best on every model and kind of data. On real NaturalQuestions passages
SmolLM2 reads the last document best and Gemma 3 the first; each model's own measured profile,
measured on data disjoint from the suites that judge it, tied the best order on the real-text
cells where the fixed orders lost (``bench/RESULTS.md``, "Real-text suites and the default by its
worst case"). The index ``data/measured.json`` names each profile's file and how it was measured;
the profile's own metadata holds the measurement.
"""

from __future__ import annotations

from bookend.datafiles import load_data_json
from bookend.spec import preset_key

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
    key = preset_key(name)
    return None if key is None or key not in _index() else _index()[key]["file"]
