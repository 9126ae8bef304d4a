"""Fits recover known parameters from synthetic theory profiles; metrics behave."""

from __future__ import annotations

import numpy as np
import pytest

from bookend_rag import ModelSpec
from bookend_rag.theory import recency_delta
from bookend_rag_lab.fitting.theory_fit import (
    compare,
    fit_depth_share,
    fit_poisson,
    poisson_cdf,
    theory_bins,
)


def _profile(n: int, depth: float, share: float) -> np.ndarray:
    return np.append(theory_bins(n, depth, share), recency_delta(depth, share))


@pytest.mark.parametrize(("depth", "share"), [(12, 1 / 12), (24, 0.2), (6, 0.5)])
def test_fit_recovers_depth_and_share(depth: float, share: float) -> None:
    fit = fit_depth_share(_profile(512, depth, share))
    assert fit.spec.depth == pytest.approx(depth, rel=1e-2)
    assert fit.spec.alpha == pytest.approx(share, rel=1e-2)
    assert fit.log_rmse < 1e-3
    assert fit.spearman > 0.9999


def test_fit_tolerates_multiplicative_noise() -> None:
    rng = np.random.default_rng(0)
    noisy = _profile(256, 12, 1 / 12) * rng.lognormal(0.0, 0.05, 256)
    fit = fit_depth_share(noisy)
    assert fit.spec.depth * fit.spec.alpha == pytest.approx(1.0, rel=0.15)
    assert fit.log_rmse < 0.07


def test_poisson_fit_recovers_lambda_and_matches_large_depth() -> None:
    n, lam = 512, 2.5
    edges = np.arange(n) / n
    profile = np.append(np.diff(poisson_cdf(edges, lam)), np.exp(-lam))
    fit = fit_poisson(profile)
    assert fit.lam == pytest.approx(lam, rel=1e-3)
    # the binomial theory at large H approaches the Poisson limit
    q = theory_bins(n, 2000.0, lam / 2000.0)
    assert np.allclose(q, np.diff(poisson_cdf(edges, lam)), rtol=5e-3, atol=1e-9)


def test_compare_own_theory_is_perfect_and_reports_delta() -> None:
    spec = ModelSpec(depth=12)
    result = compare(_profile(128, 12, 1 / 12), spec)
    assert result.spearman == pytest.approx(1.0)
    assert result.log_rmse == pytest.approx(0.0, abs=1e-9)
    assert result.wasserstein == pytest.approx(0.0, abs=1e-12)
    assert result.final_token_share == pytest.approx((1 - 1 / 12) ** 12)
    block = result.to_json()
    assert set(block) >= {"depth", "attn_share", "spearman", "log_rmse", "wasserstein"}


def test_wasserstein_grows_with_mismatch() -> None:
    measured = _profile(256, 12, 1 / 12)
    near = compare(measured, ModelSpec(depth=12, attn_share=0.1)).wasserstein
    far = compare(measured, ModelSpec(depth=12, attn_share=0.6)).wasserstein
    assert 0 < near < far <= 1


@pytest.mark.parametrize("bad", [[0.5, 0.5], [1.0, float("nan"), 1.0], [-1.0, 1.0, 1.0]])
def test_bad_profiles_raise(bad: list[float]) -> None:
    with pytest.raises(ValueError, match="measured"):
        fit_depth_share(bad)


def test_poisson_cdf_rejects_bad_lambda() -> None:
    with pytest.raises(ValueError, match="lam"):
        poisson_cdf(0.5, 0.0)


def test_log_binned_means_cover_every_position() -> None:
    from bookend_rag_lab.fitting.theory_fit import log_binned

    v = np.arange(1.0, 512.0)
    binned = log_binned(v)
    assert 20 <= binned.size <= 32
    assert binned[0] == 1.0
    assert np.all(np.diff(binned) > 0)
