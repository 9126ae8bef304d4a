"""The retrieval record format: a round trip through a file, both versions read, one-line refusals
of at most 200 characters that name the file, the line and the field, a line still being written
skipped and counted, and several files (a recorder's rotated parts) read oldest first."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bookend_rag.retrievals import (
    READ_SCHEMAS,
    RETRIEVALS_SCHEMA,
    RecordedDocument,
    RetrievalReader,
    RetrievalRecord,
    read_retrievals,
    retrieval_files,
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
        (
            '{"schema": "bookend-retrievals/9", "documents": [{"text": "a"}]}',
            "r.jsonl:2: schema='bookend-retrievals/9' is not one this version of bookend reads "
            "(bookend-retrievals/1, bookend-retrievals/2)",
        ),
        ('{"documents": []}', "r.jsonl:2: documents=[]"),
        (
            '{"documents": [{"text": "a"}], "order": [3]}',
            "r.jsonl:2: order=[3]: index 3 is not one of the 1 documents",
        ),
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


#: Another tool's log line: a JSON object, but no record (pydantic named all 9 problems of it in
#: 412 characters).
_OTHER_SCHEMA = json.dumps(
    {
        "query": "Which river runs through the old town and where does it meet the sea?",
        "results": [{"id": i, "content": "x" * 40, "relevance": 0.5} for i in range(3)],
        "latency_ms": 12.5,
        "user": "someone",
    }
)


@pytest.mark.parametrize(
    ("line", "names"),
    [
        (_OTHER_SCHEMA, "r.jsonl:2: field 'query' is not one of a bookend-retrievals/2 record"),
        ('{"question": "q?"}', "r.jsonl:2: field 'documents' is missing"),
        ('{"schema": "bookend-retrievals/1", "documents": [{"text": "a"}], "unrecorded": 1}',
         "r.jsonl:2: field 'unrecorded' is not one of a bookend-retrievals/1 record"),
        # Every document wrong: the first field is named, the rest cut off at 200 characters.
        (
            json.dumps({"documents": [{"text": i, "score": "high"} for i in range(30)]}),
            "r.jsonl:2: documents.0={'text': 0, 'score': 'high'}: text=0: Input should be a",
        ),
        ('{"documents": [{"text": "a"}], "unrecorded": -1}', "r.jsonl:2: unrecorded=-1"),
    ],
)  # fmt: skip
def test_a_line_of_another_schema_or_a_bad_field_is_named_in_200_characters(
    tmp_path: Path, line: str, names: str
) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(_record().to_json_line() + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(names)) as info:
        list(read_retrievals(path))
    message = str(info.value)
    assert message.startswith(str(path)), message
    assert names in message
    assert len(message) <= 200, (len(message), message)
    assert "\n" not in message


def test_both_versions_are_read_and_the_unrecorded_calls_summed(tmp_path: Path) -> None:
    old = {"schema": READ_SCHEMAS[0], "question": "q?", "documents": [{"text": "a"}]}
    new = _record(unrecorded=7)
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(old) + "\n" + new.to_json_line() + "\n", encoding="utf-8")
    reader = RetrievalReader([path])
    first, second = reader
    assert (first.schema_version, first.unrecorded) == (READ_SCHEMAS[0], 0)
    assert second == new
    assert (reader.records, reader.unrecorded, reader.partial_lines) == (2, 7, 0)


@pytest.mark.parametrize("cut", [30, -1])
def test_a_last_line_still_being_written_is_skipped_and_counted(tmp_path: Path, cut: int) -> None:
    whole = _record().to_json_line()
    path = tmp_path / "r.jsonl"
    # Cut inside the JSON, or inside a character of several UTF-8 bytes.
    partial = whole[:cut].encode() if cut > 0 else '{"question": "caf\u00e9'.encode()[:-1]
    path.write_bytes((whole + "\n" + whole + "\n").encode() + partial)
    reader = RetrievalReader([path])
    assert len(list(reader)) == 2
    assert (reader.records, reader.partial_lines) == (2, 1)
    assert len(list(read_retrievals(path))) == 2
    # The same line with its newline was written whole: it is refused, not skipped.
    path.write_bytes(whole.encode() + b"\n" + partial + b"\n")
    with pytest.raises(ValueError, match=r"r\.jsonl:2: not (JSON|UTF-8)"):
        list(read_retrievals(path))


def _rotated(tmp_path: Path, name: str, parts: int) -> list[Path]:
    """A recorder's file and its rotated parts (``name.N`` the oldest), each holding one record
    whose question is the file's name."""
    paths = [tmp_path / name, *(tmp_path / f"{name}.{n}" for n in range(1, parts))]
    for path in paths:
        path.write_text(_record(question=path.name).to_json_line() + "\n", encoding="utf-8")
    return paths


def test_several_files_a_glob_and_rotated_parts_are_read_oldest_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _rotated(tmp_path, "r.jsonl", 12)  # .10 and .11 are older than .2: numbers, not text
    _rotated(tmp_path, "s.jsonl", 2)
    oldest_first = [f"r.jsonl.{n}" for n in range(11, 0, -1)] + ["r.jsonl"]
    files = retrieval_files(str(tmp_path / "r.jsonl*"))
    assert [f.name for f in files] == oldest_first
    reader = RetrievalReader(files)
    assert [r.question for r in reader] == oldest_first
    # Paths and patterns together: each file once, files of other names in the order named.
    both = retrieval_files(tmp_path / "s.jsonl", str(tmp_path / "*.jsonl*"), tmp_path / "r.jsonl")
    assert [f.name for f in both] == ["s.jsonl.1", "s.jsonl", *oldest_first]
    monkeypatch.chdir(tmp_path)  # a relative pattern is matched from the working directory
    assert [f.name for f in retrieval_files("s.jsonl*")] == ["s.jsonl.1", "s.jsonl"]
    # A file named alone brings the parts rotated out of it: the recorder wrote them as one.
    assert [f.name for f in retrieval_files("r.jsonl")] == oldest_first
    assert [f.name for f in retrieval_files("s.jsonl")] == ["s.jsonl.1", "s.jsonl"]
    # The parts of one file, one named relative and one absolute, are still ordered as parts.
    mixed = retrieval_files(tmp_path / "r.jsonl.1", "r.jsonl.2", "r.jsonl")
    assert [f.name for f in mixed] == oldest_first


@pytest.mark.parametrize(
    ("named", "message"),
    [
        (["none.jsonl"], "retrievals='none.jsonl': file not found"),
        (["none.jsonl*"], "retrievals='none.jsonl*': matches no file"),
        ([], "retrievals must name at least one file"),
    ],
)
def test_a_missing_file_or_pattern_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, named: list[str], message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=re.escape(message)):
        retrieval_files(*named)
