"""What the framework adapters share: their settings, a placer for those settings as they are at
each call, the reading of a score (:func:`read_score`), the annotations they write on request
(each chunk's prompt slot and weight) and the one way out of the core for what a placement did
(:func:`deliver`: its notes to ``warnings`` and the ``bookend_rag`` logger, the call to the
``recorder``; each adapter then sends the notes to its framework's own channel).

Adapters place with their settings as they are at each call (a changed setting is never ignored)
and never touch the caller's objects unless annotations are asked for.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Hashable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, Field, ValidationError, field_validator

from bookend_rag.config import PlacementConfig, validation_message
from bookend_rag.errors import caller_stacklevel, not_the_callers, shown
from bookend_rag.inputs import MissingScores, finite_floats, read_score
from bookend_rag.outlet import PlacementNote, deliver
from bookend_rag.place import Bookend
from bookend_rag.place.cached import placer_for
from bookend_rag.place.items import StringText
from bookend_rag.placement.result import Placement
from bookend_rag.recorder import Recorder, RecorderLike, RecorderWarning, as_recorder
from bookend_rag.retrievals import RecordSource, checked_record_source
from bookend_rag.tokens import TokenCounterLike
from bookend_rag.tuned import load_config

__all__ = [
    "PLACEMENT_OPTIONS",
    "SLOT_KEY",
    "WEIGHT_KEY",
    "Annotation",
    "CheckedSettings",
    "FrameworkAdapter",
    "MissingScores",
    "PlacementNote",
    "PlacerCache",
    "Recorder",
    "RecorderLike",
    "RecorderWarning",
    "as_recorder",
    "caller_stacklevel",
    "deliver",
    "finite_floats",
    "first_slot_annotations",
    "given_scores",
    "not_the_callers",
    "one_line_errors",
    "read_score",
    "shown",
    "slot_annotations",
    "top_n_as_top_k",
    "validated_copy",
    "with_config",
]

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)


@contextmanager
def one_line_errors() -> Iterator[None]:
    """pydantic's ``ValidationError`` spans several lines: raise one line naming each bad
    setting and its value instead (the adapters wrap construction and assignment in it)."""
    try:
        yield
    except ValidationError as exc:
        raise ValueError(validation_message(exc)) from None


def validated_copy(copied: M, update: Mapping[str, Any] | None) -> M:
    """``copied`` (a fresh ``model_copy``) with ``update`` applied and checked as the constructor
    checks settings: pydantic's ``model_copy(update=...)`` skips validation, so a typo would be
    ignored.

    Raises:
        ValueError: an unknown setting or a bad value, named in the message.
    """
    if not update:
        return copied
    if not isinstance(update, Mapping):
        raise ValueError(f"update must be a mapping of settings, got update={update!r}")
    settings = {name: getattr(copied, name) for name in copied.model_fields_set}
    return type(copied)(**{**settings, **update})


def with_config(settings: Mapping[str, Any]) -> dict[str, Any]:
    """An adapter's keyword arguments with ``config`` (a :class:`~bookend_rag.PlacementConfig`, a
    config or ``tuned.json`` path, its JSON text or a mapping: :func:`bookend_rag.load_config`)
    replaced by its placement settings; the settings given beside it override the config's, and a
    ``model`` other than the one a tuned config was measured on warns.

    Raises:
        ValueError: one line naming ``config=`` and the value (a missing file, not JSON, not a
            placement config).
    """
    given = dict(settings)
    config = given.pop("config", None)
    if config is None:
        return given
    tuned = load_config(config)
    tuned.warn_if_other_model(model=given.get("model"), stacklevel=4)
    return {**dict(tuned.config), **given}


def given_scores(scores: list[float | None]) -> list[float | None] | None:
    """The scores an adapter read from its framework's objects, or ``None`` when no item has
    one: a retriever that gives no scores returns best first, so its order is the relevance
    order, with nothing to note (a ``None`` among numbers is ``missing_scores``' to handle)."""
    # A first score settles it, as it usually does: counting the Nones among 1000 floats
    # compares each one (15 us).
    if scores and scores[0] is not None:
        return scores
    return None if scores.count(None) == len(scores) else scores


def top_n_as_top_k(settings: Mapping[str, Any]) -> dict[str, Any]:
    """``settings`` with ``top_n`` (the name LangChain's and LlamaIndex's rerankers give the
    number of results to keep) given as ``top_k``.

    Raises:
        ValueError: both given, with different values.
    """
    given = dict(settings)
    if "top_n" not in given:
        return given
    top_n = given.pop("top_n")
    if "top_k" in given and given["top_k"] != top_n:
        raise ValueError(
            f"top_n={top_n!r} and top_k={given['top_k']!r}: top_n is another name for top_k, "
            "give one"
        )
    given["top_k"] = top_n
    return given


#: Where a clause of a one-line settings error names ``top_k``: at the start of each clause.
_TOP_K_CLAUSE = re.compile(r"(?:^|(?<=; ))top_k=")


@contextmanager
def _top_n_named(given: object) -> Iterator[None]:
    """Errors of settings ``given`` with ``top_n`` name ``top_n``, as the caller typed it, where
    the check (of ``top_k``, which it is given as) names ``top_k``."""
    if not (isinstance(given, Mapping) and "top_n" in given):
        yield
        return
    try:
        yield
    except ValueError as exc:
        raise ValueError(_TOP_K_CLAUSE.sub("top_n=", str(exc))) from None


class CheckedSettings(BaseModel):
    """What a pydantic adapter does to its settings: ``config=`` read (:func:`with_config`), and
    construction, assignment and :meth:`model_copy` checked, with one-line errors.

    ``top_n``, the name the frameworks' rerankers use, is accepted for ``top_k`` (at
    construction, in :meth:`model_copy` and as an attribute). On a frozen adapter an assignment
    raises one line that points to :meth:`model_copy`.

    Put it first among the adapter's bases: a framework base's own ``__init__`` would otherwise
    run first and skip ``config=``.
    """

    def __init__(self, **settings: Any) -> None:
        with _top_n_named(settings), one_line_errors():
            super().__init__(**with_config(top_n_as_top_k(settings)))

    @property
    def top_n(self) -> int | None:
        """``top_k`` under the name the frameworks' rerankers use."""
        return self.__dict__["top_k"]  # type: ignore[no-any-return]

    @top_n.setter
    def top_n(self, value: int | None) -> None:
        self.top_k = value

    def __setattr__(self, name: str, value: Any) -> None:
        typed = name
        if name == "top_n":
            name = "top_k"
        if self.model_config.get("frozen") and name in type(self).model_fields:
            raise ValueError(
                f"{type(self).__name__} is immutable: {typed}={shown(value)} cannot be set; "
                f".model_copy(update={{{typed!r}: ...}}) returns a copy with it (checked like "
                "the constructor)"
            )
        with _top_n_named({typed: value}), one_line_errors():  # validated on assignment
            super().__setattr__(name, value)

    def model_copy(self: M, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> M:
        """A copy, with ``update`` applied and checked as the constructor checks settings
        (pydantic's ``model_copy`` skips validation, so a typo would be ignored).

        Raises:
            ValueError: an unknown setting or a bad value, named in the message.
        """
        with _top_n_named(update):
            return validated_copy(
                super().model_copy(deep=deep), None if update is None else _top_k_update(update)
            )


def _top_k_update(update: Any) -> Any:
    """A ``model_copy`` update with ``top_n`` given as ``top_k`` (anything else as it came, for
    :func:`validated_copy` to refuse)."""
    return top_n_as_top_k(update) if isinstance(update, Mapping) else update


#: The settings of :class:`~bookend_rag.PlacementConfig`: the fields every adapter mirrors.
PLACEMENT_OPTIONS: tuple[str, ...] = tuple(PlacementConfig.model_fields)

#: Metadata key for the prompt slot (0 first).
SLOT_KEY = "bookend_slot"
#: Metadata key for the slot's influence weight (1.0 = uniform share).
WEIGHT_KEY = "bookend_weight"

Annotation = dict[str, int | float]


def slot_annotations(placement: Placement[T]) -> list[Annotation]:
    """``{SLOT_KEY: slot, WEIGHT_KEY: weight}`` for each prompt position, in prompt order (for
    adapters that return annotated copies: a repeated chunk gets one per copy)."""
    return [{SLOT_KEY: s.slot, WEIGHT_KEY: s.weight} for s in placement.slots]


def first_slot_annotations(placement: Placement[T]) -> list[tuple[T, Annotation]]:
    """Each distinct item (by identity) with the annotation of its first slot, in prompt order
    (for adapters that annotate the caller's objects in place: a chunk repeated by
    ``repeat_top`` is one object, and keeps its first slot)."""
    seen: set[int] = set()
    out: list[tuple[T, Annotation]] = []
    for item, annotation in zip(placement.items, slot_annotations(placement), strict=True):
        if id(item) not in seen:
            seen.add(id(item))
            out.append((item, annotation))
    return out


class PlacerCache(Generic[T]):
    """An adapter's way into the one cache of placers (:func:`bookend_rag.place.cached_placer`):
    the :class:`~bookend_rag.Bookend` for its current settings and the way it reads its items,
    built only when they change (settings are compared by value; a profile file or local
    tokenizer also by its state).

    Args:
        text: the text of an item, a string by the framework's type (read only when needed:
            :class:`~bookend_rag.place.items.StringText`).
        source_of: the value of a source key on an item (``None`` when it has none).
    """

    def __init__(
        self, text: Callable[[T], str], source_of: Callable[[T, str], Hashable | None]
    ) -> None:
        self._text = StringText(text)
        self._source_of = source_of

    def placer(
        self,
        settings: Mapping[str, Any],
        *,
        source_key: str | None = None,
        token_counter: TokenCounterLike = None,
    ) -> Bookend[T]:
        """The placer for ``settings`` (the fields of :class:`~bookend_rag.PlacementConfig`, by
        name; any other key of the mapping is not read).

        Raises:
            ValueError: a bad or unknown setting, named in the message.
        """
        source = None if source_key is None else _SourceValue(self._source_of, source_key)
        values = (*_SETTING_VALUES(settings), token_counter, self._text, source)
        return placer_for(_NAMES, values, settings["model"], settings["tokenizer"], token_counter)


#: Each placement setting's value in a mapping of them, read as one tuple at C speed.
_SETTING_VALUES = operator.itemgetter(*PLACEMENT_OPTIONS)
#: The settings of an adapter's placer: the placement settings and how it reads items (the order
#: of ``Bookend(**dict(PlacementConfig(...)), token_counter=..., text=..., source=...)``, so that
#: equal settings find one placer whichever way they came).
_NAMES = (*PLACEMENT_OPTIONS, "token_counter", "text", "source")


@dataclass(frozen=True)
class _SourceValue(Generic[T]):
    """The value of the source key ``key`` on an item, as a callable that compares by value, so
    that the same adapter settings find the same placer."""

    source_of: Callable[[T, str], Hashable | None]
    key: str

    def __call__(self, item: T) -> Hashable | None:
        return self.source_of(item, self.key)


class FrameworkAdapter(PlacementConfig):
    """The settings of a pydantic framework adapter: every placement setting, and the adapter's
    own (``source_key``, ``token_counter``, ``annotate``, ``recorder``).

    A subclass says how to read its items (:meth:`item_text`, :meth:`item_source`); :meth:`placer`
    then gives the :class:`~bookend_rag.Bookend` for the settings as they are at each call.
    """

    source_key: str | None = Field(
        default=None,
        description="Metadata key of a source: items sharing a value keep their input order.",
    )
    token_counter: Any = Field(
        default=None,
        exclude=True,
        description="A callable str -> int or a tokenizer object; not serialised (the "
        "tokenizer setting is) and it overrides tokenizer.",
    )
    annotate: bool = Field(
        default=False,
        description="Write bookend_slot and bookend_weight into each returned item's metadata "
        "(this modifies the caller's objects; nothing else does).",
    )
    recorder: Any = Field(
        default=None,
        exclude=True,
        description="Off (None), a JSON Lines file path (appended to, bounded and rotated: "
        "bookend_rag.recorder.RetrievalRecorder) or an object with record(call): each call's "
        "question, documents with their scores in the retriever's order, model and the order "
        "placed, copied at the call (metadata only for the keys a RetrievalRecorder's metadata= "
        "allows; BOOKEND_RECORD=0 turns it off). Not serialised.",
    )

    @field_validator("recorder")
    @classmethod
    def _recorder(cls, value: RecorderLike) -> Recorder | None:
        """A path becomes the process's one recorder of that file (checked now)."""
        return as_recorder(value)

    #: Who a retrieval record names as its writer: the framework's name, a lower-case identifier
    #: (:data:`~bookend_rag.retrievals.RecordSource`), checked when the subclass is defined.
    record_source: ClassVar[RecordSource]

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        """A subclass that names its :attr:`record_source` names a valid one (an intermediate
        base may leave it to its own subclasses)."""
        super().__pydantic_init_subclass__(**kwargs)
        source = cls.__dict__.get("record_source")
        if source is not None:
            try:
                checked_record_source(source)
            except ValueError as exc:
                raise TypeError(f"{cls.__name__}: {exc}") from None

    @staticmethod
    def item_text(item: Any) -> str:
        """The text of an item, as the LLM sees it."""
        raise NotImplementedError

    @staticmethod
    def item_source(item: Any, key: str) -> Hashable | None:
        """The value of metadata ``key`` on an item (``None`` when it has none)."""
        raise NotImplementedError

    @staticmethod
    def item_metadata(item: Any) -> Mapping[str, Any] | None:
        """An item's metadata (the JSON scalars of the keys a recorder allows go into a
        retrieval record)."""
        raise NotImplementedError

    def deliver(
        self,
        placement: Placement[Any],
        placer: Bookend[Any],
        items: list[Any],
        scores: list[float | None] | None,
        question: str | None,
    ) -> tuple[str, ...]:
        """:func:`bookend_rag.outlet.deliver` of a call of this adapter (its ``recorder``, its
        way of reading an item): the notes, for the framework's own channel."""
        return deliver(
            placement,
            placer,
            self.recorder,
            source=self.record_source,
            items=items,
            scores=scores,
            question=question,
            text=self.item_text,
            metadata=self.item_metadata,
        )

    def current_token_counter(self) -> TokenCounterLike:
        """The token counter for this call (``token_counter``; adapters may know a default)."""
        return self.token_counter  # type: ignore[no-any-return]

    def model_post_init(self, context: Any, /) -> None:
        """Check what only a placer checks (a callable token counter, a tokenizer name)."""
        self.placer()

    def placer(self, question: str | None = None) -> Bookend[Any]:
        """The :class:`~bookend_rag.Bookend` for the current settings (with ``question`` counted
        after the items when ``count_question`` is on).

        Raises:
            ValueError: a bad setting (``model_copy(update=...)`` skips validation).
        """
        # The fields, without pydantic's attribute machinery.
        placer = _class_placers(type(self)).placer(
            self.__dict__, source_key=self.source_key, token_counter=self.current_token_counter()
        )
        return placer.with_question(question)


@cache
def _class_placers(adapter: type[FrameworkAdapter]) -> PlacerCache[Any]:
    """The :class:`PlacerCache` of an adapter class, built once: it reads items by the class's
    own static methods. Held per instance, it was a pydantic private attribute, whose every
    read went through pydantic's ``__getattr__`` (two per call, a microsecond and more)."""
    return PlacerCache(adapter.item_text, adapter.item_source)
