"""Bad arguments of the lab's commands end in one line before any model loads.

Every case names weights that do not exist: a check made after loading would report those
instead of the argument at fault.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bookend_rag.cli import main

OUTCOMES = str(Path(__file__).parents[3] / "bench/validator/smollm2-135m-fit-cells.json")
NO_MODEL = "/nonexistent/model-dir"


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["calibrate", "--outcomes", OUTCOMES, "--out", "/nope/x.json"], "--out: its folder"),
        (["calibrate", "--weights", NO_MODEL, "--out", "/nope/x.json"], "--out: its folder"),
        (
            ["calibrate", "--weights", NO_MODEL, "--out", "OUT/x.json", "--json", "/nope/r.json"],
            "--json: its folder",
        ),
        (
            ["calibrate", "--outcomes", OUTCOMES, "--out", "OUT/x.json", "--compare", "llama-9"],
            "--compare scores the held-back cells",
        ),
        (["calibrate", "--weights", NO_MODEL, "--out", "OUT"], "--out must name a file"),
        (
            ["eval", "--weights", NO_MODEL, "--profile", "x=typo.json", "--out", "OUT/e"],
            "--profile typo.json",
        ),
        (
            ["eval", "--weights", NO_MODEL, "--items-file", "OUT", "--out", "OUT/e"],
            "is a folder",
        ),
        (["validate", "no-such-preset"], "unknown preset name='no-such-preset'"),
        (
            ["eval", "--weights", NO_MODEL, "--template", "OUT/none.j2", "--out", "OUT/e"],
            "--template",
        ),
        (
            ["tune", "--weights", NO_MODEL, "--template", "OUT/bad.j2", "--out", "OUT/t"],
            "must use documents",
        ),
        (
            ["calibrate", "--weights", NO_MODEL, "--template", "OUT/bad.j2", "--out", "OUT/x"],
            "must use documents",
        ),
        (
            ["tune", "--weights", NO_MODEL, "--max-tokens", "0", "--out", "OUT/t"],
            "--max-tokens must be >= 1",
        ),
    ],
)
def test_refused_in_one_line_before_loading(
    argv: list[str], needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "bad.j2").write_text("{{ question }} only", encoding="utf-8")
    args = [a.replace("OUT", str(tmp_path)) for a in argv]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err
    assert len(err.splitlines()) == 1, err
