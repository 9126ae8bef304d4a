"""What the lab's subcommands share: the extra's guard, torch threads, argument types."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from bookend_rag_lab import deps

__all__ = [
    "add_command",
    "add_measure_command",
    "add_template_option",
    "add_threads_option",
    "check_outputs",
    "check_profiles",
    "filler_range",
    "guarded",
    "load_template_option",
    "say",
    "set_threads",
]


def guarded(command: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Run a lab command; a missing extra or a bad argument ends with one line naming the command
    (``args.command_name``) and exit code 2."""

    def run(args: argparse.Namespace) -> int:
        try:
            deps.check_available()
            return command(args)
        except deps.MissingDependencyError as exc:
            print(f"bookend {args.command_name}: {exc}", file=sys.stderr)
            return 2
        except ValueError as exc:
            print(f"bookend {args.command_name}: error: {exc}", file=sys.stderr)
            return 2

    run.__doc__ = command.__doc__
    return run


def add_command(
    subparsers: Any,
    name: str,
    run: Callable[[argparse.Namespace], int],
    *,
    help: str,
    description: str,
) -> argparse.ArgumentParser:
    """Add the subcommand ``name`` to an ``argparse`` subparsers object, run by ``run`` under
    :func:`guarded`; its arguments are the caller's to add."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        name, help=help, description=description
    )
    parser.set_defaults(func=guarded(run), command_name=name)
    return parser


def add_threads_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--threads`` (:func:`set_threads`)."""
    parser.add_argument("--threads", type=int, help="torch threads (default: all cores)")


def add_measure_command(
    subparsers: Any,
    name: str,
    run: Callable[[argparse.Namespace], int],
    *,
    help: str,
    description: str,
    json: str,
    plot: str,
) -> argparse.ArgumentParser:
    """:func:`add_command` for a command that measures a local model (``bookend validate``,
    ``bookend calibrate``): with ``--weights``, ``--threads``, and ``--json`` (into
    ``json_path``) and ``--plot``, where it writes ``json`` and ``plot``."""
    parser = add_command(subparsers, name, run, help=help, description=description)
    parser.add_argument("--weights", help="local model directory, .gguf file, or 'smollm2'")
    add_threads_option(parser)
    parser.add_argument("--json", dest="json_path", help=f"write {json} here")
    parser.add_argument("--plot", help=f"write {plot} here")
    return parser


def add_template_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--template FILE``: the prompt the items are rendered into."""
    parser.add_argument(
        "--template",
        metavar="FILE",
        help="the prompt you really send, as a Jinja2 template of `documents` and `question` "
        "(the answer continues it after a space); a .json file holds chat messages "
        '([{"role": "system", "content": ...}, {"role": "user", "content": ...}], each content '
        "a Jinja2 template), rendered by the model's own chat template, the answer opening the "
        "assistant turn (default: bookend's completion prompt)",
    )


def load_template_option(args: argparse.Namespace) -> None:
    """Load ``--template`` (when given) into ``args.template`` before any model loads, so a
    malformed template ends the command at once (``ValueError`` naming the option)."""
    if args.template is None:
        return
    from bookend_rag_lab.items.template import load_template

    try:
        args.template = load_template(args.template)
    except ValueError as error:
        raise ValueError(f"--template {args.template}: {error}") from None


def check_outputs(**paths: str | os.PathLike[str] | None) -> None:
    """Refuse, before any model loads, an output file whose folder does not exist or that names a
    folder (``paths``: option name -> path, ``None`` for an option not given)."""
    for option, path in paths.items():
        if path is None:
            continue
        target = Path(path)
        flag = f"--{option.replace('_', '-')}"
        if target.is_dir():
            raise ValueError(f"{flag} must name a file, got the folder {str(path)!r}")
        if not target.parent.is_dir():
            raise ValueError(f"{flag}: its folder does not exist: {str(target.parent)!r}")


def check_profiles(option: str, references: Iterable[str]) -> None:
    """Resolve every profile reference (path or preset) before any model loads, so a typo ends the
    command at once (``ValueError`` naming the option)."""
    import bookend_rag

    for reference in references:
        try:
            bookend_rag.resolve_profile(reference)
        except (ValueError, TypeError) as error:
            raise ValueError(f"{option} {reference}: {error}") from None


def set_threads(threads: int | None) -> int:
    """Set torch's threads (default: all cores) and return how many were set."""
    # Idle OpenMP workers should sleep, not spin: on a shared machine, spinning threads of several
    # processes starve each other (measured on the 2-core CI machine under load: a SmolLM2 forward
    # pass took 21 s spinning, 4 s passive). Read when torch first loads, hence before the import.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import torch

    count = threads or os.cpu_count() or 1
    torch.set_num_threads(count)
    return count


def say(message: str) -> None:
    """A summary line of a command, on stdout."""
    print(message)


def filler_range(text: str) -> tuple[int, int]:
    """``"LO-HI"`` (or one number) as an inclusive range of filler sentences per document."""
    lo, _, hi = text.partition("-")
    try:
        pair = (int(lo), int(hi or lo))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected LO-HI such as 0-6, got {text!r}") from None
    if not 0 <= pair[0] <= pair[1]:
        raise argparse.ArgumentTypeError(f"expected 0 <= LO <= HI, got {text!r}")
    return pair
