"""A run of probes asks the scorer what it knows: its tokenizer, when it is the model's own (a
served model without a tokenize endpoint only estimates), and its context."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from bookend_rag.lab.experiments.runspec import RunSpec
from bookend_rag.lab.models.scorer import CHAT_GENERATION, IN_PROCESS, Capabilities
from bookend_rag.retrievals import RecordedDocument, RetrievalRecord


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


def _records(n: int) -> list[RetrievalRecord]:
    texts = ["The first passage of the record, with words.", "A second passage, also long."]
    return [
        RetrievalRecord(
            documents=[RecordedDocument(text=t, score=1.0 - d) for d, t in enumerate(texts)]
        )
        for _ in range(n)
    ]


def test_an_estimating_tokenizer_draws_no_codes_and_checks_no_context() -> None:
    pending = RunSpec(retrievals=_records(3)).load(suite="hard", n_items=60, split="calibration")
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
    run = RunSpec(retrievals=_records(2), n_items=1)
    with pytest.raises(ValueError, match="give no probe item: 0 probes from 2 retrievals; 2 "):
        run.load(suite="hard", n_items=60, split="calibration").for_model(local, said.append)
    roomy = _Counting(IN_PROCESS, context=100)
    loaded = run.load(suite="hard", n_items=60, split="calibration").for_model(roomy, said.append)
    assert roomy.asked
    assert said == ["2 probes from 2 retrievals; 2 with codes of several tokens"]
    assert [item.item_id for item in loaded.items] == ["retrieval:1"]
    assert loaded.settings["source"]["used"] == 1
