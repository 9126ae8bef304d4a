"""Smoke test of the built wheels, run by ``make dist`` in a fresh virtualenv holding only the core
and LangChain wheels (and their dependencies): what a user gets from
``pip install bookend-rag langchain-bookend``. The lab's wheel is installed after it, and
``lab/tests/smoke_install.py`` checks it."""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import io
import sys
from pathlib import Path

import langchain_bookend
from langchain_core.documents import Document

import bookend_rag
from bookend_rag.cli import main

here = Path(sys.prefix).resolve()
for module in (bookend_rag, langchain_bookend):
    where = Path(module.__file__ or "").resolve()
    assert here in where.parents, f"{module.__name__} imported from {where}, not the wheel"
assert importlib.metadata.version("bookend-rag") == bookend_rag.__version__

placement = bookend_rag.reorder(["a", "b", "c", "d"], [0.2, 0.9, 0.5, 0.1])
assert sorted(placement.order) == [0, 1, 2, 3]
assert "b" in (placement.items[0], placement.items[-1])

docs = [Document(page_content=t, metadata={"score": s}) for t, s in [("x", 0.1), ("y", 0.9)]]
out = langchain_bookend.BookendReorder().invoke(docs)
assert {d.page_content for d in out} == {"x", "y"}
print(f"bookend-rag {bookend_rag.__version__}: core and LangChain adapter installed and working")

# Without the lab (the distribution bookend-rag-lab), its subcommands still answer, in one line
# saying what to install.
assert importlib.util.find_spec("bookend_rag_lab") is None, "the lab is here: not the core alone"
errors = io.StringIO()
with contextlib.redirect_stderr(errors):
    assert main(["eval", "--quick"]) == 2
assert errors.getvalue().count("\n") == 1, errors.getvalue()
assert "bookend-rag[lab]" in errors.getvalue(), errors.getvalue()
print("bookend eval without the lab: one line naming bookend-rag[lab]")
