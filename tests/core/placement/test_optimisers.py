"""Optimisers against brute force, and the invariants every placement keeps."""

from __future__ import annotations

import itertools

import mpmath
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from bookend_rag import InfluenceProfile, Layout, ModelSpec, TabulatedProfile, TheoryProfile
from bookend_rag.placement import sorted_assignment
from bookend_rag.placement.exact import exact_order
from bookend_rag.placement.groups import repair_groups
from bookend_rag.placement.local_search import STARTS, local_search, neighbourhood
from bookend_rag.placement.orders import alternate_order, rank_order
from bookend_rag.placement.problem import Problem
from bookend_rag.placement.strategies import optimal_order, strategy_order
from bookend_rag.theory import hop_weights
from bookend_rag.weighing import (
    WEIGHT_RULES,
    ChunkWeigher,
    WeightRule,
    slot_weights,
    weight_rule_named,
)

PROFILES: list[InfluenceProfile] = [
    TheoryProfile(ModelSpec.preset("llama-3.1-8b")),
    TheoryProfile(ModelSpec(depth=12, attn_share=0.2)),
    TabulatedProfile(weights=(5.0, 1.0, 0.5, 0.2, 0.4, 3.0), kind="slot"),
    # Falling but for its last slot, and read at up to twice its slots (then the rise spans two).
    TabulatedProfile(weights=(4.0, 3.0, 2.5, 6.0), kind="slot"),
    # A measured token-level U: a first-token sink, a valley, recency.
    TabulatedProfile(weights=(9.0, 2.0, 1.0, 0.5, 0.4, 0.6, 1.5, 4.0), kind="position"),
    # Falling but for its final bin, which spans a fifth of the tokens: the mass path's exchange
    # argument does not hold there (it fell 17% short of the optimum before it was kept out).
    TabulatedProfile(weights=(4.0, 3.0, 2.0, 1.0, 8.0), kind="position"),
]
LAYOUTS = [Layout(suffix_tokens=0), Layout(prefix_tokens=120, suffix_tokens=40)]

relevances = st.lists(st.floats(min_value=0, max_value=1), min_size=2, max_size=7)


def objective(
    order: object,
    rel: np.ndarray,
    lens: np.ndarray,
    profile: InfluenceProfile,
    layout: Layout | None = None,
    rule: WeightRule = "slot",
) -> float:
    """The objective of ``order`` for chunks of ``lens`` (the weigher's default layout)."""
    weigher = ChunkWeigher.build(profile, lens, layout, rule)
    return float(weigher.objective(order, rel))  # type: ignore[arg-type]


Case = tuple[np.ndarray, np.ndarray, int, int, WeightRule]


@st.composite
def problems(draw: st.DrawFn, max_k: int = 7) -> Case:
    k = draw(st.integers(min_value=2, max_value=max_k))
    # No subnormal relevances: products of ~1e-313 keep a few significant bits, so no relative
    # tolerance can tell an improving move from rounding there.
    rel = draw(st.lists(st.floats(0, 1, allow_subnormal=False), min_size=k, max_size=k))
    lens = draw(st.lists(st.integers(1, 500), min_size=k, max_size=k))
    return (
        np.array(rel),
        np.array(lens, dtype=float),
        draw(st.integers(0, len(PROFILES) - 1)),
        draw(st.integers(0, len(LAYOUTS) - 1)),
        draw(st.sampled_from(WEIGHT_RULES)),
    )


def _keeps_groups_in_order(perm: tuple[int, ...], groups: list[int | None]) -> bool:
    """Whether ``perm`` places the members of each group in their input order."""
    seen: dict[int, int] = {}
    for i in perm:
        g = groups[i]
        if g is not None:
            if seen.get(g, -1) > i:
                return False
            seen[g] = i
    return True


def _brute_force(
    rel: np.ndarray,
    lens: np.ndarray,
    profile: InfluenceProfile,
    layout: Layout,
    rule: WeightRule,
    groups: list[int | None] | None = None,
) -> float:
    """The best objective over every order (those that keep each group's input order)."""
    perms = [
        perm
        for perm in itertools.permutations(range(rel.size))
        if groups is None or _keeps_groups_in_order(perm, groups)
    ]
    # All the orders in one batch of the weigher (one weigher: it depends on the chunks' lengths
    # by input index, not on the order); row by row, the search took most of this file's time.
    weigher = ChunkWeigher.build(profile, lens, layout, rule)
    return float(np.max(weigher.objective(np.array(perms), rel)))


