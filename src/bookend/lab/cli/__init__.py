"""The lab's subcommands of ``bookend``."""

from __future__ import annotations

from typing import Any

from bookend.lab.cli.eval import register as register_eval
from bookend.lab.cli.validate import register as register_validate

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add ``validate``, ``calibrate`` and ``eval`` to an ``argparse`` subparsers object."""
    register_validate(subparsers)
    register_eval(subparsers)
