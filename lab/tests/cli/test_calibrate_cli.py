"""``bookend calibrate`` over several K and prompt lengths on a tiny model: the fitted profile, the
slot table beside it, the report with outcomes, the refit with held-back cells; and
``bookend validate --fitted-out``."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import bookend_rag
from bookend_rag import FittedProfile, load_profile
from bookend_rag_lab.cli import register


def _run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bookend")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    result: int = args.func(args)
    return result


@pytest.fixture
def measured(saved_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    out, report = tmp_path / "fitted.json", tmp_path / "report.json"
    argv = ["calibrate", "--weights", str(saved_model), "--docs", "2", "3", "--filler", "0", "1-2"]
    argv += ["--items", "2", "--families", "access_code", "--threads", "1"]
    argv += ["--metric", "candidate_prob"]  # a random model may get no slot right
    assert _run([*argv, "--out", str(out), "--json", str(report)]) == 0
    printed = capsys.readouterr().out
    assert "K=3  filler 1-2" in printed
    assert "held-in log-likelihood" in printed
    assert "lam=" in printed
    return tmp_path


def test_calibrate_writes_fitted_profile_slot_table_and_outcomes(measured: Path) -> None:
    fitted = load_profile(measured / "fitted.json")
    assert isinstance(fitted, FittedProfile)
    data = fitted.metadata["data"]
    assert data["docs"] == [2, 3]
    assert sorted((c["docs"], tuple(c["filler"])) for c in data["cells"]) == [
        (2, (0, 0)),
        (2, (1, 2)),
        (3, (0, 0)),
        (3, (1, 2)),
    ]
    assert all(c["items"] == 2 for c in data["cells"])
    assert data["families"] == ["access_code"]
    assert data["seed"] == 0
    table = bookend_rag.load_profile(measured / "fitted-slots.json")
    assert table.kind == "slot"
    assert len(table.weights) == 3  # the largest fitted K
    assert len(table.metadata["cells"]) == 4
    report = json.loads((measured / "report.json").read_text())
    assert len(report["outcomes"]) == 2 * (2 + 3) * 2
    assert report["fit"]["n_outcomes"] == 20
    placement = bookend_rag.reorder(
        ["a", "b", "c"], [0.2, 0.9, 0.5], lengths=[40, 40, 40], model=str(measured / "fitted.json")
    )
    assert sorted(placement.order) == [0, 1, 2]


def test_calibrate_refits_saved_outcomes_and_scores_held_back_cells(
    measured: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, report = measured / "refit.json", measured / "holdout.json"
    argv = ["calibrate", "--outcomes", str(measured / "report.json"), "--out", str(out)]
    argv += ["--metric", "candidate_prob", "--slots-out", str(measured / "table.json")]
    argv += ["--holdout-docs", "3", "--holdout-filler", "1-2", "--target", "candidate_prob"]
    argv += ["--compare", "liu2023:gpt-3.5-turbo", "--holdout-plot", str(measured / "held.png")]
    assert _run([*argv, "--json", str(report)]) == 0
    printed = capsys.readouterr().out
    assert "fitted minus this profile" in printed
    data = json.loads(report.read_text())
    assert data["holdout"]["train_cells"] == ["K=2 filler 0-0"]
    assert data["holdout"]["heldback_cells"] == [
        "K=2 filler 1-2",
        "K=3 filler 0-0",
        "K=3 filler 1-2",
    ]
    assert set(data["holdout"]["profiles"]) == {
        "fitted",
        "fitted (slope 1)",
        "slot table (stretched)",
        "uniform",
        "liu2023:gpt-3.5-turbo",
    }
    assert data["fit"]["target"] == "candidate_prob"
    assert (measured / "held.png").stat().st_size > 0
    observed = data["holdout"]["observed_by_slot"]
    assert {k: len(v) for k, v in observed.items()} == {
        "K=2 filler 1-2": 2,
        "K=3 filler 0-0": 3,
        "K=3 filler 1-2": 3,
    }
    assert len(bookend_rag.load_profile(measured / "table.json").weights) == 2
    assert isinstance(load_profile(out), FittedProfile)


def test_calibrate_on_hard_items(
    saved_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, report = tmp_path / "fitted.json", tmp_path / "report.json"
    argv = ["calibrate", "--weights", str(saved_model), "--hard", "--docs", "3", "--items", "2"]
    argv += ["--families", "access_code", "--threads", "1", "--metric", "candidate_prob"]
    assert _run([*argv, "--out", str(out), "--json", str(report)]) == 0
    data = json.loads(report.read_text())
    assert data["settings"]["items_kind"] == "hard"
    assert len(data["outcomes"]) == 2 * 3
    capsys.readouterr()
    assert _run([*argv, "--filler", "1-2", "--out", str(out)]) == 2
    assert "--filler does not apply to --hard items" in capsys.readouterr().err


def test_calibrate_needs_exactly_one_source(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(["calibrate", "--out", "x.json"]) == 2
    assert "--outcomes" in capsys.readouterr().err


def test_validate_fitted_out_writes_a_least_squares_fit(
    tmp_path: Path, qwen2_config: Callable[..., Any]
) -> None:
    config_path = tmp_path / "config.json"
    config_path.write_text(json.dumps(qwen2_config().to_dict()))
    out = tmp_path / "fitted.json"
    argv = ["validate", str(config_path), "--tokens", "32", "--seeds", "1", "--probes", "2"]
    assert _run([*argv, "--fitted-out", str(out)]) == 0
    fitted = load_profile(out)
    assert isinstance(fitted, FittedProfile)
    assert fitted.reference_tokens == 32
    assert "log_rmse" in fitted.metadata["fit"]
