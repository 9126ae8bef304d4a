"""Tabulated profiles: slots reproduced, read at more slots, the density flag, the versioned JSON
and its checks."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bookend_rag import (
    ModelSpec,
    TabulatedProfile,
    TheoryProfile,
    load_profile,
    reorder,
    resolve_profile,
)
from bookend_rag.profiles.tabulated import slot_table_at
from bookend_rag.weighing import slot_weights

LLAMA = TheoryProfile(ModelSpec.preset("llama-3.1-8b"))


@given(
    weights=st.lists(st.floats(min_value=0, max_value=100), min_size=1, max_size=40).filter(
        lambda w: sum(w) > 0
    )
)
def test_tabulated_slot_profile_reproduces_its_slots(weights: list[float]) -> None:
    profile = TabulatedProfile(weights=tuple(weights), kind="slot")
    got = slot_weights(profile, len(weights))
    np.testing.assert_allclose(got * sum(weights) / len(weights), weights, atol=1e-9)
    x = np.linspace(0, 1, 101)
    assert np.all(np.diff(profile.cdf(x)) >= -1e-15)


TABLES = st.lists(st.floats(min_value=0, max_value=100), min_size=1, max_size=12).filter(
    lambda w: max(w) > 0
)


@given(weights=TABLES, factor=st.integers(min_value=1, max_value=4))
def test_a_slot_table_read_at_more_slots_follows_the_line_through_its_centres(
    weights: list[float], factor: int
) -> None:
    n = len(weights)
    profile = TabulatedProfile(weights=tuple(weights), kind="slot")
    got = slot_weights(profile, n * factor)
    expected = np.interp(
        (np.arange(n * factor) + 0.5) / (n * factor), (np.arange(n) + 0.5) / n, weights
    )
    np.testing.assert_allclose(got, expected * got.size / expected.sum(), rtol=1e-9, atol=1e-12)
    assert np.all(got >= 0)
    assert got.max() > 0
    if all(a >= b for a, b in itertools.pairwise(weights)):
        assert np.all(np.diff(got) <= 1e-9)  # a monotone table stays monotone
        assert profile.density_falls_to_final_token


def test_a_slot_table_rising_in_its_last_slot_gives_the_top_chunk_the_last_of_twice_as_many() -> (
    None
):
    # Read as constant bins, slots 19 and 20 of 20 would share the last measured weight, and the
    # tie would put the most relevant chunk second to last.
    table = TabulatedProfile(
        weights=(0.32, 0.28, 0.25, 0.24, 0.25, 0.26, 0.29, 0.33, 0.39, 0.56), kind="slot"
    )
    weights = slot_weights(table, 20)
    assert weights[19] > weights[18] > weights[17]
    assert weights[0] > weights[1]
    scores = list(range(20, 0, -1))
    assert reorder([str(i) for i in range(20)], scores, model=table).order[-1] == 0
    assert not table.density_falls_to_final_token


def test_a_slot_table_read_at_fewer_slots_takes_the_mass_of_each_span() -> None:
    table = TabulatedProfile(weights=(4.0, 2.0, 2.0, 0.0), kind="slot")
    np.testing.assert_allclose(slot_weights(table, 2), [1.5, 0.5])
    with pytest.raises(ValueError, match="n_slots must be >= the table's 4 slots, got n_slots=3"):
        slot_table_at((4.0, 2.0, 2.0, 0.0), 3)


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


def test_a_table_without_kind_is_refused(tmp_path: Path) -> None:
    """Per position or per slot, the same weights place differently: the file must say which."""
    table = TabulatedProfile(weights=(5.0, 1.0, 1.0, 1.0, 2.0), kind="slot").to_json()
    scores = [0.9, 0.8, 0.3, 0.2, 0.1]
    path = tmp_path / "slots.json"
    path.write_text(json.dumps(table))
    assert reorder(list("abcde"), scores, model=str(path)).order[0] == 0
    del table["kind"]
    path.write_text(json.dumps(table))
    with pytest.raises(ValueError, match="needs 'kind'") as info:
        reorder(list("abcde"), scores, model=str(path))
    assert str(path) in str(info.value)
    with pytest.raises(ValueError, match="kind='token'"):
        resolve_profile({**table, "kind": "token"})


def test_density_shape_flag_selects_the_placement_search() -> None:
    assert LLAMA.density_falls_to_final_token
    assert TabulatedProfile(weights=(5.0, 3.0, 3.0, 1.0, 1.0)).density_falls_to_final_token
    # A rising final bin spans many tokens: a rise before the final token, as any other.
    assert not TabulatedProfile(weights=(5.0, 3.0, 3.0, 1.0, 9.0)).density_falls_to_final_token
    assert not TabulatedProfile(weights=(5.0, 1.0, 2.0, 1.0, 1.0)).density_falls_to_final_token
    assert not TabulatedProfile(
        weights=(5.0, 3.0, 3.0, 1.0, 9.0), kind="slot"
    ).density_falls_to_final_token
    assert not resolve_profile("liu2023:gpt-3.5-turbo").density_falls_to_final_token
