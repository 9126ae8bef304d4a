"""The within-item regression of ``bench/eval_orders.py``: features, fit and intervals."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from placement_quality.order_effects import (
    bootstrap_within_items,
    feature_names,
    fit_within_items,
    order_features,
    sortedness,
)

ROLES = ("family-distractor", "gold", "near-duplicate", "entity-distractor", "near-duplicate")
RETRIEVED = [1, 2, 3, 4, 0]


def test_order_features_by_hand() -> None:
    # Slots: near-duplicate (2), entity-distractor (3), gold (1), family (0), near-duplicate (4).
    features = order_features([2, 3, 1, 0, 4], ROLES, RETRIEVED)
    names = feature_names(5)
    assert dict(zip(names, features.tolist(), strict=True)) == {
        "gold at slot 1": 0.0,
        "gold at slot 2": 0.0,
        "gold at slot 4": 0.0,  # slot 3 (index K // 2) is the reference, gold sits there
        "gold at slot 5": 0.0,
        "near-duplicates before the gold": 1.0,
        "entity-distractors before the gold": 1.0,
        "family-distractors before the gold": 0.0,
        # Slots 0..4 of documents 0..4: 3 2 0 1 4; retrieval ranks 4 0 1 2 3; d^2 sum 8.
        "sortedness |rho|": pytest.approx(1 - 6 * 8 / (5 * 24)),
    }
    assert order_features([1, 0, 2, 3, 4], ROLES, RETRIEVED)[0] == 1.0  # gold first
    assert order_features([0, 2, 3, 4, 1], ROLES, RETRIEVED)[3] == 1.0  # gold last


def test_sortedness_is_one_for_retrieval_order_and_its_reverse() -> None:
    assert sortedness(RETRIEVED, RETRIEVED) == pytest.approx(1.0)
    assert sortedness(RETRIEVED[::-1], RETRIEVED) == pytest.approx(1.0)
    assert sortedness([0, 2, 1], [0, 1, 2]) == pytest.approx(0.5)


@settings(max_examples=50, deadline=None)
@given(st.permutations(range(6)), st.permutations(range(6)))
def test_sortedness_matches_the_pearson_correlation_of_slots(
    order: list[int], retrieved: list[int]
) -> None:
    slots = np.argsort(order)
    ranks = np.argsort(retrieved)
    assert sortedness(order, retrieved) == pytest.approx(abs(np.corrcoef(slots, ranks)[0, 1]))


@settings(max_examples=50, deadline=None)
@given(st.permutations(range(5)))
def test_gold_slot_and_counts_are_consistent(order: list[int]) -> None:
    features = order_features(order, ROLES, RETRIEVED)
    slot = order.index(1)
    assert features[:4].sum() == (0.0 if slot == 2 else 1.0)
    assert features[4:7].sum() == slot  # every document before the gold is one competitor
    assert 0.0 <= features[7] <= 1.0


def test_bad_orders_and_roles_raise() -> None:
    with pytest.raises(ValueError, match=r"order must be a permutation of range\(5\)"):
        order_features([0, 1, 2, 3, 3], ROLES, RETRIEVED)
    with pytest.raises(ValueError, match="retrieval_order must be a permutation"):
        order_features([0, 1, 2, 3, 4], ROLES, [0, 1])
    with pytest.raises(ValueError, match="exactly one 'gold'"):
        order_features([0, 1, 2], ("gold", "gold", "near-duplicate"), [0, 1, 2])
    with pytest.raises(ValueError, match="one row each"):
        fit_within_items(np.zeros((3, 2)), np.zeros(2), np.zeros(3, dtype=np.int64))


def planted(noise: float, seed: int = 0) -> tuple[np.ndarray, ...]:
    """Scores from known coefficients plus a large effect per item and noise."""
    rng = np.random.default_rng(seed)
    truth = np.array([0.3, -0.1, 0.2])
    groups = np.repeat(np.arange(60), 8)
    features = rng.normal(size=(groups.size, truth.size))
    items = rng.normal(scale=5.0, size=60)[groups]
    scores = items + features @ truth + rng.normal(scale=noise, size=groups.size)
    return features, scores, groups, truth


def test_fit_recovers_planted_coefficients_despite_item_effects() -> None:
    features, scores, groups, truth = planted(noise=0.0)
    assert fit_within_items(features, scores, groups) == pytest.approx(truth, abs=1e-9)
    # Without removing the item effects the same data gives other coefficients.
    pooled, *_ = np.linalg.lstsq(np.c_[features, np.ones(len(scores))], scores, rcond=None)
    assert np.abs(pooled[:3] - truth).max() > 0.05


def test_bootstrap_intervals_cover_the_truth_and_shrink_with_less_noise() -> None:
    widths = []
    for noise in (0.5, 0.05):
        features, scores, groups, truth = planted(noise)
        fits = bootstrap_within_items(features, scores, groups, draws=300)
        low, high = np.percentile(fits, [2.5, 97.5], axis=0)
        assert np.all(low <= truth)
        assert np.all(truth <= high)
        widths.append(float(np.mean(high - low)))
    assert widths[1] < widths[0] / 3
