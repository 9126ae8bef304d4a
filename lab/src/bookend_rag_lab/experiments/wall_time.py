"""The wall time of a run, estimated before it is spent from a few timed calls (``--dry-run``).

A dry run prices a plan in requests and prompt tokens (:mod:`~bookend_rag_lab.experiments.cost`);
what a user on a CPU waits for is time. :func:`time_calls` makes a few of the plan's model calls
(:data:`TIMED_CALLS` scoring calls and one batch of the probes' answers, as the run answers a
retrieval's documents together; real calls, kept in the call cache like any other, so the run
does not make them again) and scales them up:

    seconds ≈ loading + answers · (seconds per answer) + scoring tokens · (seconds per prompt token)

Scoring is priced per prompt token because a call's time grows with its prompt (the prompts of a
plan differ in length); an answer is priced per answer of a batch, since it is one document long
and a batch's time is its generation steps'. The scoring figure prices the plan's bound, so a
race that stops early takes less.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from bookend_rag_lab.experiments.budget import request_tokens
from bookend_rag_lab.models.scorer import Prompt, Scorer, generate_all

__all__ = ["TIMED_CALLS", "WallTime", "time_calls"]

#: Calls of each kind a dry run times.
TIMED_CALLS = 3


@dataclass(frozen=True)
class WallTime:
    """A run's wall time, estimated.

    Attributes:
        loading: seconds the model took to load (measured).
        seconds_per_token: scoring seconds per prompt token, from the timed calls (``None``: none
            was timed, every scoring call being cached).
        seconds_per_answer: seconds per answer generated, from the timed answers (``None``: none
            to generate or time).
        scoring: estimated seconds of the scoring calls.
        answers: estimated seconds of the answers.
        timed: the calls timed.
    """

    loading: float
    seconds_per_token: float | None
    seconds_per_answer: float | None
    scoring: float
    answers: float
    timed: int

    @property
    def total(self) -> float:
        """Loading, answers and scoring together."""
        return self.loading + self.answers + self.scoring

    def to_json(self) -> dict[str, Any]:
        """The dry run's ``wall_time`` entry, with its ``total``."""
        return {**asdict(self), "total": self.total}

    def markdown(self) -> str:
        """One sentence."""
        parts = [f"loading {self.loading:.0f} s"]
        if self.seconds_per_answer is not None:
            parts.append(
                f"answers {self.answers / 60:.1f} min at {self.seconds_per_answer:.2f} s each"
            )
        if self.seconds_per_token is not None:
            parts.append(
                f"scoring {self.scoring / 60:.1f} min at "
                f"{1000 * self.seconds_per_token:.2f} ms per prompt token"
            )
        return (
            f"Wall time on this machine: about {self.total / 60:.1f} min ({', '.join(parts)}), "
            f"from {self.timed} timed calls; a race that settles early takes less.\n"
        )


def time_calls(
    scorer: Scorer,
    plan: Mapping[Prompt, Sequence[str]],
    scoring_tokens: int,
    answers: Sequence[Prompt],
    answer_tokens: int,
    *,
    loading: float,
    batch: int,
    calls: int = TIMED_CALLS,
) -> WallTime:
    """Time ``calls`` uncached scoring calls of ``plan`` (the median seconds per prompt token, so
    that a first call's warm-up does not count) and one batch of ``batch`` of the ``answers``
    (generation prompts, at most ``answer_tokens`` tokens each, answered together as a run
    answers one retrieval's documents), then scale to the plan's ``scoring_tokens`` and every
    answer (module docstring)."""
    todo = [(p, c) for p, c in plan.items() if not scorer.is_cached(p, c)][:calls]
    rates = []
    for prompt, continuations in todo:
        tokens = request_tokens(scorer, prompt, continuations)
        started = time.perf_counter()
        scorer.score(prompt, continuations)
        rates.append((time.perf_counter() - started) / max(tokens, 1))
    per_token = statistics.median(rates) if rates else None
    timed = list(answers[:batch])
    per_answer = None
    if timed:
        started = time.perf_counter()
        generate_all(scorer, timed, answer_tokens)
        per_answer = (time.perf_counter() - started) / len(timed)
    return WallTime(
        loading=loading,
        seconds_per_token=per_token,
        seconds_per_answer=per_answer,
        scoring=0.0 if per_token is None else per_token * scoring_tokens,
        answers=0.0 if per_answer is None else per_answer * len(answers),
        timed=len(todo) + len(timed),
    )
