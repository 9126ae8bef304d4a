"""BookendReorder's notes reach the user (warnings at the caller's line, the ``bookend_rag``
logger, the run's callback handlers), missing scores follow ``missing_scores``, and the
recorder writes each call."""

from __future__ import annotations

import asyncio
import logging
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_bookend import NOTES_EVENT, BookendReorder
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document

from bookend_rag import Bookend
from bookend_rag.outlet import PlacementNote
from bookend_rag.recorder import RetrievalRecorder, as_recorder
from bookend_rag.retrievals import read_retrievals, record_from

MIXED = [0.1, None, 0.9, 0.5]


def _docs(scores: list[float | None]) -> list[Document]:
    return [
        Document(page_content=f"passage {i} " + "word " * (i % 5), metadata={"score": s, "i": i})
        for i, s in enumerate(scores)
    ]


class Events(BaseCallbackHandler):
    """Keeps the custom events a run sends its handlers."""

    def __init__(self) -> None:
        self.notes: list[list[str]] = []

    def on_custom_event(self, name: str, data: Any, **kwargs: Any) -> None:
        if name == NOTES_EVENT:
            self.notes.append(data["notes"])


def test_a_missing_score_is_warned_logged_and_sent_to_the_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    events = Events()
    reorderer = BookendReorder()
    with (
        caplog.at_level(logging.WARNING, logger="bookend_rag"),
        pytest.warns(PlacementNote, match=r"1 of 4 missing \(scores\[1\] is None\)") as w,
    ):
        out = reorderer.invoke(_docs(MIXED), {"callbacks": [events]})
    assert w[0].filename == __file__  # the caller's line, not LangChain's or bookend's
    note = Bookend().place([d.page_content for d in _docs(MIXED)], MIXED).notes  # sends nothing
    assert events.notes == [list(note)]
    assert [r.getMessage() for r in caplog.records] == [f"placement note: {note[0]}"]
    assert [d.metadata["i"] for d in out] == [0, 1, 2, 3]  # missing_scores="drop_scores"


def test_the_async_run_and_the_compressor_send_the_notes_too() -> None:
    events = Events()
    with pytest.warns(PlacementNote) as w:
        asyncio.run(BookendReorder().ainvoke(_docs(MIXED), {"callbacks": [events]}))
    assert w[0].filename == __file__  # the line that ran the loop, not asyncio's
    assert len(events.notes) == 1
    with pytest.warns(PlacementNote) as w:
        BookendReorder().compress_documents(_docs(MIXED), "q")  # no run: warnings and the log
    assert w[0].filename == __file__


def test_error_refuses_mixed_scores_in_one_line() -> None:
    with pytest.raises(ValueError, match=r"^scores: 1 of 4 missing \(scores\[1\] is None\)"):
        BookendReorder(missing_scores="error").invoke(_docs(MIXED))


def test_no_scores_at_all_is_no_note() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        BookendReorder().invoke([Document(page_content=t) for t in "abc"])


def test_the_recorder_writes_the_query_scores_and_order(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    docs = _docs([0.2, 0.9, 0.4])
    placed = BookendReorder(recorder=path, model="qwen2.5-7b").compress_documents(docs, "why?")
    as_recorder(path).flush()  # type: ignore[union-attr]
    (record,) = read_retrievals(path)
    assert (record.question, record.model, record.source) == ("why?", "qwen2.5-7b", "langchain")
    assert [d.text for d in record.documents] == [d.page_content for d in docs]
    assert [d.score for d in record.documents] == [0.2, 0.9, 0.4]
    assert [record.documents[i].text for i in record.order or []] == [
        d.page_content for d in placed
    ]
    # What a team logged itself, (Document, score) pairs, converts to the same documents.
    pairs = [
        (Document(page_content=d.page_content, metadata={"i": i}), d.metadata["score"])
        for i, d in enumerate(docs)
    ]
    assert [(d.text, d.score) for d in record_from(pairs).documents] == [
        (d.text, d.score) for d in record.documents
    ]


def test_a_record_holds_the_documents_as_they_were_placed(tmp_path: Path) -> None:
    """Issue 48, 3: the writer read the documents up to a second after the call."""
    recorder = RetrievalRecorder(tmp_path / "r.jsonl", metadata=["source"])
    docs = [
        Document(page_content=f"passage {i}", metadata={"score": s, "source": f"s{i}"})
        for i, s in enumerate([0.2, 0.9, 0.4])
    ]
    BookendReorder(recorder=recorder).compress_documents(docs, "why?")
    docs[0].page_content = "changed"
    docs[1].metadata["score"] = 0.0
    docs[2].metadata["source"] = "changed"
    recorder.flush()
    (record,) = read_retrievals(recorder.path)
    assert [(d.text, d.score, d.metadata) for d in record.documents] == [
        ("passage 0", 0.2, {"source": "s0"}),
        ("passage 1", 0.9, {"source": "s1"}),
        ("passage 2", 0.4, {"source": "s2"}),
    ]


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_no_documents_change_order_without_the_note_reorder_gives(
    data: st.DataObject, note_parity: Any
) -> None:
    case = data.draw(note_parity.cases())
    docs = _docs(case["scores"])
    events = Events()
    reorderer = BookendReorder(**case["options"])

    def run() -> tuple[list[int], list[list[str]]]:
        out = reorderer.invoke(docs, {"callbacks": [events]})
        return [d.metadata["i"] for d in out], events.notes

    note_parity.check(case, run, [d.page_content for d in docs])
