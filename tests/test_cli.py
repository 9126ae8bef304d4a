"""The bookend command line."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from bookend.cli import build_parser, main


def test_demo_prints_the_placement_and_writes_a_plot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    png = tmp_path / "demo.png"
    assert main(["demo", "--k", "6", "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert "retrieved 6 of 16 passages with BM25" in out
    assert "vs relevance order" in out
    assert "vs alternate order" in out
    assert "prompt order:" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_profile_json_and_table(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["profile", "--model", "gpt2", "--k", "5", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert len(report["slot_weights"]) == 5
    assert report["components"]["recency_delta"] == pytest.approx((11 / 12) ** 12)
    png = tmp_path / "p.png"
    assert main(["profile", "--model", "liu2023:claude-1.3", "--k", "4", "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert "liu2023:claude-1.3" in out
    assert png.exists()


def test_reorder_reads_stdin_and_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    chunks = [
        {"text": "alpha " * 10, "score": 0.1, "source": "x"},
        {"text": "beta " * 10, "score": 0.9, "source": "y"},
        {"text": "gamma " * 10, "score": 0.5, "source": "x"},
    ]
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(chunks)))
    assert main(["reorder", "--model", "gpt2"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert sorted(result["order"]) == [0, 1, 2]
    assert result["chunks"] == [chunks[i]["text"] for i in result["order"]]
    assert result["order"].index(0) < result["order"].index(2)  # source x keeps its order
    path = tmp_path / "in.json"
    path.write_text(json.dumps({"chunks": ["a", "b"], "scores": [3, 1], "lengths": [5, 5]}))
    assert main(["reorder", str(path), "--strategy", "relevance"]) == 0
    assert json.loads(capsys.readouterr().out)["order"] == [0, 1]


@pytest.mark.parametrize(
    ("payload", "args", "message"),
    [
        ("not json", [], "input is not JSON"),
        ("[1, 2]", [], "input must be a list of strings"),
        ('{"chunks": ["a"], "scores": [NaN]}', [], "scores must be finite"),
        ('["a", "b"]', ["--budget", "0"], "budget=0"),
    ],
)
def test_reorder_errors_exit_2_with_one_line(
    payload: str,
    args: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(payload))
    assert main(["reorder", *args]) == 2
    assert message in capsys.readouterr().err


def test_presets_lists_models_and_curves(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["presets"]) == 0
    names = capsys.readouterr().out.split()
    assert "llama-3.1-8b" in names
    assert "liu2023:gpt-3.5-turbo" in names


@pytest.mark.parametrize("command", ["demo", "profile", "reorder", "presets"])
def test_help_is_complete(command: str) -> None:
    sub = build_parser()._subparsers._group_actions[0].choices[command]  # type: ignore[union-attr]
    text = sub.format_help()
    assert "usage: bookend " + command in text
    for action in sub._actions:
        if action.option_strings and action.dest != "help":
            assert action.help, f"{command} {action.option_strings} has no help"
