"""The retrieval recorder: opt-in, a local JSON Lines file in the schema of
:mod:`bookend_rag.retrievals`, bounded by rotation, safe from threads and tasks, and never the
cause of a failed retrieval."""

from __future__ import annotations

import asyncio
import io
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest

from bookend_rag import reorder
from bookend_rag.cli import main
from bookend_rag.outlet import PlacementNote
from bookend_rag.recorder import RecorderWarning, Retrieval, RetrievalRecorder, as_recorder
from bookend_rag.retrievals import (
    RetrievalRecord,
    read_retrievals,
    record_from,
    write_retrievals,
)

TEXTS = ["alpha", "beta", "gamma", "delta"]
SCORES = [0.2, 0.9, 0.4, 0.7]


def _call(**changes: object) -> Retrieval:
    fields: dict[str, object] = {
        "items": TEXTS,
        "scores": SCORES,
        "model": "llama-3.1-8b",
        "order": (1, 3, 2, 0),
        "source": "reorder",
    }
    return Retrieval(**{**fields, **changes})  # type: ignore[arg-type]


def test_reorder_records_the_call_as_the_schema_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    placement = reorder(TEXTS, SCORES, model="qwen2.5-7b", recorder=path)
    as_recorder(path).flush()  # type: ignore[union-attr]
    (record,) = read_retrievals(path)
    assert [d.text for d in record.documents] == TEXTS  # the retriever's order
    assert [d.score for d in record.documents] == SCORES
    assert record.order == list(placement.order)
    assert (record.model, record.source, record.question) == ("qwen2.5-7b", "reorder", None)


