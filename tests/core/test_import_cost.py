"""`import bookend_rag` and the default `reorder` call load only what that call needs (issue 39):
the modules below are imported when first used, so that the import stays near its dependencies'
own (``bench/import_time.py`` measures it). Each check runs in a fresh interpreter, since this
process has imported everything already."""

from __future__ import annotations

import json
import subprocess
import sys

#: Modules the default call never needs, and what loads them when it is asked for.
LAZY = {
    "scipy.sparse": "bookend_rag.reorder(texts, drop_lookalikes=True)",
    "scipy.sparse.csgraph": "bookend_rag.reorder(texts, drop_lookalikes=True)",
    "scipy.special": "bookend_rag.theory.influence_density([0.5], 4, 0.25)",
    "bookend_rag_lab": "bookend_rag.evaluate",
    "bookend_rag.cli": "import bookend_rag.cli",
    "bookend_rag.adapters": "import bookend_rag.adapters",
}

_TEXTS = ["the first chunk", "a second chunk", "the first chunk again", "a third one"]


def _loaded_after(statements: str) -> set[str]:
    """The modules of :data:`LAZY` that are loaded after running ``statements`` in a fresh
    interpreter that imported bookend_rag."""
    code = (
        f"import json, sys, bookend_rag\ntexts = {_TEXTS!r}\n{statements}\n"
        f"print(json.dumps(sorted(m for m in {sorted(LAZY)!r} if m in sys.modules)))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return set(json.loads(run.stdout))


def test_the_default_reorder_call_imports_none_of_the_lazy_modules() -> None:
    statements = (
        "placement = bookend_rag.reorder(texts, [0.9, 0.5, 0.7, 0.1])\n"
        "assert len(placement.items) == len(texts)\n"
        "bookend_rag.Bookend().place(texts, [0.9, 0.5, 0.7, 0.1]).explain()"
    )
    assert _loaded_after(statements) == set()


def test_the_command_line_loads_neither_scipy_sparse_nor_special_nor_the_lab() -> None:
    heavy = {"scipy.sparse", "scipy.sparse.csgraph", "scipy.special", "bookend_rag_lab"}
    assert _loaded_after("import bookend_rag.cli") & heavy == set()


def test_each_lazy_module_loads_when_its_feature_is_used() -> None:
    # So that the check above means something: each name is a module the package really loads.
    for module, use in LAZY.items():
        assert module in _loaded_after(use), (module, use)
