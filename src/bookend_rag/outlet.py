"""What a placement did, out of the core, one way for :func:`~bookend_rag.reorder`, the three
framework adapters and ``bookend reorder``: :func:`deliver` sends each of its notes to Python's
``warnings`` (a :class:`PlacementNote` at the caller's own line) and the ``bookend_rag`` logger,
hands the call to a recorder when one is on (:mod:`bookend_rag.recorder`), and returns the notes
for the framework's own channel.

The placer's own notices are the exception (:attr:`bookend_rag.Bookend.notices`: a model bookend
knows no architecture for, warned once per process when first resolved; a tuned config used with
another model, warned when the config is read), so they are not repeated here on every call; they
stay in ``Placement.notes`` and in each framework's channel.
"""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from bookend_rag.errors import caller_stacklevel, not_the_callers
from bookend_rag.recorder import LOGGER, Recorder, Retrieval, call_not_made, record_call
from bookend_rag.retrievals import RecordSource

if TYPE_CHECKING:
    from bookend_rag.place import Bookend
    from bookend_rag.placement.result import Placement

__all__ = ["LOGGER", "PlacementNote", "deliver", "send_notes", "would_show"]


# A note sent from inside an asyncio task (LangChain runs ainvoke's work in one) has no frame of
# the caller's below it but the event loop's: name the line that ran the loop, not asyncio's
# (asyncio's folder named by path: importing it here would slow every import of bookend).
not_the_callers(os.path.join(os.path.dirname(os.__file__), "asyncio", "__init__.py"))


class PlacementNote(UserWarning):
    """A placement note (``Placement.notes``) as a warning: a setting or an input that could not
    apply as given, and what was done instead."""


def send_notes(notes: Sequence[str], *, skip: Collection[str] = (), warn: bool = True) -> None:
    """Each note not in ``skip`` to the ``bookend_rag`` logger (level ``WARNING``) and, with
    ``warn``, as a :class:`PlacementNote` whose ``stacklevel`` names the first line outside
    bookend, pydantic and the frameworks the adapters name
    (:func:`bookend_rag.errors.caller_stacklevel`); Python's default filter then shows each once
    per line."""
    level = caller_stacklevel()
    logged = would_show(LOGGER, logging.WARNING)
    for note in notes:
        if note in skip:
            continue
        if logged:
            LOGGER.warning("placement note: %s", note)
        if warn:
            warnings.warn(note, PlacementNote, stacklevel=level)


def would_show(logger: logging.Logger, level: int) -> bool:
    """Whether a record of ``level`` on ``logger`` would reach anything but a
    :class:`logging.NullHandler`: the level enabled and a handler of that level on the logger or
    an ancestor it propagates to (or, with no handler at all, Python's last resort); a filter on
    the logger itself counts, as it may act on the record. Most of the cost of a note is
    ``logging`` building a record that no handler shows (bookend's own logger has a
    ``NullHandler``), so the record is built only when this holds; asked on each call, so a
    handler added later is found."""
    if not logger.isEnabledFor(level):
        return False
    if logger.filters:
        return True
    any_handler = False
    node: logging.Logger | None = logger
    while node is not None:
        for handler in node.handlers:
            any_handler = True
            if type(handler) is not logging.NullHandler and level >= handler.level:
                return True
        node = node.parent if node.propagate else None
    last = logging.lastResort
    return not any_handler and last is not None and level >= last.level


def deliver(
    placement: Placement[Any],
    placer: Bookend[Any],
    recorder: Recorder | None,
    *,
    source: RecordSource,
    items: Sequence[Any],
    scores: Sequence[float | None] | None,
    question: str | None = None,
    text: Callable[[Any], Any] | None = None,
    metadata: Callable[[Any], Mapping[str, Any] | None] | None = None,
    by_identity: bool = False,
    warn: bool = True,
) -> tuple[str, ...]:
    """Send what ``placement`` did out of the core, and return its notes (for the framework's
    own channel).

    Its notes go to :func:`send_notes` (the placer's notices aside, warned once already). With a
    ``recorder``, the call goes to it as a :class:`~bookend_rag.recorder.Retrieval` copied now
    (:meth:`~bookend_rag.recorder.Retrieval.of`: a document changed after the call is recorded
    as it was): ``items`` read by ``text`` (``None``: as a placer reads them) with their
    ``scores`` in the retriever's order, the ``question``, the model, the order placed
    (``by_identity``: ``placement.items`` found among ``items`` by identity, for an adapter that
    placed a deduplicated copy) and, of ``metadata``, the keys the recorder asks for (its
    ``metadata_keys``; none without). A call that cannot be recorded is told
    (:class:`~bookend_rag.recorder.RecorderWarning`), never a failed retrieval.
    """
    notes = placement.notes
    if notes:
        send_notes(notes, skip=placer.notices, warn=warn)
    if recorder is not None:
        model = placer.config.model
        try:
            call = Retrieval.of(
                items,
                scores,
                model=model if isinstance(model, str) else placement.profile.name,
                order=None if by_identity else placement.order,
                kept=placement.items if by_identity else (),
                source=source,
                question=question,
                text=text,
                metadata=metadata,
                keys=getattr(recorder, "metadata_keys", ()),
            )
        except Exception as exc:  # a caller's text or metadata function: anything can fail
            call_not_made(recorder, exc)
        else:
            record_call(recorder, call)
    return notes
