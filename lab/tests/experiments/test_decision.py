"""The race and the guard that choose a placement by measurement (planted scores)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from bookend_rag_lab.decision import (
    INTERIM_SHARE,
    Race,
    compare,
    confidence_sequence_radius,
    decide,
    settled,
    split_level,
)


def _planted(n: int, effects: dict[str, float], seed: int = 0) -> dict[str, np.ndarray]:
    """Per-item scores: a shared item effect plus each candidate's planted shift plus noise."""
    rng = np.random.default_rng(seed)
    item = rng.normal(0.3, 0.15, n)
    return {name: item + shift + rng.normal(0, 0.05, n) for name, shift in effects.items()}


def test_guard_keeps_the_default_when_candidates_are_equal() -> None:
    scores = _planted(60, {"default": 0.0, "langchain": 0.0, "reversed": 0.0, "view": 0.0})
    decision = decide(scores, "default")
    assert decision.chosen == "default"
    assert not decision.switched
    assert decision.guard is not None
    assert decision.guard.mde > 0
    assert decision.guard.ci_low <= 0 <= decision.guard.ci_high
    assert decision.reason.startswith("keep the default: no candidate is measurably better")


def test_guard_switches_when_one_candidate_is_planted_ahead() -> None:
    scores = _planted(60, {"default": 0.0, "langchain": 0.08, "reversed": 0.0})
    decision = decide(scores, "default")
    assert decision.switched
    assert decision.chosen == "langchain"
    assert decision.guard is not None
    assert decision.guard.ci_low > 0


def test_guard_measures_against_rivals_that_differ_from_the_default() -> None:
    # "relevance" is the default under another name; the MDE must come from "langchain".
    scores = _planted(60, {"default": 0.0, "langchain": -0.02})
    scores["relevance"] = scores["default"].copy()
    decision = decide(scores, "default")
    assert not decision.switched
    assert decision.best == "langchain"
    assert decision.guard is not None
    assert decision.guard.mde > 0
    alone = decide({"default": scores["default"], "relevance": scores["relevance"]}, "default")
    assert alone.chosen == "default"
    assert alone.guard is None
    assert "scores differently" in alone.reason


def test_guard_is_bonferroni_corrected() -> None:
    scores = _planted(40, {"default": 0.0, "a": 0.0, "b": 0.0, "c": 0.0})
    decision = decide(scores, "default")
    assert decision.guard is not None
    assert decision.guard.level == pytest.approx(1 - 0.05 / 3)


def test_guard_counts_the_candidates_a_race_eliminated() -> None:
    scores = _planted(40, {"default": 0.0, "a": 0.0})
    decision = decide(scores, "default", comparisons=6)
    assert decision.guard is not None
    assert decision.guard.level == pytest.approx(1 - 0.05 / 6)


def test_compare_matches_the_t_interval() -> None:
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=30), rng.normal(size=30)
    got = compare(a, b, level=0.9)
    d = a - b
    half = stats.t.ppf(0.95, 29) * d.std(ddof=1) / np.sqrt(30)
    assert got.ci_low == pytest.approx(d.mean() - half)
    assert got.ci_high == pytest.approx(d.mean() + half)


def test_compare_of_constant_differences_has_zero_width() -> None:
    got = compare([1.0, 2.0, 3.0], [0.5, 1.5, 2.5])
    assert got.ci_low == got.ci_high == pytest.approx(0.5)
    assert got.mde == 0.0


def test_race_eliminates_the_clearly_behind_and_never_the_default() -> None:
    scores = _planted(80, {"default": -0.2, "good": 0.0, "bad": -0.3, "close": -0.01})
    race = Race(list(scores), "default", min_items=20)
    for n in range(10, 81, 10):
        race.update({c: v[:n] for c, v in scores.items()})
    assert "bad" in race.eliminated
    assert race.eliminated["bad"] >= 20
    assert "default" in race.alive
    assert "good" in race.alive
    assert "close" in race.alive


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 40), seed=st.integers(0, 10**6))
def test_no_candidate_equal_to_the_default_is_ever_chosen(n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    base = rng.normal(size=n)
    decision = decide({"default": base, "twin": base.copy()}, "default")
    assert decision.chosen == "default"


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda: compare([1.0], [1.0]), "n=1"),
        (lambda: compare([1.0, 2.0], [1.0]), "shapes"),
        (lambda: compare([1.0, 2.0], [1.0, 3.0], level=1.0), "level="),
        (lambda: decide({"a": [1.0, 2.0]}, "default"), "default"),
        (lambda: decide({"a": [1.0, 2.0], "b": [1.0, 2.0]}, "a", comparisons=0), "comparisons="),
        (lambda: Race(["a"], "default"), "default="),
        (lambda: Race(["default"], "default", min_items=1), "min_items="),
    ],
)
def test_bad_arguments_are_one_line_errors(call: object, needle: str) -> None:
    with pytest.raises(ValueError, match=needle) as error:
        call()  # type: ignore[operator]
    assert "\n" not in str(error.value)


def test_a_kept_default_behind_the_users_current_order_gives_way_to_it() -> None:
    from bookend_rag_lab.decision import hold_to_current

    rng = np.random.default_rng(7)
    current = rng.uniform(0.4, 0.6, 40)
    scores = {
        "default": list(current - 0.1 + rng.normal(0, 0.01, 40)),
        "relevance": list(current),
        "rival": list(current - 0.1 + rng.normal(0, 0.01, 40)),
    }
    kept = decide({"default": scores["default"], "rival": scores["rival"]}, "default")
    assert not kept.switched
    held = hold_to_current(kept, scores, "relevance")
    assert held.chosen == "relevance"
    assert held.switched
    assert held.guard is not None
    assert held.guard.ci_high < 0
    assert "current order (relevance)" in held.reason
    # Level with the current order: the default stays.
    level = {**scores, "default": list(current + rng.normal(0, 0.01, 40))}
    assert hold_to_current(kept, level, "relevance") is kept
    with pytest.raises(ValueError, match="no scores for the current order"):
        hold_to_current(kept, scores, "haystack")


