"""The retrieval recorder: each placement call appended to a local JSON Lines file, in the schema
of :mod:`bookend_rag.retrievals`, off the caller's path.

A call hands the recorder a :class:`Retrieval` (references to the caller's objects and a few
numbers: no text is read, nothing is serialised); a writer thread turns the pending calls into
:class:`~bookend_rag.retrievals.RetrievalRecord` lines once a second, or as soon as
``buffer`` calls wait, and at exit. The file is rotated by size (``path.1`` ... ``path.N``), so
it stays bounded. A record or a write that fails is a :class:`RecorderWarning` (and a line on
the ``bookend_rag`` logger), never a failed retrieval. Nothing leaves the machine.

>>> import tempfile, pathlib
>>> from bookend_rag.retrievals import read_retrievals
>>> path = pathlib.Path(tempfile.mkdtemp()) / "retrievals.jsonl"
>>> recorder = RetrievalRecorder(path)
>>> recorder.record(Retrieval(items=["a", "b"], scores=[0.2, 0.9], model="llama-3.1-8b",
...                           order=(1, 0), source="reorder"))
>>> recorder.flush()
>>> [record.order for record in read_retrievals(path)]
[[1, 0]]
"""

from __future__ import annotations

import atexit
import logging
import math
import os
import threading
import time
import warnings
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from bookend_rag.errors import shown
from bookend_rag.retrievals import RecordedDocument, RecordSource, RetrievalRecord, json_scalars

__all__ = [
    "LOGGER",
    "Recorder",
    "RecorderLike",
    "RecorderWarning",
    "Retrieval",
    "RetrievalRecorder",
    "as_recorder",
    "record_call",
]

#: The logger every placement note and recorder failure goes to.
LOGGER = logging.getLogger("bookend_rag")
# A library adds no output of its own: without this, Python's last-resort handler would print
# every note to stderr in applications that never configured logging.
LOGGER.addHandler(logging.NullHandler())


class RecorderWarning(UserWarning):
    """A retrieval that could not be recorded (the retrieval itself went on)."""


# Slots, not frozen: a frozen dataclass sets each field through object.__setattr__, and one is
# made on every recorded call.
@dataclass(slots=True)
class Retrieval:
    """One placement call as its caller's objects hold it, made into a
    :class:`~bookend_rag.retrievals.RetrievalRecord` only when written (:meth:`record`).

    Args:
        items: the documents in the retriever's order.
        scores: each item's score (``None`` where it has none), or ``None`` for no scores.
        model: the ``model`` setting (a name, or a spec or profile: recorded by its name).
        order: input indices in prompt order; ``None`` to find each of ``kept`` among ``items``
            by identity (an adapter that placed a deduplicated copy of the list).
        kept: the placed items, in prompt order (with ``order=None``).
        source: who recorded it (:data:`~bookend_rag.retrievals.RecordSource`).
        question: the question, where the framework passed one.
        text: an item's text as the prompt shows it (``None``: the item is its text).
        metadata: an item's metadata (``None``: none); its JSON scalars are recorded, except
            bookend's own ``bookend_*`` annotations.
        profile_name: the profile's name, for a ``model`` that is not a name.
        time: when the call was made (seconds since the epoch).
    """

    items: Sequence[Any]
    scores: Sequence[float | None] | None
    model: Any
    order: Sequence[int] | None
    source: RecordSource
    kept: Sequence[Any] = ()
    question: str | None = None
    text: Callable[[Any], Any] | None = None
    metadata: Callable[[Any], Mapping[str, Any] | None] | None = None
    profile_name: str | None = None
    time: float = field(default_factory=time.time)

    def record(self) -> RetrievalRecord:
        """The call as a record of the schema :data:`~bookend_rag.retrievals.RETRIEVALS_SCHEMA`.

        Raises:
            ValueError: an item without a string text, or a score that is not finite.
        """
        items = list(self.items)
        scores = [None] * len(items) if self.scores is None else list(self.scores)
        documents = [
            RecordedDocument(text=self._text(i, item), score=score, metadata=self._metadata(item))
            for i, (item, score) in enumerate(zip(items, scores, strict=True))
        ]
        order = self.order
        if order is None:
            at = {id(item): i for i, item in reversed(list(enumerate(items)))}
            order = [at[id(item)] for item in self.kept]
        model = self.model if isinstance(self.model, str) else self.profile_name
        when = datetime.fromtimestamp(self.time, timezone.utc).isoformat(timespec="milliseconds")
        return RetrievalRecord(
            question=self.question,
            documents=documents,
            model=model,
            order=list(order),
            source=self.source,
            time=when,
        )

    def _text(self, index: int, item: Any) -> str:
        text = item if self.text is None else self.text(item)
        if not isinstance(text, str):
            raise ValueError(f"items[{index}] has no text to record, got {shown(text)}")
        return text

    def _metadata(self, item: Any) -> dict[str, Any]:
        return json_scalars(None if self.metadata is None else self.metadata(item))


