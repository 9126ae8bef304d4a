"""What a recorder could not record, counted and told: :class:`Losses` keeps the count the next
record's ``unrecorded`` field carries, and tells each kind of loss (a full buffer, a record that
could not be made, a write that failed, by exception type and errno) with its count, at most
once per interval, as a :class:`RecorderWarning` at the user's own line and on the
``bookend_rag`` logger. Nothing told holds a document's text or a question."""

from __future__ import annotations

import logging
import math
import threading
import time
import warnings

from bookend_rag.errors import caller_stacklevel

__all__ = ["LOGGER", "Losses", "RecorderWarning", "tell"]

#: The logger every placement note and recorder report goes to.
LOGGER = logging.getLogger("bookend_rag")
# A library adds no output of its own: without this, Python's last-resort handler would print
# every note to stderr in applications that never configured logging.
LOGGER.addHandler(logging.NullHandler())


class RecorderWarning(UserWarning):
    """A recorder's report: calls it could not record (the retrievals themselves went on), or
    calls recorded without what ``bookend tune --retrievals`` needs."""


def tell(message: str) -> None:
    """``message`` on the ``bookend_rag`` logger and as a :class:`RecorderWarning` whose
    ``stacklevel`` names the first line outside bookend and the frameworks
    (:func:`bookend_rag.errors.caller_stacklevel`): the user's call."""
    LOGGER.warning("%s", message)
    warnings.warn(message, RecorderWarning, stacklevel=caller_stacklevel())


#: A kind of loss: what failed (``"full"``, ``"record"``, ``"write"``), the exception's type
#: name and its errno.
Kind = tuple[str, str, int | None]


class Losses:
    """The calls one recorder could not record.

    :meth:`lost` counts them (from any thread, the writer's too); :meth:`take` hands the count
    to the next record written; :meth:`tell_due` tells each kind counted since it was last told,
    a kind not told before at once and each at most once per ``every`` seconds, from the thread
    that calls it (a caller's: so the warning names the user's line, not the writer thread's).

    Args:
        where: how the messages name the recorder (``recorder='path'``).
        every: seconds between two reports of one kind.
    """

    def __init__(self, where: str, every: float) -> None:
        self.where = where
        self.every = every
        self.forked()

    def forked(self) -> None:
        """Start afresh (a new lock, nothing counted): in a forked child, whose parent reports
        its own losses and whose lock another thread of the parent may have held."""
        self._lock = threading.Lock()
        self._unrecorded = 0
        self._counts: dict[Kind, int] = {}
        self._why: dict[Kind, str] = {}
        self._told_at: dict[Kind, float] = {}
        #: When :meth:`tell_due` next has something to tell (``inf``: nothing counted). A caller
        #: compares it with the clock before taking the lock.
        self.due_at = math.inf

    def lost(self, count: int, kind: Kind, why: str) -> None:
        """Count ``count`` calls not recorded, for the reason ``why`` (no text of a call)."""
        with self._lock:
            self._unrecorded += count
            self._counts[kind] = self._counts.get(kind, 0) + count
            self._why[kind] = why
            self.due_at = min(self.due_at, self._told_at.get(kind, -math.inf) + self.every)

    def take(self) -> int:
        """The calls lost since the last record written (for the next one), now counted as
        carried."""
        with self._lock:
            count, self._unrecorded = self._unrecorded, 0
        return count

    def give_back(self, count: int) -> None:
        """A count :meth:`take` gave for a record that was not written after all (already
        told: only carried again)."""
        with self._lock:
            self._unrecorded += count

    def tell_due(self, *, everything: bool = False) -> None:
        """Tell each kind of loss that is due (``everything``: every kind counted, due or not;
        at :meth:`~bookend_rag.recorder.RetrievalRecorder.flush` and exit)."""
        now = time.monotonic()
        told: list[str] = []
        with self._lock:
            self.due_at = math.inf
            for kind, count in self._counts.items():
                if not count:
                    continue
                next_at = self._told_at.get(kind, -math.inf) + self.every
                if everything or next_at <= now:
                    told.append(f"{self.where}: {_calls(count)} not recorded ({self._why[kind]})")
                    self._counts[kind] = 0
                    self._told_at[kind] = now
                else:
                    self.due_at = min(self.due_at, next_at)
        for message in told:
            tell(message)


def _calls(count: int) -> str:
    return f"{count} call" if count == 1 else f"{count} calls"
