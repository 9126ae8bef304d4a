"""A run of probes asks the scorer what it knows: its tokenizer, when it is the model's own (a
served model without a tokenize endpoint only estimates), and its context; self-answer probes
ask it for an answer from each document, except in a dry run."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from bookend_rag.retrievals import RecordedDocument, RetrievalRecord
from bookend_rag_lab.experiments.runspec import RunSpec
from bookend_rag_lab.items.self_answer import ANSWER_TOKENS
from bookend_rag_lab.models.scorer import (
    CHAT_GENERATION,
    CHAT_LOGPROBS,
    IN_PROCESS,
    Capabilities,
    Prompt,
)


class _Counting:
    """A scorer whose every text is three tokens, with a context of ``context`` tokens."""

    model_id = "counting"
    calls = 0

    def __init__(self, capabilities: Capabilities, context: int | None = None) -> None:
        self.capabilities = capabilities
        self.context_length = context
        self.asked: list[str] = []

    def token_length(self, text: str) -> int:
        self.asked.append(text)
        return 3

    def is_cached(self, prompt: object, continuations: Sequence[str]) -> bool:
        return False


class _Answering(_Counting):
    """A scorer that answers each one-document prompt with that document's first ``words``
    words."""

    def __init__(
        self, capabilities: Capabilities, context: int | None = None, words: int = 1
    ) -> None:
        super().__init__(capabilities, context)
        self.words = words
        self.generated: list[tuple[Prompt, int]] = []

    def generate(self, prompt: Prompt, max_tokens: int) -> str:
        self.generated.append((prompt, max_tokens))
        assert isinstance(prompt, str)
        return " ".join(prompt.split("Document 1: ")[1].split("\n")[0].split()[: self.words])


def _records(n: int) -> list[RetrievalRecord]:
    texts = ["The first passage of the record, with words.", "A second passage, also long."]
    return [
        RetrievalRecord(
            question="Which passage?",
            documents=[RecordedDocument(text=t, score=1.0 - d) for d, t in enumerate(texts)],
        )
        for _ in range(n)
    ]


def test_an_estimating_tokenizer_draws_no_codes_and_checks_no_context() -> None:
    pending = RunSpec(retrievals=_records(3), probes="codes").load(
        suite="hard", n_items=60, split="calibration"
    )
    assert pending.items == []
    served = _Counting(CHAT_GENERATION, context=2)
    loaded = pending.for_model(served, lambda _line: None)
    assert served.asked == []
    assert len(loaded.items) == 3
    assert loaded.settings["source"]["multi_token_codes"] == []
    assert loaded.settings["source"]["context_tokens"] == 2


def test_the_models_own_tokenizer_draws_the_codes_and_its_context_skips() -> None:
    said: list[str] = []
    local = _Counting(IN_PROCESS, context=5)
    run = RunSpec(retrievals=_records(2), n_items=1, probes="codes")
    with pytest.raises(ValueError, match="give no probe item: 0 codes probes from 2 retrievals"):
        run.load(suite="hard", n_items=60, split="calibration").for_model(local, said.append)
    roomy = _Counting(IN_PROCESS, context=100)
    loaded = run.load(suite="hard", n_items=60, split="calibration").for_model(roomy, said.append)
    assert roomy.asked
    assert said == ["2 codes probes from 2 retrievals; 2 with codes of several tokens"]
    assert [item.item_id for item in loaded.items] == ["retrieval:1"]
    assert loaded.settings["source"]["used"] == 1


def test_self_answer_probes_ask_the_model_once_per_document_and_a_dry_run_never() -> None:
    run = RunSpec(retrievals=_records(3), n_items=2)
    said: list[str] = []
    model = _Answering(IN_PROCESS, context=100)
    loaded = run.load(suite="hard", n_items=60, split="calibration").for_model(
        model, said.append, progress=False
    )
    assert [t for _, t in model.generated] == [ANSWER_TOKENS] * 4  # two probes, two documents
    assert [item.candidates for item in loaded.items] == [("The", "A")] * 2
    assert said == ["2 self-answer probes from 2 retrievals"]
    source = loaded.settings["source"]
    assert (source["design"], source["generated_answers"], source["used"]) == ("self-answer", 4, 2)
    assert loaded.unanswered == ()

    dry = _Answering(IN_PROCESS, context=100)
    planned = run.load(suite="hard", n_items=60, split="calibration").for_model(
        dry, said.append, answer=False
    )
    assert dry.generated == []
    assert len(planned.unanswered) == 4
    assert len(planned.items) == 2


class _Echoing(_Answering):
    """A scorer that answers with its prompt's opening words except for one document."""

    def generate(self, prompt: Prompt, max_tokens: int) -> str:
        answer = super().generate(prompt, max_tokens)
        return answer if answer == "Oslo" else "You are a retrieval assistant"


def test_a_model_that_repeats_one_answer_for_most_documents_is_refused_in_one_line() -> None:
    records = [
        RetrievalRecord(
            question="Which city?",
            documents=[RecordedDocument(text=t, score=1.0 - d) for d, t in enumerate(texts)],
        )
        for texts in (("Oslo is a city.", "Bergen is one."), ("Tromso too.", "Alta also."))
    ]
    pending = RunSpec(retrievals=records).load(suite="hard", n_items=60, split="calibration")
    with pytest.raises(ValueError, match="worth scoring") as refused:
        pending.for_model(_Echoing(IN_PROCESS), lambda _line: None, progress=False)
    assert str(refused.value) == (
        "retrievals='given' give no probe item worth scoring: 1 self-answer probe from 2"
        " retrievals; 1 skipped: one answer from every document (no other candidate); 3 of the 4"
        " answers generated were 'You are a retrieval assistant' (the model repeats one answer"
        " instead of answering the question in this prompt)"
    )


def test_a_first_token_scorer_gets_answers_that_begin_differently() -> None:
    records = [
        RetrievalRecord(
            question="Which city?",
            documents=[RecordedDocument(text=t) for t in ("New York", "New Delhi", "Oslo")],
        )
    ]
    run = RunSpec(retrievals=records).load(suite="hard", n_items=60, split="calibration")

    def candidates(capabilities: Capabilities) -> object:
        scorer = _Answering(capabilities, words=2)
        return run.for_model(scorer, lambda _line: None, progress=False).items[0].candidates

    assert candidates(IN_PROCESS) == ("New York", "New Delhi", "Oslo")
    assert candidates(CHAT_LOGPROBS) == ("New York", "Oslo")


def test_an_unknown_probe_design_is_refused_in_one_line() -> None:
    with pytest.raises(
        ValueError, match=r"probes must be one of \['self-answer', 'codes'\], got probes='guess'"
    ):
        RunSpec(retrievals=_records(1), probes="guess").load(
            suite="hard", n_items=60, split="calibration"
        )
