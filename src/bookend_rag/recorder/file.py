"""The retrieval record file: :class:`RetrievalRecorder` appends each call to a local JSON Lines
file off the caller's path, bounded on disk and in memory, private by default, and writes each
call once in every process, forked children included."""

from __future__ import annotations

import atexit
import math
import os
import sys
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any, Final, Literal

from bookend_rag.errors import shown
from bookend_rag.recorder.call import MetadataKeys, Retrieval, recording_on, why_not_made
from bookend_rag.recorder.losses import Kind, Losses, tell
from bookend_rag.retrievals import RecordSource, RetrievalRecord

__all__ = ["QUESTIONLESS_TOLD_AFTER", "Redactor", "RetrievalRecorder"]

#: A callable ``metadata=``: takes each record before it is written and returns the record to
#: write (a :class:`~bookend_rag.retrievals.RetrievalRecord`, or a dict of its fields) or
#: ``None`` to write none.
Redactor = Callable[[RetrievalRecord], RetrievalRecord | Mapping[str, Any] | None]

#: After this many calls without a question, a recorder says once how to pass the question.
QUESTIONLESS_TOLD_AFTER: Final = 20

#: Per source of bookend's own, how its calls bring the question (``bookend tune --retrievals``
#: skips a record without one); another adapter's source gets :func:`_how_to_ask`'s general line.
_HOW_TO_ASK: Final[dict[RecordSource, str]] = {
    "langchain": "BookendReorder got documents only: use BookendRetriever or "
    "ContextualCompressionRetriever(base_compressor=BookendReorder(...)), or invoke it with "
    '{"documents": ..., "question": ...}',
    "haystack": 'pass the query to the ranker in the run data, {"ranker": {"query": q}} '
    "(named as your pipeline names it; no pipeline.connect needed)",
    "llama_index": "pass the query: postprocess_nodes(nodes, query_str=q), or use it in a query "
    "engine",
    "reorder": "pass question= to reorder",
    "cli": "bookend reorder records no question: record with reorder(..., question=q) or an "
    "adapter",
    "import": "give record_from(..., question=q)",
}


def _how_to_ask(source: RecordSource) -> str:
    """How calls of ``source`` bring the question: its own line, or for an adapter bookend does
    not ship, where to look."""
    return _HOW_TO_ASK.get(
        source, f"pass each call's question to the {source} adapter (its documentation says how)"
    )


# Files hold what users asked and what was retrieved: readable by their owner only.
_FILE_MODE: Final = 0o600
_APPEND: Final = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)


