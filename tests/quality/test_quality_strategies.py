"""Strategies as functions from a retrieved list to a prompt order, and the report's aggregates."""

import pytest
from placement_quality.curves import PositionCurve
from placement_quality.expected import geometric_ranks, oracle_order
from placement_quality.report import accuracies, comparisons, markdown_table, targets
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


def rows() -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for item in range(30):
        for strategy, correct in (("a", True), ("b", item % 2 == 0)):
            out.append(
                {
                    "strategy": strategy,
                    "k": 10,
                    "retriever": "bm25",
                    "item": item,
                    "correct": correct,
                }
            )
    return out


def test_report_accuracies_and_comparisons() -> None:
    acc = accuracies(rows())
    assert acc["a"]["accuracy"] == 1.0
    assert acc["b"]["accuracy"] == 0.5
    pairs = comparisons(rows(), ["a"], ["b"])
    assert pairs["a vs b"]["pooled"]["diff"] == pytest.approx(0.5)
    assert pairs["a vs b"]["K=10"]["significant"]
    table = markdown_table({"K=10": acc}, ["K=10"])
    assert "| a | 100.0 [100.0, 100.0] |" in table


def test_targets_read_the_figures() -> None:
    def acc(**values: float) -> dict[str, dict[str, float]]:
        return {name: {"accuracy": v} for name, v in values.items()}

    per_k = {
        "10": acc(
            **{"bookend-calibrated": 0.9, "bookend-theory": 0.8},
            langchain=0.9,
            llamaindex=0.9,
            haystack=0.7,
            retrieval=0.7,
        )
    }
    pairs = {
        f"bookend-calibrated vs {n}": {"pooled": {"significant": n == "haystack"}}
        for n in ("langchain", "llamaindex", "haystack")
    }
    cell = {
        "bookend-own-curve": 0.5,
        "langchain": 0.4,
        "llamaindex": 0.4,
        "haystack": 0.45,
        "retrieval": 0.45,
        "reversed": 0.3,
        "oracle": 0.5,
    }
    result = targets(per_k, {"10": {"bm25": per_k["10"]}}, pairs, {"m": {"3": {"g": cell}}})
    assert result["calibrated_at_least_best_framework_every_k"]["met"]
    assert not result["calibrated_significantly_better_than_each_framework_pooled"]["met"]
    assert result["panel_own_curve_matches_oracle"]["met"]
    assert result["panel_every_fixed_pattern_regrets"]["met"]
    assert result["theory_never_worse_than_retrieval"]["met"]
