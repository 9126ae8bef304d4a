"""Intervals and paired tests of the placement quality benchmark."""

import numpy as np
import pytest
from placement_quality.stats import accuracy, bootstrap_means, mcnemar_exact, paired


def test_mcnemar_exact_known_values() -> None:
    assert mcnemar_exact(0, 0) == 1.0
    # 0 vs 6 discordant pairs: 2 * 0.5^6.
    assert mcnemar_exact(6, 0) == pytest.approx(2 / 64)
    assert mcnemar_exact(3, 3) == 1.0


def test_bootstrap_resamples_clusters_not_rows() -> None:
    # Two clusters, each all right or all wrong: every replicate mean is 0, 0.5 or 1.
    values = np.array([1, 1, 1, 0, 0, 0], dtype=float)
    clusters = np.array(["a", "a", "a", "b", "b", "b"])
    means = bootstrap_means(values, clusters, n_boot=500)
    assert set(np.round(means, 9)) <= {0.0, 0.5, 1.0}


def test_accuracy_interval_has_the_binomial_width() -> None:
    rng = np.random.default_rng(0)
    correct = rng.random(200) < 0.6
    result = accuracy(correct, np.arange(200))
    assert result.accuracy == pytest.approx(correct.mean())
    # One item per cluster: the bootstrap interval is centred near the estimate.
    centre = (result.ci_low + result.ci_high) / 2
    assert centre == pytest.approx(result.accuracy, abs=0.01)
    assert result.n == 200
    assert result.ci_high - result.ci_low == pytest.approx(2 * 1.96 * np.sqrt(0.24 / 200), rel=0.2)


def test_paired_identical_strategies_are_not_different() -> None:
    a = np.array([1, 0, 1, 1, 0], dtype=bool)
    result = paired(a, a, np.arange(5))
    assert result.diff == 0.0
    assert not result.significant
    assert result.p_mcnemar == 1.0


def test_paired_detects_a_clear_gain() -> None:
    a = np.ones(60, dtype=bool)
    b = np.arange(60) % 3 == 0
    result = paired(a, b, np.arange(60))
    assert result.diff == pytest.approx(40 / 60)
    assert result.significant
    assert (result.a_only, result.b_only) == (40, 0)
    assert result.p_mcnemar < 1e-9
