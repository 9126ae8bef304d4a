"""Per-item metrics of one scored prompt, computed once for every experiment.

For a prompt scored with continuations ``c_1..c_K`` (log-probabilities ``l_k``, the gold answer at
index ``g``):

- ``gold_logprob = l_g``: the gold answer's total log-probability (nats);
- ``candidate_prob = exp(l_g) / sum_k exp(l_k)``: its probability among the candidates (a softmax
  over the candidates' total log-probabilities), when the continuations are candidates;
- ``accuracy``: 1 when the gold answer scores highest among the candidates (``argmax_k l_k = g``,
  the first maximum on ties); with the answer alone, 1 when greedy decoding reproduces it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from bookend.arrays import FloatArray
from bookend.lab.items.item import Item
from bookend.lab.models.scorer import Continuations

__all__ = ["candidate_probabilities", "item_metrics", "metric_names", "primary_metric"]


def candidate_probabilities(logprob: npt.ArrayLike) -> FloatArray:
    """``exp(l_k - max l) / sum_j exp(l_j - max l)``: the softmax over the candidates."""
    scores = np.asarray(logprob, dtype=np.float64)
    probs = np.exp(scores - scores.max())
    return np.asarray(probs / probs.sum(), dtype=np.float64)


def item_metrics(result: Continuations, answer_index: int, *, candidates: bool) -> dict[str, float]:
    """``gold_logprob``, ``candidate_prob`` (with ``candidates``) and ``accuracy`` of one scored
    prompt whose gold answer is continuation ``answer_index`` (module docstring)."""
    scores = np.asarray(result.logprob, dtype=np.float64)
    out = {"gold_logprob": float(scores[answer_index])}
    if candidates:
        out["candidate_prob"] = float(candidate_probabilities(scores)[answer_index])
        out["accuracy"] = float(int(np.argmax(scores)) == answer_index)
    else:
        out["accuracy"] = float(result.greedy[answer_index])
    return out


def metric_names(items: Sequence[Item]) -> list[str]:
    """The metrics every item supports, in report order (``candidate_prob`` only when every item
    has candidates)."""
    if all(item.candidates is not None for item in items):
        return ["gold_logprob", "candidate_prob", "accuracy"]
    return ["gold_logprob", "accuracy"]


def primary_metric(metrics: Sequence[str]) -> str:
    """The continuous score the comparisons use: ``candidate_prob`` when present, else
    ``gold_logprob``."""
    return "candidate_prob" if "candidate_prob" in metrics else "gold_logprob"
