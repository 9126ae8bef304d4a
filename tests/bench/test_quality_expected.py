"""Expected accuracy, the oracle and rank distributions of the placement quality benchmark."""

from itertools import permutations

import numpy as np
import pytest
from placement_quality.expected import (
    expected_accuracy,
    geometric_ranks,
    oracle_order,
    slots_of_ranks,
    truncated_ranks,
)


def test_expected_accuracy_by_hand() -> None:
    # Order [2, 0, 1]: rank 2 in slot 0, rank 0 in slot 1, rank 1 in slot 2.
    value = expected_accuracy([2, 0, 1], [0.5, 0.3, 0.2], [0.9, 0.4, 0.7])
    assert value == pytest.approx(0.5 * 0.4 + 0.3 * 0.7 + 0.2 * 0.9)


def test_slots_of_ranks_inverts_the_order() -> None:
    assert slots_of_ranks([2, 0, 1]).tolist() == [1, 2, 0]
    with pytest.raises(ValueError, match="permutation"):
        slots_of_ranks([0, 0, 1])


def test_expected_accuracy_rejects_mismatched_sizes() -> None:
    with pytest.raises(ValueError, match="one entry per slot"):
        expected_accuracy([0, 1], [1.0], [0.5, 0.5])


@pytest.mark.parametrize("k", [2, 3, 4, 5, 6])
def test_oracle_matches_brute_force(k: int) -> None:
    rng = np.random.default_rng(k)
    for _ in range(20):
        probs = rng.dirichlet(np.ones(k))
        acc = rng.uniform(0.2, 0.9, k)
        best = max(expected_accuracy(p, probs, acc) for p in permutations(range(k)))
        assert expected_accuracy(oracle_order(probs, acc), probs, acc) == pytest.approx(best)


def test_geometric_ranks() -> None:
    probs = geometric_ranks(4, 0.5)
    assert probs.sum() == pytest.approx(1.0)
    assert probs.tolist() == pytest.approx([8 / 15, 4 / 15, 2 / 15, 1 / 15])
    with pytest.raises(ValueError, match="decay"):
        geometric_ranks(4, 0.0)


def test_truncated_ranks_conditions_on_the_top_k() -> None:
    assert truncated_ranks([6, 3, 1, 10], 3).tolist() == pytest.approx([0.6, 0.3, 0.1])
    assert truncated_ranks([0, 0, 5], 2) is None
    with pytest.raises(ValueError, match="at least"):
        truncated_ranks([1, 2], 3)
