"""Tabulated profiles: slots reproduced, the density flag, the versioned JSON and its checks."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bookend import (
    ModelSpec,
    TabulatedProfile,
    TheoryProfile,
    load_profile,
    reorder,
    resolve_profile,
)
from bookend.weighing import slot_weights

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
    assert LLAMA.density_non_increasing
    assert TabulatedProfile(weights=(5.0, 3.0, 3.0, 1.0, 9.0)).density_non_increasing
    assert not TabulatedProfile(weights=(5.0, 1.0, 2.0, 1.0, 9.0)).density_non_increasing
    assert not resolve_profile("liu2023:gpt-3.5-turbo").density_non_increasing
