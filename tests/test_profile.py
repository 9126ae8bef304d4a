"""Profiles: chunk weights, layouts, tabulated JSON and model resolution."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bookend import (
    Layout,
    ModelSpec,
    TabulatedProfile,
    TheoryProfile,
    available_profile_presets,
    load_profile,
    reorder,
    resolve_profile,
)
from bookend.theory import influence_cdf

LLAMA = TheoryProfile(ModelSpec.preset("llama-3.1-8b"))


def test_chunk_weight_is_mean_density_over_the_span() -> None:
    lengths = np.array([100.0, 300.0, 50.0, 550.0])
    weights = LLAMA.chunk_weights(lengths, rule="density")
    edges = np.concatenate(([0.0], np.cumsum(lengths))) / lengths.sum()
    mass = np.diff(influence_cdf(edges, 32, 1 / 32))
    np.testing.assert_allclose(weights, mass / (lengths / lengths.sum()))
    # The mass rule: the same span mass per mean chunk length.
    np.testing.assert_allclose(LLAMA.chunk_weights(lengths, rule="mass"), mass * lengths.size)
    # The default rule, slot: every chunk weighed at the mean length.
    np.testing.assert_allclose(LLAMA.chunk_weights(lengths), LLAMA.slot_weights(4))
    # Mass-weighted mean of the weights is the uniform share.
    assert float(weights @ lengths) / lengths.sum() == pytest.approx(1.0)


def test_default_layout_is_a_bookend_and_a_suffix_removes_the_anchor() -> None:
    filled = LLAMA.slot_weights(10)
    assert int(np.argmax(filled)) == 9
    assert int(np.argsort(filled)[-2]) == 0
    assert filled[4] < min(filled[0], filled[-1])  # the valley
    with_question = LLAMA.slot_weights(10, Layout(prefix_tokens=50, suffix_tokens=500))
    assert np.all(np.diff(with_question) < 0)  # delta on the suffix: decreasing front to back


@given(
    weights=st.lists(st.floats(min_value=0, max_value=100), min_size=1, max_size=40).filter(
        lambda w: sum(w) > 0
    )
)
def test_tabulated_slot_profile_reproduces_its_slots(weights: list[float]) -> None:
    profile = TabulatedProfile(weights=tuple(weights), kind="slot")
    got = profile.slot_weights(len(weights))
    np.testing.assert_allclose(got * sum(weights) / len(weights), weights, atol=1e-9)
    x = np.linspace(0, 1, 101)
    assert np.all(np.diff(profile.cdf(x)) >= -1e-15)


def test_tabulated_profile_json_roundtrip(tmp_path: Path) -> None:
    profile = TabulatedProfile(
        weights=(3.0, 1.0, 1.0, 2.0), kind="slot", label="probe", metadata={"k": 4}
    )
    path = profile.save(tmp_path / "p.json")
    loaded = load_profile(path)
    assert loaded == profile
    assert loaded.label == "probe"
    assert loaded.metadata == {"k": 4}
    assert resolve_profile(str(path)) == profile
    assert resolve_profile(path) == profile
    data = json.loads(path.read_text())
    assert data["format"] == "bookend-profile"
    assert data["version"] == 1


def test_tabulated_profile_rejects_bad_input(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="weights"):
        TabulatedProfile(weights=(1.0, -1.0))
    with pytest.raises(ValueError, match="weights"):
        TabulatedProfile(weights=(0.0, 0.0))
    with pytest.raises(ValueError, match="weights"):
        TabulatedProfile(weights=())
    with pytest.raises(ValueError, match="kind"):
        TabulatedProfile(weights=(1.0,), kind="token")  # type: ignore[arg-type]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "bookend-profile", "version": 99, "weights": [1]}))
    with pytest.raises(ValueError, match="version=99"):
        load_profile(bad)
    bad.write_text(json.dumps({"format": "other"}))
    with pytest.raises(ValueError, match="not a bookend profile"):
        load_profile(bad)
    with pytest.raises(ValueError, match="not found"):
        load_profile(tmp_path / "missing.json")


def test_published_curves_are_presets() -> None:
    names = available_profile_presets()
    assert "liu2023:gpt-3.5-turbo" in names
    assert "liu2023:mpt-30b-instruct" in names
    gpt = resolve_profile("liu2023:gpt-3.5-turbo")
    slots = gpt.slot_weights(20)
    assert int(np.argmax(slots)) == 0  # primacy-dominant
    mpt = resolve_profile("liu2023:mpt-30b-instruct")
    assert int(np.argmax(mpt.slot_weights(20))) == 19  # recency-leaning
    # The measured positions are reproduced exactly at K = 20 (relative to each other).
    ratio = slots[[0, 4, 9, 14, 19]] / slots[0]
    np.testing.assert_allclose(ratio, np.array([75.8, 57.2, 53.8, 55.4, 63.2]) / 75.8)
    with pytest.raises(ValueError, match="unknown published curve"):
        resolve_profile("liu2023:gpt-5")


def test_resolve_profile_accepts_every_model_form() -> None:
    spec = ModelSpec(depth=8)
    assert resolve_profile(spec) == TheoryProfile(spec)
    assert resolve_profile(LLAMA) is LLAMA
    assert resolve_profile("gpt2") == TheoryProfile(ModelSpec.preset("gpt2"))
    with pytest.raises(ValueError, match="model must be"):
        resolve_profile(12)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="prefix_tokens"):
        Layout(prefix_tokens=-1)


def test_density_shape_flag_selects_the_placement_search() -> None:
    assert LLAMA.density_non_increasing
    assert TabulatedProfile(weights=(5.0, 3.0, 3.0, 1.0, 9.0)).density_non_increasing
    assert not TabulatedProfile(weights=(5.0, 1.0, 2.0, 1.0, 9.0)).density_non_increasing
    assert not resolve_profile("liu2023:gpt-3.5-turbo").density_non_increasing


def test_slot_profiles_weigh_document_slots_whatever_the_token_lengths() -> None:
    slots = TabulatedProfile(weights=(0.6, 0.3, 0.2, 0.9), kind="slot")
    assert slots.per_document
    assert not LLAMA.per_document
    uneven = slots.chunk_weights([500, 10, 40, 3], Layout(prefix_tokens=80, suffix_tokens=20))
    np.testing.assert_allclose(uneven, slots.slot_weights(4))
    # The best chunk goes to the strongest slot even when it is long and a runner-up is short.
    placement = reorder(list("abcd"), [0.9, 0.8, 0.2, 0.1], model=slots, lengths=[400, 5, 50, 50])
    assert placement.order[-1] == 0
    assert placement.order[0] == 1
