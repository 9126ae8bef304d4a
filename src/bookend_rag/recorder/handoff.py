"""What ``recorder=`` names (:func:`as_recorder`) and how a call reaches it (:func:`record_call`):
never as a failed retrieval."""

from __future__ import annotations

import os
import threading
from typing import Protocol, runtime_checkable

from bookend_rag.errors import shown
from bookend_rag.recorder.call import Retrieval, recording_on, why_not_made
from bookend_rag.recorder.file import RetrievalRecorder
from bookend_rag.recorder.losses import tell

__all__ = ["Recorder", "RecorderLike", "as_recorder", "call_not_made", "record_call"]


@runtime_checkable
class Recorder(Protocol):
    """Anything that takes each call: :class:`~bookend_rag.recorder.RetrievalRecorder`, or a
    caller's own object (a queue, a test's list). ``record`` runs on the caller's path, so it
    should be quick; an exception it raises is a
    :class:`~bookend_rag.recorder.RecorderWarning`, never a failed retrieval.

    A call carries no metadata unless the object names the keys it wants in a
    ``metadata_keys`` attribute (a collection of keys, or ``None`` for every key), as
    :class:`~bookend_rag.recorder.RetrievalRecorder` does."""

    def record(self, call: Retrieval) -> None:
        """Take one call."""


#: What ``recorder=`` accepts: a file path (the process's one
#: :class:`~bookend_rag.recorder.RetrievalRecorder` for that file, with its defaults), a
#: :class:`Recorder`, or ``None`` (off).
RecorderLike = Recorder | str | os.PathLike[str] | None

#: The one recorder of each file in this process (by real path), so that every adapter and call
#: naming a file appends through one writer.
_RECORDERS: dict[str, RetrievalRecorder] = {}
_RECORDERS_LOCK = threading.Lock()


def as_recorder(recorder: RecorderLike, *, param: str = "recorder") -> Recorder | None:
    """The recorder ``recorder=`` names: ``None`` (off), a :class:`Recorder` as it is, or for a
    path the process's one :class:`~bookend_rag.recorder.RetrievalRecorder` of that file (no
    metadata recorded, the other settings at their defaults); ``None`` too when
    ``BOOKEND_RECORD=0`` turns recording off (:func:`~bookend_rag.recorder.recording_on`, read
    now, or when the recorder was made).

    Raises:
        ValueError: ``{param}=...`` is neither, or a path the recorder cannot append to.
    """
    if recorder is None:
        return None
    if isinstance(recorder, RetrievalRecorder):  # reorder(recorder=...) asks on every call
        return recorder if recorder.on else None
    if isinstance(recorder, str | os.PathLike):
        key = os.path.realpath(os.fspath(recorder))
        with _RECORDERS_LOCK:
            kept = _RECORDERS.get(key)
            if kept is None:
                try:
                    kept = _RECORDERS[key] = RetrievalRecorder(recorder)
                except ValueError as exc:
                    raise ValueError(str(exc).replace("recorder=", f"{param}=", 1)) from None
        return kept if kept.on else None
    if isinstance(recorder, Recorder):
        return recorder if recording_on() else None
    raise ValueError(
        f"{param} must be a file path or an object with a record(call) method, got "
        f"{param}={shown(recorder)}"
    )


def record_call(recorder: Recorder, call: Retrieval) -> None:
    """Hand ``call`` to ``recorder``; an exception it raises becomes a
    :class:`~bookend_rag.recorder.RecorderWarning` (and a log line) naming its type only (its
    message may quote a document), so a recorder never fails the retrieval."""
    try:
        recorder.record(call)
    except Exception as exc:  # the recorder is the caller's object: anything can fail
        tell(f"recorder {type(recorder).__name__}: call not recorded ({type(exc).__name__})")


def call_not_made(recorder: Recorder, exc: Exception) -> None:
    """Tell that a call's record could not be made (``exc``, raised reading the call): counted
    as lost by a :class:`~bookend_rag.recorder.RetrievalRecorder`, else a
    :class:`~bookend_rag.recorder.RecorderWarning`."""
    if isinstance(recorder, RetrievalRecorder):
        recorder.lost(exc)
        return
    tell(f"recorder {type(recorder).__name__}: call not recorded ({why_not_made(exc)})")


def _after_fork_in_child() -> None:
    # Another thread of the parent may have held the lock when it forked.
    global _RECORDERS_LOCK
    _RECORDERS_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):  # no fork on Windows
    os.register_at_fork(after_in_child=_after_fork_in_child)
