"""Generated answers through bookend's metric pipeline: SQuAD normalisation, exact match and
contains-accuracy, the metric names and primary metric of a generation-only run, and the call
cache that stores the generated text beside (and compatibly with) today's rows."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from bookend_rag_lab.items.answers import normalize_answer
from bookend_rag_lab.metrics import (
    contains_answer,
    exact_match,
    item_metrics,
    metric_names,
    primary_metric,
)
from bookend_rag_lab.models.cache import CallCache, call_key
from bookend_rag_lab.models.scorer import IN_PROCESS, Capabilities, Continuations, capabilities


@pytest.mark.parametrize(
    ("text", "normalised"),
    [
        ("The Eiffel Tower!", "eiffel tower"),
        ("  an   Apple, a pear\tand THE plum. ", "apple pear and plum"),
        ("Theatre", "theatre"),  # an article only as a whole word
        ("U.S.A.", "usa"),
        ("", ""),
    ],
)
def test_normalisation_is_squads(text: str, normalised: str) -> None:
    assert normalize_answer(text) == normalised


def test_exact_match_and_contains() -> None:
    assert exact_match("The Paris.", "paris")
    assert not exact_match("Paris, France", "Paris")
    assert contains_answer("It is Paris, France.", "paris")
    assert contains_answer("the answer is: 7041", "7041")
    assert not contains_answer("Parisian", "Paris")  # whole words
    assert not contains_answer("London", "Paris")
    assert not contains_answer("anything", "the")  # an answer that normalises to nothing
    # A gold answer of articles only keeps them, in both texts: "A" is matched, not emptied.
    assert exact_match("A.", "A")
    assert not exact_match("The", "A")
    assert contains_answer("The answer is A.", "A")
    assert not contains_answer("The answer is B.", "A")


def test_item_metrics_of_a_generated_answer() -> None:
    answers = ("Berlin", "Paris", "London")
    got = item_metrics(
        Continuations((), (), "Paris is the capital."), 1, candidates=True, answers=answers
    )
    assert got == {"exact_match": 0.0, "accuracy": 1.0}
    exact = item_metrics(Continuations((), (), " paris "), 1, candidates=False, answers=answers)
    assert exact == {"exact_match": 1.0, "accuracy": 1.0}
    with pytest.raises(ValueError, match="give answers"):
        item_metrics(Continuations((), (), "Paris"), 1, candidates=True)
    # Scored results are unchanged by the new argument.
    scored = item_metrics(Continuations((-1.0, -0.1), (False, True)), 1, candidates=True)
    assert set(scored) == {"gold_logprob", "candidate_prob", "accuracy"}


def test_metric_names_and_primary_metric_of_generated_runs() -> None:
    assert metric_names([], generated=True) == ["exact_match", "accuracy"]
    assert primary_metric(["exact_match", "accuracy"]) == "accuracy"
    assert primary_metric(["gold_logprob", "candidate_prob", "accuracy"]) == "candidate_prob"
    assert primary_metric(["gold_logprob", "accuracy"]) == "gold_logprob"


def test_capabilities_come_from_the_scorer() -> None:
    class Plain:
        pass

    class Generating:
        capabilities = Capabilities("generation", logprobs=False, served=True)

    assert capabilities(Plain()) is IN_PROCESS
    assert not IN_PROCESS.generation_only
    assert not IN_PROCESS.served
    assert capabilities(Generating()).generation_only


def test_the_cache_stores_generated_text_and_reads_old_rows(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    # A row as every earlier version wrote it (no "generated"), and a torn last line.
    old = {"key": "k-old", "logprob": [-1.5, -0.5], "greedy": [False, True]}
    path.write_text(json.dumps(old) + "\n" + '{"key": "torn', encoding="utf-8")
    cache = CallCache(path)
    assert cache.get("k-old") == Continuations((-1.5, -0.5), (False, True))
    cache.put("k-new", Continuations((), (), "Paris"))
    cache.put("k-scored", Continuations((-0.25,), (True,)))
    again = CallCache(path)
    assert again.get("k-new") == Continuations((), (), "Paris")
    assert again.get("k-scored") == Continuations((-0.25,), (True,))
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[2:]]
    assert rows[0]["generated"] == "Paris"
    assert "generated" not in rows[1]  # scored rows are written as before


def test_text_prompt_cache_keys_are_unchanged() -> None:
    expected = hashlib.sha256(json.dumps(["m", "p", ["a", "b"]]).encode("utf-8")).hexdigest()
    assert call_key("m", "p", ["a", "b"]) == expected


class _Generating:
    """A generation-only backend: the Scorer members, generation capabilities and settings. It
    answers with the gold text when the prompt's first document holds it, else a wrong one."""

    capabilities = Capabilities("generation", logprobs=False, full_continuation=False, served=True)

    def __init__(self, gold: dict[str, str]) -> None:
        self.model_id = "http://127.0.0.1:9/v1/generator"
        self.calls = 0
        self.gold = gold

    def token_length(self, text: str) -> int:
        return max(1, len(text) // 4)

    def is_cached(self, prompt: object, continuations: object) -> bool:
        return False

    def score(self, prompt: object, continuations: object) -> Continuations:
        self.calls += 1
        text = str(prompt)
        for first_doc, answer in self.gold.items():
            if text.find(first_doc) != -1 and text.find(first_doc) < len(text) // 3:
                return Continuations((), (), f"The answer is {answer}.")
        return Continuations((), (), "I do not know.")

    def settings(self) -> dict[str, object]:
        return {"method": "generation", "logprobs": False}


def test_a_generation_only_run_reports_accuracy_only() -> None:
    from bookend_rag_lab.experiments.evaluate import evaluate
    from bookend_rag_lab.experiments.runspec import RunSpec
    from bookend_rag_lab.items.hard import hard_items

    items = hard_items(4, 3, seed=0)
    assert all(it.gold is not None for it in items)
    gold = {
        it.documents[it.gold]: it.continuations[it.answer_index]
        for it in items
        if it.gold is not None
    }
    scorer = _Generating(gold)
    result = evaluate(
        RunSpec(items, retrievers=["bm25"]),
        scorer,
        theory="smollm2-135m",
        random_draws=1,
        oracle=False,
        progress=False,
    )
    report = result.report
    assert report["metrics"] == ["exact_match", "accuracy"]
    assert report["primary_metric"] == "accuracy"
    assert report["settings"]["endpoint"] == {"method": "generation", "logprobs": False}
    values = {r["accuracy"] for row in report["items"] for r in row["results"].values()} | {
        r["exact_match"] for row in report["items"] for r in row["results"].values()
    }
    assert values <= {0.0, 1.0}
    accuracies = [r["accuracy"] for row in report["items"] for r in row["results"].values()]
    assert 0.0 in accuracies  # both outcomes occur: the match is real
    assert 1.0 in accuracies
    assert all(r["exact_match"] == 0.0 for row in report["items"] for r in row["results"].values())
    assert "**Accuracy only**" in result.markdown


def test_a_generation_only_run_reuses_its_own_report(tmp_path: Path) -> None:
    """``--reuse`` of a generation-only report takes its matched answers: only the first
    ``CHECKED`` trials are asked again, as for a log-probability report."""
    from bookend_rag_lab.experiments.evaluate import evaluate
    from bookend_rag_lab.experiments.reuse import CHECKED
    from bookend_rag_lab.experiments.runspec import RunSpec
    from bookend_rag_lab.items.hard import hard_items

    items = hard_items(4, 3, seed=0)
    gold = {it.documents[it.gold]: it.continuations[it.answer_index] for it in items if it.gold}
    spec = RunSpec(items, retrievers=["bm25"])
    settings: dict[str, Any] = {"theory": "smollm2-135m", "random_draws": 1, "oracle": False}
    first = _Generating(gold)
    evaluate(spec, first, progress=False, out_dir=tmp_path, **settings)
    again = _Generating(gold)
    result = evaluate(spec, again, progress=False, reuse=tmp_path / "report.json", **settings)
    assert first.calls > CHECKED
    assert again.calls == CHECKED
    assert result.report["metrics"] == ["exact_match", "accuracy"]
