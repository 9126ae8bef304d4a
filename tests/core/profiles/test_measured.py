"""The model-aware default: a model bookend has measured, whose measured profile won, resolves to
that shipped profile by every name of its preset; any other model keeps the theory profile."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import bookend_rag
from bookend_rag import ModelSpec, TheoryProfile
from bookend_rag.datafiles import load_data_json
from bookend_rag.profiles.io import resolve_profile
from bookend_rag.profiles.measured import measured_file, measured_models

ROOT = Path(__file__).resolve().parents[3]
#: Each shipped profile and the measurement in bench/validator it was copied from.
SOURCES = {"smollm2-135m": ROOT / "bench/validator/smollm2-135m-hard-slots.json"}
LONG = [f"passage {i} " + " ".join(f"word{i}x{j}" for j in range(120)) for i in range(10)]
SCORES = [10.0 - i for i in range(10)]


def test_the_measured_models_are_those_with_a_shipped_profile() -> None:
    assert measured_models() == sorted(SOURCES)


@pytest.mark.parametrize(
    "name", ["smollm2-135m", "HuggingFaceTB/SmolLM2-135M-Instruct", "SmolLM2_135M"]
)
def test_every_name_of_a_measured_model_resolves_to_its_measured_profile(name: str) -> None:
    profile = resolve_profile(name)
    assert not isinstance(profile, TheoryProfile)
    assert "measured" in profile.name
    assert measured_file(name) == "measured/smollm2-135m.json"
    assert isinstance(resolve_profile(ModelSpec.preset(name)), TheoryProfile)  # the theory stays


@pytest.mark.parametrize(
    "name", ["llama-3.1-8b", "smollm2-360m", "gemma-2-2b", "google/gemma-3-270m", "gpt2"]
)
def test_an_unmeasured_model_keeps_its_theory_profile(name: str) -> None:
    assert measured_file(name) is None
    assert isinstance(resolve_profile(name), TheoryProfile)


@pytest.mark.parametrize("key", sorted(SOURCES))
def test_each_shipped_profile_is_its_bench_measurement_without_machine_paths(key: str) -> None:
    shipped = load_data_json(f"measured/{key}.json")
    source = json.loads(SOURCES[key].read_text(encoding="utf-8"))
    for field in ("kind", "parameters", "weights"):
        assert shipped.get(field) == source.get(field)
    text = json.dumps(shipped)
    for machine in ("/work/", "/root/", "/home/"):
        assert machine not in text


def test_the_default_puts_the_top_passage_where_each_model_reads_best() -> None:
    """SmolLM2's measured table reads the last slot best; Gemma 3 keeps its theory, whose weights
    fall front to back (the real-text cells of bench/RESULTS.md)."""
    smollm2 = bookend_rag.reorder(LONG, SCORES, model="HuggingFaceTB/SmolLM2-135M-Instruct")
    gemma = bookend_rag.reorder(LONG, SCORES, model="google/gemma-3-270m")
    assert smollm2.order[-1] == 0
    assert gemma.order == tuple(range(10))
    assert "measured" in smollm2.explain().splitlines()[5]
