"""One-line errors from pydantic models: a ``ValidationError`` spans several lines, and every
entry point promises a single line that names the parameter and its value; the line a warning
names, the caller's (:func:`caller_stacklevel`); and what to install when the lab is missing
(:data:`LAB_HINT`)."""

from __future__ import annotations

import os
import sys
from collections.abc import Collection
from typing import Any, ClassVar, TypeVar

import pydantic
from pydantic import BaseModel, ConfigDict, ValidationError

__all__ = [
    "LAB_HINT",
    "OneLineModel",
    "caller_stacklevel",
    "no_bool",
    "not_the_callers",
    "one_line",
    "shown",
]

#: What the lab's commands and names say when the lab (the distribution bookend-rag-lab, or the
#: torch and transformers it needs) is missing: from a clone until the packages are published.
LAB_HINT = (
    "install the lab: pip install ./lab in a clone of the repository "
    '("bookend-rag[lab]" once it is on the package index)'
)

M = TypeVar("M", bound="OneLineModel")


def one_line(exc: ValidationError, known: Collection[str], noun: str = "field") -> str:
    """One clause per pydantic error, joined: ``name=value: what is wrong``; an unknown ``noun``
    (field, setting) is listed with the ``known`` ones."""
    parts = []
    for err in exc.errors():
        name = ".".join(str(p) for p in err["loc"]) or "settings"
        value = err.get("input")
        if err["type"] == "extra_forbidden" and len(err["loc"]) > 1:
            parts.append(f"unknown field {name}={value!r}")
        elif err["type"] == "extra_forbidden":
            parts.append(f"unknown {noun} {name}={value!r} ({noun}s: {', '.join(known)})")
        elif err["type"] == "value_error" and not err["loc"]:
            # A model validator's own message names the fields it checks; the whole input
            # before it would only push them out of sight.
            parts.append(str(err["msg"]).removeprefix("Value error, "))
        else:
            message = str(err["msg"]).removeprefix("Value error, ")
            parts.append(f"{name}={shown(value)}: {message}")
    return "; ".join(parts)


#: Longest value repr an error message quotes whole.
_MAX_SHOWN = 80


def shown(value: Any) -> str:
    """``repr(value)`` for an error message, a huge number or a long value shortened (a
    ``budget=10**400`` is named by its first digits and its length, not its 401 digits)."""
    text = repr(value)
    if len(text) <= _MAX_SHOWN:
        return text
    if isinstance(value, int) and not isinstance(value, bool):
        digits = len(str(abs(value)))
        return f"{text[:8]}...({digits} digits)"
    return f"{text[: _MAX_SHOWN - 3]}..."


def no_bool(value: Any) -> Any:
    """``value`` unless it is a bool: pydantic reads ``True`` as 1, and a flag given for a number
    is a mistake worth naming (a ``BeforeValidator``)."""
    if isinstance(value, bool):
        raise ValueError(f"must be a number, not a bool (got {value!r})")
    return value


class OneLineModel(BaseModel):
    """A pydantic model whose construction and validation raise a one-line ``ValueError``
    (:func:`one_line`) instead of pydantic's multi-line ``ValidationError``."""

    # Each subclass's validator is built when first used, not at import: building the first
    # pydantic model in a process also scans every installed distribution for pydantic plugins,
    # more than half of what `import bookend_rag` would otherwise add to its dependencies' import.
    model_config = ConfigDict(defer_build=True)

    #: What the error calls an unknown keyword.
    field_noun: ClassVar[str] = "field"

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise ValueError(one_line(exc, type(self).model_fields, self.field_noun)) from None

    @classmethod
    def model_validate(cls: type[M], obj: Any, **kwargs: Any) -> M:
        """:meth:`pydantic.BaseModel.model_validate`, with a one-line error."""
        try:
            return super().model_validate(obj, **kwargs)
        except ValidationError as exc:
            raise ValueError(one_line(exc, cls.model_fields, cls.field_noun)) from None


def _folder(file: str) -> str:
    return os.path.dirname(os.path.abspath(file)) + os.sep


#: The folders whose code is not the caller's: bookend's own and pydantic's (an adapter's settings
#: are checked inside pydantic's machinery), and those :func:`not_the_callers` adds.
_NOT_THE_CALLERS: list[str] = [_folder(__file__), _folder(pydantic.__file__)]


def not_the_callers(*files: str) -> None:
    """Count the package of each file (``__file__`` of a module in it) as bookend's own when a
    warning looks for the caller's line: a framework adapter names its own package and its
    framework's, so that a warning raised while they run names the line that called them."""
    _NOT_THE_CALLERS.extend(
        folder for folder in map(_folder, files) if folder not in _NOT_THE_CALLERS
    )
    _INSIDE.clear()


#: Per code file name, whether it lies in :data:`_NOT_THE_CALLERS` (``abspath`` on every frame
#: of every warning was most of its cost); emptied when a folder is added.
_INSIDE: dict[str, bool] = {}


def _inside(filename: str) -> bool:
    inside = _INSIDE.get(filename)
    if inside is None:
        inside = _INSIDE[filename] = os.path.abspath(filename).startswith(tuple(_NOT_THE_CALLERS))
    return inside


def caller_stacklevel() -> int:
    """The ``stacklevel`` for ``warnings.warn``, in the function that calls it, of the first frame
    outside bookend, pydantic and the packages :func:`not_the_callers` added: the line of the
    caller's own code that led to the warning."""
    frame = sys._getframe(1)
    level = 1
    while frame.f_back is not None and _inside(frame.f_code.co_filename):
        frame = frame.f_back
        level += 1
    return level
