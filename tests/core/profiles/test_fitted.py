"""The fitted profile: a CDF in tokens, a recency window in absolute tokens, JSON, placement."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bookend_rag
from bookend_rag import FittedProfile, Layout, load_profile, reorder, resolve_profile
from bookend_rag.theory import poisson_cdf
from bookend_rag.weighing import chunk_weights

BASE = FittedProfile(
    lam=2.0, tau_tokens=80.0, recency_mass=0.4, floor_mass=0.1, reference_tokens=600.0
)


@given(
    lam=st.floats(0.05, 40.0),
    tau=st.floats(1.0, 5000.0),
    recency=st.floats(0.0, 1.0),
    floor_share=st.floats(0.0, 1.0),
    total=st.floats(2.0, 200_000.0),
)
def test_cdf_is_monotone_from_0_at_0_to_1_at_total(
    lam: float, tau: float, recency: float, floor_share: float, total: float
) -> None:
    profile = FittedProfile(
        lam=lam,
        tau_tokens=tau,
        recency_mass=recency,
        floor_mass=(1.0 - recency) * floor_share,
        reference_tokens=500.0,
    )
    offsets = np.concatenate((np.linspace(0.0, total, 257), total * np.geomspace(1e-9, 1, 64)))
    values = profile.cdf_at_tokens(np.sort(offsets), total)
    assert values[0] == 0.0
    assert values[-1] == 1.0
    assert np.all(np.diff(values) >= -1e-12)
    assert np.all((values >= 0) & (values <= 1))


def test_components_have_their_closed_forms() -> None:
    total = 1000.0
    t = np.array([0.0, 10.0, 250.0, 900.0, 990.0, 1000.0])
    primacy = FittedProfile(
        lam=2.0, tau_tokens=50.0, recency_mass=0.0, floor_mass=0.0, reference_tokens=total
    )
    expected = np.append(poisson_cdf(t[:-1] / total, 2.0) / (1 - math.exp(-2.0)), 1.0)
    np.testing.assert_allclose(primacy.cdf_at_tokens(t, total), expected, atol=1e-12)
    window = FittedProfile(
        lam=2.0, tau_tokens=50.0, recency_mass=1.0, floor_mass=0.0, reference_tokens=total
    )
    expected = (np.exp(-(total - t) / 50.0) - math.exp(-total / 50.0)) / (
        1 - math.exp(-total / 50.0)
    )
    np.testing.assert_allclose(window.cdf_at_tokens(t, total), expected, atol=1e-12)
    floor = FittedProfile(
        lam=2.0, tau_tokens=50.0, recency_mass=0.0, floor_mass=1.0, reference_tokens=total
    )
    np.testing.assert_allclose(floor.cdf_at_tokens(t, total), t / total, atol=1e-12)


@pytest.mark.parametrize("total", [1_000.0, 4_000.0, 32_000.0])
def test_recency_window_lives_in_absolute_tokens(total: float) -> None:
    window = FittedProfile(
        lam=1.0, tau_tokens=100.0, recency_mass=0.5, floor_mass=0.0, reference_tokens=500.0
    )
    last_200 = 1.0 - float(window.cdf_at_tokens([total - 200.0], total)[0])
    primacy_share = 1.0 - float(
        FittedProfile(
            lam=1.0, tau_tokens=100.0, recency_mass=0.0, floor_mass=0.0, reference_tokens=500.0
        ).cdf_at_tokens([total - 200.0], total)[0]
    )
    # The window's share of the last 200 tokens is 0.5 (1 - e^-2) / (1 - e^(-N / tau)), the same
    # at every length N >> tau; only the primacy term's share of them shrinks as N grows.
    window_share = last_200 - 0.5 * primacy_share
    expected = 0.5 * (1 - math.exp(-2.0)) / (1 - math.exp(-total / 100.0))
    assert window_share == pytest.approx(expected, rel=1e-9)
    assert window_share == pytest.approx(0.5 * (1 - math.exp(-2.0)), rel=1e-4)
    assert primacy_share < 0.25 * 4_000.0 / total


def test_window_makes_the_last_chunk_heaviest_only_while_it_is_within_tau() -> None:
    near = chunk_weights(BASE, [100.0] * 5, Layout(suffix_tokens=0))
    assert int(np.argmax(near)) == 4
    # Behind a long suffix the window falls on the suffix, not on the chunks.
    behind = chunk_weights(BASE, [100.0] * 5, Layout(suffix_tokens=2000))
    assert int(np.argmax(behind)) == 0


def test_cdf_uses_the_reference_length() -> None:
    x = np.linspace(0.0, 1.0, 11)
    np.testing.assert_allclose(BASE.cdf(x), BASE.cdf_at_tokens(x * 600.0, 600.0))
    other = FittedProfile(
        lam=2.0, tau_tokens=80.0, recency_mass=0.4, floor_mass=0.1, reference_tokens=6000.0
    )
    assert not np.allclose(other.cdf(x), BASE.cdf(x))


def test_span_mass_at_tokens_matches_cdf_differences_per_sequence() -> None:
    starts, ends, totals = np.array([0, 50, 300]), np.array([50, 300, 400]), np.array([400] * 3)
    got = BASE.span_mass_at_tokens(starts, ends, totals)
    edges = BASE.cdf_at_tokens([0, 50, 300, 400], 400)
    np.testing.assert_allclose(got, np.diff(edges))
    with pytest.raises(ValueError, match="spans"):
        BASE.span_mass_at_tokens([10], [5], [400])


def test_value_semantics() -> None:
    same = FittedProfile(
        lam=2.0,
        tau_tokens=80.0,
        recency_mass=0.4,
        floor_mass=0.1,
        reference_tokens=600.0,
        label="another label",
        metadata={"x": [1]},
    )
    assert same == BASE
    assert hash(same) == hash(BASE)
    assert {BASE: 1}[same] == 1
    other = FittedProfile(
        lam=2.5, tau_tokens=80.0, recency_mass=0.4, floor_mass=0.1, reference_tokens=600.0
    )
    assert other != BASE
    assert BASE.per_document is False
    assert BASE.density_falls_to_final_token is False
    assert BASE.primacy_mass == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"lam": 0.0}, "lam"),
        ({"tau_tokens": -1.0}, "tau_tokens"),
        ({"reference_tokens": math.inf}, "reference_tokens"),
        ({"recency_mass": 1.5}, "recency_mass"),
        ({"recency_mass": 0.7, "floor_mass": 0.7}, "recency_mass \\+ floor_mass"),
        ({"standard_errors": {"bogus": 1.0}}, "standard_errors"),
    ],
)
def test_bad_parameters_are_named(kwargs: dict[str, object], name: str) -> None:
    params: dict[str, object] = {
        "lam": 1.0,
        "tau_tokens": 10.0,
        "recency_mass": 0.2,
        "floor_mass": 0.2,
        "reference_tokens": 100.0,
        **kwargs,
    }
    with pytest.raises(ValueError, match=name):
        FittedProfile(**params)  # type: ignore[arg-type]


def test_json_round_trip_keeps_parameters_uncertainty_and_provenance(tmp_path: Path) -> None:
    profile = FittedProfile(
        lam=1.7,
        tau_tokens=64.0,
        recency_mass=0.3,
        floor_mass=0.05,
        reference_tokens=512.0,
        label="smol fitted",
        standard_errors={"lam": 0.2, "tau_tokens": 9.0, "recency_mass": 0.04},
        metadata={"model": "smollm2", "data": {"docs": [6, 10], "seed": 0}},
    )
    path = profile.save(tmp_path / "fitted.json")
    raw = json.loads(path.read_text())
    assert (raw["format"], raw["kind"], raw["version"]) == ("bookend-profile", "fitted", 1)
    assert raw["parameters"]["primacy_mass"] == pytest.approx(0.65)
    loaded = load_profile(path)
    assert isinstance(loaded, FittedProfile)
    assert loaded == profile
    assert loaded.label == "smol fitted"
    assert dict(loaded.standard_errors) == dict(profile.standard_errors)
    assert dict(loaded.metadata) == dict(profile.metadata)
    raw["version"] = 99
    path.write_text(json.dumps(raw))
    with pytest.raises(ValueError, match="version"):
        load_profile(path)


def test_reorder_accepts_a_fitted_profile_path(tmp_path: Path) -> None:
    path = BASE.save(tmp_path / "fitted.json")
    assert resolve_profile(str(path)) == BASE
    placement = reorder(
        ["a", "b", "c", "d"], [0.1, 0.9, 0.5, 0.3], lengths=[150] * 4, model=str(path)
    )
    # The heaviest chunk weight (the recency window over the last chunk) goes to the best chunk,
    # the primacy end to the runner-up.
    assert placement.items[-1] == "b"
    assert placement.items[0] == "c"
    assert bookend_rag.FittedProfile is FittedProfile


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"parameters": {"lam": 1.0}}, "parameters missing"),
        ({"parameters": [1, 2]}, "parameters must be a JSON object"),
        ({"standard_errors": {"lam": "wide"}}, "standard_errors must be numbers"),
        ({"metadata": "none"}, "metadata must be a JSON object"),
        ({"format": "other"}, "not a fitted bookend profile"),
    ],
)
def test_malformed_json_is_rejected_with_its_field(
    change: dict[str, object], message: str, tmp_path: Path
) -> None:
    raw = {**BASE.to_json(), **change}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(raw))
    with pytest.raises(ValueError, match=message):
        FittedProfile.from_json(raw)
    if raw["format"] == "bookend-profile":
        with pytest.raises(ValueError, match=message):
            load_profile(path)
