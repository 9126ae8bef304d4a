"""BookendNodePostprocessor's notes reach the user (warnings at the caller's line, the
``bookend_rag`` logger, LlamaIndex's instrumentation), missing scores follow
``missing_scores``, and the recorder writes each call."""

from __future__ import annotations

import asyncio
import logging
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from llama_index.core import MockEmbedding, VectorStoreIndex
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.llms import MockLLM
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from llama_index.postprocessor.bookend import BookendNodePostprocessor, PlacementNotesEvent

from bookend_rag import Bookend
from bookend_rag.outlet import PlacementNote
from bookend_rag.recorder import as_recorder
from bookend_rag.retrievals import read_retrievals, record_from

MIXED = [0.1, None, 0.9, 0.5]


def _nodes(scores: list[float | None]) -> list[NodeWithScore]:
    return [
        NodeWithScore(node=TextNode(text=f"passage {i} " + "word " * (i % 5), id_=str(i)), score=s)
        for i, s in enumerate(scores)
    ]


class Events(BaseEventHandler):
    """Keeps the notes events LlamaIndex's dispatcher sends."""

    notes: list[list[str]]

    def handle(self, event: Any, **kwargs: Any) -> None:
        if isinstance(event, PlacementNotesEvent):
            self.notes.append(event.notes)


@pytest.fixture
def events() -> Any:
    handler = Events(notes=[])
    root = get_dispatcher()
    root.add_event_handler(handler)
    yield handler
    root.event_handlers.remove(handler)


def test_a_missing_score_is_warned_logged_and_sent_as_an_event(
    events: Events, caplog: pytest.LogCaptureFixture
) -> None:
    with (
        caplog.at_level(logging.WARNING, logger="bookend_rag"),
        pytest.warns(PlacementNote, match=r"1 of 4 missing \(scores\[1\] is None\)") as w,
    ):
        out = BookendNodePostprocessor().postprocess_nodes(_nodes(MIXED), query_str="q")
    assert w[0].filename == __file__  # the caller's line, not LlamaIndex's or bookend's
    note = Bookend().place([n.node.get_content() for n in _nodes(MIXED)], MIXED).notes
    assert events.notes == [list(note)]
    assert [r.getMessage() for r in caplog.records] == [f"placement note: {note[0]}"]
    assert [n.node.id_ for n in out] == ["0", "1", "2", "3"]  # missing_scores="drop_scores"


def test_the_async_path_sends_the_notes_too(events: Events) -> None:
    with pytest.warns(PlacementNote):
        asyncio.run(BookendNodePostprocessor().apostprocess_nodes(_nodes(MIXED), query_str="q"))
    assert len(events.notes) == 1


def test_error_refuses_mixed_scores_in_one_line() -> None:
    with pytest.raises(ValueError, match=r"^scores: 1 of 4 missing \(scores\[1\] is None\)"):
        BookendNodePostprocessor(missing_scores="error").postprocess_nodes(_nodes(MIXED))


def test_no_scores_at_all_is_no_note(events: Events) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        BookendNodePostprocessor().postprocess_nodes(_nodes([None, None, None]))
    assert events.notes == []


def test_the_recorder_writes_the_query_scores_and_order(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    nodes = _nodes([0.2, 0.9, 0.4])
    out = BookendNodePostprocessor(recorder=path).postprocess_nodes(
        nodes, query_bundle=QueryBundle("why?")
    )
    as_recorder(path).flush()  # type: ignore[union-attr]
    (record,) = read_retrievals(path)
    assert (record.question, record.source) == ("why?", "llama_index")
    assert [d.score for d in record.documents] == [0.2, 0.9, 0.4]
    assert [nodes[i] for i in record.order or []] == out
    # The NodeWithScore lists a team logged itself convert to the same documents.
    assert record_from(nodes).documents == record.documents


def test_the_readmes_query_engine_records_each_query(tmp_path: Path) -> None:
    """The README's query engine gives the postprocessor the query by itself (issue 48, 1: the
    pipelines the docs show record the question), sync and async, with the retriever's scores."""
    path = tmp_path / "r.jsonl"
    nodes = [TextNode(text=f"Passage {i} about the sunshield.") for i in range(8)]
    index = VectorStoreIndex(nodes, embed_model=MockEmbedding(embed_dim=8))
    engine = index.as_query_engine(
        llm=MockLLM(),
        similarity_top_k=6,
        node_postprocessors=[BookendNodePostprocessor(recorder=path)],
    )
    engine.query("How does the telescope stay cold?")
    asyncio.run(engine.aquery("Which layer is the coldest?"))
    as_recorder(path).flush()  # type: ignore[union-attr]
    records = list(read_retrievals(path))
    assert [r.question for r in records] == [
        "How does the telescope stay cold?",
        "Which layer is the coldest?",
    ]
    assert all(len(r.documents) == 6 for r in records)
    assert all(d.score is not None for r in records for d in r.documents)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_no_nodes_change_order_without_the_note_reorder_gives(
    data: st.DataObject, note_parity: Any
) -> None:
    case = data.draw(note_parity.cases())
    nodes = _nodes(case["scores"])
    postprocessor = BookendNodePostprocessor(token_counter=len, **case["options"])

    def run() -> tuple[list[int], list[list[str]]]:
        handler = Events(notes=[])
        get_dispatcher().add_event_handler(handler)
        try:
            out = postprocessor.postprocess_nodes(nodes)
        finally:
            get_dispatcher().event_handlers.remove(handler)
        return [int(n.node.id_) for n in out], handler.notes

    note_parity.check(case, run, [n.node.get_content() for n in nodes], token_counter=len)
