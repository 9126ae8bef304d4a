"""A placement call as a recorder takes it (:class:`Retrieval`): what its record needs, copied
from the caller's objects when the call is made, so that what is written is what was placed (a
document or a score changed after the call is recorded as it was)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Final

from pydantic import JsonValue

from bookend_rag.retrievals import RecordedDocument, RecordSource, RetrievalRecord, json_scalars
from bookend_rag.tokens import all_strings, item_text

__all__ = [
    "RECORD_SWITCH",
    "MetadataKeys",
    "Retrieval",
    "UnrecordableCallError",
    "recording_on",
    "why_not_made",
]

#: The environment variable that turns every recorder of a process off: ``BOOKEND_RECORD=0``.
RECORD_SWITCH: Final = "BOOKEND_RECORD"
#: The values of :data:`RECORD_SWITCH` that mean off (compared lower-cased, spaces stripped).
_OFF: Final = frozenset({"0", "false", "no", "off"})

#: The metadata keys a call copies for a recorder: a collection of keys (empty: none, the
#: default), or ``None`` for every key whose value is a JSON scalar.
MetadataKeys = Collection[str] | None


def recording_on() -> bool:
    """Whether recording is on in this process: :data:`RECORD_SWITCH` (``BOOKEND_RECORD``) is
    unset or other than ``0`` (``false``, ``no`` and ``off`` count as ``0`` too). Read when a
    recorder is made or named (:class:`~bookend_rag.recorder.RetrievalRecorder`, ``recorder=``),
    not on every call: reading the environment costs more than a recorded call's copy."""
    return os.environ.get(RECORD_SWITCH, "").strip().lower() not in _OFF


class UnrecordableCallError(ValueError):
    """A call whose record cannot be made (an item without a text string); its message names
    the item by index and type, never its content."""


def why_not_made(exc: BaseException) -> str:
    """Why a call's record could not be made (``exc``, raised reading it), in words that hold
    none of its text: an :class:`UnrecordableCallError`'s message, else the exception's type
    (a caller's function raised it, and its message may quote a document)."""
    if isinstance(exc, UnrecordableCallError):
        return str(exc)
    return f"{type(exc).__name__} reading it"


# Slots, not frozen: a frozen dataclass sets each field through object.__setattr__, and one is
# made on every recorded call.
@dataclass(slots=True)
class Retrieval:
    """One placement call, as its record needs it: copies of what the caller's objects held
    when the call was made (:meth:`of` makes one from them), made into a
    :class:`~bookend_rag.retrievals.RetrievalRecord` only when written (:meth:`record`).

    Args:
        texts: each document's text as the prompt shows it, in the retriever's order.
        scores: each document's score (``None`` where it has none), or ``None`` for no scores.
        model: the model's name (a spec or a profile by its name).
        order: input indices in prompt order; ``None`` to find each of ``kept`` among ``items``
            by identity (an adapter that placed a deduplicated copy of the list).
        source: who recorded it (:data:`~bookend_rag.retrievals.RecordSource`).
        question: the question, where the caller passed one.
        metadata: each document's recorded metadata (JSON scalars), or ``None`` for none.
        items: with ``order=None``, the caller's objects in the retriever's order (held for
            their identity only: nothing is read from them).
        kept: with ``order=None``, the placed objects, in prompt order.
        time: when the call was made (seconds since the epoch).
    """

    texts: Sequence[str]
    scores: Sequence[float | None] | None
    model: str | None
    order: Sequence[int] | None
    source: RecordSource
    question: str | None = None
    metadata: Sequence[Mapping[str, JsonValue]] | None = None
    items: Sequence[Any] = ()
    kept: Sequence[Any] = ()
    time: float = field(default_factory=time.time)

    @classmethod
    def of(
        cls,
        items: Sequence[Any],
        scores: Sequence[float | None] | None,
        *,
        model: str | None,
        order: Sequence[int] | None,
        source: RecordSource,
        question: str | None = None,
        text: Callable[[Any], Any] | None = None,
        metadata: Callable[[Any], Mapping[str, Any] | None] | None = None,
        keys: MetadataKeys = (),
        kept: Sequence[Any] = (),
    ) -> Retrieval:
        """The call, copied from the caller's objects now: each item's text (``text(item)``;
        without ``text``, as a placer reads it: a string is its own, any other item's is its
        ``text`` key or attribute), the scores, the order (``None``: ``kept`` found among
        ``items`` by identity when written) and, for the metadata ``keys`` asked for (``None``:
        every key), the JSON scalars of ``metadata(item)`` (bookend's ``bookend_*`` left out).
        Only references to immutable values are kept, and to the objects themselves for an
        order by identity.

        Raises:
            UnrecordableCallError: an item whose text is not a string, named by index and type.
        """
        listed = list(items)
        if text is None and all_strings(listed):  # reorder's usual call: strings, copied
            texts: list[Any] = listed
        else:
            texts = list(map(item_text if text is None else text, listed))
            if not all_strings(texts):
                at, bad = next((i, t) for i, t in enumerate(texts) if not isinstance(t, str))
                raise UnrecordableCallError(
                    f"items[{at}] has no text to record: its text is {type(bad).__name__}, "
                    "not a string"
                )
        recorded = None
        if metadata is not None and (keys is None or keys):
            recorded = [_recorded_metadata(metadata(item), keys) for item in listed]
        return cls(
            texts,
            None if scores is None else list(scores),
            model,
            order,
            source,
            question,
            recorded,
            listed if order is None else (),
            list(kept) if order is None else (),
        )

    def record(self, unrecorded: int = 0) -> RetrievalRecord:
        """The call as a record of the schema :data:`~bookend_rag.retrievals.RETRIEVALS_SCHEMA`,
        with the count of calls its recorder could not record before it (``unrecorded``).

        Raises:
            ValueError: a score that is not finite, or a field the schema refuses.
        """
        k = len(self.texts)
        scores = [None] * k if self.scores is None else self.scores
        metadata: Sequence[Mapping[str, JsonValue]] = self.metadata or [{}] * k
        documents = [
            RecordedDocument(text=text, score=score, metadata=dict(meta))
            for text, score, meta in zip(self.texts, scores, metadata, strict=True)
        ]
        order = self.order
        if order is None:
            at = {id(item): i for i, item in reversed(list(enumerate(self.items)))}
            order = [at[id(item)] for item in self.kept]
        when = datetime.fromtimestamp(self.time, timezone.utc).isoformat(timespec="milliseconds")
        return RetrievalRecord(
            question=self.question,
            documents=documents,
            model=self.model,
            order=list(order),
            source=self.source,
            time=when,
            unrecorded=unrecorded,
        )


def _recorded_metadata(
    metadata: Mapping[str, Any] | None, keys: MetadataKeys
) -> dict[str, JsonValue]:
    """The JSON scalars of ``metadata`` under ``keys`` (``None``: every key)."""
    if not metadata:
        return {}
    if keys is None:
        return json_scalars(metadata)
    return json_scalars({key: metadata[key] for key in keys if key in metadata})
