"""Lazy access to the optional dependencies, with one clear message when they are missing."""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from collections.abc import Callable
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


def guarded(command: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Run a validate-extra command; a missing extra or a bad argument ends with one line naming
    the command (``args.command_name``) and exit code 2."""

    def run(args: argparse.Namespace) -> int:
        try:
            check_available()
            return command(args)
        except MissingDependencyError as exc:
            print(f"bookend {args.command_name}: {exc}", file=sys.stderr)
            return 2
        except ValueError as exc:
            print(f"bookend {args.command_name}: error: {exc}", file=sys.stderr)
            return 2

    run.__doc__ = command.__doc__
    return run
