"""Placement with competing chunks (``competition=c``): Dinkelbach's method against brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bookend_rag import (
    Bookend,
    InfluenceProfile,
    Layout,
    PlacementConfig,
    TabulatedProfile,
    reorder,
)
from bookend_rag.placement.competing import answer_shares, competing_order
from bookend_rag.placement.problem import Problem
from bookend_rag.placement.strategies import optimal_order
from bookend_rag.weighing import ChunkWeigher, WeightRule
from tests.core.placement.test_optimisers import LAYOUTS, PROFILES

Case = tuple[np.ndarray, np.ndarray, InfluenceProfile, Layout, WeightRule]
competitions = st.sampled_from([0.0, 0.01, 0.1, 0.5, 3.0])


@st.composite
def problems(
    draw: st.DrawFn, max_k: int = 6, rules: tuple[WeightRule, ...] = ("slot", "mass")
) -> Case:
    k = draw(st.integers(min_value=2, max_value=max_k))
    rel = np.array(draw(st.lists(st.floats(0, 1), min_size=k, max_size=k)))
    lens = np.array(draw(st.lists(st.integers(1, 500), min_size=k, max_size=k)), dtype=float)
    profile = PROFILES[draw(st.integers(0, len(PROFILES) - 1))]
    layout = LAYOUTS[draw(st.integers(0, len(LAYOUTS) - 1))]
    rule = draw(st.sampled_from(rules))
    return rel, lens, profile, layout, rule


def _best_share(rel: np.ndarray, weigher: ChunkWeigher, c: float) -> float:
    perms = np.array(list(itertools.permutations(range(rel.size))))
    return float(answer_shares(perms, rel, weigher, c).max())


@given(problems(), competitions)
def test_competing_order_matches_brute_force(problem: Case, c: float) -> None:
    """Exact for the rules whose total weight no order changes (every Dinkelbach step exact)."""
    rel, lens, profile, layout, rule = problem
    weigher = ChunkWeigher.build(profile, lens, layout, rule)
    order = competing_order(Problem(rel, weigher, competition=c))
    assert sorted(order.tolist()) == list(range(rel.size))
    got = float(answer_shares(order, rel, weigher, c))
    assert got == pytest.approx(_best_share(rel, weigher, c), rel=1e-9, abs=1e-12)


@given(problems(max_k=14, rules=("slot", "mass", "anchored", "density")), competitions)
def test_competing_order_is_never_worse_than_the_linear_order(problem: Case, c: float) -> None:
    rel, lens, profile, layout, rule = problem
    weigher = ChunkWeigher.build(profile, lens, layout, rule)
    linear = optimal_order(Problem.build(rel, lens, profile, layout, rule=rule))
    order = optimal_order(Problem.build(rel, lens, profile, layout, rule=rule, competition=c))
    assert sorted(order.tolist()) == list(range(rel.size))
    got = float(answer_shares(order, rel, weigher, c))
    assert got >= float(answer_shares(linear, rel, weigher, c)) * (1 - 1e-9)


def test_a_large_competition_gives_the_linear_order() -> None:
    scores = [0.9, 0.85, 0.8, 0.3, 0.2, 0.1, 0.05]
    for model in ("smollm2-135m", "llama-3.1-8b"):
        linear = reorder(list(range(7)), scores, model=model, equal_lengths=True)
        many = reorder(list(range(7)), scores, model=model, equal_lengths=True, competition=1e6)
        assert many.order == linear.order


def test_competition_keeps_plausible_runners_up_out_of_heavy_slots() -> None:
    """Heavy ends, one clear favourite and two strong runners-up: the linear objective fills the
    ends with all three; with competing chunks the runners-up go to the light middle and the
    irrelevant chunks take the other heavy slots."""
    profile = TabulatedProfile(weights=(4.0, 1.0, 1.0, 1.0, 1.0, 4.0), kind="slot")
    scores = [1.0, 0.7, 0.7, 0.0, 0.0, 0.0]
    linear = reorder(list(range(6)), scores, model=profile, equal_lengths=True)
    competing = reorder(list(range(6)), scores, model=profile, equal_lengths=True, competition=0.05)
    assert {linear.order[0], linear.order[-1]} & {1, 2}
    assert 0 in (competing.order[0], competing.order[-1])
    assert not {competing.order[0], competing.order[-1]} & {1, 2}
    weigher = ChunkWeigher.build(profile, np.ones(6), Layout(), "slot")
    rel = competing.relevance
    assert answer_shares(list(competing.order), rel, weigher, 0.05) > answer_shares(
        list(linear.order), rel, weigher, 0.05
    )


def test_the_placement_reports_its_objective() -> None:
    p = reorder(["a", "b", "c"], [0.9, 0.5, 0.1], competition=0.2)
    assert p.competition == 0.2
    assert p.to_dict()["competition"] == 0.2
    assert "expected answer share" in p.explain()
    assert "relevance x weight" in reorder(["a", "b"], [0.9, 0.1]).explain()
    assert p != reorder(["a", "b", "c"], [0.9, 0.5, 0.1])


@pytest.mark.parametrize("bad", [-0.1, float("nan"), float("inf"), "much"])
def test_bad_competition_names_the_setting(bad: object) -> None:
    with pytest.raises(ValueError, match="competition"):
        Bookend(competition=bad)
    weigher = ChunkWeigher.build(PROFILES[0], np.ones(3), Layout(), "slot")
    with pytest.raises(ValueError, match="competition"):
        competing_order(Problem(np.ones(3), weigher, competition=bad))  # type: ignore[arg-type]


def test_competition_round_trips_through_the_config() -> None:
    config = PlacementConfig(competition=0.05)
    assert PlacementConfig.model_validate_json(config.model_dump_json()) == config
    assert Bookend.from_config(config).config.competition == 0.05
