"""A run's files read alike plain and compressed; a plain file is the newer; compressing replaces a
report and extends a call log; a call cache resumes from a compressed log."""

from __future__ import annotations

import json
import lzma
from pathlib import Path

import pytest

from bookend_rag_lab.models import CallCache
from bookend_rag_lab.models.scorer import Continuations
from bookend_rag_lab.runfiles import (
    compress,
    compressed,
    compressed_text,
    read_json,
    read_text,
    stored,
)


def test_a_report_reads_the_same_plain_and_compressed(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    path.write_text(json.dumps({"model": "m", "n": 3}), encoding="utf-8")
    plain = read_json(path)
    packed = compress(path)
    assert packed == tmp_path / "report.json.xz"
    assert not path.exists()
    assert stored(path)
    assert json.loads(lzma.decompress(packed.read_bytes())) == plain  # a standard .xz file
    assert read_json(path) == plain == {"model": "m", "n": 3}


def test_the_plain_file_is_read_before_its_compressed_copy(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    path.write_text("old", encoding="utf-8")
    compress(path)
    path.write_text("new", encoding="utf-8")  # a run wrote the report afresh
    assert read_text(path) == "new"
    compress(path)  # and it replaces the copy
    assert read_text(path) == compressed_text(path) == "new"


def test_neither_form_is_a_missing_file_named_plain(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    assert not stored(path)
    assert compressed_text(path) == ""
    with pytest.raises(FileNotFoundError, match=r"report\.json'"):
        read_text(path)
    assert compressed(path).name == "report.json.xz"


def test_compressing_a_call_log_keeps_its_earlier_calls(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    path.write_text('{"key": "a"}\n{"key": "b"}', encoding="utf-8")  # no final newline
    compress(path, append=True)
    path.write_text('{"key": "c"}\n', encoding="utf-8")
    compress(path, append=True)
    keys = [json.loads(line)["key"] for line in read_text(path).splitlines()]
    assert keys == ["a", "b", "c"]


def test_a_cache_resumes_from_a_compressed_log_and_writes_new_calls_plain(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    first = CallCache(path)
    first.put("k1", Continuations((-1.0,), (True,)))
    first.put("k2", Continuations((), (), "Paris"))
    compress(path, append=True)  # as the repository keeps it
    resumed = CallCache(path)
    assert len(resumed) == 2
    assert resumed.get("k2") == Continuations((), (), "Paris")
    resumed.put("k3", Continuations((-0.5,), (False,)))
    # The compressed log is left as it was; the new call went to the plain file beside it.
    assert [json.loads(line)["key"] for line in path.read_text(encoding="utf-8").splitlines()] == [
        "k3"
    ]
    assert len(CallCache(path)) == 3
    compress(path, append=True)
    assert not path.exists()
    again = CallCache(path)
    assert {k: again.get(k) for k in ("k1", "k3")} == {
        "k1": Continuations((-1.0,), (True,)),
        "k3": Continuations((-0.5,), (False,)),
    }
