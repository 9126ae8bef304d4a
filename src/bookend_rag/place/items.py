"""How a placer reads the caller's items: the list itself, each item's text, token length and
source key (:class:`ItemReader`), with the one-line errors that name what was passed."""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

from bookend_rag.arrays import FloatArray
from bookend_rag.inputs import equal_lengths, validate_lengths
from bookend_rag.placement.result import Numbers
from bookend_rag.tokens import TokenCounter, all_strings, item_texts, token_lengths

__all__ = ["Getter", "ItemReader", "StringText", "getter", "item_list", "pick", "short"]

T = TypeVar("T")

#: How to get a value from an item: a callable, an attribute name / mapping key, or ``None``.
Getter = Callable[[Any], Any] | str | None


def getter(spec: Getter, param: str) -> Callable[[Any], Any] | None:
    """A callable from a callable, an attribute name / mapping key, or ``None``."""
    if spec is None or callable(spec):
        return spec
    if isinstance(spec, str):
        attr = operator.attrgetter(spec)

        def get(item: Any) -> Any:
            try:
                return item[spec] if isinstance(item, Mapping) else attr(item)
            except (KeyError, AttributeError):
                what = "key" if isinstance(item, Mapping) else "attribute"
                raise ValueError(
                    f"{param}={spec!r}: an item of type {type(item).__name__} has no "
                    f"{what} {spec!r}"
                ) from None

        return get
    raise ValueError(f"{param} must be a callable, an attribute name or None, got {param}={spec!r}")


@dataclass(frozen=True, slots=True)
class StringText:
    """A ``text`` getter whose every text is a string by its items' own type (a framework
    adapter's: a LangChain ``page_content``, a LlamaIndex node's ``get_content``, a Haystack
    ``content`` the ranker has checked). Where the lengths cannot move the order, a placer reads
    no text through it until the lengths are read (LlamaIndex's ``get_content`` for 1000 nodes
    took most of a call); a text that is not a string after all is named then. Compared by the
    getter, so the same adapter settings find the same placer."""

    get: Callable[[Any], str]

    def __call__(self, item: Any) -> str:
        return self.get(item)


def item_list(items: Sequence[T]) -> list[T]:
    """``items`` as a list; a string (which would be placed character by character), a mapping
    or anything not iterable is refused."""
    if isinstance(items, str | bytes | Mapping) or not hasattr(items, "__iter__"):
        raise ValueError(
            f"items must be a list or other sequence of chunks, got items={short(items)}"
        )
    return list(items)


def short(value: object) -> str:
    """``repr(value)`` on one line, cut to 80 characters."""
    text = " ".join(repr(value).split())
    return text if len(text) <= 80 else text[:77] + "..."


def pick(items: list[T], indices: list[int]) -> list[T]:
    """``[items[i] for i in indices]``, at C speed for long lists."""
    if len(indices) < 2:
        return [items[i] for i in indices]
    return list(operator.itemgetter(*indices)(items))


@dataclass(frozen=True, slots=True)
class ItemReader:
    """A placer's way of reading items: ``count`` tokens of ``text(item)`` (the item itself
    when ``text`` is ``None``), or count every chunk as one token (``equal_lengths``); a
    ``source`` key per item, or none."""

    count: TokenCounter
    text: Callable[[Any], Any] | None
    source: Callable[[Any], Any] | None
    equal_lengths: bool

    def texts(self, items: list[Any]) -> list[Any]:
        """Each item's text (:func:`~bookend_rag.tokens.item_texts`)."""
        return item_texts(items, self.text)

    def lengths(self, items: list[Any], given: Sequence[float] | None) -> FloatArray:
        """The token length of each item: ``given`` (checked), all 1 with ``equal_lengths``,
        else counted."""
        if given is not None:
            return validate_lengths(given, len(items))
        if self.equal_lengths:
            return equal_lengths(len(items), 1.0)
        return token_lengths(items, self.count, self.text)

    def deferred_lengths(self, items: list[Any]) -> Numbers | None:
        """The lengths of a placement whose order they cannot move: all 1 with
        ``equal_lengths``, else the counts of the texts (read and checked now, copied; through a
        :class:`StringText`, read then) taken when first read; ``None`` when a text is not a
        string (the array path names it)."""
        if self.equal_lengths:
            return equal_lengths(len(items), 1.0)
        text = self.text
        if isinstance(text, StringText):
            return partial(token_lengths, list(items), self.count, text)
        # Strings placed as they are (reorder's usual call) are checked once, here.
        if text is not None or not all_strings(items):
            items = self.texts(items)
            if not all_strings(items):
                return None
        return partial(token_lengths, list(items), self.count, None)

    def source_keys(self, items: list[Any], chosen: Sequence[int]) -> list[Any] | None:
        """The source key of each chosen item, checked to be hashable (keys are grouped);
        ``None`` without ``source``."""
        source = self.source
        if source is None:
            return None
        keys = [source(items[i]) for i in chosen]
        for i, key in zip(chosen, keys, strict=True):
            try:
                hash(key)
            except TypeError:
                raise ValueError(
                    f"source must give a hashable key (a string, a number or None); items[{i}] "
                    f"gave {short(key)}"
                ) from None
        return keys
