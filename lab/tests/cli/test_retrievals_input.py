"""What ``bookend tune --retrievals`` and ``bookend eval --retrievals`` read (issue 48): a bad line
named in one line of at most 200 characters (file, line, field), a line still being written
skipped and counted, several files, a glob and a recorder's rotated parts read oldest first, the
calls the recorder could not record reported, files that can give no probe refused before any
model loads, and a dry run that states the answers generated apart from the budgeted scoring."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import bookend_rag_lab.experiments.evaluate as evaluate_module
import bookend_rag_lab.experiments.tune as tune_module
from bookend_rag.cli import main
from bookend_rag.retrievals import RecordedDocument, RetrievalRecord

NO_MODEL = "/nonexistent/model-dir"

_TOPICS = ["harbour", "railway", "library", "orchard", "bridge", "market", "castle", "canal"]


def _records(n: int, k: int, *, first: int = 0, **fields: Any) -> list[RetrievalRecord]:
    """``n`` retrievals of ``k`` scored documents, each with its own question (numbered from
    ``first``), with ``fields`` changed."""
    records = []
    for r in range(first, first + n):
        texts = [
            f"The {_TOPICS[(r + d) % len(_TOPICS)]} of town {r} was built in year {1800 + d}."
            for d in range(k)
        ]
        documents = [RecordedDocument(text=t, score=1.0 - d / k) for d, t in enumerate(texts)]
        record = {"question": f"question {r}?", "documents": documents, **fields}
        records.append(RetrievalRecord(**record))
    return records


def _write(path: Path, records: list[RetrievalRecord], tail: str = "") -> Path:
    path.write_text("".join(r.to_json_line() + "\n" for r in records) + tail, encoding="utf-8")
    return path


@pytest.fixture
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any model loaded by ``eval`` or ``tune`` fails the test."""

    def refuse(*args: object, **kwargs: object) -> object:
        raise AssertionError("a model was loaded")

    monkeypatch.setattr(tune_module, "scorer_for", refuse)
    monkeypatch.setattr(evaluate_module, "scorer_for", refuse)