@given(problems())
def test_exact_order_matches_brute_force(problem: Case) -> None:
    rel, lens, p, lay, rule = problem
    weigher = ChunkWeigher.build(PROFILES[p], lens, LAYOUTS[lay], rule)
    order = exact_order(Problem(rel, weigher))
    assert sorted(order.tolist()) == list(range(rel.size))
    got = objective(order, rel, lens, PROFILES[p], LAYOUTS[lay], rule)
    want = _brute_force(rel, lens, PROFILES[p], LAYOUTS[lay], rule)
    assert got == pytest.approx(want, rel=1e-9)


@given(problems())
def test_optimal_order_matches_brute_force_on_every_path(problem: Case) -> None:
    """The structured path (``mass`` on theory profiles), the exact programme and sorting."""
    rel, lens, p, lay, rule = problem
    order = optimal_order(Problem.build(rel, lens, PROFILES[p], LAYOUTS[lay], rule=rule))
    got = objective(order, rel, lens, PROFILES[p], LAYOUTS[lay], rule)
    want = _brute_force(rel, lens, PROFILES[p], LAYOUTS[lay], rule)
    assert got == pytest.approx(want, rel=1e-9)


@given(problems(max_k=6), st.lists(st.sampled_from([None, 0, 1]), min_size=6, max_size=6))
def test_exact_order_with_groups_matches_constrained_brute_force(
    problem: Case, group_pool: list[int | None]
) -> None:
    rel, lens, p, lay, rule = problem
    groups = group_pool[: rel.size]
    built = Problem.build(rel, lens, PROFILES[p], LAYOUTS[lay], rule=rule, groups=groups)
    order = optimal_order(built)
    for g in {0, 1}:
        members = [i for i in order.tolist() if groups[i] == g]
        assert members == sorted(members)
    got = objective(order, rel, lens, PROFILES[p], LAYOUTS[lay], rule)
    want = _brute_force(rel, lens, PROFILES[p], LAYOUTS[lay], rule, groups)
    assert got == pytest.approx(want, rel=1e-9)


@given(problems())
def test_local_search_ends_in_a_local_optimum_no_worse_than_its_start(problem: Case) -> None:
    rel, lens, p, lay, rule = problem
    profile, layout = PROFILES[p], LAYOUTS[lay]
    weigher = ChunkWeigher.build(profile, lens, layout, rule)
    start = rank_order(rel)
    before = weigher.objective(start, rel)
    order = local_search(start, Problem(rel, weigher))
    after = weigher.objective(order, rel)
    assert sorted(order.tolist()) == list(range(rel.size))
    assert after >= before - 1e-12
    # No single swap or insertion improves on the result.
    for neighbour in neighbourhood(order):
        assert weigher.objective(neighbour, rel) <= after + 1e-9 * abs(after)


@given(
    st.integers(min_value=13, max_value=90),
    st.integers(min_value=0, max_value=2**32 - 1),
    st.booleans(),
)
def test_heuristic_is_never_worse_than_the_sorted_start(k: int, seed: int, groups: bool) -> None:
    rng = np.random.default_rng(seed)
    rel, lens = rng.random(k), rng.integers(10, 400, k).astype(float)
    group_keys = [int(g) if g < 3 else None for g in rng.integers(0, 6, k)] if groups else None
    profile = PROFILES[0]
    order = optimal_order(Problem.build(rel, lens, profile, groups=group_keys))
    assert sorted(order.tolist()) == list(range(k))
    sorted_start = np.empty(k, dtype=np.int64)
    sorted_start[np.argsort(-slot_weights(profile, k), kind="stable")] = rank_order(rel)
    got = objective(order, rel, lens, profile)
    if group_keys is None:
        assert got >= objective(sorted_start, rel, lens, profile) - 1e-9
    else:
        for g in {0, 1, 2}:
            members = [i for i in order.tolist() if group_keys[i] == g]
            assert members == sorted(members)
    for baseline in (alternate_order(rel), rank_order(rel)):
        if group_keys is None:
            assert got >= objective(baseline, rel, lens, profile) - 1e-9


