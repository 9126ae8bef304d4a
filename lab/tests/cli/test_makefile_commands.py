"""Every ``bookend`` command the Makefile's recorded runs use parses with today's command line."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest

from bookend_rag.cli import build_parser

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("target", ["eval", "eval-quick", "tune", "validator", "fitted", "prompts"])
def test_make_target_commands_parse(target: str) -> None:
    # make -n prints the recipes (with the stamps' installs) without running anything.
    printed = subprocess.run(
        ["make", "-n", target], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    parser = build_parser()
    commands = [
        shlex.split(part)
        for line in printed.splitlines()
        for part in line.split("&&")
        if part.strip().split(" ", 1)[0].endswith("/bookend")
    ]
    assert commands, printed
    for words in commands:
        args = parser.parse_args(words[1:])
        assert args.command in ("eval", "tune", "validate", "calibrate"), words
