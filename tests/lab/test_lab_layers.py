"""The lab's layers point one way: each part imports only the parts below it, no cycle, and the
core reaches the lab only through its two lazy hooks."""

from __future__ import annotations

import grimp

#: Top to bottom: a part may import the parts after it, never one before it.
LAYERS = (
    "cli",
    "experiments",
    "report",
    "influence",
    "fitting",
    "strategies",
    "frameworks",
    "metrics",
    "selection",
    "items",
    "retrieval",
    "models",
    "stats",
    "progress",
    "deps",
)


def _part(module: str) -> str:
    return module.split(".")[2]


def test_every_lab_module_belongs_to_a_layer() -> None:
    graph = grimp.build_graph("bookend_rag")
    parts = {_part(m) for m in graph.modules if m.startswith("bookend_rag.lab.")}
    assert parts <= set(LAYERS) | {"data"}, sorted(parts - set(LAYERS))


def test_lab_parts_import_only_the_parts_below_them() -> None:
    graph = grimp.build_graph("bookend_rag")
    upward = [
        (m, imported)
        for m in graph.modules
        if m.startswith("bookend_rag.lab.")
        for imported in graph.find_modules_directly_imported_by(m)
        if imported.startswith("bookend_rag.lab.")
        and LAYERS.index(_part(imported)) < LAYERS.index(_part(m))
    ]
    assert upward == []


def test_the_core_imports_the_lab_only_through_its_lazy_hooks() -> None:
    # bookend_rag.__getattr__ (bookend_rag.evaluate) and the lab's subcommands in bookend_rag.cli.
    graph = grimp.build_graph("bookend_rag")
    into_lab = {
        (m, imported)
        for m in graph.modules
        if not m.startswith("bookend_rag.lab")
        for imported in graph.find_modules_directly_imported_by(m)
        if imported.startswith("bookend_rag.lab")
    }
    assert into_lab == {
        ("bookend_rag", "bookend_rag.lab"),
        ("bookend_rag.cli", "bookend_rag.lab.cli"),
    }
