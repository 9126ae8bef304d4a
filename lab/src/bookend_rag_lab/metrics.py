"""Per-item metrics of one scored prompt, computed once for every experiment.

For a prompt scored with continuations ``c_1..c_K`` (log-probabilities ``l_k``, the gold answer at
index ``g``):

- ``gold_logprob = l_g``: the gold answer's total log-probability (nats);
- ``candidate_prob = exp(l_g) / sum_k exp(l_k)``: its probability among the candidates (a softmax
  over the candidates' total log-probabilities), when the continuations are candidates;
- ``accuracy``: 1 when the gold answer scores highest among the candidates (``argmax_k l_k = g``,
  the first maximum on ties); with the answer alone, 1 when greedy decoding reproduces it.

A generation-only backend (a chat API without log-probabilities) gives the generated text instead
(:attr:`~bookend_rag_lab.models.scorer.Continuations.generated`); its metrics are accuracy only,
after SQuAD's answer normalisation
(:func:`~bookend_rag_lab.items.answers.normalize_answer`: lowercase, punctuation and the
articles a/an/the removed, whitespace collapsed; the articles stay when removing them would empty
the gold answer, as for the answer "A"):

- ``exact_match``: 1 when the normalised output equals the normalised gold answer;
- ``accuracy``: 1 when the normalised gold answer appears in the normalised output (Liu et al.'s
  accuracy in "Lost in the Middle": the output contains the answer), as whole words.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from bookend_rag.arrays import FloatArray
from bookend_rag_lab.items.answers import normalize_answer
from bookend_rag_lab.items.item import Item
from bookend_rag_lab.models.scorer import Continuations

__all__ = [
    "GENERATED_METRICS",
    "candidate_probabilities",
    "contains_answer",
    "exact_match",
    "item_metrics",
    "metric_names",
    "primary_metric",
]

#: The metrics of generated answers (accuracy only: no log-probabilities).
GENERATED_METRICS = ("exact_match", "accuracy")


def _normalised(output: str, gold: str) -> tuple[str, str]:
    """Both texts normalised alike; the articles stay in both when removing them would empty the
    gold answer (a gold answer "A", a blood type or an option letter, would match nothing)."""
    articles = bool(normalize_answer(gold))
    return normalize_answer(output, articles=articles), normalize_answer(gold, articles=articles)


def exact_match(output: str, gold: str) -> bool:
    """The normalised output equals the normalised gold answer."""
    have, want = _normalised(output, gold)
    return have == want


def contains_answer(output: str, gold: str) -> bool:
    """The normalised gold answer appears in the normalised output, as whole words (an empty
    gold answer is never contained)."""
    have, want = _normalised(output, gold)
    return bool(want) and f" {want} " in f" {have} "


def candidate_probabilities(logprob: npt.ArrayLike) -> FloatArray:
    """``exp(l_k - max l) / sum_j exp(l_j - max l)``: the softmax over the candidates."""
    scores = np.asarray(logprob, dtype=np.float64)
    probs = np.exp(scores - scores.max())
    return np.asarray(probs / probs.sum(), dtype=np.float64)


def item_metrics(
    result: Continuations,
    answer_index: int,
    *,
    candidates: bool,
    answers: Sequence[str] | None = None,
) -> dict[str, float]:
    """``gold_logprob``, ``candidate_prob`` (with ``candidates``) and ``accuracy`` of one scored
    prompt whose gold answer is continuation ``answer_index`` (module docstring); for a generated
    result, ``exact_match`` and ``accuracy`` against ``answers[answer_index]``.

    Raises:
        ValueError: for a generated result without ``answers``.
    """
    if result.generated is not None:
        if answers is None:
            raise ValueError("a generated answer is matched against the gold text: give answers")
        gold = answers[answer_index]
        return {
            "exact_match": float(exact_match(result.generated, gold)),
            "accuracy": float(contains_answer(result.generated, gold)),
        }
    scores = np.asarray(result.logprob, dtype=np.float64)
    out = {"gold_logprob": float(scores[answer_index])}
    if candidates:
        out["candidate_prob"] = float(candidate_probabilities(scores)[answer_index])
        out["accuracy"] = float(int(np.argmax(scores)) == answer_index)
    else:
        out["accuracy"] = float(result.greedy[answer_index])
    return out


def metric_names(items: Sequence[Item], *, generated: bool = False) -> list[str]:
    """The metrics every item supports, in report order (``candidate_prob`` only when every item
    has candidates); with ``generated`` (a generation-only backend), :data:`GENERATED_METRICS`."""
    if generated:
        return list(GENERATED_METRICS)
    if all(item.candidates is not None for item in items):
        return ["gold_logprob", "candidate_prob", "accuracy"]
    return ["gold_logprob", "accuracy"]


def primary_metric(metrics: Sequence[str]) -> str:
    """The score the comparisons use: ``candidate_prob`` when present, else ``gold_logprob``, else
    (generated answers) ``accuracy``."""
    for name in ("candidate_prob", "gold_logprob"):
        if name in metrics:
            return name
    return "accuracy"
