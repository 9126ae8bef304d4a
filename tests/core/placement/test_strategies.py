"""The strategy registry: a strategy registered from outside the package is a value of every
``strategy=``, placed on the path its members allow; the shipped ones stay."""

from __future__ import annotations

import numpy as np
import pytest

from bookend_rag import Bookend, ModelSpec, PlacementConfig, TheoryProfile, reorder
from bookend_rag.arrays import IntArray
from bookend_rag.placement.problem import Problem
from bookend_rag.placement.strategies import (
    STRATEGIES,
    BookendStrategy,
    Strategy,
    register_strategy,
    strategy_named,
    strategy_names,
    unregister_strategy,
)

LLAMA = TheoryProfile(ModelSpec.preset("llama-3.1-8b"))


class Retrieved(Strategy):
    """``retrieved``: the input order, whatever the scores. It declares no ranks per slot, so
    no shortcut may place it: where one did, the most relevant chunk would come first."""

    name = "retrieved"

    def order(self, problem: Problem) -> IntArray:
        return np.arange(problem.relevance.size)


@pytest.mark.parametrize("k", [4, 100])  # the small-K path's size, and placing by rank's
def test_a_registered_strategy_is_a_value_of_every_strategy_setting(k: int) -> None:
    texts, scores = [f"chunk {i}" for i in range(k)], [float(i) for i in range(k)]
    register_strategy(Retrieved())
    try:
        assert strategy_names() == (*STRATEGIES, "retrieved")
        assert reorder(texts, scores, strategy="retrieved").order == tuple(range(k))
        assert Bookend(strategy="retrieved").place(texts, scores).order == tuple(range(k))
        config = PlacementConfig(strategy="retrieved")
        assert PlacementConfig.model_validate_json(config.model_dump_json()) == config
        text = reorder(texts, scores, strategy="retrieved").explain()
    finally:
        unregister_strategy("retrieved")
    assert reorder(texts, scores, strategy="relevance").order == tuple(range(k))[::-1]
    assert "strategy: retrieved" in text
    assert "fixes the pattern" not in text  # it adds nothing to explain() unless it says so
    with pytest.raises(ValueError, match="strategy='retrieved': Input should be 'bookend'"):
        PlacementConfig(strategy="retrieved")


def test_the_registry_keeps_names_unique_and_the_shipped_strategies() -> None:
    with pytest.raises(ValueError, match="already named 'bookend'"):
        register_strategy(BookendStrategy())
    with pytest.raises(TypeError, match="Strategy instance"):
        register_strategy(Retrieved)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="bookend ships"):
        unregister_strategy("relevance")
    with pytest.raises(ValueError, match="strategy='retrieved'"):
        unregister_strategy("retrieved")
    assert strategy_names() == STRATEGIES == ("bookend", "alternate", "relevance")


def test_a_pattern_keeps_source_groups_in_input_order() -> None:
    relevance = np.array([0.1, 0.9, 0.5, 0.7])
    problem = Problem.build(relevance, np.ones(4), LLAMA, groups=["x", None, "x", None])
    # alternate alone: 1 first, 3 last, then 2 and 0 inwards: [1, 2, 0, 3]; source x's chunks
    # 0 and 2 take its slots 1 and 2 in input order.
    assert strategy_named("alternate").order(problem).tolist() == [1, 0, 2, 3]