class RetrievalRecorder:
    """Appends each call to ``path`` as one JSON line, copied on the caller's side when the call
    is made and written by a thread.

    **Off the caller's path**: :meth:`record` appends the call (a copy of what its record needs:
    :class:`~bookend_rag.recorder.Retrieval`) to a deque; a writer thread writes what waits once
    every ``interval`` seconds, as soon as ``buffer`` calls wait, at :meth:`flush` and at exit.
    Safe from threads and asyncio tasks.

    **Forks**: a forked child (gunicorn ``--preload``, multiprocessing) writes its own calls once,
    and its parent's waiting calls never (the parent writes them): the child starts with nothing
    waiting and a writer thread of its own at its first call; its calls are written at its exit,
    normal (``atexit``) or a multiprocessing child's (its finalizers). No signal handler is
    installed: a server's graceful shutdown (SIGTERM to gunicorn or uvicorn) exits normally.

    **Bounded, and loss visible**: a write that would take the file past ``max_bytes`` rotates it
    to ``path.1`` (``path.1`` to ``path.2`` ..., the oldest beyond ``backups`` removed). At most
    ``16 * buffer`` calls wait in memory; a call that finds them waiting is dropped
    (``on_full="drop"``) or waits up to ``max_wait`` seconds for room (``"block"``), then is
    dropped. Each call not recorded (dropped, a record that could not be made, a failed write)
    is counted in the ``unrecorded`` field of the next record written, and told (each kind, by
    exception type and errno, with its count, at most once per ``warn_every`` seconds) as a
    :class:`~bookend_rag.recorder.RecorderWarning` at your own line, at the next call or
    :meth:`flush`, and on the ``bookend_rag`` logger; never as a failed retrieval, and never with
    a document's text or a question.

    **Private by default**: the file is created readable by its owner only (mode 0600, rotated
    files too); no metadata is recorded unless ``metadata`` names the keys to keep; and
    ``BOOKEND_RECORD=0`` in the environment when the recorder is made turns it off (it creates
    no file and records nothing).

    Args:
        path: the JSON Lines file, created (or opened for appending) now: its directory must
            exist and be writable.
        metadata: the metadata keys whose values (JSON scalars) are recorded (default: none),
            or a callable that takes each :class:`~bookend_rag.retrievals.RetrievalRecord`
            (with every scalar metadata value) before it is written and returns the one to
            write, a dict of its fields, or ``None`` to write none (a skipped record is not
            counted as lost).
        on_full: ``"drop"`` (default) or ``"block"``: what a call does when ``16 * buffer``
            calls wait for the writer.
        max_wait: with ``on_full="block"``, the longest a call waits for room (seconds).
        warn_every: seconds between two warnings of one kind of loss.
        max_bytes: the size at which the file is rotated.
        backups: how many rotated files to keep (0: the file is emptied instead).
        buffer: write as soon as this many calls wait (else once every ``interval`` seconds).
        interval: seconds between writes of what waits.

    Raises:
        ValueError: a path that is a directory, in no existing or writable directory, or that
            cannot be opened for appending (one line naming ``recorder=`` and the path), or a
            bad setting, named.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        metadata: Collection[str] | Redactor = (),
        on_full: Literal["drop", "block"] = "drop",
        max_wait: float = 1.0,
        warn_every: float = 60.0,
        max_bytes: int = 64 * 2**20,
        backups: int = 3,
        buffer: int = 256,
        interval: float = 1.0,
    ) -> None:
        for name, value, low in (
            ("max_bytes", max_bytes, 1),
            ("backups", backups, 0),
            ("buffer", buffer, 1),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {name}={value!r}")
        for name, seconds in (("max_wait", max_wait), ("warn_every", warn_every)):
            if isinstance(seconds, bool) or not (
                isinstance(seconds, int | float) and 0 <= seconds < math.inf
            ):
                raise ValueError(f"{name} must be a number of seconds >= 0, got {name}={seconds!r}")
        if isinstance(interval, bool) or not (
            isinstance(interval, int | float) and 0 < interval < math.inf
        ):
            raise ValueError(f"interval must be a positive number of seconds, got {interval!r}")
        if on_full not in ("drop", "block"):
            raise ValueError(f"on_full must be 'drop' or 'block', got on_full={shown(on_full)}")
        self.metadata_keys, self._redact = _metadata_policy(metadata)
        self.path = Path(path)
        self.on = recording_on()
        _check_path(self.path, create=self.on)
        self.on_full, self.max_wait = on_full, max_wait
        self.max_bytes, self.backups, self.buffer, self.interval = (
            max_bytes,
            backups,
            buffer,
            interval,
        )
        self._limit = 16 * buffer
        self._losses = Losses(f"recorder={str(self.path)!r}", warn_every)
        self._questionless = 0
        self._closed = False
        self._forked()
        _LIVE.add(self)

    def _forked(self) -> None:
        """The state a process starts from: nothing waiting, no writer thread (one starts at the
        next call), fresh locks (another thread of a forking parent may have held them)."""
        self._pending: deque[Retrieval] = deque()
        self._wake = threading.Event()
        self._room = threading.Event()
        self._lock = threading.Lock()  # one writer at a time: the thread, flush(), exit
        self._writer: threading.Thread | None = None
        self._losses.forked()

    def __repr__(self) -> str:
        return f"RetrievalRecorder({str(self.path)!r}, max_bytes={self.max_bytes})"

    def record(self, call: Retrieval) -> None:
        """Queue one call (written within ``interval`` seconds, or at :meth:`flush`); first tell
        the losses that are due, from here, the caller's thread."""
        if not self.on or self._closed:
            return
        losses = self._losses
        if losses.due_at <= time.monotonic():
            losses.tell_due()
        if call.question is None:
            self._count_questionless(call.source)
        pending = self._pending
        if len(pending) >= self._limit and not self._room_for_one():
            losses.lost(
                1,
                ("full", "", None),
                f"{self._limit} calls were waiting for the writer, on_full={self.on_full!r}; "
                "the next record's unrecorded field counts them",
            )
            losses.tell_due()
            return
        pending.append(call)
        if self._writer is None:
            self._start()
        elif len(pending) >= self.buffer:
            self._wake.set()

    def _room_for_one(self) -> bool:
        """With ``on_full="block"``, wait (at most ``max_wait`` seconds) until fewer than the
        limit wait; whether they do."""
        if self.on_full != "block":
            return False
        deadline = time.monotonic() + self.max_wait
        while len(self._pending) >= self._limit:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self._room.clear()
            self._wake.set()
            self._room.wait(min(left, self.interval))
        return True

    def _count_questionless(self, source: RecordSource) -> None:
        self._questionless += 1
        if self._questionless == QUESTIONLESS_TOLD_AFTER:
            tell(
                f"recorder={str(self.path)!r}: {QUESTIONLESS_TOLD_AFTER} calls recorded without "
                f"a question, which `bookend tune --retrievals` cannot use; "
                f"{_how_to_ask(source)}"
            )

    def lost(self, exc: BaseException) -> None:
        """Count a call whose record could not be made (``exc``, raised reading it:
        :func:`~bookend_rag.recorder.call.why_not_made` says why) and tell what is due."""
        if not self.on:
            return
        self._losses.lost(1, _kind("record", exc), why_not_made(exc))
        self._losses.tell_due()

    def _start(self) -> None:
        with self._lock:
            if self._writer is None and not self._closed:
                _hook_exit()
                self._writer = threading.Thread(
                    target=self._run, name=f"bookend recorder {self.path.name}", daemon=True
                )
                self._writer.start()

    def _run(self) -> None:
        while not self._closed:
            self._wake.wait(self.interval)
            self._wake.clear()
            self._drain()

    def _drain(self) -> None:
        """Write the calls waiting now (not those that come meanwhile: a steady stream of calls
        would keep a flush from returning), at most ``buffer`` lines in memory at once."""
        with self._lock:
            pending = self._pending
            left = len(pending)
            while left:
                calls = [pending.popleft() for _ in range(min(self.buffer, left))]
                left -= len(calls)
                self._room.set()
                self._write(calls)

    def flush(self) -> None:
        """Write every queued call now (on the caller's thread), and tell every loss counted."""
        self._drain()
        self._losses.tell_due(everything=True)

    def close(self) -> None:
        """Write what is queued and stop the writer thread (also run at exit); the recorder takes
        no calls after."""
        self._closed = True
        self._wake.set()
        self.flush()

    def _write(self, calls: list[Retrieval]) -> None:
        records = [record for call in calls if (record := self._made(call)) is not None]
        if not records:
            return
        carried = self._losses.take()
        if carried:  # the first record written counts the calls lost before it
            records[0] = records[0].model_copy(update={"unrecorded": carried})
        lines = [record.to_json_line().encode("utf-8") + b"\n" for record in records]
        chunks: list[list[bytes]] = []
        size = self.max_bytes  # a new chunk at the first line
        for data in lines:
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
                self._append(data)
            except OSError as exc:
                if at == 0:
                    self._losses.give_back(carried)
                lost = sum(len(c) for c in chunks[at:])
                why = f"{type(exc).__name__}: [Errno {exc.errno}] {exc.strerror or exc}"
                self._losses.lost(lost, _kind("write", exc), why)
                return

    def _made(self, call: Retrieval) -> RetrievalRecord | None:
        """The record of ``call`` as it is written (redacted), or ``None`` (redacted away, or
        counted as lost)."""
        try:
            record = call.record()
        except Exception as exc:  # a bad score or field: the call is lost, the writer goes on
            self._losses.lost(1, _kind("record", exc), f"{type(exc).__name__} making the record")
            return None
        if self._redact is None:
            return record
        try:
            redacted = self._redact(record)
            if redacted is None or isinstance(redacted, RetrievalRecord):
                return redacted
            return RetrievalRecord.model_validate(redacted)
        except Exception as exc:  # the caller's function: anything can fail
            why = f"the metadata= redactor raised {type(exc).__name__}"
            self._losses.lost(1, _kind("redact", exc), why)
            return None

    def _append(self, data: bytes) -> None:
        """Append ``data`` to the file (created with mode 0600), whole."""
        fd = os.open(self.path, _APPEND, _FILE_MODE)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)

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


