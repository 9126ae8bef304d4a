"""Self-answer probes: the user's question and documents kept whole, the model's own answers from
each document as the candidates, the retriever's first document's answer as the target.

The invariants are checked on generated retrievals (hypothesis) with a stand-in for the model (a
table from each document to its answer; the real model's answers are in the slow tests): the item
is the record unaltered, every generation asks of one document alone, the target's first, and the
candidates are distinct. Each skip reason is checked on a retrieval built to trigger it.
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given
from hypothesis import strategies as st

from bookend_rag.retrievals import RecordedDocument, RetrievalRecord
from bookend_rag_lab.items.answers import answer_key
from bookend_rag_lab.items.probes import PROBE_FAMILY, retriever_scores
from bookend_rag_lab.items.self_answer import (
    SKIP_REASONS,
    answer_prompts,
    self_answer_items,
    short_answer,
)
from bookend_rag_lab.items.template import BOOKEND_PROMPT
from bookend_rag_lab.models.scorer import Prompt


def _record(
    texts: Sequence[str], scores: Sequence[float | None] | None = None, question: str | None = "q?"
) -> RetrievalRecord:
    given_scores = scores or [None] * len(texts)
    documents = [
        RecordedDocument(text=t, score=s) for t, s in zip(texts, given_scores, strict=True)
    ]
    return RetrievalRecord(question=question, documents=documents)


class _Model:
    """Answers from one document by a table (document text -> generated text), and remembers
    what it was asked."""

    def __init__(self, table: dict[str, str]) -> None:
        self.table = table
        self.asked: list[Prompt] = []

    def __call__(self, prompts: Sequence[Prompt]) -> list[str]:
        return [self._one(p) for p in prompts]

    def _one(self, prompt: Prompt) -> str:
        self.asked.append(prompt)
        assert isinstance(prompt, str)
        found = [a for text, a in self.table.items() if f"Document 1: {text}\n" in prompt]
        assert len(found) == 1, "each generation asks of one document alone"
        return found[0]


_TEXTS = st.lists(
    st.text(alphabet="abcdefgh ", min_size=3, max_size=20).filter(lambda t: t.split()),
    min_size=2,
    max_size=8,
    unique_by=lambda t: " ".join(t.split()),
)


@given(
    texts=_TEXTS,
    answers=st.lists(st.sampled_from(["Paris", "paris.", "Rome", "The Rome", "", "Oslo\nmore"])),
    scores=st.lists(st.floats(0, 1), min_size=8, max_size=8),
)
def test_the_item_is_the_record_unaltered_and_its_candidates_the_models_answers(
    texts: list[str], answers: list[str], scores: list[float]
) -> None:
    table = {t: (answers[i % len(answers)] if answers else "Paris") for i, t in enumerate(texts)}
    record = _record(texts, scores[: len(texts)], question="Where?")
    model = _Model(table)
    probes = self_answer_items([record], model)
    ranked = retriever_scores(record)
    target = max(range(len(texts)), key=lambda i: (ranked[i], -i))
    assert model.asked[0] == BOOKEND_PROMPT.prompt([texts[target]], "Where?")
    assert set(model.asked) <= set(answer_prompts(record, BOOKEND_PROMPT))
    wanted = {answer_key(short_answer(a)) for a in table.values()} - {""}
    if not answer_key(short_answer(table[texts[target]])):
        assert probes.skipped == {"unanswered": [1]}
        assert len(model.asked) == 1  # no other document is asked once the first gives nothing
        return
    if len(wanted) < 2:
        assert probes.skipped == {"agree": [1]}
        return
    (item,) = probes.items
    assert (item.question, item.documents, item.scores) == ("Where?", tuple(texts), ranked)
    assert (item.gold, item.family, item.item_id) == (target, PROBE_FAMILY, "retrieval:1")
    assert item.candidates is not None
    assert item.answer == item.candidates[0] == short_answer(table[texts[target]])
    assert {answer_key(c) for c in item.candidates} == wanted
    assert len(item.candidates) == len(wanted)
    assert probes.design == "self-answer"
    assert probes.answers == len(model.asked) == len(texts)


def test_short_answer_keeps_the_first_line_and_sentence() -> None:
    assert short_answer("  Paris.\nThe capital.") == "Paris"
    assert short_answer("J. R. R. Tolkien wrote it. He was English.") == "J. R. R. Tolkien wrote it"
    assert short_answer("\n\n") == ""


def test_each_reason_to_skip_a_retrieval_is_counted() -> None:
    answers = {"alpha one": "A", "beta two": "B", "gamma": "A", "delta": "a.", "long " * 50: "L"}
    records = [
        _record(["alpha one", "beta two"], question=None),
        _record(["alpha one"]),
        _record(["  ", "beta two"], [1.0, 0.5]),
        _record(["gamma", "delta"]),  # one answer from both documents
        _record(["alpha one", "long " * 50]),
        _record(["beta two", "alpha one"]),
    ]
    length = len  # a character is a token: the long record is beyond the context

    probes = self_answer_items(records, _Model(answers), token_length=length, context=200)
    assert probes.skipped == {
        "question": [1],
        "few": [2],
        "empty": [3],
        "agree": [4],
        "context": [5],
    }
    assert [(i.item_id, i.candidates) for i in probes.items] == [("retrieval:6", ("B", "A"))]
    assert probes.unscored == [6]
    assert set(probes.skipped) <= set(SKIP_REASONS)
    no_answer = self_answer_items(
        [_record(["alpha one", "beta two"])], _Model({"alpha one": "", "beta two": "B"})
    )
    assert no_answer.skipped == {"unanswered": [1]}
    assert "1 skipped: no answer from the retriever's first document alone" in no_answer.summary()


def test_a_first_token_scorer_gets_candidates_whose_first_words_differ() -> None:
    table = {"one": "New York", "two": "New Delhi", "three": "Oslo"}
    record = _record(list(table))
    both = self_answer_items([record], _Model(table)).items[0].candidates
    assert both == ("New York", "New Delhi", "Oslo")
    first_words = self_answer_items([record], _Model(table), distinct_first_words=True)
    assert first_words.items[0].candidates == ("New York", "Oslo")


def test_the_limit_stops_generation_once_enough_probes_are_built() -> None:
    table = {"one": "A", "two": "B"}
    model = _Model(table)
    probes = self_answer_items([_record(list(table))] * 5, model, limit=2)
    assert len(probes.items) == 2
    assert len(model.asked) == 4
    assert probes.records == 2


def test_a_model_that_repeats_its_prompt_is_named_in_the_summary_and_marked_repeated() -> None:
    # Gemma 3 270M, a base model, in a chat template: every answer was the prompt's first words.
    echo = "You are a retrieval assistant. Answer the question from the records below"
    table = {"one": echo, "two": echo, "three": "Oslo"}
    records = [_record(["one", "two"], [1.0, 0.5]), _record(["three", "two"], [1.0, 0.5])]
    probes = self_answer_items(records, _Model(table))
    assert probes.commonest == ("You are a retrieval assistant", 3)
    assert probes.summary() == (
        "1 self-answer probe from 2 retrievals; 1 skipped: one answer from every document"
        " (no other candidate); 3 of the 4 answers generated were 'You are a retrieval assistant'"
        " (the model repeats one answer instead of answering the question in this prompt)"
    )
    answering = self_answer_items([_record(["one", "three"], [1.0, 0.5])], _Model(table))
    assert "answers generated were" not in answering.summary()  # 1 of 2 is no majority
    assert answering.repeated is None
    assert probes.repeated == ("You are a retrieval assistant", 3)
