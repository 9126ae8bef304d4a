"""A run's files read alike plain and compressed; a plain file is the newer; compressing replaces a
report and extends a call log; a call cache resumes from a compressed log; a directory another
process writes is refused, by ``bookend tune`` and ``eval`` too, and is free once that process
dies."""

from __future__ import annotations

import json
import lzma
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from bookend_rag.cli import main
from bookend_rag_lab.models import CallCache
from bookend_rag_lab.models.scorer import Continuations
from bookend_rag_lab.runfiles import (
    compress,
    compressed,
    compressed_text,
    read_json,
    read_text,
    stored,
    writing,
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


@contextmanager
def _held_elsewhere(directory: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding ``directory`` (:func:`writing`) until the block ends."""
    hold = f"from bookend_rag_lab.runfiles import writing\nwith writing({str(directory)!r}):\n"
    hold += "    print('held', flush=True)\n    input()\n"
    holder = subprocess.Popen(
        [sys.executable, "-c", hold], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        yield holder
    finally:
        holder.kill()
        holder.wait()


def test_a_directory_another_process_writes_is_refused_until_it_dies(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with _held_elsewhere(out) as holder:
        expected = (
            f"out_dir {str(out)!r} is being written by another run (process {holder.pid}); "
            "wait for it to finish or choose another directory"
        )
        with pytest.raises(ValueError, match=f"^{re.escape(expected)}$"), writing(out):
            pass
    # The holder was killed, not closed: the operating system released its lock.
    with writing(out):
        assert (out / ".lock").read_text(encoding="utf-8") == str(os.getpid())
    with writing(None):  # a run without a directory holds nothing
        pass


def _items(path: Path) -> Path:
    rows = [
        {
            "id": f"q{i}",
            "question": f"What is the code of entity {i}?",
            "documents": [f"The code of entity {i}-{j} is {10 * i + j}." for j in range(3)],
            "answer": str(10 * i),
            "candidates": [str(10 * i + j) for j in range(3)],
            "gold": 0,
        }
        for i in range(12)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("command", ["tune", "eval"])
def test_a_run_into_a_directory_another_run_writes_stops_before_loading_its_model(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    argv = [command, "--items-file", str(_items(tmp_path / "items.jsonl")), "--out", str(out)]
    argv += ["--weights", str(tmp_path / "missing"), "--no-progress"]
    with _held_elsewhere(out) as holder:
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
    assert err.startswith(f"bookend {command}: error: out_dir {str(out)!r} is being written")
    assert f"(process {holder.pid})" in err
    assert "\n" not in err
    assert sorted(p.name for p in out.iterdir()) == [".lock"]  # no call, no report
    # Free again, the same run gets as far as its model (whose weights are missing here).
    assert main(argv) == 2
    assert "missing" in capsys.readouterr().err