def _metadata_policy(metadata: object) -> tuple[MetadataKeys, Redactor | None]:
    """``metadata=`` as the keys a call copies and the redactor (``None``: none)."""
    if callable(metadata):
        return None, metadata
    if (
        isinstance(metadata, str | bytes)
        or not isinstance(metadata, Collection)
        or not all(isinstance(key, str) for key in metadata)
    ):
        raise ValueError(
            "metadata must be a list of the metadata keys to record or a callable that redacts "
            f"a record, got metadata={shown(metadata)}"
        )
    return frozenset(metadata), None


def _check_path(path: Path, *, create: bool) -> None:
    """Refuse a path the recorder could not append to, in one line; with ``create``, create the
    file (mode 0600) or open it for appending, as each write will."""
    problem = None
    try:
        if path.is_dir():
            problem = "is a directory"
        elif not path.parent.is_dir():
            problem = "has no such directory"
        elif create:
            os.close(os.open(path, _APPEND, _FILE_MODE))
        elif not os.access(path.parent, os.W_OK):
            problem = "is in a directory that is not writable"
    except OSError as exc:  # a name too long, a permission refused ...
        problem = f"cannot be opened for appending ({exc.strerror or type(exc).__name__})"
    if problem is not None:
        raise ValueError(f"recorder={str(path)!r} {problem}: give a file path to append to")


