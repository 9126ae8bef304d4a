"""The slot table of a calibration: per-slot accuracy with intervals, and the profile it gives.

A calibration (:mod:`bookend_rag_lab.experiments.calibrate`) scores every item with its gold
document in each slot ``s = 0..K-1`` in turn (a paired design: every slot sees the same items, so
item difficulty cancels out of the slot differences) and keeps one
:class:`~bookend_rag_lab.fitting.outcomes.SlotOutcome` per (item, slot). Per slot, over the items:

- ``accuracy``: share of items whose gold answer scores highest among the candidates; 95% Wilson
  interval (:func:`~bookend_rag_lab.stats.wilson_interval`).
- ``candidate_prob``: mean probability of the gold answer among the candidates (a smoother
  accuracy); 95% normal interval (:func:`~bookend_rag_lab.stats.normal_interval`).
- ``logprob``: mean log-probability of the gold answer; 95% normal interval.

:func:`slot_profile` turns one metric into a ``kind="slot"`` profile that placement accepts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from bookend_rag import TabulatedProfile
from bookend_rag.arrays import FloatArray
from bookend_rag_lab.fitting.outcomes import SlotOutcome
from bookend_rag_lab.stats import normal_interval, wilson_interval

__all__ = ["METRICS", "SlotResult", "slot_profile", "summarise"]

#: The metrics a slot table can weigh its slots by.
METRICS = ("accuracy", "candidate_prob")


@dataclass(frozen=True)
class SlotResult:
    """Per-slot outcomes of a calibration run (arrays indexed by slot, slot 1 first)."""

    n_items: int
    correct: npt.NDArray[np.int64]
    accuracy: FloatArray
    accuracy_ci: FloatArray  # [K, 2]
    candidate_prob: FloatArray
    candidate_prob_ci: FloatArray
    logprob: FloatArray
    logprob_ci: FloatArray
    outcomes: tuple[SlotOutcome, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """JSON-ready per-slot figures."""
        return {
            "n_items_per_slot": self.n_items,
            "accuracy": self.accuracy.tolist(),
            "accuracy_ci95": self.accuracy_ci.tolist(),
            "candidate_prob": self.candidate_prob.tolist(),
            "candidate_prob_ci95": self.candidate_prob_ci.tolist(),
            "logprob": self.logprob.tolist(),
            "logprob_ci95": self.logprob_ci.tolist(),
            "chance_accuracy": 1.0 / self.accuracy.size,
        }


def summarise(outcomes: Sequence[SlotOutcome]) -> SlotResult:
    """Per-slot figures of outcomes that share one K (items measured in several cells pool).

    Raises:
        ValueError: when ``outcomes`` is empty, mixes K, or leaves a slot without outcomes.
    """
    if not outcomes:
        raise ValueError("outcomes must not be empty")
    n_slots = outcomes[0].n_docs
    if any(o.n_docs != n_slots for o in outcomes):
        raise ValueError(f"outcomes mix K: {sorted({o.n_docs for o in outcomes})}")
    by_slot: list[list[SlotOutcome]] = [[] for _ in range(n_slots)]
    for o in outcomes:
        by_slot[o.slot].append(o)
    n = len(by_slot[0])
    if any(len(group) != n for group in by_slot):
        raise ValueError("every slot needs the same number of outcomes (a paired design)")
    correct = np.array([[o.correct for o in group] for group in by_slot], dtype=np.int64).T
    gold_prob = np.array([[o.candidate_prob for o in group] for group in by_slot]).T
    gold_logp = np.array([[o.logprob for o in group] for group in by_slot]).T
    acc_ci = np.array([wilson_interval(int(c), n) for c in correct.sum(axis=0)])
    prob_stats = np.array([normal_interval(gold_prob[:, s]) for s in range(n_slots)])
    logp_stats = np.array([normal_interval(gold_logp[:, s]) for s in range(n_slots)])
    return SlotResult(
        n_items=n,
        correct=correct.sum(axis=0),
        accuracy=correct.mean(axis=0),
        accuracy_ci=acc_ci,
        candidate_prob=prob_stats[:, 0],
        candidate_prob_ci=prob_stats[:, 1:],
        logprob=logp_stats[:, 0],
        logprob_ci=logp_stats[:, 1:],
        outcomes=tuple(outcomes),
    )


def slot_profile(
    result: SlotResult, *, metric: str = "accuracy", label: str, metadata: dict[str, Any]
) -> TabulatedProfile:
    """A ``kind="slot"`` profile from a calibration: one weight per slot, the chosen metric.

    Raises:
        ValueError: for an unknown metric, or when the metric is zero in every slot.
    """
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got metric={metric!r}")
    weights = result.accuracy if metric == "accuracy" else result.candidate_prob
    if not np.any(weights > 0):
        raise ValueError(f"metric={metric!r} is zero in every slot; no profile can be formed")
    return TabulatedProfile(
        weights=tuple(weights.tolist()),
        kind="slot",
        label=label,
        metadata={**metadata, "metric": metric, **result.to_json()},
    )
