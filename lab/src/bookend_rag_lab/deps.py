"""The lab's import guard: torch and transformers, with one clear message when missing.

The lab's command line and experiments import without torch; a command calls
:func:`check_available` before it runs, so missing torch or transformers ends it with this one line.
"""

from __future__ import annotations

import importlib.util
import os
from types import ModuleType

from bookend_rag.errors import LAB_HINT

__all__ = ["INSTALL_HINT", "MissingDependencyError", "check_available", "transformers"]

#: The core's line for a missing lab: installing the lab brings torch and transformers.
INSTALL_HINT = LAB_HINT


class MissingDependencyError(ImportError):
    """Raised when torch or transformers is not installed."""


def check_available() -> None:
    """Raise :class:`MissingDependencyError` unless torch and transformers can be imported."""
    missing = [m for m in ("torch", "transformers") if importlib.util.find_spec(m) is None]
    if missing:
        raise MissingDependencyError(f"{' and '.join(missing)} not installed; {INSTALL_HINT}")


def transformers() -> ModuleType:
    """Import transformers with the Hugging Face hub forced offline.

    ``HF_HUB_OFFLINE`` is read when the hub library is first imported, so it is set here, before
    the import: the lab never downloads, and an accidental hub access fails fast.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    check_available()
    import transformers as tf

    return tf
