"""The Cesàro influence theory against independent references."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.integrate import quad
from scipy.special import gammaincc

from bookend_rag import theory


@pytest.mark.parametrize(
    ("n", "depth", "share"),
    [(1, 1, 1.0), (7, 3, 0.5), (64, 12, 1 / 12), (257, 4, 0.9), (512, 12, 1 / 12), (512, 32, 0.2)],
)
def test_exact_matches_dense_matrix_power(n: int, depth: int, share: float) -> None:
    exact = theory.influence_exact(n, depth, share)
    dense = theory.influence_dense(n, depth, share)
    assert exact.shape == (n,)
    assert np.max(np.abs(exact - dense)) <= 1e-12
    assert exact.sum() == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize(("depth", "share"), [(32, 1 / 32), (12, 0.2), (4, 1.0), (80, 1 / 80)])
def test_discrete_slot_masses_match_continuous_cdf(depth: int, share: float) -> None:
    n, k = 65536, 10
    exact = theory.influence_exact(n, depth, share)
    edges = np.arange(k + 1) * n // k
    discrete = np.add.reduceat(exact, edges[:-1])
    continuous = np.diff(theory.influence_cdf(edges / n, depth, share))
    assert np.max(np.abs(discrete - continuous)) <= 1e-3


@pytest.mark.parametrize("depth", [1, 2, 5, 12, 40])
def test_alpha_one_is_the_papers_log_power_law(depth: int) -> None:
    x = np.array([1e-6, 1e-3, 0.05, 0.3, 0.5, 0.9, 0.999])
    expected = np.log(1 / x) ** (depth - 1) / math.factorial(depth - 1)
    np.testing.assert_allclose(theory.influence_density(x, depth, 1.0), expected, rtol=1e-10)
    assert theory.recency_delta(depth, 1.0) == 0.0


@given(
    depth=st.floats(min_value=1.0, max_value=200.0),
    share=st.floats(min_value=1e-3, max_value=1.0),
)
def test_cdf_equals_incomplete_gamma_mixture(depth: float, share: float) -> None:
    x = np.array([1e-7, 1e-3, 0.1, 0.5, 0.9, 0.999999])
    w = theory.hop_weights(depth, share)
    ref = sum(w[k] * gammaincc(k, np.log(1 / x)) for k in range(1, w.size))
    np.testing.assert_allclose(theory.influence_cdf(x, depth, share), ref, rtol=1e-9, atol=1e-15)


@given(
    depth=st.floats(min_value=1.0, max_value=512.0),
    share=st.floats(min_value=1e-4, max_value=1.0),
)
def test_weights_are_a_distribution_and_cdf_is_monotone(depth: float, share: float) -> None:
    w = theory.hop_weights(depth, share)
    assert np.all(w >= 0)
    assert w.sum() == pytest.approx(1.0, abs=1e-12)
    x = np.concatenate(([0.0], np.geomspace(1e-7, 1 - 1e-9, 300), [1.0]))
    cdf = theory.influence_cdf(x, depth, share)
    assert np.all(np.isfinite(cdf))
    assert np.all(np.diff(cdf) >= -1e-12)  # rounding in an O(H)-term sum
    assert cdf[0] == 0.0
    assert cdf[-1] == 1.0
    # The jump at x = 1 is the Recency Delta.
    assert 1.0 - cdf[-2] == pytest.approx(theory.recency_delta(depth, share), abs=1e-6)


def test_density_integrates_to_cdf() -> None:
    depth, share = 7.5, 0.3
    for b in (0.01, 0.2, 0.7, 0.99):
        integral, _ = quad(lambda t: float(theory.influence_density(t, depth, share)), 0, b)
        assert integral == pytest.approx(float(theory.influence_cdf(b, depth, share)), rel=1e-6)


def test_real_depth_is_continuous_across_integers() -> None:
    x = np.linspace(0.01, 0.99, 50)
    for h in (2, 5, 17):
        below = theory.influence_cdf(x, h - 1e-9, 0.1)
        at = theory.influence_cdf(x, h, 0.1)
        above = theory.influence_cdf(x, h + 1e-9, 0.1)
        assert np.max(np.abs(below - at)) < 1e-6
        assert np.max(np.abs(above - at)) < 1e-6


def test_stable_at_extreme_depth_and_length() -> None:
    n = 10_000_000
    x = np.array([1.0 / n, 10.0 / n, 0.5, (n - 1.0) / n, 1.0])
    cdf = theory.influence_cdf(x, 512, 1 / 512)
    assert np.all(np.isfinite(cdf))
    assert np.all(np.diff(cdf) >= 0)
    profile = theory.influence_exact(n, 2, 0.5)
    assert np.all(np.isfinite(profile))
    assert profile.sum() == pytest.approx(1.0, abs=1e-9)
    deep = theory.influence_exact(4096, 512, 1 / 512)
    assert np.all(np.isfinite(deep))
    assert deep.sum() == pytest.approx(1.0, abs=1e-9)
    dens = theory.influence_density(np.array([1e-300, 1e-7, 0.5]), 512, 1.0)
    assert np.all(np.isfinite(dens))


def test_span_mass_is_a_difference_of_cdfs_and_sums_to_one() -> None:
    edges = np.linspace(0, 1, 11)
    masses = theory.span_mass(edges[:-1], edges[1:], 32, 1 / 32)
    assert masses.sum() == pytest.approx(1.0, abs=1e-12)
    assert masses[-1] > theory.recency_delta(32, 1 / 32)


def test_components_name_the_three_parts() -> None:
    comp = theory.components(32, 1 / 32)
    assert comp.recency_delta == pytest.approx((1 - 1 / 32) ** 32)
    assert comp.dead_zone is not None
    start, end = comp.dead_zone
    assert 0.05 < start < end == 1.0
    threshold = 0.5 * float(theory.influence_density(0.05, 32, 1 / 32))
    assert float(theory.influence_density(start, 32, 1 / 32)) == pytest.approx(threshold, rel=1e-6)
    assert 0 < comp.dead_zone_mass < 1 - comp.recency_delta
    assert theory.dead_zone(1, 1.0) is None  # H = 1, alpha = 1: flat density


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"depth": 0.5, "attn_share": 0.1}, "depth"),
        ({"depth": float("nan"), "attn_share": 0.1}, "depth"),
        ({"depth": 4, "attn_share": 0.0}, "attn_share"),
        ({"depth": 4, "attn_share": 1.5}, "attn_share"),
    ],
)
def test_bad_parameters_name_themselves(kwargs: dict[str, float], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        theory.influence_cdf([0.5], **kwargs)


def test_bad_positions_and_sizes() -> None:
    with pytest.raises(ValueError, match="x must lie"):
        theory.influence_cdf([1.5], 4, 0.2)
    with pytest.raises(ValueError, match="n_tokens"):
        theory.influence_exact(0, 4, 0.2)
    with pytest.raises(ValueError, match="depth must be an integer"):
        theory.influence_exact(10, 2.5, 0.2)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="end must be >= start"):
        theory.span_mass(0.5, 0.2, 4, 0.2)


@pytest.mark.parametrize("lam", [0.3, 1.4, 4.7, 20.0])
def test_poisson_cdf_is_the_large_depth_limit_of_the_binomial_profile(lam: float) -> None:
    x = np.concatenate((np.geomspace(1e-9, 0.5, 40), np.linspace(0.5, 1.0, 41)))
    limit = theory.poisson_cdf(x, lam)
    np.testing.assert_allclose(limit, theory.influence_cdf(x, 20_000.0, lam / 20_000.0), atol=2e-4)
    assert limit[-1] == 1.0
    assert np.all(np.diff(limit) >= -1e-15)
    with pytest.raises(ValueError, match="lam"):
        theory.poisson_cdf(0.5, -1.0)
