"""The panel's strategies: functions from a retrieved list to a prompt order."""

import pytest
from placement_quality.curves import PositionCurve
from placement_quality.expected import geometric_ranks, oracle_order
from placement_quality.strategies import (
    FIXED_NAMES,
    bookend_strategy,
    fixed_strategies,
    oracle_strategy,
)


def test_bookend_with_the_model_curve_is_the_oracle_for_decreasing_rank_laws() -> None:
    curve = PositionCurve.from_slots("u", [0.7, 0.4, 0.3, 0.35, 0.5, 0.8], "test")
    acc = curve.slot_accuracy(6)
    scores = [6.0, 5.0, 4.0, 3.0, 2.0, 1.0]
    got = bookend_strategy(curve.profile(6))(scores, [50.0] * 6)
    assert got == oracle_order(geometric_ranks(6, 0.7), acc)
    assert got[-1] == 0  # the best slot is the last


def test_fixed_strategies_cover_the_names_and_return_permutations() -> None:
    strategies = fixed_strategies()
    assert tuple(strategies) == FIXED_NAMES
    for name, choose in strategies.items():
        order = choose([0.9, 0.8, 0.5, 0.1], [10.0, 20.0, 30.0, 40.0])
        assert sorted(order) == [0, 1, 2, 3], name
    assert strategies["retrieval"]([3.0, 2.0, 1.0], [1.0] * 3) == [0, 1, 2]
    assert strategies["reversed"]([3.0, 2.0, 1.0], [1.0] * 3) == [2, 1, 0]


def test_oracle_strategy_checks_k() -> None:
    choose = oracle_strategy([0.6, 0.3, 0.1], [0.2, 0.5, 0.9])
    assert choose([1.0, 0.5, 0.2], [1.0] * 3) == [2, 1, 0]
    with pytest.raises(ValueError, match="K=3"):
        choose([1.0, 0.5], [1.0] * 2)
