"""What the lab's subcommands share: the extra's guard, torch threads, argument types."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

from bookend.lab import deps

__all__ = ["filler_range", "guarded", "say", "set_threads"]


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
