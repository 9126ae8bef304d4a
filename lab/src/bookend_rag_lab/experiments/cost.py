"""The cost of a run, stated before it is spent (``--dry-run``): requests and prompt tokens.

A hosted API bills the prompt tokens of every request, so the cost of a decision is what to
know before making it. :func:`estimate` prices a plan (prompt -> continuations) on the scorer's
tokenizer: the distinct prompts, those not yet in the call cache (the calls a run would make) and
their tokens (:func:`~bookend_rag_lab.experiments.budget.request_tokens`). For ``bookend eval`` the
plan is the run's own (exact, the oracle's one extra prompt per item aside); for ``bookend tune``
it is an upper bound (every candidate on every item; the race eliminates candidates and stops at
the budget), capped by ``--max-calls`` and ``--max-tokens``. Self-answer probes add their answers'
generation requests (:func:`answers_estimate`), and their scoring is priced with placeholder
answers of the longest length generated (so an upper bound too). A run generates the answers
before it scores, outside the budget, so :class:`DryRun` states the two apart, each with its
bound, and their sum.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from bookend_rag_lab.experiments.budget import request_tokens
from bookend_rag_lab.experiments.wall_time import WallTime
from bookend_rag_lab.models.scorer import Prompt, Scorer

__all__ = ["DryRun", "Estimate", "answers_estimate", "estimate"]


@dataclass(frozen=True)
class Estimate:
    """What a plan would spend.

    Attributes:
        requests: distinct prompts the plan asks for.
        calls: of those, the ones not in the call cache (model calls).
        prompt_tokens: the prompt tokens of those calls.
        upper_bound: whether the figures are a bound rather than the plan itself.
        tokenizer: whose tokens are counted (the scorer's model id).
        over_budget: whether the budget left calls of the plan out (:meth:`capped`).
    """

    requests: int
    calls: int
    prompt_tokens: int
    upper_bound: bool
    tokenizer: str
    over_budget: bool = False

    def __add__(self, other: Estimate) -> Estimate:
        """Both plans' spending together (a bound when either is)."""
        return Estimate(
            self.requests + other.requests,
            self.calls + other.calls,
            self.prompt_tokens + other.prompt_tokens,
            self.upper_bound or other.upper_bound,
            self.tokenizer,
            self.over_budget or other.over_budget,
        )

    def capped(self, max_calls: int | None, max_tokens: int | None) -> Estimate:
        """The estimate within a run's budget: a run stops when either limit is reached."""
        calls = self.calls if max_calls is None else min(self.calls, max_calls)
        tokens = self.prompt_tokens if max_tokens is None else min(self.prompt_tokens, max_tokens)
        if calls < self.calls and self.calls:  # the tokens of the calls the budget allows
            tokens = min(tokens, round(self.prompt_tokens * calls / self.calls))
        over = (calls, tokens) != (self.calls, self.prompt_tokens)
        return Estimate(
            self.requests, calls, tokens, self.upper_bound or over, self.tokenizer, over
        )

    def to_json(self) -> dict[str, Any]:
        """The report's ``dry_run`` entry."""
        return asdict(self)

    def markdown(self, command: str, timed: int = 0) -> str:
        """One paragraph for the terminal; ``timed``: the calls made to time the run."""
        at_most = "at most " if self.upper_bound else ""
        rest = "in the call cache or beyond the budget" if self.over_budget else "in the call cache"
        made = (
            f"Nothing was judged; {timed} calls timed the run (the call cache keeps them)."
            if timed
            else "Nothing was scored."
        )
        return (
            f"## bookend {command} --dry-run\n\n"
            f"{self.requests:,} distinct prompts; {at_most}{self.calls:,} model calls (the rest "
            f"are {rest}) and {at_most}{self.prompt_tokens:,} prompt tokens "
            f"(counted by {self.tokenizer}'s tokenizer). {made}\n"
        )


@dataclass(frozen=True)
class DryRun:
    """What a dry run states: the scoring, and before it the self-answer probes' answers.

    Attributes:
        scoring: the scoring calls (within the budget, where the command has one).
        answers: the answers' generation requests (empty: none), one per document of the
            ``probed`` retrievals; the budget does not bound them.
        probed: the retrievals whose answers are priced.
        most_answers: the most answers a run would generate (more than ``answers.calls`` where
            ``--items`` stops the reading and a retrieval may give no probe).
        budgeted: whether the command has a budget (``--max-calls``, ``--max-tokens``).
        wall_time: the run's time estimated from a few timed calls
            (:mod:`~bookend_rag_lab.experiments.wall_time`), where the command times them.
    """

    scoring: Estimate
    answers: Estimate | None = None
    probed: int = 0
    most_answers: int = 0
    budgeted: bool = False
    wall_time: WallTime | None = None

    @property
    def total(self) -> Estimate:
        """Both parts together."""
        return self.scoring if self.answers is None else self.answers + self.scoring

    def to_json(self) -> dict[str, Any]:
        """The report's ``dry_run`` entry: the total's figures, then each part's."""
        answers = None if self.answers is None else self.answers.to_json()
        if answers is not None:
            answers |= {"retrievals": self.probed, "most_calls": self.most_answers}
        timed = None if self.wall_time is None else self.wall_time.to_json()
        return self.total.to_json() | {
            "answers": answers,
            "scoring": self.scoring.to_json(),
            "wall_time": timed,
        }

    def markdown(self, command: str) -> str:
        """The total's paragraph, then how it splits between answers and scoring, then the
        estimated wall time."""
        text = self.total.markdown(command, 0 if self.wall_time is None else self.wall_time.timed)
        if self.wall_time is not None:
            text += f"\n{self.wall_time.markdown()}"
        if self.answers is None:
            return text
        a, s = self.answers, self.scoring
        retrievals = "retrieval" if self.probed == 1 else "retrievals"
        more = (
            f" (up to {self.most_answers:,} if some give no probe and the run reads on)"
            if self.most_answers > a.calls
            else ""
        )
        at_most = "at most " if s.upper_bound else ""
        budget = (
            " --max-calls and --max-tokens bound the scoring only: the answers come first, "
            "whatever the budget."
            if self.budgeted
            else ""
        )
        return (
            f"{text}\nOf these, {a.calls:,} calls ({a.prompt_tokens:,} prompt tokens) generate "
            f"the probes' answers, one per document of the {self.probed:,} {retrievals} "
            f"probed{more}, and {at_most}{s.calls:,} calls ({at_most}{s.prompt_tokens:,} prompt "
            f"tokens) score the orders.{budget}\n"
        )


def estimate(
    scorer: Scorer,
    plan: Mapping[Prompt, Sequence[str]],
    *,
    upper_bound: bool,
    tokens: Mapping[Prompt, int] | None = None,
) -> Estimate:
    """Price ``plan`` (prompt -> continuations) on ``scorer``'s tokenizer and call cache;
    ``tokens`` holds requests already counted (:func:`request_tokens`), which are not counted
    again."""
    known = tokens or {}
    todo = [(p, c) for p, c in plan.items() if not scorer.is_cached(p, c)]
    spent = sum(known[p] if p in known else request_tokens(scorer, p, c) for p, c in todo)
    return Estimate(len(plan), len(todo), spent, upper_bound, scorer.model_id)


def answers_estimate(scorer: Scorer, prompts: Sequence[Prompt]) -> Estimate:
    """What generating the self-answer probes' answers costs: one request per distinct prompt
    (each one document long), priced by its prompt tokens (the generated tokens, at most
    :data:`~bookend_rag_lab.items.self_answer.ANSWER_TOKENS` each, are billed as output).
    Empty for no prompts."""
    return estimate(scorer, dict.fromkeys(prompts, ()), upper_bound=False)
