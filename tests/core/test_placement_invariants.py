"""Placement invariants: the best chunk stays at an end, no chunk gains weight by being shorter,
and the core's known holes stay closed (repeat_top with a budget and sources, checked lengths and
scores, scale invariance, caches that do not grow per call).

Each test here failed on the release before the ``mass`` weight rule; the cases are the
reproductions that led to it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bookend_rag
from bookend_rag import (
    DEFAULT_SUFFIX_TOKENS,
    InfluenceProfile,
    Layout,
    ModelSpec,
    TabulatedProfile,
    TheoryProfile,
    available_profile_presets,
    reorder,
    resolve_profile,
)
from bookend_rag.weighing import WEIGHT_RULES, ChunkWeigher, slot_weights

END_HEAVY: list[InfluenceProfile] = [
    TheoryProfile(ModelSpec.preset("llama-3.1-8b")),
    TheoryProfile(ModelSpec.preset("smollm2-135m")),
    TheoryProfile(ModelSpec(depth=12, attn_share=0.3)),
    *(resolve_profile(name) for name in available_profile_presets()),
]


def _middle(order: tuple[int, ...], best: int) -> bool:
    return best not in (order[0], order[-1])


def test_the_issue_example_puts_the_best_chunk_at_an_end() -> None:
    scores, lengths = [0.682, 0.591, 0.383, 0.129], [186, 88, 60, 445]
    placement = reorder(list(range(4)), scores, lengths=lengths)
    assert not _middle(placement.order, 0)
    assert f"sits in slot {placement.order.index(0)}" in placement.explain()


def test_without_scores_long_first_chunk_stays_at_an_end() -> None:
    placement = reorder(["x", "y", "z"], lengths=[452, 133, 137])
    assert not _middle(placement.order, 0)


@settings(max_examples=150, deadline=None)
@given(
    st.integers(0, len(END_HEAVY) - 1),
    st.lists(st.integers(20, 800), min_size=3, max_size=20),
    st.booleans(),
    st.integers(0, 2**32 - 1),
)
def test_best_chunk_never_lands_in_the_middle(
    p: int, lengths: list[int], with_scores: bool, seed: int
) -> None:
    """For every profile whose equal-length weights are heaviest at an end, whatever the lengths."""
    profile = END_HEAVY[p]
    scores = np.random.default_rng(seed).random(len(lengths)).tolist() if with_scores else None
    placement = reorder(list(range(len(lengths))), scores, model=profile, lengths=lengths)
    best = int(np.argmax(scores)) if scores is not None else 0
    assert not _middle(placement.order, best)


@given(
    st.lists(st.integers(1, 600), min_size=2, max_size=12),
    st.integers(0, 11),
    st.integers(1, 600),
    st.sampled_from(["mass", "slot"]),
)
def test_no_chunk_gains_weight_by_being_shorter(
    lengths: list[int], which: int, shorter_by: int, rule: str
) -> None:
    """Under ``mass`` and ``slot`` a shorter chunk in the same position never weighs more."""
    profile = END_HEAVY[0]
    which %= len(lengths)
    if lengths[which] - shorter_by < 1:
        return
    shorter = list(lengths)
    shorter[which] -= shorter_by
    view = Layout(suffix_tokens=0)  # the chunks fill the sequence: the final one holds the delta
    before = ChunkWeigher.build(profile, lengths, view, rule).weights_of_orders(range(len(lengths)))
    after = ChunkWeigher.build(profile, shorter, view, rule).weights_of_orders(range(len(lengths)))
    # Shortening one chunk shortens the mean too, so compare its share of the total weight.
    assert after[which] / after.sum() <= before[which] / before.sum() + 1e-12


@pytest.mark.parametrize("rule", ["slot", "mass"])
def test_density_rule_shows_the_old_pull_and_the_length_neutral_rules_do_not(rule: str) -> None:
    """The reason for the change, kept as a check: under ``density`` a short chunk wins the end."""
    scores, lengths = [0.682, 0.591, 0.383, 0.129], [186, 88, 60, 445]
    # The bookend view (no suffix): the final chunk holds the Recency Delta.
    old = reorder(list(range(4)), scores, lengths=lengths, weight_rule="density", suffix_tokens=0)
    new = reorder(list(range(4)), scores, lengths=lengths, weight_rule=rule, suffix_tokens=0)
    assert old.order == (2, 0, 3, 1)  # the shortest chunk took the front, the best the middle
    assert not _middle(new.order, 0)


def test_default_puts_the_best_chunk_in_the_heaviest_equal_slot_whatever_the_lengths() -> None:
    """The default rule ``slot``: the most relevant chunk takes the slot the profile's
    equal-length weights rank heaviest (the last one for theory profiles), even when it is far
    longer or shorter than the rest."""
    profile = END_HEAVY[0]
    for suffix in (0, DEFAULT_SUFFIX_TOKENS):
        heaviest = int(np.argmax(slot_weights(profile, 5, Layout(suffix_tokens=suffix))))
        for lengths in ([800, 20, 20, 20, 20], [20, 800, 800, 800, 800], [20, 30, 800, 40, 50]):
            scores = [0.9, 0.5, 0.4, 0.3, 0.2]
            placement = reorder(list(range(5)), scores, lengths=lengths, suffix_tokens=suffix)
            assert placement.order[heaviest] == 0


@pytest.mark.parametrize("rule", WEIGHT_RULES)
def test_equal_lengths_place_the_same_under_every_rule(rule: str) -> None:
    scores = [0.3, 0.9, 0.5, 0.1, 0.7, 0.2]
    base = reorder(list(range(6)), scores, lengths=[50] * 6, weight_rule="density")
    other = reorder(list(range(6)), scores, lengths=[50] * 6, weight_rule=rule)
    assert other.order == base.order
    np.testing.assert_allclose(other.weights, base.weights)


def test_explain_states_the_rule() -> None:
    text = reorder(["a", "bb", "ccc"], [0.1, 0.5, 0.9], weight_rule="anchored").explain()
    assert "weight rule: anchored" in text
    assert "weight rule: slot" in reorder(["a", "bb"], [0.1, 0.5]).explain()
    with pytest.raises(ValueError, match="weight_rule='tokens'"):
        reorder(["a"], weight_rule="tokens")  # type: ignore[arg-type]


# Holes of the core found with the mass rule.


def test_repeat_top_with_budget_stays_within_budget_and_keeps_the_best() -> None:
    placement = reorder(list("abcd"), lengths=[40, 25, 25, 10], budget=60, repeat_top=True)
    used = sum(placement.lengths[i] for i in placement.order)
    assert used <= 60
    assert 0 in placement.order
    assert not placement.repeated
    assert any("repeat_top" in note for note in placement.notes)
    roomy = reorder(list("abcd"), lengths=[40, 25, 25, 10], budget=120, repeat_top=True)
    assert roomy.repeated
    assert roomy.order[0] == roomy.order[-1] == 0
    assert sum(roomy.lengths[i] for i in roomy.order) <= 120


def test_repeat_top_respects_source_groups() -> None:
    items = [{"t": "a" * 40, "doc": "A"}, {"t": "b" * 80, "doc": "A"}, {"t": "c" * 60, "doc": "B"}]
    placement = reorder(items, [0.2, 0.9, 0.5], text="t", source="doc", repeat_top=True)
    positions = [p for p, i in enumerate(placement.order) if items[i]["doc"] == "A"]
    members = [placement.order[p] for p in positions]
    assert members == sorted(members)
    assert not placement.repeated
    assert sorted(placement.order) == [0, 1, 2]


def test_repeat_top_optimises_slot_profiles_over_all_slots() -> None:
    """With a slot profile, the chunks between the copies are weighed as the result weighs them."""
    profile = TabulatedProfile(weights=(9.0, 1.0, 5.0, 0.5, 0.2, 8.0), kind="slot")
    placement = reorder(list("abcde"), [0.9, 0.8, 0.1, 0.7, 0.2], model=profile, repeat_top=True)
    assert placement.repeated
    inner = placement.order[1:-1]
    # Slot 2 of 6 (weight 5) is the heaviest inner slot: the second-best chunk belongs there.
    assert inner[1] == 1
    assert placement.weights.size == 6


def test_repeat_top_baselines_repeat_too() -> None:
    placement = reorder(["a", "bb", "ccc"], [0.9, 0.5, 0.1], repeat_top=True)
    for value in placement.baselines.values():
        assert value > 0.5 * placement.objective  # the repeat counts in the baselines too
    assert "+300" not in placement.explain()


@pytest.mark.parametrize("strategy", ["alternate", "relevance"])
def test_every_strategy_honours_source(strategy: str) -> None:
    rng = np.random.default_rng(3)
    for _ in range(40):
        k = int(rng.integers(3, 10))
        docs = rng.integers(0, 3, k).tolist()
        sizes = rng.integers(4, 400, k).tolist()
        items = [{"text": "x" * n, "doc": d} for n, d in zip(sizes, docs, strict=True)]
        placement = reorder(
            items, rng.random(k).tolist(), text="text", source="doc", strategy=strategy
        )
        for d in set(docs):
            seen = [i for i in placement.order if items[i]["doc"] == d]
            assert seen == sorted(seen)


@pytest.mark.parametrize(
    ("lengths", "match"),
    [
        ([5, 5, 5, 7], "one value per item"),
        ([5, 5, 5, 5], "one value per item"),
        ([5, 5], "one value per item"),
        ([0.5, 0.5, 2.5], "whole token counts"),
        ([0, 0, 0], "whole token counts"),
        ([10, "7", 3], "lengths\\[1\\]='7'"),
    ],
)
def test_lengths_are_checked_on_every_path(lengths: list[object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        reorder(["a", "b", "c"], lengths=lengths)  # type: ignore[arg-type]


def test_extreme_finite_scores_never_give_nan() -> None:
    placement = reorder(["low", "mid", "high"], [-1e308, 0.0, 1e308])
    assert np.all(np.isfinite(placement.relevance))
    assert placement.relevance.tolist() == [0.0, 0.5, 1.0]
    assert not _middle(placement.order, 2)


def test_overflowing_profile_weights_are_normalised_safely() -> None:
    profile = TabulatedProfile(weights=(1e308, 1e308), kind="position")
    assert np.all(np.isfinite(profile.cdf(np.linspace(0, 1, 5))))
    assert np.all(np.isfinite(reorder(["a", "bb"], [0.1, 0.9], model=profile).weights))


@pytest.mark.parametrize(
    ("scores", "match"),
    [
        ([0.5, None, float("nan")], "scores\\[2\\]=nan"),
        ([0.5, None, "garbage"], "scores\\[2\\]='garbage'"),
        ([[0.1], [0.2], [0.3]], "scores\\[0\\]=\\[0.1\\]"),
        (5, "scores=5"),
    ],
)
def test_a_missing_score_does_not_hide_bad_ones(scores: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        reorder(["a", "b", "c"], scores)  # type: ignore[arg-type]


@settings(max_examples=60, deadline=None)
@given(
    # Scores on a 1e-3 grid, so that the transformed scores still tell every pair apart in
    # floating point (a shift by 1e6 of scores 1e-9 apart would erase them, not move them).
    st.lists(st.integers(-(10**6), 10**6), min_size=3, max_size=20, unique=True),
    st.lists(st.integers(5, 800), min_size=20, max_size=20),
    st.floats(1e-3, 1e3),
    st.floats(-1e3, 1e3),
    st.sampled_from(["llama-3.1-8b", "liu2023:mpt-30b-instruct", "position-u"]),
    st.sampled_from(WEIGHT_RULES),
    st.booleans(),
    st.booleans(),
)
def test_order_is_invariant_to_scaling_and_shifting_scores(
    grid: list[int],
    lengths: list[int],
    scale: float,
    shift: float,
    model: str,
    rule: str,
    grouped: bool,
    repeat_top: bool,
) -> None:
    profile = (
        TabulatedProfile(weights=(9.0, 2.0, 1.0, 0.5, 0.4, 0.6, 1.5, 4.0))
        if model == "position-u"
        else resolve_profile(model)
    )
    scores = [g / 1000 for g in grid]
    k = len(scores)
    items = [{"doc": i % 3 if grouped else None} for i in range(k)]
    options = {
        "model": profile,
        "lengths": lengths[:k],
        "weight_rule": rule,
        "source": "doc",
        "repeat_top": repeat_top,
        "exact_max_k": 6,
    }
    base = reorder(items, scores, **options)  # type: ignore[arg-type]
    moved = reorder(items, [scale * s + shift for s in scores], **options)  # type: ignore[arg-type]
    assert moved.order == base.order


def test_placement_has_working_value_semantics() -> None:
    a = reorder(["a", "bb", "ccc"], [0.2, 0.9, 0.4])
    b = reorder(["a", "bb", "ccc"], [0.2, 0.9, 0.4])
    c = reorder(["a", "bb", "ccc"], [0.9, 0.2, 0.4])
    assert a == b
    assert hash(a) == hash(b)
    assert a != c
    assert len({a, b, c}) == 2


def test_a_profile_file_is_read_again_when_it_changes(tmp_path: Path) -> None:
    path = tmp_path / "profile.json"
    TabulatedProfile(weights=(9.0, 1.0, 1.0, 1.0), kind="slot").save(path)
    first = reorder(list("abcd"), [0.9, 0.5, 0.4, 0.1], model=str(path))
    assert first.order[0] == 0
    data = json.loads(path.read_text())
    data["weights"] = [1.0, 1.0, 1.0, 9.0]
    data["label"] = "rewritten"  # the file's size changes with its content
    path.write_text(json.dumps(data))
    second = reorder(list("abcd"), [0.9, 0.5, 0.4, 0.1], model=str(path))
    assert second.order[-1] == 0
    path.unlink()
    with pytest.raises(ValueError, match="profile file not found"):
        reorder(list("abcd"), model=str(path))


def test_the_exact_programme_keeps_no_per_lengths_cache() -> None:
    """Caches are keyed on what repeats: no entry per distinct set of lengths."""
    from bookend_rag.placement import exact, sorted_assignment

    assert not hasattr(exact, "_subset_cdf")
    rng = np.random.default_rng(0)
    for _ in range(5):
        reorder(list(range(10)), rng.random(10).tolist(), lengths=rng.integers(5, 500, 10).tolist())
    info = sorted_assignment._weighed_ranks.cache_info()
    assert info.maxsize is not None
    assert info.currsize <= info.maxsize


def test_weights_layout_and_rule_are_exported() -> None:
    assert bookend_rag.reorder is reorder
    assert Layout().to_dict() == {"prefix_tokens": 0, "suffix_tokens": DEFAULT_SUFFIX_TOKENS}


@settings(deadline=None, max_examples=60)
@given(
    st.sampled_from(["llama-3.1-8b", "gpt2", "smollm2-135m", "qwen2.5-0.5b", "gemma-2-2b"]),
    st.lists(st.tuples(st.floats(0, 1), st.integers(1, 800)), min_size=1, max_size=16),
)
def test_the_default_puts_chunks_in_relevance_order_for_every_theory_profile(
    model: str, rows: list[tuple[float, int]]
) -> None:
    """The answer follows the chunks, so the Recency Delta is never a chunk's and theory weights
    fall front to back: the default order is the relevance order (ties in input order), the
    order measured best in ``bench/RESULTS.md``, "Placement quality"."""
    scores, lengths = [r[0] for r in rows], [r[1] for r in rows]
    theory = ModelSpec.preset(model)  # a measured model's name would give its measured profile
    placement = reorder(list(range(len(rows))), scores, model=theory, lengths=lengths)
    assert list(placement.order) == sorted(range(len(rows)), key=lambda i: -placement.relevance[i])
    assert "suffix=1 tokens (the Recency Delta falls after the chunks" in placement.explain()
