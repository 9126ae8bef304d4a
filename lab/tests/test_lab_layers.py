"""The lab's layers point one way: each part imports only the parts below it, no cycle; the core
imports none of it, and the lab reaches the core through the entry points the lab's
``pyproject.toml`` declares."""

from __future__ import annotations

import subprocess
import sys
from importlib import import_module
from importlib.metadata import entry_points
from pathlib import Path

import grimp

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: import-linter brings tomli
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]

#: Top to bottom: a part may import the parts after it, never one before it.
LAYERS = (
    "cli",
    "experiments",
    "report",
    "influence",
    "fitting",
    "reorderers",
    "frameworks",
    "metrics",
    "decision",
    "items",
    "retrieval",
    "models",
    "stats",
    "progress",
    "deps",
    "runfiles",
)


#: The core and the lab: the graph holds both, to see every arrow between them.
PACKAGES = ("bookend_rag", "bookend_rag_lab")


def _part(module: str) -> str:
    return module.split(".")[1]


def test_every_lab_module_belongs_to_a_layer() -> None:
    graph = grimp.build_graph(*PACKAGES)
    parts = {_part(m) for m in graph.modules if m.startswith("bookend_rag_lab.")}
    assert parts <= set(LAYERS) | {"data"}, sorted(parts - set(LAYERS))


def test_lab_parts_import_only_the_parts_below_them() -> None:
    graph = grimp.build_graph(*PACKAGES)
    upward = [
        (m, imported)
        for m in graph.modules
        if m.startswith("bookend_rag_lab.")
        for imported in graph.find_modules_directly_imported_by(m)
        if imported.startswith("bookend_rag_lab.")
        and LAYERS.index(_part(imported)) < LAYERS.index(_part(m))
    ]
    assert upward == []


def test_no_core_module_imports_the_lab() -> None:
    graph = grimp.build_graph(*PACKAGES)
    into_lab = {
        (m, imported)
        for m in graph.modules
        if not m.startswith("bookend_rag_lab")
        for imported in graph.find_modules_directly_imported_by(m)
        if imported.startswith("bookend_rag_lab")
    }
    assert into_lab == set()


def test_the_installed_entry_points_are_the_declared_ones() -> None:
    # The core finds the lab's subcommands and its bookend_rag.evaluate by these alone; metadata
    # installed before a declaration changed misses it until the project is installed again.
    lab = ROOT / "lab"
    declared = tomllib.loads((lab / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "entry-points"
    ]
    for group, members in declared.items():
        installed = {e.name: e.value for e in entry_points(group=group)}
        assert members.items() <= installed.items(), f"reinstall: pip install --no-deps -e {lab}"
        for name, value in members.items():
            module, _, attribute = value.partition(":")
            assert callable(getattr(import_module(module), attribute)), name


def test_the_command_line_loads_no_experiment_and_no_transport() -> None:
    # `bookend` adds the lab's subcommands on every run, `bookend reorder` too: building its parser
    # must not import the experiments (whose statistics load SciPy's), torch, or httpx (loaded
    # when a served backend is built).
    code = (
        "import sys, bookend_rag.cli; bookend_rag.cli.build_parser(); "
        "print(*(m in sys.modules for m in ('scipy.stats', 'torch', 'httpx')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False", "False"]
