"""The budget of a run that chooses by measurement: model calls, prompt tokens, minutes, or all.

Calls are the scorer's cache misses since the budget started (a cached answer is free, so a
resumed run spends nothing on what it already measured); tokens are the prompt tokens of those
calls (:func:`request_tokens`: what a hosted API bills as input); minutes are wall time since then.
A step prices its next unit of work (:meth:`Budget.cost`) and takes it only when it still fits
(:meth:`Budget.take`, which then counts its tokens as spent).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from bookend_rag_lab.models import Scorer
from bookend_rag_lab.models.scorer import Prompt, answer_text, prompt_text

__all__ = ["Budget", "Cost", "request_tokens"]


def request_tokens(scorer: Scorer, prompt: Prompt, continuations: Sequence[str]) -> int:
    """The prompt tokens of one call under the scorer's tokenizer: the prompt (a chat's messages
    as their JSON text, which slightly overcounts the template's role markers), plus each
    continuation, which a next-token scorer sends as context too (an upper bound for a scorer
    that reads only the first token)."""
    tokens = scorer.token_length(prompt_text(prompt))
    return tokens + sum(scorer.token_length(answer_text(prompt, c)) for c in continuations)


@dataclass(frozen=True)
class Cost:
    """What a unit of work would spend: model calls (uncached requests) and their tokens; and
    every prompt it asks, cached or not, with its tokens (what it costs on a cold cache)."""

    calls: int
    tokens: int
    asked: Mapping[Prompt, int] = field(default_factory=dict)

    def __add__(self, other: Cost) -> Cost:
        return Cost(
            self.calls + other.calls, self.tokens + other.tokens, {**self.asked, **other.asked}
        )


@dataclass
class _Meter:
    """Tokens spent, and every distinct prompt asked with its tokens, shared by a budget and its
    shares."""

    tokens: int = 0
    asked: dict[Prompt, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Budget:
    """At most ``max_calls`` model calls, ``max_tokens`` prompt tokens and ``minutes`` of wall
    time (``None``: no limit).

    Attributes:
        scorer: the scorer whose calls count.
        max_calls, max_tokens, minutes: the limits.
        started: ``time.perf_counter()`` when the budget started.
        calls_before: the scorer's calls when it started.
    """

    scorer: Scorer
    max_calls: int | None = None
    minutes: float | None = None
    started: float = field(default_factory=time.perf_counter)
    calls_before: int = -1
    max_tokens: int | None = None
    meter: _Meter = field(default_factory=_Meter)

    def __post_init__(self) -> None:
        if self.calls_before < 0:
            object.__setattr__(self, "calls_before", self.scorer.calls)

    @property
    def calls(self) -> int:
        """Model calls made since the budget started."""
        return self.scorer.calls - self.calls_before

    @property
    def tokens(self) -> int:
        """Prompt tokens of the work taken since the budget started (shared with its shares)."""
        return self.meter.tokens

    @property
    def requests(self) -> int:
        """Distinct prompts of the work taken, cached or not: the calls a cold cache would
        make."""
        return len(self.meter.asked)

    @property
    def request_tokens(self) -> int:
        """The prompt tokens of :attr:`requests`."""
        return sum(self.meter.asked.values())

    @property
    def seconds(self) -> float:
        """Wall time since the budget started."""
        return time.perf_counter() - self.started

    def cost(self, requests: Mapping[Prompt, Sequence[str]]) -> Cost:
        """What ``requests`` (prompt -> continuations) would spend: the uncached ones, and all."""
        tokens = {p: request_tokens(self.scorer, p, c) for p, c in requests.items()}
        todo = [p for p, c in requests.items() if not self.scorer.is_cached(p, c)]
        return Cost(len(todo), sum(tokens[p] for p in todo), tokens)

    def affords(self, cost: Cost) -> bool:
        """Whether ``cost`` stays within the calls and the tokens and the time is not up."""
        if self.max_calls is not None and self.calls + cost.calls > self.max_calls:
            return False
        if self.max_tokens is not None and self.tokens + cost.tokens > self.max_tokens:
            return False
        return self.minutes is None or self.seconds < 60.0 * self.minutes

    def take(self, cost: Cost) -> bool:
        """Whether ``cost`` fits (:meth:`affords`); if so its tokens count as spent."""
        if not self.affords(cost):
            return False
        self.meter.tokens += cost.tokens
        self.meter.asked.update(cost.asked)
        return True

    def share(self, fraction: float) -> Budget:
        """The first ``fraction`` of this budget (same start, same meter): of its calls, tokens
        and minutes."""
        calls = None if self.max_calls is None else int(self.max_calls * fraction)
        tokens = None if self.max_tokens is None else int(self.max_tokens * fraction)
        minutes = None if self.minutes is None else self.minutes * fraction
        return replace(self, max_calls=calls, max_tokens=tokens, minutes=minutes)

    def stopped_by(self) -> str:
        """Which limit ended the run: ``"calls"``, ``"tokens"`` or ``"minutes"``."""
        if self.minutes is not None and self.seconds >= 60.0 * self.minutes:
            return "minutes"
        if self.max_tokens is not None and not self.affords(Cost(0, 1)):
            return "tokens"
        return "calls"