def test_off_by_default_and_one_recorder_per_file(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    reorder(TEXTS, SCORES)
    assert as_recorder(None) is None
    assert as_recorder(path) is as_recorder(str(path))  # one writer per file in a process
    assert not path.exists()


def test_the_writer_thread_writes_without_a_flush(tmp_path: Path) -> None:
    recorder = RetrievalRecorder(tmp_path / "r.jsonl", interval=0.05)
    recorder.record(_call())
    deadline = time.monotonic() + 10
    while not (tmp_path / "r.jsonl").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    recorder.close()
    assert len(list(read_retrievals(tmp_path / "r.jsonl"))) == 1


@pytest.mark.parametrize(
    ("flushes", "lines_per_file"),
    [
        # Each call written apart: seven of ten kept (the newest file holds the last, the two
        # backups three each; the oldest three went with the backup beyond the second).
        (True, [1, 3, 3]),
        # Ten lines in one write: rotated chunk by chunk, none past the bound.
        (False, [1, 3, 3]),
    ],
)
def test_the_file_is_rotated_and_stays_bounded(
    tmp_path: Path, flushes: bool, lines_per_file: list[int]
) -> None:
    path = tmp_path / "r.jsonl"
    line = len(_call().record().to_json_line()) + 1
    recorder = RetrievalRecorder(path, max_bytes=3 * line, backups=2)
    for _ in range(10):
        recorder.record(_call())
        if flushes:
            recorder.flush()
    recorder.close()
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["r.jsonl", "r.jsonl.1", "r.jsonl.2"]
    assert [len(list(read_retrievals(tmp_path / name))) for name in files] == lines_per_file
    for name in files:
        assert (tmp_path / name).stat().st_size <= 3 * line
        assert all(r.order == [1, 3, 2, 0] for r in read_retrievals(tmp_path / name))


def test_calls_beyond_what_waits_for_the_writer_are_counted_not_kept(tmp_path: Path) -> None:
    recorder = RetrievalRecorder(tmp_path / "r.jsonl", buffer=2, interval=3600)
    recorder._writer = threading.current_thread()  # no writer thread: the calls only wait
    for _ in range(40):
        recorder.record(_call())
    with pytest.warns(RecorderWarning, match="8 retrievals not recorded: 32 were waiting"):
        recorder.flush()
    assert len(list(read_retrievals(tmp_path / "r.jsonl"))) == 32


def test_threads_and_tasks_lose_no_call(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    recorder = RetrievalRecorder(path, buffer=32, interval=0.01)  # at most 512 wait: all kept

    def calls(n: int) -> None:
        for i in range(n):
            reorder(TEXTS, SCORES, recorder=recorder, suffix_tokens=i % 3)

    threads = [threading.Thread(target=calls, args=(50,)) for _ in range(6)]
    for thread in threads:
        thread.start()

    async def task() -> None:
        calls(10)
        await asyncio.sleep(0)

    async def tasks() -> None:
        await asyncio.gather(*(task() for _ in range(5)))

    asyncio.run(tasks())
    for thread in threads:
        thread.join()
    recorder.close()
    records = list(read_retrievals(path))
    assert len(records) == 6 * 50 + 5 * 10
    assert all(len(r.documents) == 4 for r in records)


def test_a_write_failure_is_a_warning_not_a_failed_retrieval(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    recorder = RetrievalRecorder(path)
    path.mkdir()  # the file cannot be opened for appending now
    placement = reorder(TEXTS, SCORES, recorder=recorder)
    assert placement.order  # the retrieval went on
    with pytest.warns(RecorderWarning, match=r"1 retrievals not recorded \(IsADirectoryError"):
        recorder.flush()


def test_a_record_that_cannot_be_made_is_a_warning(tmp_path: Path) -> None:
    recorder = RetrievalRecorder(tmp_path / "r.jsonl")
    recorder.record(_call(items=[1, 2, 3, 4]))  # no text
    recorder.record(_call())
    with pytest.warns(RecorderWarning, match=r"1 of 2 retrievals not recorded \(items\[0\]"):
        recorder.flush()
    assert len(list(read_retrievals(tmp_path / "r.jsonl"))) == 1


def test_an_object_recorder_that_raises_is_a_warning() -> None:
    class Broken:
        def record(self, call: Retrieval) -> None:
            raise RuntimeError("queue full")

    with pytest.warns(RecorderWarning, match="queue full"):
        assert reorder(TEXTS, SCORES, recorder=Broken()).order


def test_an_object_recorder_gets_each_call() -> None:
    calls: list[Retrieval] = []

    class Collect:
        def record(self, call: Retrieval) -> None:
            calls.append(call)

    placement = reorder(TEXTS, SCORES, recorder=Collect())
    assert [c.record().order for c in calls] == [list(placement.order)]


@pytest.mark.parametrize(
    ("recorder", "message"),
    [
        (3, "recorder must be a file path or an object with a record(call) method"),
        ("no/such/dir/r.jsonl", "recorder='no/such/dir/r.jsonl' has no such directory"),
    ],
)
def test_a_bad_recorder_is_one_line(recorder: object, message: str) -> None:
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        reorder(TEXTS, SCORES, recorder=recorder)  # type: ignore[arg-type]


def test_identity_order_finds_each_placed_item_among_the_retrieved() -> None:
    docs = [{"t": t} for t in TEXTS]
    call = _call(items=docs, order=None, kept=[docs[2], docs[0]], text=lambda d: d["t"])
    assert call.record().order == [2, 0]


def test_the_cli_records_with_the_chunks_fields_as_metadata(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "r.jsonl"
    chunks = '[{"text": "a", "score": 0.1, "title": "A"}, {"text": "b", "score": 0.9}]'
    monkeypatch.setattr(sys, "stdin", io.StringIO(chunks))
    assert main(["reorder", "--recorder", str(path)]) == 0
    capsys.readouterr()
    (record,) = read_retrievals(path)
    assert record.source == "cli"
    assert [(d.text, d.score, d.metadata) for d in record.documents] == [
        ("a", 0.1, {"title": "A"}),
        ("b", 0.9, {}),
    ]


def test_logged_objects_convert_to_the_same_file(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    logged = [["x", {"text": "y", "score": 0.5, "id": 3, "nested": {"a": 1}}]]
    records = [record_from(call, question="q") for call in logged]
    assert write_retrievals(path, records) == 1
    (record,) = read_retrievals(path)
    assert record == records[0]
    assert [(d.text, d.score, d.metadata) for d in record.documents] == [
        ("x", None, {}),
        ("y", 0.5, {"id": 3}),
    ]
    with pytest.raises(ValueError, match=r"^retrieved\[1\] of type int is not a document"):
        record_from(["x", 3])
    with pytest.raises(ValueError, match=r"^retrieved must be a non-empty list"):
        record_from([])


def test_a_record_with_a_note_is_still_written(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PlacementNote)
        reorder(TEXTS, [0.1, None, 0.3, 0.2], recorder=path)
    as_recorder(path).flush()  # type: ignore[union-attr]
    (record,) = read_retrievals(path)
    assert isinstance(record, RetrievalRecord)
    assert [d.score for d in record.documents] == [0.1, None, 0.3, 0.2]
