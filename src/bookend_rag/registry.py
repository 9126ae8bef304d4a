"""A registry: the objects of one kind that a setting selects by name (the weight rules, the
strategies), the ones bookend ships first, and the checks every such setting shares."""

from __future__ import annotations

from typing import Any, ClassVar, Generic, Protocol, TypeVar

from pydantic.config import JsonDict
from pydantic_core import PydanticCustomError

__all__ = ["Named", "Registry"]


class Named(Protocol):
    """An object a setting names: its class says what the setting calls it."""

    name: ClassVar[str]


N = TypeVar("N", bound=Named)


class Registry(Generic[N]):
    """The objects ``setting=`` takes, by name.

    The setting is a ``str`` checked against the registry when validated, so an object
    registered later is accepted everywhere: ``Annotated[str, BeforeValidator(r.validated),
    Field(json_schema_extra=r.schema)]``.

    Args:
        setting: the setting's name, as errors name it (``"weight_rule"``).
        noun: what one object is called (``"weight rule"``).
        kind: the class every object is an instance of.
        shipped: the objects bookend ships, which stay registered.
        argument: what the function that registers one calls it (``"rule"``).
    """

    def __init__(
        self, setting: str, noun: str, kind: type, shipped: tuple[N, ...], argument: str
    ) -> None:
        self.setting, self.noun, self.kind, self.argument = setting, noun, kind, argument
        self._entries: dict[str, N] = {entry.name: entry for entry in shipped}
        #: The names of the objects bookend ships.
        self.shipped: tuple[str, ...] = tuple(self._entries)

    def register(self, entry: N) -> N:
        """Make ``entry`` a value of the setting under ``entry.name``; returns ``entry``.

        Raises:
            TypeError: ``entry`` is not an instance of the registry's kind (a class, say).
            ValueError: an object already has that name.
        """
        if not isinstance(entry, self.kind):
            kind, argument = self.kind.__name__, self.argument
            raise TypeError(f"{argument} must be a {kind} instance, got {argument}={entry!r}")
        if entry.name in self._entries:
            raise ValueError(
                f"a {self.noun} is already named {entry.name!r}: {self._entries[entry.name]!r}"
            )
        self._entries[entry.name] = entry
        return entry

    def unregister(self, name: str) -> None:
        """Withdraw the object registered as ``name``: the setting refuses the name again.

        Raises:
            ValueError: no object has that name, or it is one bookend ships (placement's default
                and its saved configurations name them).
        """
        if name in self.shipped:
            raise ValueError(f"{name!r} is a {self.noun} bookend ships; it stays registered")
        del self._entries[self.named(name).name]

    def names(self) -> tuple[str, ...]:
        """The names the setting takes: the objects bookend ships, then the registered ones."""
        return tuple(self._entries)

    def named(self, name: object) -> N:
        """The object ``setting=name`` selects, else a ``ValueError`` naming the setting and the
        value."""
        entry = self._entries.get(name) if isinstance(name, str) else None
        if entry is None:
            raise ValueError(
                f"{self.setting} must be one of {self.names()}, got {self.setting}={name!r}"
            )
        return entry

    def validated(self, value: Any) -> str:
        """The setting's ``BeforeValidator``: ``value`` if it names a registered object, else the
        error pydantic gives for a ``Literal`` of the names (the one such settings gave when their
        names were fixed)."""
        if isinstance(value, str) and value in self._entries:
            return value
        quoted = [repr(name) for name in self._entries]
        expected = f"{', '.join(quoted[:-1])} or {quoted[-1]}" if len(quoted) > 1 else quoted[0]
        raise PydanticCustomError(
            "literal_error", "Input should be {expected}", {"expected": expected}
        )

    def schema(self, schema: JsonDict) -> None:
        """The setting's ``json_schema_extra``: its ``enum``, the names registered when the schema
        is made (``bookend reorder`` makes its choices from it)."""
        schema["enum"] = list(self._entries)
