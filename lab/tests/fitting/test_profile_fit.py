"""Fits of the parametric profile: MLE on simulated outcomes, LSQ on a position profile, and the
held-back comparison. All data are simulated from a known profile, so the truth is known."""

from __future__ import annotations

import numpy as np
import pytest

from bookend_rag import FittedProfile, TabulatedProfile
from bookend_rag_lab.fitting.holdout import heldback_report, heldback_summary
from bookend_rag_lab.fitting.outcomes import SlotOutcome, outcomes_from_json, outcomes_to_json
from bookend_rag_lab.fitting.profile import fit_outcomes, fit_position_profile, log_influence
from bookend_rag_lab.fitting.slots import slot_profile, summarise

TRUE = FittedProfile(
    lam=2.0, tau_tokens=60.0, recency_mass=0.35, floor_mass=0.05, reference_tokens=400.0
)
TRAIN_CELLS = {(6, (0, 1)): -0.5, (10, (0, 1)): -1.0, (6, (3, 5)): -1.0, (10, (3, 5)): -1.5}


def simulate(
    truth: FittedProfile,
    cells: dict[tuple[int, tuple[int, int]], float],
    n_items: int,
    seed: int,
    first_id: int = 0,
) -> list[SlotOutcome]:
    """Outcomes drawn from ``P(correct) = sigmoid(a_cell + ln w)`` with random document lengths."""
    rng = np.random.default_rng(seed)
    out: list[SlotOutcome] = []
    item_id = first_id
    for (docs, filler), intercept in cells.items():
        for _ in range(n_items):
            item_id += 1
            lengths = rng.integers(20 + 12 * filler[0], 35 + 12 * filler[1], size=docs)
            edges = np.concatenate(([0], np.cumsum(lengths)))
            placed = [
                SlotOutcome(
                    item_id=str(item_id),
                    family="birthplace",
                    n_docs=docs,
                    slot=slot,
                    gold_start=int(edges[slot]),
                    gold_end=int(edges[slot + 1]),
                    n_tokens=int(edges[-1]),
                    prompt_tokens=int(edges[-1]) + 30,
                    correct=False,
                    candidate_prob=0.5,
                    logprob=-1.0,
                    filler=filler,
                )
                for slot in range(docs)
            ]
            prob = 1.0 / (1.0 + np.exp(-(intercept + log_influence(truth, placed))))
            draws = rng.random(docs) < prob
            out.extend(
                SlotOutcome(**{**o.__dict__, "correct": bool(d)})
                for o, d in zip(placed, draws, strict=True)
            )
    return out


def test_mle_recovers_known_parameters_within_their_standard_errors() -> None:
    outcomes = simulate(TRUE, TRAIN_CELLS, n_items=120, seed=0)
    fit = fit_outcomes(outcomes, settings={"weights": "simulated", "seed": 0})
    got, se = fit.profile, fit.profile.standard_errors
    for name, truth in (
        ("lam", TRUE.lam),
        ("tau_tokens", TRUE.tau_tokens),
        ("recency_mass", TRUE.recency_mass),
        ("primacy_mass", TRUE.primacy_mass),
    ):
        assert name in se
        assert abs(getattr(got, name) - truth) < 3.0 * se[name], (name, getattr(got, name))
    # The standard errors are informative, not so wide that any value passes.
    assert se["tau_tokens"] < 0.5 * TRUE.tau_tokens
    assert se["recency_mass"] < 0.1
    # The per-cell intercepts come back too, in the same order as the truth.
    assert fit.intercepts["K=6 filler 0-1"] > fit.intercepts["K=10 filler 3-5"]
    meta = got.metadata
    assert meta["data"]["docs"] == [6, 10]
    assert [c["items"] for c in meta["data"]["cells"]] == [120] * 4
    assert meta["model"] == "simulated"
    assert fit.log_likelihood < 0
    assert "held-in log-likelihood" in fit.summary()


