"""The core's example script runs offline and prints a placement."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_custom_pipeline_example_runs() -> None:
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "custom_pipeline.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert "bookend view" in result.stdout
    assert "whole-prompt view" in result.stdout
    assert "dropped by the token budget" in result.stdout
    assert "Question: How does the James Webb" in result.stdout
