"""The retrieval record format: a round trip through a file, and one-line refusals that name the
line and what is wrong."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bookend_rag.retrievals import (
    RETRIEVALS_SCHEMA,
    RecordedDocument,
    RetrievalRecord,
    read_retrievals,
)


def _record(**changes: object) -> RetrievalRecord:
    fields: dict[str, object] = {
        "question": "Which river?",
        "documents": [RecordedDocument(text="a", score=0.5), RecordedDocument(text="b")],
        "model": "llama-3.1-8b",
        "order": [1, 0],
        "source": "reorder",
    }
    return RetrievalRecord(**{**fields, **changes})


def test_records_round_trip_through_a_file(tmp_path: Path) -> None:
    records = [_record(), _record(question=None, order=None, source="import")]
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(r.to_json_line() for r in records) + "\n\n", encoding="utf-8")
    assert list(read_retrievals(path)) == records
    assert '"schema":"bookend-retrievals/2"' in records[0].to_json_line()
    assert records[0].schema_version == RETRIEVALS_SCHEMA
    assert records[0].unrecorded == 0


def test_a_record_counts_the_calls_not_recorded_before_it_from_version_2() -> None:
    """Issue 48, 5: what a recorder could not record goes into the file, in schema version 2;
    a version 1 record is still valid, with nothing counted."""
    record = _record(unrecorded=7)
    assert '"unrecorded":7' in record.to_json_line()
    assert RetrievalRecord.model_validate_json(record.to_json_line()) == record
    old = RetrievalRecord.model_validate(
        {"schema": "bookend-retrievals/1", "documents": [{"text": "a"}], "question": "q"}
    )
    assert (old.schema_version, old.unrecorded) == ("bookend-retrievals/1", 0)
    assert '"schema":"bookend-retrievals/1"' in old.to_json_line()
    with pytest.raises(ValueError, match=r"^unrecorded=-1: Input should be greater than or equal"):
        _record(unrecorded=-1)
    with pytest.raises(ValueError, match=r"^unrecorded=True: must be a number, not a bool"):
        _record(unrecorded=True)
    with pytest.raises(ValueError, match=r"schema 'bookend-retrievals/1' has no unrecorded count"):
        _record(schema="bookend-retrievals/1", unrecorded=2)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "r.jsonl:2: not JSON"),
        ("[1, 2]", "r.jsonl:2: a record is a JSON object"),
        ('{"schema": "bookend-retrievals/9", "documents": [{"text": "a"}]}', "schema='bookend-"),
        ('{"documents": []}', "r.jsonl:2: documents=[]"),
        ('{"documents": [{"text": "a"}], "order": [3]}', "index 3 is not one of the 1 documents"),
        ('{"documents": [{"text": "a", "scor": 1}]}', "unknown field scor=1"),
    ],
)
def test_a_bad_line_is_named_in_one_line(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(_record().to_json_line() + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(message)) as info:
        list(read_retrievals(path))
    assert "\n" not in str(info.value)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"retrievals=.*: file not found"):
        list(read_retrievals(tmp_path / "none.jsonl"))


def test_a_score_must_survive_json() -> None:
    with pytest.raises(ValueError, match="score=nan: must be finite or None"):
        RecordedDocument(text="a", score=float("nan"))
