"""Chunk weighing: the weight rules on a span's influence, layouts, and per-slot profiles."""

from __future__ import annotations

from itertools import permutations

import numpy as np
import pytest

from bookend_rag import (
    Layout,
    ModelSpec,
    PlacementConfig,
    TabulatedProfile,
    TheoryProfile,
    reorder,
)
from bookend_rag.arrays import FloatArray
from bookend_rag.profiles.base import InfluenceProfile
from bookend_rag.theory import influence_cdf
from bookend_rag.weighing import (
    SlotRule,
    WeightRule,
    chunk_weights,
    register_weight_rule,
    slot_weights,
    unregister_weight_rule,
    weight_rule_names,
)

LLAMA = TheoryProfile(ModelSpec.preset("llama-3.1-8b"))
BOOKEND_VIEW = Layout(suffix_tokens=0)  # the chunks fill the analysed sequence


def test_chunk_weight_is_mean_density_over_the_span() -> None:
    lengths = np.array([100.0, 300.0, 50.0, 550.0])
    weights = chunk_weights(LLAMA, lengths, BOOKEND_VIEW, rule="density")
    edges = np.concatenate(([0.0], np.cumsum(lengths))) / lengths.sum()
    mass = np.diff(influence_cdf(edges, 32, 1 / 32))
    np.testing.assert_allclose(weights, mass / (lengths / lengths.sum()))
    # The mass rule: the same span mass per mean chunk length.
    np.testing.assert_allclose(
        chunk_weights(LLAMA, lengths, BOOKEND_VIEW, rule="mass"), mass * lengths.size
    )
    # The default rule, slot: every chunk weighed at the mean length.
    np.testing.assert_allclose(
        chunk_weights(LLAMA, lengths, BOOKEND_VIEW), slot_weights(LLAMA, 4, BOOKEND_VIEW)
    )
    # Mass-weighted mean of the weights is the uniform share.
    assert float(weights @ lengths) / lengths.sum() == pytest.approx(1.0)


def test_the_bookend_view_is_a_u_and_a_suffix_removes_the_anchor() -> None:
    filled = slot_weights(LLAMA, 10, BOOKEND_VIEW)
    assert int(np.argmax(filled)) == 9
    assert int(np.argsort(filled)[-2]) == 0
    assert filled[4] < min(filled[0], filled[-1])  # the valley
    with_question = slot_weights(LLAMA, 10, Layout(prefix_tokens=50, suffix_tokens=500))
    assert np.all(np.diff(with_question) < 0)  # delta on the suffix: decreasing front to back


def test_one_layout_default_everywhere() -> None:
    """``Layout()``, the weigher's default and placement's default layout are one layout."""
    from bookend_rag import PlacementConfig

    placement = reorder(list("abcde"), [0.9, 0.8, 0.3, 0.2, 0.1], lengths=[10] * 5)
    assert placement.layout == Layout() == PlacementConfig().layout
    np.testing.assert_allclose(placement.weights, chunk_weights(LLAMA, [10] * 5))
    np.testing.assert_allclose(slot_weights(LLAMA, 5), slot_weights(LLAMA, 5, Layout()))
    assert not np.allclose(slot_weights(LLAMA, 5), slot_weights(LLAMA, 5, BOOKEND_VIEW))


def test_slot_profiles_weigh_document_slots_whatever_the_token_lengths() -> None:
    slots = TabulatedProfile(weights=(0.6, 0.3, 0.2, 0.9), kind="slot")
    assert slots.per_document
    assert not LLAMA.per_document
    uneven = chunk_weights(slots, [500, 10, 40, 3], Layout(prefix_tokens=80, suffix_tokens=20))
    np.testing.assert_allclose(uneven, slot_weights(slots, 4))
    # The best chunk goes to the strongest slot even when it is long and a runner-up is short.
    placement = reorder(list("abcd"), [0.9, 0.8, 0.2, 0.1], model=slots, lengths=[400, 5, 50, 50])
    assert placement.order[-1] == 0
    assert placement.order[0] == 1


class GeometricRule(WeightRule):
    """``geometric``, a toy: ``N · (F(e) - F(s)) / sqrt(l_i · lbar)``, between density and mass
    (and the mean density at equal lengths, as a rule must give)."""

    name = "geometric"
    description = "influence on the chunk's span per geometric mean of its and the mean length"

    def divisors(
        self, lengths: FloatArray, mean: float, profile: InfluenceProfile
    ) -> tuple[FloatArray, FloatArray | None]:
        return np.sqrt(lengths * mean), None


def test_a_rule_defined_outside_the_library_places_and_explains() -> None:
    """A new rule is its class and its registration: nothing in the library names it."""
    items, scores, lengths = list("abcde"), [0.2, 0.9, 0.6, 0.8, 0.1], [40, 400, 90, 10, 250]

    def geometric_weights(order: tuple[int, ...]) -> FloatArray:
        spans = np.asarray(lengths, dtype=float)[list(order)]
        edges = np.concatenate(([0.0], np.cumsum(spans))) / spans.sum()
        mass = np.diff(influence_cdf(edges, 32, 1 / 32))
        return np.asarray(spans.sum() * mass / np.sqrt(spans * spans.mean()))

    register_weight_rule(GeometricRule())
    try:
        assert "geometric" in weight_rule_names()
        # suffix_tokens=0: the chunks fill the analysed sequence, as geometric_weights has it.
        placement = reorder(
            items, scores, lengths=lengths, weight_rule="geometric", suffix_tokens=0
        )
        text = placement.explain()
        config = PlacementConfig(weight_rule="geometric")
        assert PlacementConfig.model_validate_json(config.model_dump_json()) == config
    finally:
        unregister_weight_rule("geometric")
    np.testing.assert_allclose(placement.weights, geometric_weights(placement.order))
    best = max(
        float(placement.relevance[list(order)] @ geometric_weights(order))
        for order in permutations(range(len(items)))
    )
    assert placement.objective == pytest.approx(best, rel=1e-12)
    assert placement.weight_rule == placement.to_dict()["weight_rule"] == "geometric"
    assert f"weight rule: geometric ({GeometricRule.description})" in text
    assert f"weight = {GeometricRule.description} (1.0 = a uniform share)" in text
    with pytest.raises(ValueError, match="weight_rule='geometric': Input should be 'slot', 'mass'"):
        reorder(items, scores, weight_rule="geometric")


def test_the_registry_keeps_names_unique_and_the_shipped_rules() -> None:
    with pytest.raises(ValueError, match="already named 'slot'"):
        register_weight_rule(SlotRule())
    with pytest.raises(TypeError, match="WeightRule instance"):
        register_weight_rule(GeometricRule)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="bookend ships"):
        unregister_weight_rule("slot")
    with pytest.raises(ValueError, match="weight_rule='geometric'"):
        unregister_weight_rule("geometric")
    assert weight_rule_names() == ("slot", "mass", "anchored", "density")
