"""The lab (temporary docstring)."""

from typing import Any


def __getattr__(name: str) -> Any:
    if name in ("evaluate", "EvalResult"):
        from bookend.lab.experiments import evaluate

        return getattr(evaluate, name)
    raise AttributeError(f"module 'bookend.lab' has no attribute {name!r}")
