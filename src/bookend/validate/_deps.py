"""Lazy access to the optional dependencies, with one clear message when they are missing."""

from __future__ import annotations

import importlib.util
import os
from types import ModuleType

INSTALL_HINT = 'install the optional extra: pip install "bookend[validate]"'


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
    the import: the validator never downloads, and an accidental hub access fails fast.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    check_available()
    import transformers as tf

    return tf