def _kind(what: str, exc: BaseException) -> Kind:
    return what, type(exc).__name__, getattr(exc, "errno", None)


#: Every recorder of this process (weakly: one no longer referenced needs no writing at exit).
_LIVE: weakref.WeakSet[RetrievalRecorder] = weakref.WeakSet()
#: The process in which a multiprocessing finalizer writes the recorders at exit (0: none yet).
_finalized_in = 0


def _close_all() -> None:
    """Write what every recorder of this process holds (at its exit)."""
    for recorder in list(_LIVE):
        recorder.close()


def _hook_exit() -> None:
    """Make this process write what its recorders hold at its exit: ``atexit`` (registered at
    import; a forked child inherits it) for a normal exit, and, in a process with
    multiprocessing, one of its finalizers, which run where ``atexit`` does not: its children
    leave through ``os._exit``, their finalizers run first. A finalizer is registered per
    process (a multiprocessing child clears those it inherited)."""
    global _finalized_in
    util = sys.modules.get("multiprocessing.util")
    if util is None or _finalized_in == os.getpid():
        return
    util.Finalize(None, _close_all, exitpriority=10)
    _finalized_in = os.getpid()


def _after_fork_in_child() -> None:
    for recorder in list(_LIVE):
        recorder._forked()


atexit.register(_close_all)
if hasattr(os, "register_at_fork"):  # no fork on Windows
    os.register_at_fork(after_in_child=_after_fork_in_child)
