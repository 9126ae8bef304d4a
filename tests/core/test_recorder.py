"""The retrieval recorder: opt-in, a local JSON Lines file in the schema of
:mod:`bookend_rag.retrievals`, bounded by rotation, safe from threads, tasks and forks, private by
default, every call it could not record counted and told, and never the cause of a failed
retrieval."""

from __future__ import annotations

import asyncio
import errno
import io
import logging
import multiprocessing
import os
import stat
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bookend_rag import Bookend, reorder
from bookend_rag.cli import main
from bookend_rag.outlet import PlacementNote, deliver
from bookend_rag.recorder import (
    QUESTIONLESS_TOLD_AFTER,
    RecorderWarning,
    Retrieval,
    RetrievalRecorder,
    as_recorder,
)
from bookend_rag.retrievals import (
    RecordSource,
    RetrievalRecord,
    read_retrievals,
    record_from,
    write_retrievals,
)

TEXTS = ["alpha", "beta", "gamma", "delta"]
SCORES = [0.2, 0.9, 0.4, 0.7]


def _call(**changes: Any) -> Retrieval:
    fields: dict[str, Any] = {
        "texts": TEXTS,
        "scores": SCORES,
        "model": "llama-3.1-8b",
        "order": (1, 3, 2, 0),
        "source": "reorder",
        "question": "Which?",
    }
    return Retrieval(**{**fields, **changes})


def _held(recorder: RetrievalRecorder) -> None:
    """No writer thread for ``recorder``: its calls wait until a flush."""
    recorder._writer = threading.current_thread()


def _recorder_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, RecorderWarning)]


def test_reorder_records_the_call_as_the_schema_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    placement = reorder(TEXTS, SCORES, model="qwen2.5-7b", recorder=path, question="Which?")
    as_recorder(path).flush()  # type: ignore[union-attr]
    (record,) = read_retrievals(path)
    assert [d.text for d in record.documents] == TEXTS  # the retriever's order
    assert [d.score for d in record.documents] == SCORES
    assert record.order == list(placement.order)
    assert (record.model, record.source, record.question) == ("qwen2.5-7b", "reorder", "Which?")
    assert (record.schema_version, record.unrecorded) == ("bookend-retrievals/2", 0)


def test_the_question_changes_no_placement() -> None:
    assert reorder(TEXTS, SCORES, question="Which?") == reorder(TEXTS, SCORES)
    with pytest.raises(ValueError, match=r"^question must be a string or None, got question=3$"):
        reorder(TEXTS, SCORES, question=3)  # type: ignore[arg-type]


