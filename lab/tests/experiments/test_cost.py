"""The cost of a run, before it is spent: the estimate of a plan, its cap by the budget, the token
budget itself, and dry runs of eval and tune that call no model (tune's but to time a few)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from bookend_rag_lab.experiments.budget import Budget, Cost, request_tokens
from bookend_rag_lab.experiments.cost import Estimate, estimate
from bookend_rag_lab.experiments.wall_time import TIMED_CALLS
from bookend_rag_lab.models.cache import CallCache
from bookend_rag_lab.models.scorer import ChatPrompt, Continuations, Prompt, answer_text


class _Words:
    """A scorer whose tokens are words; it answers one prompt from its cache."""

    model_id = "words"

    def __init__(self) -> None:
        self.calls = 0
        self.cache = CallCache()

    def token_length(self, text: str) -> int:
        return len(text.split())

    def is_cached(self, prompt: Prompt, continuations: Sequence[str]) -> bool:
        return prompt == "cached prompt"

    def score(self, prompt: Prompt, continuations: Sequence[str]) -> Continuations:
        self.calls += 1
        return Continuations(tuple(0.0 for _ in continuations), tuple(True for _ in continuations))


def test_a_plan_is_priced_by_its_uncached_prompts_and_their_tokens() -> None:
    scorer = _Words()
    plan: dict[Prompt, Sequence[str]] = {
        "one two three": ("a", "b c"),
        "cached prompt": ("a",),
        ChatPrompt((("user", "four five"),)): ("a",),
    }
    found = estimate(scorer, plan, upper_bound=False)
    # 3 + (1 + 2) words, then the chat's JSON text ('{"chat": [["user", "four five"]]}': 4) + 1.
    assert found == Estimate(3, 2, 6 + 5, False, "words")
    assert request_tokens(scorer, "x", ["y"]) == 2
    assert answer_text("x", "y") == " y"
    capped = found.capped(max_calls=1, max_tokens=None)
    assert (capped.calls, capped.prompt_tokens, capped.upper_bound) == (1, 6, True)
    assert found.capped(None, 4).prompt_tokens == 4
    assert found.capped(None, None) == found
    assert "at most 1 model calls (the rest are in the call cache or beyond the budget)" in (
        capped.markdown("tune")
    )
    assert "at most" not in found.markdown("eval")


def test_the_token_budget_stops_work_and_its_shares_spend_from_one_meter() -> None:
    budget = Budget(_Words(), max_tokens=10)
    measure = budget.share(0.5)
    assert measure.take(Cost(1, 5))
    assert not measure.take(Cost(1, 1))  # its half (5 tokens) is spent
    assert budget.tokens == 5
    assert budget.take(Cost(3, 5))
    assert not budget.affords(Cost(0, 1))
    assert budget.stopped_by() == "tokens"
    assert Budget(_Words(), max_calls=1).stopped_by() == "calls"


def test_dry_runs_call_no_model_but_the_calls_that_time_the_run(tmp_path: Path) -> None:
    from bookend_rag_lab.experiments.evaluate import evaluate
    from bookend_rag_lab.experiments.runspec import RunSpec
    from bookend_rag_lab.experiments.tune import tune

    items = tmp_path / "items.jsonl"
    rows = [
        {
            "question": f"q{i}?",
            "documents": [
                {"text": f"doc {c} {i}", "score": s} for c, s in zip("abc", (2, 1, 0), strict=True)
            ],
            "answer": f"a{i}",
            "candidates": [f"a{i}", "b"],
        }
        for i in range(8)
    ]
    items.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    scorer = _Words()
    run = RunSpec(items=items)
    result = evaluate(run, scorer, theory="llama-3.1-8b", progress=False, dry_run=True)
    assert scorer.calls == 0
    cost = result.report["dry_run"]
    assert cost["calls"] == cost["requests"] > 0
    assert not cost["upper_bound"]
    tuned = tune(run, scorer, theory="llama-3.1-8b", progress=False, dry_run=True, max_calls=5)
    assert scorer.calls == TIMED_CALLS  # the calls that time it, nothing judged
    dry = tuned.report["dry_run"]
    assert dry["calls"] == 5
    assert dry["upper_bound"]
    assert not tuned.decision.switched
    # Its wall time: scoring priced per prompt token of the bound, no answers to generate.
    timed = dry["wall_time"]
    assert (timed["timed"], timed["seconds_per_answer"], timed["answers"]) == (TIMED_CALLS, None, 0)
    assert timed["scoring"] == pytest.approx(timed["seconds_per_token"] * dry["prompt_tokens"])
    assert timed["total"] == pytest.approx(timed["loading"] + timed["scoring"])
    assert "Wall time on this machine: about " in tuned.markdown
    with pytest.raises(ValueError, match="max_tokens must be"):
        tune(run, scorer, theory="llama-3.1-8b", max_tokens=0)


def test_a_budget_counts_every_distinct_prompt_asked_cached_or_not() -> None:
    budget = Budget(_Words())
    first = budget.cost({"one two": ("a",), "cached prompt": ("a",)})
    assert (first.calls, first.tokens) == (1, 3)  # the cached prompt costs nothing
    assert budget.take(first)
    assert budget.take(budget.cost({"one two": ("a",), "three": ("b",)}))
    # Three distinct prompts asked ("one two" twice), with their tokens: 3 + 3 + 2.
    assert (budget.requests, budget.request_tokens) == (3, 8)
    assert budget.tokens == 3 + 3 + 2  # uncached each time asked (this stub never caches it)
