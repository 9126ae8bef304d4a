"""The lab's statistics, checked against independent computations and known values."""

import statistics

import numpy as np
import pytest

from bookend_rag_lab.stats import (
    MDE_FACTOR,
    bootstrap_means,
    estimate,
    minimum_detectable_difference,
    paired_difference,
    wilson_interval,
)


def test_bootstrap_interval_covers_a_known_mean_about_95_percent_of_the_time() -> None:
    rng = np.random.default_rng(1)
    covered = 0
    trials = 200
    for _ in range(trials):
        values = rng.normal(loc=2.0, scale=1.0, size=60)
        e = estimate(values, n_boot=1000)
        covered += e.ci_low <= 2.0 <= e.ci_high
    # Percentile intervals at n = 60 cover slightly less than 95%; far from it means a bug.
    assert 0.88 <= covered / trials <= 0.99


def test_interval_width_matches_the_normal_theory() -> None:
    rng = np.random.default_rng(2)
    values = rng.normal(size=400)
    e = estimate(values)
    se = statistics.stdev(values.tolist()) / 20.0
    assert e.ci_high - e.ci_low == pytest.approx(2 * 1.96 * se, rel=0.1)
    assert e.mean == pytest.approx(statistics.fmean(values.tolist()))
    assert e.n == 400


def test_bootstrap_resamples_items() -> None:
    means = bootstrap_means([0.0, 1.0], n_boot=500)
    assert set(np.round(means, 9)) <= {0.0, 0.5, 1.0}


def test_mde_is_2_8_standard_errors_of_the_paired_difference() -> None:
    diffs = [0.3, -0.1, 0.5, 0.2, 0.0, 0.4, -0.2, 0.1]
    se = statistics.stdev(diffs) / len(diffs) ** 0.5
    assert MDE_FACTOR == 2.8
    assert minimum_detectable_difference(diffs) == pytest.approx(2.8 * se)
    with pytest.raises(ValueError, match="at least 2"):
        minimum_detectable_difference([1.0])


def test_paired_difference_sign_and_verdict() -> None:
    rng = np.random.default_rng(3)
    base = rng.normal(size=80)
    better = base + 0.5 + rng.normal(scale=0.1, size=80)
    up = paired_difference(better, base)
    assert up.diff == pytest.approx(float(np.mean(better - base)))
    assert up.diff > 0
    assert up.verdict == "better"
    assert up.p_bootstrap < 0.01
    down = paired_difference(base, better)
    assert down.diff == pytest.approx(-up.diff)
    assert down.verdict == "worse"
    same = paired_difference(base, base + rng.normal(scale=0.01, size=80))
    assert same.ci_low < 0 < same.ci_high or abs(same.diff) < 0.01
    # Pairing removes the item variance: unpaired, 0.5 on unit-variance items would be noise.
    assert up.mde < 0.1


def test_paired_difference_rejects_mismatched_lengths() -> None:
    with pytest.raises(ValueError, match="one value per item"):
        paired_difference([1.0, 2.0], [1.0])


def test_wilson_interval_known_values() -> None:
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-4)
    assert high == pytest.approx(0.9433, abs=1e-4)
    assert wilson_interval(0, 5)[0] == 0.0
    with pytest.raises(ValueError, match="trials"):
        wilson_interval(0, 0)