def test_off_by_default_and_one_recorder_per_file(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    reorder(TEXTS, SCORES)
    assert not path.exists()
    assert as_recorder(None) is None
    assert as_recorder(path) is as_recorder(str(path))  # one writer per file in a process


def test_the_writer_thread_writes_without_a_flush(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    recorder = RetrievalRecorder(path, interval=0.05)
    recorder.record(_call())
    deadline = time.monotonic() + 10
    while not path.stat().st_size and time.monotonic() < deadline:
        time.sleep(0.02)
    recorder.close()
    assert len(list(read_retrievals(path))) == 1


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


@pytest.fixture
def no_umask() -> Iterator[None]:
    """Files as their creator's mode makes them, nothing masked."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


@pytest.mark.usefixtures("no_umask")
def test_files_are_created_readable_by_their_owner_only_rotated_ones_too(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    line = len(_call().record().to_json_line()) + 1
    recorder = RetrievalRecorder(path, max_bytes=line, backups=2)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # created when the recorder is made
    for _ in range(3):
        recorder.record(_call())
        recorder.flush()
    files = sorted(tmp_path.iterdir())
    assert [p.name for p in files] == ["r.jsonl", "r.jsonl.1", "r.jsonl.2"]
    assert {stat.S_IMODE(p.stat().st_mode) for p in files} == {0o600}


def test_a_call_is_recorded_as_it_was_placed(tmp_path: Path) -> None:
    """Issue 48, 3: the record held the caller's objects as they were when the writer ran."""
    recorder = RetrievalRecorder(tmp_path / "r.jsonl", metadata=["title"])
    _held(recorder)
    chunks = list(TEXTS)
    scores = list(SCORES)
    docs = [{"text": t, "title": t.upper()} for t in TEXTS]
    placement = reorder(chunks, scores, recorder=recorder)
    placer: Bookend[Any] = Bookend()
    deliver(
        placer.place(docs, SCORES, lengths=[1.0] * 4),
        placer,
        recorder,
        source="import",
        items=docs,
        scores=SCORES,
        metadata=lambda doc: doc,
    )
    chunks[0], scores[0] = "changed", 0.0  # after the calls
    docs[1]["text"], docs[1]["title"] = "changed", "CHANGED"
    recorder.flush()
    first, second = read_retrievals(tmp_path / "r.jsonl")
    assert [d.text for d in first.documents] == TEXTS
    assert [d.score for d in first.documents] == SCORES
    assert first.order == list(placement.order)
    assert [d.text for d in second.documents] == TEXTS
    assert [d.metadata for d in second.documents] == [{"title": t.upper()} for t in TEXTS]


class _Chunk:
    def __init__(self, text: str) -> None:
        self.text = text


@pytest.mark.parametrize(
    ("items", "settings"),
    [
        (TEXTS, {}),
        ([{"text": t, "id": i} for i, t in enumerate(TEXTS)], {}),  # reorder's default: a key
        ([_Chunk(t) for t in TEXTS], {}),  # or an attribute
        ([{"body": t} for t in TEXTS], {"text": "body"}),  # text= a key name
        ([(t, 0) for t in TEXTS], {"text": lambda pair: pair[0]}),  # text= a function
    ],
    ids=["strings", "text key", "text attribute", "text= a key", "text= a function"],
)
def test_every_input_reorder_reads_is_recorded(
    tmp_path: Path, items: list[Any], settings: dict[str, Any]
) -> None:
    """Issue 48, 3: items read from a ``text`` key or attribute were placed, not recorded."""
    recorder = RetrievalRecorder(tmp_path / "r.jsonl")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RecorderWarning)
        placement = reorder(items, SCORES, recorder=recorder, **settings)
        recorder.flush()
    (record,) = read_retrievals(tmp_path / "r.jsonl")
    assert [d.text for d in record.documents] == TEXTS
    assert record.order == list(placement.order)


def test_a_call_that_cannot_be_recorded_is_counted_and_told(tmp_path: Path) -> None:
    recorder = RetrievalRecorder(tmp_path / "r.jsonl")
    # Placed by the lengths given, so no text is read for the placement: none to record either.
    with pytest.warns(RecorderWarning, match=r"1 call not recorded \(items\[0\] has no text") as w:
        assert reorder([1, 2, 3, 4], SCORES, recorder=recorder, lengths=[1, 1, 1, 1]).order
    assert w[0].filename == __file__  # the user's line
    reorder(TEXTS, SCORES, recorder=recorder)
    recorder.flush()
    (record,) = read_retrievals(tmp_path / "r.jsonl")
    assert record.unrecorded == 1


def test_calls_beyond_what_waits_are_dropped_counted_in_the_file_and_told(tmp_path: Path) -> None:
    """Issue 48, 5: 25% of a loop's calls were lost, the count nowhere in the file."""
    recorder = RetrievalRecorder(tmp_path / "r.jsonl", buffer=2, warn_every=3600)
    _held(recorder)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(40):
            reorder(TEXTS, SCORES, recorder=recorder, question="q")
        told_during = _recorder_warnings(caught)
        recorder.flush()
    # The first drop told at once, at the user's line; the rest within the interval at the flush.
    assert len(told_during) == 1
    assert (
        "1 call not recorded (32 calls were waiting for the writer, on_full='drop'"
        in (told_during[0])
    )
    assert caught[0].filename == __file__
    assert "7 calls not recorded" in _recorder_warnings(caught)[-1]
    records = list(read_retrievals(tmp_path / "r.jsonl"))
    assert len(records) == 32
    assert [r.unrecorded for r in records] == [8] + [0] * 31
    assert sum(r.unrecorded for r in records) + len(records) == 40


def test_block_makes_a_call_wait_for_room(tmp_path: Path) -> None:
    recorder = RetrievalRecorder(tmp_path / "r.jsonl", buffer=2, on_full="block", max_wait=60)
    _held(recorder)
    for _ in range(32):
        recorder.record(_call())
    waiting = threading.Thread(target=recorder.record, args=(_call(question="the 33rd"),))
    waiting.start()
    waiting.join(0.2)
    assert waiting.is_alive()  # it waits for room
    recorder.flush()  # room: the waiting call goes in
    waiting.join(10)
    assert not waiting.is_alive()
    recorder.flush()
    records = list(read_retrievals(tmp_path / "r.jsonl"))
    assert len(records) == 33
    assert records[-1].question == "the 33rd"
    assert all(r.unrecorded == 0 for r in records)


def test_block_waits_a_bounded_time_then_drops_and_counts(tmp_path: Path) -> None:
    recorder = RetrievalRecorder(tmp_path / "r.jsonl", buffer=1, on_full="block", max_wait=0.05)
    _held(recorder)
    for _ in range(16):
        recorder.record(_call())
    start = time.monotonic()
    with pytest.warns(RecorderWarning, match="1 call not recorded"):
        recorder.record(_call())
    assert time.monotonic() - start >= 0.05
    recorder.flush()
    assert next(read_retrievals(tmp_path / "r.jsonl")).unrecorded == 1


def test_threads_and_tasks_record_every_call_once(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    recorder = RetrievalRecorder(path, buffer=32, interval=0.01)  # at most 512 wait: all kept

    def calls(who: str, n: int) -> None:
        for i in range(n):
            reorder(TEXTS, SCORES, recorder=recorder, suffix_tokens=i % 3, question=f"{who} {i}")

    threads = [threading.Thread(target=calls, args=(f"thread {t}", 50)) for t in range(6)]
    for thread in threads:
        thread.start()

    async def task(t: int) -> None:
        for i in range(10):
            calls(f"task {t} {i}", 1)
            await asyncio.sleep(0)  # the tasks interleave

    async def tasks() -> None:
        await asyncio.gather(*(task(t) for t in range(5)))

    asyncio.run(tasks())
    for thread in threads:
        thread.join()
    recorder.close()
    questions = [str(r.question) for r in read_retrievals(path)]
    expected = [f"thread {t} {i}" for t in range(6) for i in range(50)]
    expected += [f"task {t} {i} 0" for t in range(5) for i in range(10)]
    assert sorted(questions) == sorted(expected)  # each once


def _one_call(path: str, i: int) -> int:
    reorder(TEXTS, SCORES, recorder=path, question=f"child {i}")
    return os.getpid()


def _hundred_calls(path: str) -> None:
    for i in range(100):
        _one_call(path, i)


@pytest.mark.parametrize("how", ["process", "pool"])
def test_a_forked_child_records_each_of_its_calls_once(tmp_path: Path, how: str) -> None:
    """Issue 48, 2: a fork child lost all 100 of its calls (multiprocessing children leave
    through ``os._exit``), and a flush in the child wrote the parent's waiting call again."""
    path = str(tmp_path / "r.jsonl")
    reorder(TEXTS, SCORES, recorder=path, question="parent")  # waits in the parent's recorder
    fork = multiprocessing.get_context("fork")
    if how == "process":
        child = fork.Process(target=_hundred_calls, args=(path,))
        child.start()
        child.join(60)
        assert child.exitcode == 0
    else:
        pool = fork.Pool(2)
        pids = pool.starmap(_one_call, [(path, i) for i in range(100)])
        pool.close()  # the workers exit normally
        pool.join()
        assert os.getpid() not in pids
    as_recorder(path).flush()  # type: ignore[union-attr]
    questions = [str(r.question) for r in read_retrievals(path)]
    assert sorted(questions) == sorted(["parent"] + [f"child {i}" for i in range(100)])


def test_a_path_the_recorder_cannot_append_to_is_refused_when_made(tmp_path: Path) -> None:
    """Issue 48, 5: an unwritable path was found at the first write, a second later."""
    too_long = tmp_path / ("r" * 300 + ".jsonl")
    with pytest.raises(ValueError, match=r"^recorder='.*' cannot be opened for appending") as info:
        RetrievalRecorder(too_long)
    assert "\n" not in str(info.value)
    with pytest.raises(ValueError, match=r"^retrievals='.*' cannot be opened for appending"):
        as_recorder(too_long, param="retrievals")


def test_a_directory_that_takes_no_file_is_refused_when_made(tmp_path: Path) -> None:
    # A directory without write permission refuses nobody when the tests run as root (CI does):
    # /proc refuses every new file, root's too; elsewhere, a directory without write permission.
    locked = Path("/proc")
    if not locked.is_dir():
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
    with pytest.raises(ValueError, match=r"^recorder='.*' cannot be opened for appending"):
        RetrievalRecorder(locked / "r.jsonl")


def test_each_distinct_write_failure_is_counted_and_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorder = RetrievalRecorder(tmp_path / "r.jsonl", warn_every=3600)
    _held(recorder)
    failures = [
        OSError(errno.ENOSPC, "No space left on device"),
        OSError(errno.ENOSPC, "No space left on device"),
        PermissionError(errno.EACCES, "Permission denied"),
    ]
    append = recorder._append

    def failing(data: bytes) -> None:
        if failures:
            raise failures.pop(0)
        append(data)

    monkeypatch.setattr(recorder, "_append", failing)
    told: list[str] = []
    for calls in (1, 2, 1):
        for _ in range(calls):
            recorder.record(_call())
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            recorder._drain()  # the writer thread's work: it tells nothing itself
            recorder.record(_call(question="next"))  # the next call tells what is due
        recorder._pending.pop()
        told += _recorder_warnings(caught)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        recorder.flush()  # every loss counted, due or not
    told += _recorder_warnings(caught)
    assert told == [
        # The first of a kind at once; a second of the same kind waits for the interval.
        "recorder=" + repr(str(tmp_path / "r.jsonl")) + ": 1 call not recorded (OSError: "
        "[Errno 28] No space left on device)",
        "recorder=" + repr(str(tmp_path / "r.jsonl")) + ": 1 call not recorded (PermissionError: "
        "[Errno 13] Permission denied)",
        "recorder=" + repr(str(tmp_path / "r.jsonl")) + ": 2 calls not recorded (OSError: "
        "[Errno 28] No space left on device)",
    ]
    recorder.record(_call())
    recorder.flush()
    (record,) = read_retrievals(tmp_path / "r.jsonl")
    assert record.unrecorded == 4


def _docs_call(
    recorder: Any, source: RecordSource = "langchain", question: str | None = None
) -> None:
    """A call as an adapter makes it: its items read by its own text and metadata functions."""
    meta = [{"title": t.upper(), "api_key": "sk-1", "n": [1]} for t in TEXTS]
    docs = [{"content": t, "meta": m} for t, m in zip(TEXTS, meta, strict=True)]
    placer: Bookend[Any] = Bookend(text=lambda doc: doc["content"])
    deliver(
        placer.place(docs, SCORES),
        placer,
        recorder,
        source=source,
        items=docs,
        scores=SCORES,
        question=question,
        text=lambda doc: doc["content"],
        metadata=lambda doc: doc["meta"],
    )


def test_no_metadata_is_recorded_unless_allowed(tmp_path: Path) -> None:
    """Issue 48, 6: every scalar metadata value was recorded (``api_key``, ``password``)."""
    default = RetrievalRecorder(tmp_path / "a.jsonl")
    allowed = RetrievalRecorder(tmp_path / "b.jsonl", metadata=["title", "n"])
    named = as_recorder(tmp_path / "c.jsonl")
    for recorder in (default, allowed, named):
        _docs_call(recorder)
        recorder.flush()  # type: ignore[union-attr]
    for name in ("a.jsonl", "c.jsonl"):  # the constructor's default, and a path's
        (record,) = read_retrievals(tmp_path / name)
        assert [d.metadata for d in record.documents] == [{}] * 4
    (record,) = read_retrievals(tmp_path / "b.jsonl")  # a nested value is no scalar: never kept
    assert [d.metadata for d in record.documents] == [{"title": t.upper()} for t in TEXTS]


def test_a_callable_redacts_each_record_or_skips_it(tmp_path: Path) -> None:
    seen: list[RetrievalRecord] = []

    def redact(record: RetrievalRecord) -> dict[str, Any] | None:
        seen.append(record)
        if record.question == "skip me":
            return None
        data = record.model_dump()
        data["question"] = "[redacted]"
        for doc in data["documents"]:
            doc["metadata"].pop("api_key")
        return data

    recorder = RetrievalRecorder(tmp_path / "r.jsonl", metadata=redact)
    _docs_call(recorder, question="secret question")
    _docs_call(recorder, question="skip me")
    recorder.flush()
    assert seen[0].documents[0].metadata == {"title": "ALPHA", "api_key": "sk-1"}  # every scalar
    (record,) = read_retrievals(tmp_path / "r.jsonl")
    assert record.question == "[redacted]"
    assert [d.metadata for d in record.documents] == [{"title": t.upper()} for t in TEXTS]
    assert record.unrecorded == 0  # a skipped record is no loss


@pytest.mark.parametrize("metadata", ["title", 3, [1]])
def test_bad_metadata_is_one_line(tmp_path: Path, metadata: Any) -> None:
    with pytest.raises(ValueError, match=r"^metadata must be a list of the metadata keys"):
        RetrievalRecorder(tmp_path / "r.jsonl", metadata=metadata)


def test_bookend_record_0_turns_every_recorder_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 48, 6: no switch turned every recorder off. Read when a recorder is made or named."""
    monkeypatch.setenv("BOOKEND_RECORD", "0")
    calls: list[Retrieval] = []

    class Collect:
        def record(self, call: Retrieval) -> None:
            calls.append(call)

    made = RetrievalRecorder(tmp_path / "made.jsonl")
    reorder(TEXTS, SCORES, recorder=made)
    reorder(TEXTS, SCORES, recorder=tmp_path / "named.jsonl")
    reorder(TEXTS, SCORES, recorder=Collect())
    _docs_call(as_recorder(Collect()))
    made.flush()
    assert calls == []
    assert sorted(tmp_path.iterdir()) == []  # no file created
    with pytest.raises(ValueError, match="has no such directory"):  # a bad path still refused
        RetrievalRecorder(tmp_path / "no" / "r.jsonl")
    monkeypatch.setenv("BOOKEND_RECORD", "1")
    reorder(TEXTS, SCORES, recorder=Collect())
    assert len(calls) == 1


def test_no_text_nor_question_in_any_warning_or_log_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    secret = "SECRET-7f3a"

    class Broken:
        def record(self, call: Retrieval) -> None:
            raise RuntimeError(f"cannot take {call.texts[0]}")

    def broken_text(item: Any) -> str:
        raise KeyError(f"{item} {secret}")

    def broken_redactor(record: RetrievalRecord) -> None:
        raise ValueError(f"no {record.question}")

    texts = [f"{secret} {t}" for t in TEXTS]
    caplog.set_level(logging.WARNING, logger="bookend_rag")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reorder(texts, SCORES, recorder=Broken(), question=secret)
        reorder(texts, SCORES, recorder=Broken(), text=broken_text, lengths=[1, 1, 1, 1])
        reorder([5, texts[0]], [0.1, 0.2], recorder=tmp_path / "a.jsonl", lengths=[1, 1])
        redacting = RetrievalRecorder(tmp_path / "b.jsonl", metadata=broken_redactor)
        reorder(texts, SCORES, recorder=redacting, question=secret)
        redacting.flush()
        full = RetrievalRecorder(tmp_path / "c.jsonl", buffer=1)
        _held(full)
        for _ in range(QUESTIONLESS_TOLD_AFTER):
            reorder(texts, SCORES, recorder=full)
        full.flush()
    told = [str(w.message) for w in caught] + [r.getMessage() for r in caplog.records]
    assert len(_recorder_warnings(caught)) >= 6
    assert told
    assert not [line for line in told if secret in line]


@pytest.mark.parametrize(
    ("source", "fix"),
    [
        ("langchain", "ContextualCompressionRetriever(base_compressor=BookendReorder(...))"),
        ("haystack", '{"ranker": {"query": q}}'),
        ("reorder", "pass question= to reorder"),
    ],
)
def test_calls_without_a_question_are_told_once_with_the_fix(
    tmp_path: Path, source: RecordSource, fix: str
) -> None:
    """Issue 48, 1: the pipelines the docs show recorded ``question: null``, and ``tune
    --retrievals`` skipped every record without a word."""
    recorder = RetrievalRecorder(tmp_path / "r.jsonl")
    _docs_call(recorder, source=source, question="asked")  # one with a question
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3 * QUESTIONLESS_TOLD_AFTER):
            _docs_call(recorder, source=source)
    (told,) = _recorder_warnings(caught)
    assert f"{QUESTIONLESS_TOLD_AFTER} calls recorded without a question" in told
    assert "`bookend tune --retrievals` cannot use" in told
    assert fix in told
    assert "\n" not in told
    assert caught[0].filename == __file__


def test_an_object_recorder_that_raises_is_a_warning() -> None:
    class Broken:
        def record(self, call: Retrieval) -> None:
            raise RuntimeError("queue full")

    with pytest.warns(RecorderWarning, match=r"call not recorded \(RuntimeError\)"):
        assert reorder(TEXTS, SCORES, recorder=Broken()).order


def test_an_object_recorder_gets_each_call() -> None:
    calls: list[Retrieval] = []

    class Collect:
        def record(self, call: Retrieval) -> None:
            calls.append(call)

    placement = reorder(TEXTS, SCORES, recorder=Collect())
    assert [c.record().order for c in calls] == [list(placement.order)]
    assert calls[0].metadata is None  # it names no metadata_keys: none copied


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


def test_bad_settings_are_one_line(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    with pytest.raises(ValueError, match=r"^on_full must be 'drop' or 'block', got on_full='wait'"):
        RetrievalRecorder(path, on_full="wait")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^max_wait must be a number of seconds >= 0"):
        RetrievalRecorder(path, max_wait=-1)


def test_identity_order_finds_each_placed_item_among_the_retrieved() -> None:
    docs = [{"t": t} for t in TEXTS]
    call = Retrieval.of(
        docs,
        None,
        model="llama-3.1-8b",
        order=None,
        kept=[docs[2], docs[0]],
        source="haystack",
        text=lambda d: d["t"],
    )
    assert call.record().order == [2, 0]


def test_the_cli_records_the_chunks_fields_it_is_told_to_as_metadata(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    chunks = '[{"text": "a", "score": 0.1, "title": "A", "token": "t"}, {"text": "b"}]'
    for name, allowed in (("none.jsonl", []), ("title.jsonl", ["--record-metadata", "title"])):
        monkeypatch.setattr(sys, "stdin", io.StringIO(chunks))
        args = ["reorder", "--recorder", str(tmp_path / name), "--question", "Who?", *allowed]
        assert main(args) == 0
    capsys.readouterr()
    (plain,) = read_retrievals(tmp_path / "none.jsonl")
    (record,) = read_retrievals(tmp_path / "title.jsonl")
    assert (record.source, record.question) == ("cli", "Who?")
    assert [d.metadata for d in plain.documents] == [{}, {}]
    assert [(d.text, d.score, d.metadata) for d in record.documents] == [
        ("a", 0.1, {"title": "A"}),
        ("b", None, {}),
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
