"""Every example script runs offline from a fresh setup and prints a placement."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
OFFLINE = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def _run(script: str) -> str:
    run = subprocess.run(
        [sys.executable, str(EXAMPLES / script)],
        capture_output=True,
        text=True,
        env=OFFLINE,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_custom_pipeline_example_runs() -> None:
    out = _run("custom_pipeline.py")
    assert "bookend view" in out
    # The bookend view is the one it runs: nothing after the chunks.
    assert "layout: prefix=0 suffix=0 tokens (chunks fill the sequence" in out
    assert "whole-prompt view" in out
    assert "dropped by the token budget" in out
    assert "Question: How does the James Webb" in out


@pytest.mark.parametrize(
    "script", ["langchain_pipeline.py", "llama_index_pipeline.py", "haystack_pipeline.py"]
)
def test_framework_example_prompt_follows_the_placement(script: str) -> None:
    """The order printed from the prompt the (fake) LLM received matches ``explain()``."""
    seen, _, explanation = _run(script).partition("profile: ")
    order = [line.split(". ", 1)[1] for line in seen.splitlines() if line.startswith("  ")]
    table = [
        line.rsplit("  ", 1)[1] for line in explanation.splitlines() if line[:4].strip().isdigit()
    ]
    assert len(order) == 8
    assert order == table
    assert "objective (sum relevance x weight)" in explanation
