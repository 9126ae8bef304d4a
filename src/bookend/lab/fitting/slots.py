"""Behavioural probe: does the model use a fact from a given slot? Per-slot accuracy and profile.

Every probe item (:mod:`bookend.lab.items.lookup`) is rendered with its gold document in each slot
``s = 0..K-1`` in turn (a paired design: every slot sees the same items, so item difficulty cancels
out of the slot differences). Each candidate answer ``c`` (the values of all K documents) is scored
by its total log-probability after the prompt, ``sum_t ln P(c_t | prompt, c_<t)``. Per slot:

- ``accuracy``: share of items whose gold answer has the highest score; 95% Wilson interval.
- ``candidate_prob``: mean softmax probability of the gold answer among the candidates
  (a smoother accuracy); 95% normal interval.
- ``logprob``: mean log-probability of the gold answer; 95% normal interval.

The prompt is scored once with a key-value cache, which is then repeated for the K candidates,
so an item costs one prompt pass plus one short batched pass per slot.

Every (item, slot) is also kept as a :class:`~bookend.lab.fitting.outcomes.SlotOutcome` with the
gold document's token span inside the documents block, which the fitted profile
(:mod:`bookend.lab.fitting.profile`) is fitted to. A token offset is the token count of the
prompt's text before that character, so a boundary token shared by two spans may be off by one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from bookend.arrays import FloatArray
from bookend.lab.fitting.outcomes import SlotOutcome
from bookend.lab.items.lookup import ProbeItem
from bookend.lab.models.local import score_continuations
from bookend.profile import TabulatedProfile

__all__ = [
    "METRICS",
    "SlotResult",
    "calibrate",
    "score_candidates",
    "slot_profile",
    "summarise",
    "wilson_interval",
]

METRICS = ("accuracy", "candidate_prob")
_Z95 = 1.959963984540054


def wilson_interval(successes: int, trials: int, z: float = _Z95) -> tuple[float, float]:
    """Wilson score interval ``(p + z²/2n ± z sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)``."""
    if trials < 1:
        raise ValueError(f"trials must be >= 1, got trials={trials!r}")
    p = successes / trials
    denom = 1.0 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def _mean_interval(values: FloatArray) -> tuple[float, float, float]:
    mean = float(values.mean())
    half = (
        _Z95 * float(values.std(ddof=1)) / math.sqrt(values.size) if values.size > 1 else math.inf
    )
    return mean, mean - half, mean + half


def score_candidates(lm: Any, tokenizer: Any, prompt: str, candidates: Sequence[str]) -> FloatArray:
    """Total log-probability of each ``" " + candidate`` as the continuation of ``prompt``."""
    return np.array(score_continuations(lm, tokenizer, prompt, candidates).logprob)


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


def calibrate(
    lm: Any,
    tokenizer: Any,
    items: Sequence[ProbeItem],
    *,
    progress: Callable[[int], None] | None = None,
) -> SlotResult:
    """Score every item with its gold document in every slot (see the module docstring)."""
    if not items:
        raise ValueError("items must not be empty")
    n_slots = len(items[0].documents)
    if any(len(item.documents) != n_slots for item in items):
        raise ValueError("all items must have the same number of documents")
    outcomes = []
    for item in items:
        for slot in range(n_slots):
            prompt, spans = item.rendered(item.order_with_gold_at(slot))
            scores = score_candidates(lm, tokenizer, prompt, item.answers)
            probs = np.exp(scores - scores.max())
            probs /= probs.sum()
            block, start, end, stop = (
                len(tokenizer.encode(prompt[:c]))
                for c in (spans[0][0], spans[slot][0], spans[slot][1], spans[-1][1])
            )
            outcomes.append(
                SlotOutcome(
                    item_id=item.item_id,
                    family=item.family,
                    n_docs=n_slots,
                    slot=slot,
                    gold_start=start - block,
                    gold_end=end - block,
                    n_tokens=stop - block,
                    prompt_tokens=len(tokenizer.encode(prompt)),
                    correct=bool(np.argmax(scores) == item.gold),
                    candidate_prob=float(probs[item.gold]),
                    logprob=float(scores[item.gold]),
                    filler=item.filler,
                )
            )
            if progress is not None:
                progress(1)
    return summarise(outcomes)


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
    prob_stats = np.array([_mean_interval(gold_prob[:, s]) for s in range(n_slots)])
    logp_stats = np.array([_mean_interval(gold_logp[:, s]) for s in range(n_slots)])
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