def test_the_race_never_eliminates_the_current_order() -> None:
    far_behind = {"default": [1.0] * 30, "relevance": [0.0] * 30, "other": [0.0] * 30}
    race = Race(["default", "relevance", "other"], "default", kept=("relevance",), min_items=2)
    assert race.update(far_behind) == ["default", "relevance"]
    with pytest.raises(ValueError, match="kept must name candidates"):
        Race(["default"], "default", kept=("nope",))


def test_the_confidence_sequence_radius_is_its_formula() -> None:
    # Worked by hand: alpha = 0.05, planned 60 -> rho^2 = (2 ln 20 + ln(2 ln 20 + 1)) / 60.
    alpha, n, sd = 0.05, 25, 0.2
    rho2 = (-2 * np.log(alpha) + np.log(-2 * np.log(alpha) + 1)) / 60
    expected = sd * np.sqrt(
        2 * (n * rho2 + 1) / (n * n * rho2) * np.log(np.sqrt(n * rho2 + 1) / alpha)
    )
    assert confidence_sequence_radius(sd, n, 0.95, 60) == pytest.approx(expected, rel=1e-12)
    # Tightest near the planned n, and wider there than the fixed-n t-interval.
    t_radius = stats.t.ppf(0.975, 59) * sd / np.sqrt(60)
    assert confidence_sequence_radius(sd, 60, 0.95, 60) > t_radius
    assert confidence_sequence_radius(sd, 60, 0.95, 60) < confidence_sequence_radius(
        sd, 60, 0.95, 10
    )


def test_looking_after_every_batch_keeps_the_anytime_intervals_error_rate() -> None:
    # 1,000 seeded paths of 60 items with no true difference, looked at every 5 items from the
    # 10th: the fixed-n t-interval excludes 0 at some look in about a fifth of them; the
    # anytime-valid interval in fewer than 5% (2.2% on this seed).
    rng = np.random.default_rng(7)
    zeros = np.zeros(60)
    fixed = anytime = 0
    for d in rng.normal(0.0, 1.0, (1000, 60)):
        looks = [(d[:n], zeros[:n]) for n in range(10, 61, 5)]
        fixed += any(not c.ci_low <= 0 <= c.ci_high for c in (compare(a, b) for a, b in looks))
        anytime += any(
            not c.ci_low <= 0 <= c.ci_high for c in (compare(a, b, planned=60) for a, b in looks)
        )
    assert fixed / 1000 > 0.15
    assert anytime / 1000 < 0.05


def test_settled_finds_a_winner_only_when_it_leads_the_default_and_every_rival() -> None:
    scores = _planted(30, {"default": 0.0, "langchain": 0.15, "reversed": -0.1})
    reason = settled(scores, "default", confidence=0.95, comparisons=2, planned=60)
    assert reason == "langchain is measurably better than the default and every other rival"
    close = _planted(30, {"default": 0.0, "langchain": 0.15, "reversed": 0.15})
    assert settled(close, "default", confidence=0.95, comparisons=2, planned=60) is None


def test_settled_stops_when_no_rival_can_win_by_what_a_full_run_detects() -> None:
    behind = _planted(20, {"default": 0.0, "langchain": -0.1, "reversed": -0.12})
    reason = settled(behind, "default", confidence=0.95, comparisons=2, planned=60)
    assert reason is not None
    assert reason.startswith("no rival can beat the default by ")
    tied = _planted(20, {"default": 0.0, "langchain": 0.0})
    assert settled(tied, "default", confidence=0.95, comparisons=1, planned=60) is None


def test_settled_when_every_rival_is_the_default_under_another_name() -> None:
    same = {"default": [0.1, 0.4, 0.3], "relevance": [0.1, 0.4, 0.3]}
    reason = settled(same, "default", confidence=0.95, comparisons=1, planned=60)
    assert reason == "no candidate scores differently from the default"
    with pytest.raises(ValueError, match="no scores for the default 'default'"):
        settled({"x": [0.1, 0.2]}, "default", confidence=0.95, comparisons=1, planned=60)


def test_a_guard_read_early_is_anytime_valid() -> None:
    scores = _planted(20, {"default": 0.0, "langchain": 0.2})
    early = decide(scores, "default", planned=60)
    fixed = decide(scores, "default")
    assert early.guard is not None
    assert fixed.guard is not None
    assert early.guard.anytime == 60
    assert fixed.guard.anytime is None
    assert early.guard.ci_high - early.guard.ci_low > fixed.guard.ci_high - fixed.guard.ci_low


def test_the_error_rate_is_split_between_the_looks_and_the_last_one() -> None:
    assert split_level(0.95, early=True) == pytest.approx(1 - INTERIM_SHARE * 0.05)
    assert split_level(0.95, early=False) == pytest.approx(1 - (1 - INTERIM_SHARE) * 0.05)
    # Together they spend what the fixed design spent.
    spent = (1 - split_level(0.95, early=True)) + (1 - split_level(0.95, early=False))
    assert spent == pytest.approx(0.05)
    with pytest.raises(ValueError, match="confidence must lie in"):
        split_level(1.0, early=True)