@runtime_checkable
class Recorder(Protocol):
    """Anything that takes each call: :class:`RetrievalRecorder`, or a caller's own object (a
    queue, a test's list). ``record`` runs on the caller's path, so it should be quick; an
    exception it raises is a :class:`RecorderWarning`, never a failed retrieval."""

    def record(self, call: Retrieval) -> None:
        """Take one call."""


#: What ``recorder=`` accepts: a file path (the process's one :class:`RetrievalRecorder` for
#: that file), a :class:`Recorder`, or ``None`` (off).
RecorderLike = Recorder | str | os.PathLike[str] | None


class RetrievalRecorder:
    """Appends each call to ``path`` as one JSON line, buffered and written by a thread.

    Thread- and async-safe: :meth:`record` only appends to a deque (atomic in CPython) and never
    blocks on the file. Bounded on disk: when a write would take the file past ``max_bytes`` it
    is rotated to ``path.1`` (``path.1`` to ``path.2`` ..., the oldest beyond ``backups``
    removed). Bounded in memory: a call that finds ``16 * buffer`` calls waiting (the writer,
    some 15,000 records a second at K = 20, fell behind) is not kept, and the next write warns
    how many were not.

    Args:
        path: the JSON Lines file (created; appended to if it exists). Its directory must exist.
        max_bytes: the size at which the file is rotated.
        backups: how many rotated files to keep (0: the file is emptied instead).
        buffer: write as soon as this many calls wait (else once every ``interval`` seconds).
        interval: seconds between writes of what waits.

    Raises:
        ValueError: a path whose directory does not exist, or a bad number, named.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        max_bytes: int = 64 * 2**20,
        backups: int = 3,
        buffer: int = 256,
        interval: float = 1.0,
    ) -> None:
        self.path = Path(path)
        if self.path.is_dir() or not self.path.parent.is_dir():
            problem = "is a directory" if self.path.is_dir() else "has no such directory"
            raise ValueError(f"recorder={str(path)!r} {problem}: give a file path to append to")
        for name, value, low in (("max_bytes", max_bytes, 1), ("backups", backups, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {name}={value!r}")
        if isinstance(buffer, bool) or not isinstance(buffer, int) or buffer < 1:
            raise ValueError(f"buffer must be an integer >= 1, got buffer={buffer!r}")
        if not (isinstance(interval, int | float) and 0 < interval < math.inf):
            raise ValueError(f"interval must be a positive number of seconds, got {interval!r}")
        self.max_bytes, self.backups, self.buffer, self.interval = (
            max_bytes,
            backups,
            buffer,
            interval,
        )
        self._pending: deque[Retrieval] = deque()
        self._limit = 16 * buffer
        self._dropped = 0
        self._drop_lock = threading.Lock()
        self._wake = threading.Event()
        self._lock = threading.Lock()  # one writer at a time: the thread, flush(), exit
        self._writer: threading.Thread | None = None
        self._closed = False
        atexit.register(self.close)

    def __repr__(self) -> str:
        return f"RetrievalRecorder({str(self.path)!r}, max_bytes={self.max_bytes})"

    def record(self, call: Retrieval) -> None:
        """Queue one call (written within ``interval`` seconds, or at :meth:`flush`)."""
        pending = self._pending
        if len(pending) >= self._limit:
            with self._drop_lock:
                self._dropped += 1
            return
        pending.append(call)
        if self._writer is None:
            self._start()
        elif len(pending) >= self.buffer:
            self._wake.set()

    def _start(self) -> None:
        with self._lock:
            if self._writer is None and not self._closed:
                self._writer = threading.Thread(
                    target=self._run, name=f"bookend recorder {self.path.name}", daemon=True
                )
                self._writer.start()

    def _run(self) -> None:
        while not self._closed:
            self._wake.wait(self.interval)
            self._wake.clear()
            self.flush()

    def flush(self) -> None:
        """Write every queued call now (on the caller's thread)."""
        with self._lock:
            while len(self._pending) > self.buffer:  # at most buffer lines in memory at once
                self._write([self._pending.popleft() for _ in range(self.buffer)])
            calls: list[Retrieval] = []
            while self._pending:
                calls.append(self._pending.popleft())
            with self._drop_lock:
                dropped, self._dropped = self._dropped, 0
            if dropped:
                _warn(
                    f"recorder={str(self.path)!r}: {dropped} retrievals not recorded: "
                    f"{self._limit} were waiting for the writer"
                )
            if calls:
                self._write(calls)

    def close(self) -> None:
        """Write what is queued and stop the writer thread (also run at exit)."""
        self._closed = True
        self._wake.set()
        self.flush()

    def _write(self, calls: list[Retrieval]) -> None:
        lines: list[str] = []
        failed: list[str] = []
        for call in calls:
            try:
                lines.append(call.record().to_json_line() + "\n")
            except ValueError as exc:
                failed.append(str(exc))
        if failed:
            _warn(
                f"recorder={str(self.path)!r}: {len(failed)} of {len(calls)} retrievals not "
                f"recorded ({failed[0]})"
            )
        chunks: list[list[bytes]] = []
        size = self.max_bytes  # a new chunk at the first line
        for line in lines:
            data = line.encode("utf-8")
            if size + len(data) > self.max_bytes:
                chunks.append([])
                size = 0
            chunks[-1].append(data)
            size += len(data)
        for at, chunk in enumerate(chunks):
            # Each chunk fits a file (one line longer than max_bytes goes alone): the file is
            # rotated between chunks, never past its bound by more than one line.
            try:
                data = b"".join(chunk)
                self._rotate_for(len(data))
                with self.path.open("ab") as out:
                    out.write(data)
            except OSError as exc:
                lost = sum(len(c) for c in chunks[at:])
                _warn(
                    f"recorder={str(self.path)!r}: {lost} retrievals not recorded "
                    f"({type(exc).__name__}: {exc.strerror or exc})"
                )
                return

    def _rotate_for(self, incoming: int) -> None:
        """Rotate the file if ``incoming`` more bytes would take it past ``max_bytes``."""
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return
        if size == 0 or size + incoming <= self.max_bytes:
            return
        if self.backups == 0:
            self.path.unlink()
            return
        for n in range(self.backups - 1, 0, -1):
            older = self.path.with_name(f"{self.path.name}.{n}")
            if older.exists():
                older.replace(self.path.with_name(f"{self.path.name}.{n + 1}"))
        self.path.replace(self.path.with_name(f"{self.path.name}.1"))


def _warn(message: str) -> None:
    LOGGER.warning(message)
    warnings.warn(message, RecorderWarning, stacklevel=3)


#: The one recorder of each file in this process (by real path), so that every adapter and call
#: naming a file appends through one writer.
_RECORDERS: dict[str, RetrievalRecorder] = {}
_RECORDERS_LOCK = threading.Lock()


def as_recorder(recorder: RecorderLike, *, param: str = "recorder") -> Recorder | None:
    """The recorder ``recorder=`` names: ``None`` (off), a :class:`Recorder` as it is, or for a
    path the process's one :class:`RetrievalRecorder` of that file.

    Raises:
        ValueError: ``{param}=...`` is neither, or a path whose directory does not exist.
    """
    if recorder is None:
        return None
    if isinstance(recorder, str | os.PathLike):
        key = os.path.realpath(os.fspath(recorder))
        with _RECORDERS_LOCK:
            kept = _RECORDERS.get(key)
            if kept is None:
                try:
                    kept = _RECORDERS[key] = RetrievalRecorder(recorder)
                except ValueError as exc:
                    raise ValueError(str(exc).replace("recorder=", f"{param}=", 1)) from None
            return kept
    if isinstance(recorder, Recorder):
        return recorder
    raise ValueError(
        f"{param} must be a file path or an object with a record(call) method, got "
        f"{param}={shown(recorder)}"
    )


def record_call(recorder: Recorder, call: Retrieval) -> None:
    """Hand ``call`` to ``recorder``; an exception it raises becomes a :class:`RecorderWarning`
    (and a log line), so a recorder never fails the retrieval."""
    try:
        recorder.record(call)
    except Exception as exc:  # the recorder is the caller's object: anything can fail
        _warn(f"recorder {type(recorder).__name__}: retrieval not recorded ({exc!r})")