@given(relevances, st.integers(0, len(PROFILES) - 1))
def test_equal_lengths_sorted_assignment_is_optimal(rel_list: list[float], p: int) -> None:
    rel = np.array(rel_list)
    lens = np.full(rel.size, 64.0)
    order = optimal_order(Problem.build(rel, lens, PROFILES[p]))
    got = objective(order, rel, lens, PROFILES[p])
    assert got == pytest.approx(_brute_force(rel, lens, PROFILES[p], Layout(), "density"), rel=1e-9)


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 8, 9])
def test_alternate_is_stable_in_parity(k: int) -> None:
    rel = np.linspace(1, 0, k)  # chunk 0 is best
    order = alternate_order(rel).tolist()
    assert order[0] == 0
    if k > 1:
        assert order[-1] == 1
    if k > 3:
        assert order[1] == 2
        assert order[-2] == 3


def test_strategy_names() -> None:
    rel = np.array([0.1, 0.9, 0.5])
    lens = np.ones(3)
    problem = Problem.build(rel, lens, PROFILES[0])
    assert strategy_order("relevance", problem).tolist() == [1, 2, 0]
    with pytest.raises(ValueError, match="strategy must be one of"):
        strategy_order("random", problem)  # type: ignore[arg-type]


@given(problems(max_k=11), st.integers(5, 11))
# A table whose final bin rises, searched from its best start only: 1.44% short of the optimum
# (hypothesis, on a fresh machine), which the searches from the other starts reach.
@example(
    problem=(
        np.array([0.0, 0.5, 0.0, 1.0, 0.0]),
        np.array([1.0, 28.0, 29.0, 58.0, 1.0]),
        5,
        0,
        "anchored",
    ),
    k=8,
)
def test_heuristic_matches_the_exact_programme(problem: Case, k: int) -> None:
    """The heuristic (starts plus local search, beyond ``exact_max_k``) against the exact dynamic
    programme (K <= 11).

    Where the density falls to the final token (every theory profile) it is exact. Where it rises
    again (a measured U, a table's rising final bin) it promises no bound (it fell up to 4.6%
    short on random problems: ``bench/heuristic_gap.py``), only what it does: search from every
    start, keep the best end, which no swap or insertion improves.
    """
    rel, lens, p, lay, rule = problem
    rel, lens = np.resize(rel, k), np.resize(lens, k)
    profile, layout = PROFILES[p], LAYOUTS[lay]
    weigher = ChunkWeigher.build(profile, lens, layout, rule)
    exact = weigher.objective(exact_order(Problem(rel, weigher)), rel)
    built = Problem.build(rel, lens, profile, layout, rule=rule, exact_max_k=0)
    heuristic = optimal_order(built)
    got = weigher.objective(heuristic, rel)
    if profile.density_falls_to_final_token:
        assert got >= exact * (1 - 1e-9) - 1e-12
        return
    assert got <= exact * (1 + 1e-9) + 1e-12
    # Ends within 1e-9 of each other are ties that rounding decides, as in the neighbour check
    # (a relevance of 1e-10 gave two ends equal to eight digits, the heuristic keeping the lower
    # one in some runs of the whole suite on a fresh machine and not in others).
    for start in STARTS:
        end = local_search(repair_groups(start(built), built.groups), built)
        assert got >= weigher.objective(end, rel) * (1 - 1e-9) - 1e-12
    for neighbour in neighbourhood(heuristic):
        assert weigher.objective(neighbour, rel) <= got + 1e-9 * abs(got)


