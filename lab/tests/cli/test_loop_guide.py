"""The loop guide (docs/guides/loop.md) as written: its LangChain chain records each question
with the store's scores, and its ``bookend tune --weights ... --retrievals ... --dry-run``
builds a probe from every one of them (issue 48: the chain the docs showed recorded
``question: null``, and tune skipped every record). The tiny random model stands in for
``./my-model``: a dry run loads the tokenizer and generates nothing."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from bookend_rag.cli import main
from bookend_rag.retrievals import read_retrievals
from bookend_rag_lab.experiments.wall_time import TIMED_CALLS

GUIDE = Path(__file__).resolve().parents[3] / "docs" / "guides" / "loop.md"


def _blocks(language: str) -> list[str]:
    text = GUIDE.read_text(encoding="utf-8")
    return re.findall(rf"^```{language}\n(.*?)^```", text, re.S | re.M)


def _local_dry_run() -> list[str]:
    """The guide's dry run on local weights, as its arguments."""
    lines = "\n".join(_blocks("bash")).replace("\\\n", " ").splitlines()
    (line,) = [ln for ln in lines if "--weights" in ln and "--dry-run" in ln]
    return shlex.split(line.split("#", 1)[0])[1:]


def test_the_guides_chain_records_questions_and_tune_builds_probes_from_them(
    saved_model: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    counted: list[str],
) -> None:
    namespace: dict[str, Any] = {"__name__": "__guide__"}
    exec(compile(_blocks("python")[0], str(GUIDE), "exec"), namespace)  # its asserts hold
    recorded: Path = namespace["path"]
    records = list(read_retrievals(recorded))
    assert records
    assert all(r.question for r in records)
    # The command as the guide writes it, run where the file is, ./my-model the tiny model.
    work = tmp_path / "work"
    work.mkdir()
    (work / "retrievals.jsonl").write_bytes(recorded.read_bytes())
    (work / "my-model").symlink_to(saved_model, target_is_directory=True)
    monkeypatch.chdir(work)
    assert main([*_local_dry_run(), "--no-progress"]) == 0
    out = capsys.readouterr().out
    n = len(records)
    assert f"{n} self-answer probes from {n} retrievals" in out  # none skipped for no question
    assert len(counted) == TIMED_CALLS  # nothing judged: only the calls that time the run
    assert "Wall time on this machine: about " in out