def _error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one-line error of a refused command, without its ``bookend CMD: error:`` prefix."""
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err.split(": error: ", 1)[1]


#: Another tool's log line: JSON, but no record (pydantic named 9 problems in 412 characters).
_OTHER = json.dumps(
    {
        "query": "Which river runs through the old town and where does it meet the sea?",
        "results": [{"id": i, "content": "x" * 40, "relevance": 0.5} for i in range(3)],
        "latency_ms": 12.5,
    }
)


@pytest.mark.parametrize(
    ("line", "names"),
    [
        (_OTHER, ":2: field 'query' is not one of a bookend-retrievals/2 record"),
        (
            json.dumps({"documents": [{"text": "a", "score": "high"}] * 20}),
            ":2: documents.0={'text': 'a', 'score': 'high'}: score='high'",
        ),
        (
            json.dumps({"schema": "bookend-retrievals/3", "documents": [{"text": "a"}]}),
            ":2: schema='bookend-retrievals/3' is not one this version of bookend reads "
            "(bookend-retrievals/1, bookend-retrievals/2)",
        ),
    ],
    ids=["another-schema", "bad-field", "unknown-version"],
)
@pytest.mark.parametrize("command", ["eval", "tune"])
def test_a_bad_line_is_named_in_one_line_of_at_most_200_characters(
    command: str, line: str, names: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path / "r.jsonl", _records(1, 3), tail=line + "\n")
    argv = [command, "--weights", NO_MODEL, "--retrievals", str(path)]
    message = _error([*argv, "--out", str(tmp_path / "out")], capsys)
    assert message.startswith(f"{path}{names}"), message
    assert len(message) <= 200, (len(message), message)


def test_rotated_files_a_glob_and_a_partial_line_are_read_and_counted(
    saved_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A recorder's file rotated twice (r.jsonl.2 the oldest), its newest part still being
    # written, and another file named beside the pattern; 2 x 3 calls the recorder could not
    # record.
    _write(tmp_path / "r.jsonl.2", _records(2, 3, first=0))
    _write(tmp_path / "r.jsonl.1", _records(2, 3, first=2, unrecorded=3))
    newest = _records(2, 3, first=4)
    _write(tmp_path / "r.jsonl", newest, tail=newest[0].to_json_line()[:25])
    other = _write(tmp_path / "other.jsonl", _records(1, 3, first=6))
    argv = ["tune", "--weights", str(saved_model), "--threads", "1", "--no-progress"]
    argv += ["--retrievals", str(other), str(tmp_path / "r.jsonl*"), "--dry-run"]
    assert main([*argv, "--out", str(tmp_path / "out")]) == 0
    captured = capsys.readouterr()
    summary = (
        "7 self-answer probes from 7 retrievals; 1 cut-off last line skipped (a file still "
        "being written); 6 calls the recorder could not record"
    )
    assert summary in captured.err  # the status line
    assert f"no labels: {summary}; 7 probes used by this run." in captured.out
    assert f"(`{other} {tmp_path / 'r.jsonl*'}`)" in captured.out


def test_the_report_names_the_files_in_the_order_read(tmp_path: Path) -> None:
    from bookend_rag_lab.experiments.runspec import RunSpec

    for name, first in (("r.jsonl.1", 0), ("r.jsonl", 2), ("r.jsonl.10", 4), ("s.jsonl", 6)):
        _write(tmp_path / name, _records(2, 3, first=first))
    pattern = str(tmp_path / "r.jsonl*")
    loaded = RunSpec(retrievals=[pattern, tmp_path / "s.jsonl"]).load(
        suite="hard", n_items=1, split="calibration"
    )
    assert loaded.pending is not None
    assert [r.question for r in loaded.pending.records] == [
        f"question {i}?" for i in (4, 5, 0, 1, 2, 3, 6, 7)
    ]
    source = loaded.settings["source"]
    names = ["r.jsonl.10", "r.jsonl.1", "r.jsonl", "s.jsonl"]
    assert source["files"] == [str(tmp_path / name) for name in names]
    assert (source["retrievals"], source["partial_lines"], source["unrecorded"]) == (
        f"{pattern} {tmp_path / 's.jsonl'}",
        0,
        0,
    )


@pytest.mark.parametrize(
    ("records", "tail", "probes", "message"),
    [
        (
            _records(40, 3, question=None),
            "",
            "self-answer",
            "none of its 40 retrievals can give a self-answer probe: 40 skipped: no question "
            "recorded (self-answer probes ask the user's own)",
        ),
        (
            _records(30, 1),
            "",
            "codes",
            "none of its 30 retrievals can give a codes probe: 30 skipped: fewer than 2 documents",
        ),
        (
            [],
            '{"question": "half a line',
            "self-answer",
            "holds no retrieval: 0 records, 1 cut-off last line skipped (a file still being "
            "written)",
        ),
    ],
    ids=["no-question", "one-document", "empty"],
)
@pytest.mark.parametrize("command", ["eval", "tune"])
def test_a_file_that_gives_no_probe_is_refused_before_any_model_loads(
    command: str,
    records: list[RetrievalRecord],
    tail: str,
    probes: str,
    message: str,
    no_model: None,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = _write(tmp_path / "r.jsonl", records, tail)
    argv = [command, "--weights", NO_MODEL, "--retrievals", str(path), "--probes", probes]
    found = _error([*argv, "--out", str(tmp_path / "out")], capsys)
    assert found == f"retrievals={str(path)!r}: {message}" or found == (
        f"retrievals={str(path)!r} {message}"
    ), found


def test_the_dry_run_states_the_answers_apart_from_the_budgeted_scoring(
    saved_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path / "r.jsonl", _records(12, 4))
    argv = ["tune", "--weights", str(saved_model), "--retrievals", str(path), "--threads", "1"]
    argv += ["--no-progress", "--max-calls", "20", "--dry-run", "--out", str(tmp_path / "out")]
    assert main(argv) == 0
    out = capsys.readouterr().out
    # 12 x 4 answers, generated before any scoring and outside --max-calls, then 20 scoring calls.
    assert "at most 68 model calls" in out
    assert "Of these, 48 calls (" in out
    assert "one per document of the 12 retrievals probed, and at most 20 calls (" in out
    assert "--max-calls and --max-tokens bound the scoring only" in out


def test_the_dry_run_bounds_the_answers_a_run_may_read_on_to(
    saved_model: Path, tmp_path: Path
) -> None:
    from bookend_rag_lab.experiments.runspec import RunSpec
    from bookend_rag_lab.experiments.tune import tune
    from bookend_rag_lab.models.backends import ScorerSpec

    path = _write(tmp_path / "r.jsonl", _records(12, 4))
    run = RunSpec(retrievals=path, n_items=5)
    spec = ScorerSpec(weights=saved_model, cache=tmp_path / "calls.jsonl")
    cost = tune(run, spec, dry_run=True, max_calls=20, progress=False).report["dry_run"]
    # Five probes priced (5 x 4 answers); a run whose probes give none reads on to all 12.
    assert cost["answers"]["calls"] == 20
    assert cost["answers"]["most_calls"] == 48
    assert cost["scoring"]["calls"] == 20
    assert cost["calls"] == 40
