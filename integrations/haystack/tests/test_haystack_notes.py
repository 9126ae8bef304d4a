"""BookendRanker's notes reach the user (warnings at the caller's line, the ``bookend_rag``
logger, the component's ``notes`` output), missing scores follow ``missing_scores``, and the
recorder writes each run."""

from __future__ import annotations

import asyncio
import logging
import warnings
from pathlib import Path
from typing import Any

import pytest
from haystack import Document, Pipeline
from haystack_integrations.components.rankers.bookend import BookendRanker
from hypothesis import given, settings
from hypothesis import strategies as st

from bookend_rag import Bookend
from bookend_rag.outlet import PlacementNote
from bookend_rag.recorder import as_recorder
from bookend_rag.retrievals import read_retrievals, record_from

MIXED = [0.1, None, 0.9, 0.5]


def _docs(scores: list[float | None]) -> list[Document]:
    return [
        Document(content=f"passage {i} " + "word " * (i % 5), score=s, meta={"i": i})
        for i, s in enumerate(scores)
    ]


def test_a_missing_score_is_warned_logged_and_output(caplog: pytest.LogCaptureFixture) -> None:
    with (
        caplog.at_level(logging.WARNING, logger="bookend_rag"),
        pytest.warns(PlacementNote, match=r"1 of 4 missing \(scores\[1\] is None\)") as w,
    ):
        out = BookendRanker().run(documents=_docs(MIXED))
    assert w[0].filename == __file__  # the caller's line, not the ranker's
    note = Bookend().place([d.content for d in _docs(MIXED)], MIXED).notes
    assert out["notes"] == list(note)
    assert [r.getMessage() for r in caplog.records] == [f"placement note: {note[0]}"]
    assert [d.meta["i"] for d in out["documents"]] == [0, 1, 2, 3]  # "drop_scores"


def test_a_pipeline_returns_the_notes_and_points_the_warning_at_its_caller() -> None:
    pipeline = Pipeline()
    pipeline.add_component("ranker", BookendRanker())
    with pytest.warns(PlacementNote) as w:
        result = pipeline.run({"ranker": {"documents": _docs(MIXED)}})
    assert w[0].filename == __file__
    assert len(result["ranker"]["notes"]) == 1
    # Without notes the output is LostInTheMiddleRanker's: documents only.
    assert set(BookendRanker().run(documents=_docs([0.3, 0.2]))) == {"documents"}


def test_run_async_sends_the_notes_too() -> None:
    with pytest.warns(PlacementNote):
        out = asyncio.run(BookendRanker().run_async(documents=_docs(MIXED)))
    assert len(out["notes"]) == 1


def test_error_refuses_mixed_scores_in_one_line() -> None:
    with pytest.raises(ValueError, match=r"^scores: 1 of 4 missing \(scores\[1\] is None\)"):
        BookendRanker(missing_scores="error").run(documents=_docs(MIXED))


def test_no_scores_at_all_is_no_note() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert "notes" not in BookendRanker().run(documents=_docs([None, None, None]))


def test_the_recorder_writes_the_query_scores_and_order(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    docs = _docs([0.2, 0.9, 0.4])
    ranker = BookendRanker(recorder=path)
    out = ranker.run(documents=[*docs, docs[1]], query="why?", top_k=2)  # a duplicate id, cut
    assert BookendRanker.from_dict(ranker.to_dict()).recorder == str(path)  # a path serialises
    as_recorder(path).flush()  # type: ignore[union-attr]
    (record,) = read_retrievals(path)
    assert (record.question, record.source) == ("why?", "haystack")
    assert [d.score for d in record.documents] == [0.2, 0.9, 0.4, 0.9]  # as retrieved
    assert [docs[i] for i in record.order or []] == out["documents"]
    # The Haystack Documents a team logged itself convert to the same documents (the recorder
    # keeps no metadata unless allowed).
    assert [(d.text, d.score) for d in record_from(docs).documents] == [
        (d.text, d.score) for d in record.documents[:3]
    ]


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_no_documents_change_order_without_the_note_reorder_gives(
    data: st.DataObject, note_parity: Any
) -> None:
    # "alternate" reads no score here, as LostInTheMiddleRanker (its parity is tested apart).
    case = data.draw(note_parity.cases(strategies=["bookend", "relevance"]))
    docs = _docs(case["scores"])
    ranker = BookendRanker(**case["options"])

    def run() -> tuple[list[int], list[list[str]]]:
        out = ranker.run(documents=docs)
        return [d.meta["i"] for d in out["documents"]], [out["notes"]] if "notes" in out else []

    note_parity.check(case, run, [d.content for d in docs])
