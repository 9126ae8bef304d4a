"""Paired statistics of 0/1 outcomes: McNemar's exact test, the paired bootstrap interval of the
difference in accuracy, and Connor's (1987) sample size, checked against hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bookend_rag_lab.stats import mcnemar_exact, mcnemar_sample_size, paired_accuracy


def _planted() -> tuple[np.ndarray, np.ndarray]:
    """60 items: A right and B wrong on 15, the reverse on 3, both right on 30, both wrong on 12."""
    a = np.array([1] * 15 + [0] * 3 + [1] * 30 + [0] * 12)
    b = np.array([0] * 15 + [1] * 3 + [1] * 30 + [0] * 12)
    return a, b


def test_mcnemar_on_planted_outcomes_is_the_binomial_tail_by_hand() -> None:
    a, b = _planted()
    n_ab, n_ba, p = mcnemar_exact(a, b)
    assert (n_ab, n_ba) == (15, 3)
    # Two-sided exact: 2 P(X <= 3), X ~ Bin(18, 1/2) = 2 (1 + 18 + 153 + 816) / 2^18.
    assert p == pytest.approx(2 * 988 / 2**18, rel=1e-12)
    assert mcnemar_exact(a, a) == (0, 0, 1.0)


def test_paired_accuracy_on_planted_outcomes() -> None:
    a, b = _planted()
    result = paired_accuracy(a, b)
    assert result.diff == pytest.approx((15 - 3) / 60)
    assert (result.n_ab, result.n_ba, result.n) == (15, 3, 60)
    assert result.p_mcnemar == pytest.approx(0.0075378, abs=1e-6)
    # The per-item differences are +1 (15), -1 (3), 0 (42): sd = sqrt(18/60 - 0.2^2) = 0.5099, so
    # the normal interval is 0.2 +- 1.96 * 0.5099 / sqrt(60) = [0.071, 0.329]; the bootstrap
    # percentile interval is within a resample's granularity (1/60) of it.
    half = 1.959964 * math.sqrt(18 / 60 - 0.2**2) / math.sqrt(60)
    assert result.ci_low == pytest.approx(0.2 - half, abs=1 / 60)
    assert result.ci_high == pytest.approx(0.2 + half, abs=1 / 60)
    assert result.verdict == "better"
    assert result.to_json()["verdict"] == "better"


def test_connor_sample_size_by_hand() -> None:
    # psi = 0.30, delta = 0.20: (1.959964 sqrt(0.30) + 0.841621 sqrt(0.26))^2 / 0.04 = 56.45.
    assert mcnemar_sample_size(0.25, 0.05) == 57
    # The planted shares (15/60, 3/60) need the same; a smaller effect needs many more items.
    assert mcnemar_sample_size(15 / 60, 3 / 60) == 57
    # psi = 0.20, delta = 0.05: (1.959964 sqrt(0.2) + 0.841621 sqrt(0.1975))^2 / 0.0025 = 625.5.
    assert mcnemar_sample_size(0.125, 0.075) == 626
    assert mcnemar_sample_size(0.125, 0.075, power=0.9) > 626


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((0.1, 0.1), "no difference to detect"),
        ((0.7, 0.5), "summing to at most 1"),
        ((-0.1, 0.2), "shares in"),
    ],
)
def test_sample_size_refuses_impossible_shares(args: tuple[float, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        mcnemar_sample_size(*args)


def test_outcomes_must_be_zero_or_one_and_paired() -> None:
    with pytest.raises(ValueError, match="0/1 outcomes"):
        mcnemar_exact([0.5, 1], [0, 1])
    with pytest.raises(ValueError, match="one value per item"):
        mcnemar_exact([0, 1, 1], [0, 1])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=2, max_size=40))
def test_swapping_a_and_b_negates_the_difference_and_keeps_the_p_value(
    pairs: list[tuple[bool, bool]],
) -> None:
    a = np.array([x for x, _ in pairs], dtype=int)
    b = np.array([y for _, y in pairs], dtype=int)
    ab, ba = paired_accuracy(a, b, n_boot=200), paired_accuracy(b, a, n_boot=200)
    assert ba.diff == pytest.approx(-ab.diff)
    assert ba.p_mcnemar == pytest.approx(ab.p_mcnemar)
    assert (ba.n_ab, ba.n_ba) == (ab.n_ba, ab.n_ab)
    assert (ba.ci_low, ba.ci_high) == pytest.approx((-ab.ci_high, -ab.ci_low))
