"""The lab's Python entry points without the lab extra (issue 38, 3.5): ``bookend_rag.tune`` and
``bookend_rag.evaluate`` ended in a bare ``ModuleNotFoundError: No module named 'torch'`` deep in
the stack; they say in one line which extra to install, as the lab's commands do."""

from __future__ import annotations

import subprocess
import sys

import pytest

# A child interpreter in which torch and transformers are not installed, as far as imports and
# importlib.util.find_spec can tell: the path finder hides them (everything else, the package
# metadata with the entry points among it, is found as usual).
_WITHOUT_THE_EXTRA = """
import sys
from importlib.machinery import PathFinder


class WithoutTheExtra(PathFinder):
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name.partition(".")[0] in {"torch", "transformers"}:
            return None
        return super().find_spec(name, path, target)


sys.meta_path[:] = [WithoutTheExtra if f is PathFinder else f for f in sys.meta_path]
import bookend_rag

try:
    bookend_rag.NAME()
except ImportError as error:
    print(type(error).__name__, error, sep=": ")
"""


@pytest.mark.parametrize("name", ["tune", "evaluate"])
def test_without_the_lab_extra_the_error_names_it(name: str) -> None:
    code = _WITHOUT_THE_EXTRA.replace("NAME", name)
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True
    )
    assert result.stdout == (
        "MissingDependencyError: torch and transformers not installed; install the lab: pip "
        'install ./lab in a clone of the repository ("bookend-rag[lab]" once it is on the package '
        "index)\n"
    )
