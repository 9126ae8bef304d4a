"""The examples in the core's docstrings run and print what they say."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize(
    "module",
    [
        "bookend_rag",
        "bookend_rag.place.cached",
        "bookend_rag.config",
        "bookend_rag.spec",
        "bookend_rag.recorder",
        "bookend_rag.retrievals",
    ],
)
def test_docstring_examples(module: str) -> None:
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
