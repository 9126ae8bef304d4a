"""The validate and calibrate subcommands: registration, reports, and no torch at import."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.stats import spearmanr

import bookend_rag
from bookend_rag_lab import deps
from bookend_rag_lab.cli import register


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bookend")
    register(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(argv)


def test_cli_module_imports_without_torch() -> None:
    code = "import sys, bookend_rag_lab.cli; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_validate_writes_report_plot_and_profile(
    tmp_path: Path, qwen2_config: Callable[..., Any]
) -> None:
    config_path = tmp_path / "config.json"
    config_path.write_text(json.dumps(qwen2_config().to_dict()))
    report, plot, prof = tmp_path / "r.json", tmp_path / "r.png", tmp_path / "p.json"
    args = _parse(
        [
            "validate",
            str(config_path),
            "--tokens",
            "32",
            "--seeds",
            "2",
            "--probes",
            "2",
            "--rope-compare",
            "--json",
            str(report),
            "--plot",
            str(plot),
            "--profile-out",
            str(prof),
        ]
    )
    assert args.func(args) == 0
    data = json.loads(report.read_text())
    assert len(data["measured"]) == 32
    saved = bookend_rag.load_profile(prof)
    np.testing.assert_allclose(
        np.asarray(saved.weights) / sum(saved.weights), data["measured"], rtol=1e-9
    )
    for key in ("nominal", "fit"):
        assert set(data[key]) >= {
            "depth",
            "attn_share",
            "spearman",
            "log_rmse",
            "wasserstein",
            "final_token_share",
        }
    assert data["nominal"]["depth"] == 2
    assert data["settings"]["n_tokens"] == 32
    off = data["rope_off"]
    recomputed = spearmanr(data["measured"][:-1], off["measured"][:-1]).statistic
    assert off["spearman_vs_rope_on"] == pytest.approx(recomputed)
    assert off["measured"] != data["measured"]  # a second, different measurement
    assert plot.stat().st_size > 0
    placement = bookend_rag.reorder(["a", "b", "c"], [0.3, 0.9, 0.1], model=str(prof))
    assert placement.profile == saved


def test_validate_needs_exactly_one_source(capsys: pytest.CaptureFixture[str]) -> None:
    args = _parse(["validate"])
    assert args.func(args) == 2
    assert "MODEL" in capsys.readouterr().err


def test_missing_extra_gives_install_hint(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def missing() -> None:
        raise deps.MissingDependencyError(f"torch not installed; {deps.INSTALL_HINT}")

    monkeypatch.setattr(deps, "check_available", missing)
    args = _parse(["calibrate", "--weights", "x", "--out", "y.json"])
    assert args.func(args) == 2
    assert "bookend-rag[lab]" in capsys.readouterr().err
