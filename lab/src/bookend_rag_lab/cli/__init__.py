"""The lab's subcommands of ``bookend``: each module parses its arguments and calls one
experiment of :mod:`bookend_rag_lab.experiments`; nothing here imports torch.

- :mod:`~bookend_rag_lab.cli.validate`: ``bookend validate`` (the influence validator).
- :mod:`~bookend_rag_lab.cli.calibrate`: ``bookend calibrate`` (slot table and fitted profile).
- :mod:`~bookend_rag_lab.cli.eval`: ``bookend eval`` (does placement help on your model and data?).
- :mod:`~bookend_rag_lab.cli.tune`: ``bookend tune`` (the placement for your model and data, chosen
  by measurement).
- :mod:`~bookend_rag_lab.cli.runs`: the arguments ``eval`` and ``tune`` share, and the run spec
  they and ``calibrate`` build from theirs.
- :mod:`~bookend_rag_lab.cli.endpoint`: the served model's options, and the scorer spec that they
  and ``--weights`` name.
- :mod:`~bookend_rag_lab.cli.common`: the extra's guard, torch threads, argument types.
"""

from __future__ import annotations

from typing import Any

from bookend_rag_lab.cli import calibrate, eval, tune, validate

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add ``validate``, ``calibrate``, ``eval`` and ``tune`` to an ``argparse`` subparsers
    object."""
    validate.register(subparsers)
    calibrate.register(subparsers)
    eval.register(subparsers)
    tune.register(subparsers)
