"""The import contracts of ``pyproject.toml`` hold, and each breaks when a forbidden import comes.

Each case copies the package to a temporary tree, adds one import to one module and runs
``lint-imports`` there. The contracts ignore no import: packages reach the core's command line
through its entry-point group instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from bookend_rag import cli

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: import-linter brings tomli
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
LAYERS = "The core's layers point one way"
NO_LAB = "The core never imports the lab or the test support"
NO_CYCLE = "No import cycle inside the core's packages"


def _lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` with the contracts of ``tree/pyproject.toml`` on ``tree/src``."""
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--config", str(tree / "pyproject.toml")],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_contracts_hold_on_this_tree() -> None:
    run = _lint_imports(ROOT)
    assert run.returncode == 0, run.stdout + run.stderr
    for name in (LAYERS, NO_LAB, NO_CYCLE):
        assert f"{name} KEPT" in run.stdout


def test_the_lab_contract_covers_every_layer() -> None:
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
        "importlinter"
    ]["contracts"]
    by_name = {contract["name"]: contract for contract in contracts}
    layered = {
        f"bookend_rag.{module.strip()}"
        for layer in by_name[LAYERS]["layers"]
        for module in layer.split("|")
    }
    assert set(by_name[NO_LAB]["source_modules"]) == layered


def test_no_contract_ignores_an_import() -> None:
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
        "importlinter"
    ]["contracts"]
    assert [c["name"] for c in contracts if c.get("ignore_imports")] == []


def test_a_package_adds_subcommands_through_the_entry_point_group(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def register(subparsers: Any) -> None:
        subparsers.add_parser("toy").set_defaults(func=lambda args: 7)

    toy = SimpleNamespace(name="toy", load=lambda: register)
    monkeypatch.setattr(cli, "entry_points", lambda group: [toy] if group == cli.COMMANDS else [])
    assert cli.main(["toy"]) == 7


@pytest.mark.parametrize(
    ("module", "line", "broken"),
    [
        ("theory.py", "import bookend_rag_lab", NO_LAB),
        ("placement/orders.py", "from bookend_rag_lab import reorderers", NO_LAB),
        ("config.py", "from bookend_rag.testing import BadInput", NO_LAB),
        ("weighing.py", "from bookend_rag.place import reorder", LAYERS),
        ("profiles/base.py", "from bookend_rag.weighing import ChunkWeigher", LAYERS),
        ("placement/orders.py", "from bookend_rag.placement import strategies", NO_CYCLE),
        ("profiles/base.py", "from bookend_rag.profiles import io", NO_CYCLE),
    ],
)
def test_a_forbidden_import_breaks_its_contract(
    module: str, line: str, broken: str, tmp_path: Path
) -> None:
    shutil.copytree(ROOT / "src", tmp_path / "src", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    target = tmp_path / "src" / "bookend_rag" / module
    target.write_text(target.read_text(encoding="utf-8") + f"\n{line}  # noqa\n", encoding="utf-8")
    run = _lint_imports(tmp_path)
    assert run.returncode != 0
    assert f"{broken} BROKEN" in run.stdout, run.stdout
