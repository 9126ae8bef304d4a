"""The committed evidence under ``bench/`` is kept compressed and still reproduces: the scripts run
as the Makefile runs them, and ``bench/label_free.py --judge-only``, read the compressed reports
and write the JSON the repository holds, number for number."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import label_free
import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
#: The virtualenv ``make -n`` is pointed at: a path that does not exist, replaced by this Python.
VENV = ".venv-of-the-evidence-test"


def _committed(name: str) -> Any:
    return json.loads((BENCH / name).read_text(encoding="utf-8"))


def test_the_runs_are_kept_compressed_and_without_their_figures() -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    listed = subprocess.run(
        ["git", "ls-files", "bench"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    names = {Path(p).name for p in listed}
    assert {"report.json.xz", "calls.jsonl.xz", "retrievals.jsonl.xz"} <= names
    plain = {"report.json", "calls.jsonl", "retrievals.jsonl"}
    figures = {"strategies.png", "position_curve.png", "tune.png"}
    assert [p for p in listed if Path(p).name in plain | figures] == []


@pytest.mark.parametrize(
    ("target", "script", "written"),
    [
        ("suites", "default_matrix.py", "default_matrix.json"),
        ("tune", "tuned_cells.py", "tuned_cells.json"),
        ("prompts", "prompt_cells.py", "prompt_cells.json"),
        ("sequential", "sequential_cells.py", "sequential_cells.json"),
    ],
)
def test_the_makefiles_scripts_reproduce_their_json_from_the_compressed_reports(
    target: str, script: str, written: str, tmp_path: Path
) -> None:
    printed = subprocess.run(
        ["make", "-n", target, f"VENV={VENV}"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    line = next(line for line in printed.splitlines() if f"{script} " in line)
    python = f"{VENV}/bin/python"
    line = line.replace(f"../{python}", sys.executable).replace(python, sys.executable)
    out = tmp_path / written
    line = re.sub(r"--json \S+", f"--json {out}", line)
    # A shell runs the recipe's line as make would (the tune target's starts with cd bench &&).
    subprocess.run(line, shell=True, cwd=ROOT, check=True, capture_output=True)
    assert json.loads(out.read_text(encoding="utf-8")) == _committed(written)


@pytest.mark.parametrize(
    ("model", "written"),
    [
        ("smollm2", "label_free.json"),
        ("gemma3", "label_free_gemma3.json"),
        ("qwen25", "label_free_qwen25.json"),
    ],
)
def test_judge_only_reproduces_the_label_free_judgements(
    model: str, written: str, tmp_path: Path
) -> None:
    out = tmp_path / written
    assert label_free.main(["--judge-only", "--model", model, "--json", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8")) == _committed(written)
