"""The llama_index example runs offline and prints the order the LLM sees and the explanation."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "llama_index_pipeline.py"


@pytest.mark.skipif(not EXAMPLE.exists(), reason="the examples ship with the repository only")
def test_example_runs_offline() -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    run = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, env=env, timeout=600
    )
    assert run.returncode == 0, run.stderr
    seen, _, explanation = run.stdout.partition("profile: ")
    order = [line.split(". ", 1)[1] for line in seen.splitlines() if line.startswith("  ")]
    table = [
        line.rsplit("  ", 1)[1] for line in explanation.splitlines() if line[:4].strip().isdigit()
    ]
    assert len(order) == 8
    assert order == table  # the prompt the LLM received follows the placement
    assert "objective (sum relevance x weight)" in explanation