def _exact_slot_masses(
    prefix: int, length: float, k: int, suffix: int, depth: float, share: float
) -> list[mpmath.mpf]:
    """The theory profile's mass on each of ``k`` slots of ``length`` tokens after ``prefix``, at
    50 digits (no cancellation): ``F(x) = sum_k w_k Q(k, ln 1/x)`` with the regularized upper
    incomplete gamma ``Q``."""
    weights = hop_weights(depth, share)

    def cdf(x: mpmath.mpf) -> mpmath.mpf:
        if x <= 0:
            return mpmath.mpf(0)
        u = mpmath.log(1 / x)
        return mpmath.fsum(
            mpmath.mpf(float(weights[k])) * mpmath.gammainc(k, u, mpmath.inf, regularized=True)
            for k in range(1, len(weights))
        )

    with mpmath.workdps(50):
        total = prefix + k * mpmath.mpf(length) + suffix
        edges = [cdf((prefix + i * mpmath.mpf(length)) / total) for i in range(k + 1)]
        return [end - start for start, end in itertools.pairwise(edges)]


@settings(deadline=None, max_examples=60)
@given(
    depth=st.floats(1, 60),
    share=st.floats(0.01, 1.0),
    k=st.integers(1, 12),
    prefix=st.integers(0, 2000),
    suffix=st.integers(1, 2000),
    length=st.floats(1, 2000),
    rule=st.sampled_from([r for r in WEIGHT_RULES if weight_rule_named(r).at_mean_length]),
)
def test_a_density_that_never_rises_ranks_the_slots_front_to_back(
    depth: float, share: float, k: int, prefix: int, suffix: int, length: float, rule: str
) -> None:
    """The shortcut of the slot ranking (no weights computed) is what the theory's exact slot
    masses give, and what the computed weights give wherever float arithmetic resolves them (near
    the end of a deep profile, ``F`` is 1 to the last bit and the computed masses are noise)."""
    profile = TheoryProfile(ModelSpec(depth=depth, attn_share=share))
    total = prefix + k * length + suffix
    exact = _exact_slot_masses(prefix, length, k, suffix, depth, share)
    # Equal up to the 50 digits where the density is flat (one hop: uniform).
    assert all(a - b >= -1e-40 for a, b in itertools.pairwise(exact))

    weight_rule = weight_rule_named(rule)
    shortcut = sorted_assignment._ranks(profile, weight_rule, prefix, total, k, length)
    assert shortcut.tolist() == list(range(k))
    lengths = np.full(k, length)
    weights = ChunkWeigher(profile, weight_rule, lengths, prefix, total, lengths, None)
    computed = weights.weights_of_orders(np.arange(k))
    if np.all(np.diff(computed) <= 0):
        weighed = sorted_assignment._weighed_ranks(profile, weight_rule, prefix, total, k, length)
        assert weighed.tolist() == list(range(k))


def test_a_final_bin_that_rises_is_weighed() -> None:
    """A position table may rise in its final bin, which spans many tokens before the final one:
    the slots there are weighed, not ranked front to back (the shortcut is the theory's)."""
    table = TabulatedProfile([4.0, 3.0, 2.0, 1.0, 8.0], kind="position")
    assert not table.density_falls_to_final_token
    rule = weight_rule_named("slot")
    ranks = sorted_assignment._ranks(table, rule, 0.0, 101.0, 10, 10.0)
    assert (
        ranks.tolist()
        == sorted_assignment._weighed_ranks(table, rule, 0.0, 101.0, 10, 10.0).tolist()
    )
    assert ranks.tolist() != list(range(10))
    falling = TabulatedProfile([4.0, 3.0, 2.0, 1.0, 1.0], kind="position")
    assert falling.density_falls_to_final_token
    assert sorted_assignment._ranks(falling, rule, 0.0, 101.0, 10, 10.0).tolist() == list(range(10))


@given(problems(max_k=6))
def test_the_mass_rule_on_a_table_rising_in_its_final_bin_matches_brute_force(
    problem: Case,
) -> None:
    """The mass path is exact only for a density that never rises before the final token; a
    table's rising final bin spans many tokens, so another optimiser must place it."""
    rel, lens, _, lay, _ = problem
    table = PROFILES[-1]
    order = optimal_order(Problem.build(rel, lens, table, LAYOUTS[lay], rule="mass"))
    got = objective(order, rel, lens, table, LAYOUTS[lay], "mass")
    assert got == pytest.approx(_brute_force(rel, lens, table, LAYOUTS[lay], "mass"), rel=1e-9)