def test_mle_tells_a_window_from_no_window() -> None:
    flat = FittedProfile(
        lam=2.0, tau_tokens=60.0, recency_mass=0.0, floor_mass=0.6, reference_tokens=400.0
    )
    fit = fit_outcomes(simulate(flat, TRAIN_CELLS, n_items=120, seed=1))
    assert fit.profile.recency_mass < 0.1


def test_lsq_recovers_a_position_profile() -> None:
    n = 512
    edges = np.arange(n + 1, dtype=np.float64)
    mass = TRUE.span_mass_at_tokens(edges[:-1], edges[1:], float(n))
    noise = np.exp(np.random.default_rng(0).normal(0.0, 0.1, n))
    measured = TabulatedProfile(weights=tuple(mass * noise), kind="position", label="sim")
    fitted = fit_position_profile(measured)
    assert fitted.reference_tokens == n
    assert fitted.tau_tokens == pytest.approx(TRUE.tau_tokens, rel=0.25)
    assert fitted.recency_mass == pytest.approx(TRUE.recency_mass, abs=0.08)
    assert fitted.metadata["fit"]["log_rmse"] < 0.15
    assert set(fitted.standard_errors) == {
        "lam",
        "tau_tokens",
        "primacy_mass",
        "recency_mass",
        "floor_mass",
    }
    with pytest.raises(ValueError, match="position profile"):
        fit_position_profile(TabulatedProfile(weights=(1.0,) * 10, kind="slot"))


def test_heldback_report_prefers_the_true_family_on_an_unseen_cell() -> None:
    # A strong recency window of 40 tokens: at K = 14 with longer documents the last slot
    # gains far less than the stretched K = 10 table says.
    truth = FittedProfile(
        lam=3.0, tau_tokens=40.0, recency_mass=0.6, floor_mass=0.02, reference_tokens=400.0
    )
    train = simulate(truth, TRAIN_CELLS, n_items=60, seed=2)
    # Two held-back cells whose item ids coincide, as calibrate's cells do.
    held = simulate(truth, {(14, (8, 10)): -1.0}, n_items=30, seed=3)
    held += simulate(truth, {(12, (8, 10)): -1.0}, n_items=30, seed=5)
    fit = fit_outcomes(train)
    table = slot_profile(
        summarise([o for o in train if o.n_docs == 10]), label="K=10 table", metadata={}
    )
    report = heldback_report(fit, table, train, held)
    scores = report["profiles"]
    assert report["heldback_cells"] == ["K=12 filler 8-10", "K=14 filler 8-10"]
    assert (
        scores["fitted"]["log_likelihood_per_outcome"]
        > scores["uniform"]["log_likelihood_per_outcome"]
    )
    diff = report["fitted_minus"]["slot table (stretched)"]
    assert diff["log_likelihood_per_outcome"] > 0
    assert diff["log_likelihood_ci95"][0] > 0
    assert diff["brier"] < 0
    assert [len(v) for v in report["observed_by_slot"].values()] == [12, 14]
    assert [len(v) for v in scores["fitted"]["predicted_by_slot"].values()] == [12, 14]
    assert report["n_heldback_items"] == 60
    assert "slot table (stretched): " in heldback_summary(report)
    assert "fitted" not in report["fitted_minus"]


def test_outcomes_json_round_trip_and_validation() -> None:
    outcomes = simulate(TRUE, {(3, (0, 1)): 0.0}, n_items=2, seed=4)
    assert outcomes_from_json(outcomes_to_json(outcomes)) == outcomes
    with pytest.raises(ValueError, match="gold span"):
        SlotOutcome("1", "x", 3, 0, 5, 5, 10, 20, True, 0.5, -1.0, (0, 1))
    with pytest.raises(ValueError, match="slot"):
        SlotOutcome("1", "x", 3, 3, 0, 5, 10, 20, True, 0.5, -1.0, (0, 1))
