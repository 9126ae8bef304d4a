"""Smoke test of the lab's wheel, run by ``make dist`` in the fresh virtualenv of
``tests/smoke_install.py`` once the lab's wheel is installed there too: what a user gets from
``pip install bookend-rag-lab`` (``bookend-rag[lab]``)."""

from __future__ import annotations

import contextlib
import importlib.metadata
import io
import sys
from importlib import resources
from pathlib import Path

import bookend_rag
import bookend_rag_lab
from bookend_rag.cli import main

here = Path(sys.prefix).resolve()
for module in (bookend_rag, bookend_rag_lab):
    where = Path(module.__file__ or "").resolve()
    assert here in where.parents, f"{module.__name__} imported from {where}, not the wheel"

# The lab's entry points reach the core: its subcommands and its names.
out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
    main(["tune", "--help"])
assert out.getvalue().startswith("usage: bookend tune"), out.getvalue()
assert bookend_rag.tune is bookend_rag_lab.tune
print(f"bookend-rag-lab {importlib.metadata.version('bookend-rag-lab')}: bookend tune --help works")

# The real-text suites' data ship in the wheel with their READMEs and licences (package data).
data = resources.files("bookend_rag_lab").joinpath("data")
shipped = ["nq-open-oracle.jsonl.gz", "NQ-README.md", "NQ-LICENSE"]
shipped += ["squad2-dev-paragraphs.jsonl.gz", "SQUAD-README.md", "SQUAD-LICENSE"]
missing = [name for name in shipped if not data.joinpath(name).is_file()]
assert not missing, f"the lab's wheel lacks bookend_rag_lab/data/{missing}"
print("the suites' data, READMEs and licences are in the lab's wheel")
