"""The retrieval recorder: each placement call appended to a local JSON Lines file, in the schema
of :mod:`bookend_rag.retrievals`, off the caller's path.

A call hands the recorder a :class:`Retrieval`: what its record needs (the texts, the scores, the
order placed, the question, the metadata values the recorder allows), copied on the caller's side
when the call is made, so a document changed later is recorded as it was placed. A
:class:`RetrievalRecorder` writes the calls from a thread, rotates its file by size, counts and
tells what it could not record (:class:`RecorderWarning`, the ``bookend_rag`` logger and the next
record's ``unrecorded`` field), records no metadata unless allowed, creates files readable by
their owner only, and writes each call once in forked children too. ``BOOKEND_RECORD=0`` in the
environment turns every recorder off (:func:`recording_on`). Nothing leaves the machine.

>>> import tempfile, pathlib
>>> from bookend_rag.retrievals import read_retrievals
>>> path = pathlib.Path(tempfile.mkdtemp()) / "retrievals.jsonl"
>>> recorder = RetrievalRecorder(path)
>>> recorder.record(Retrieval(["a", "b"], [0.2, 0.9], "llama-3.1-8b", (1, 0), "reorder"))
>>> recorder.flush()
>>> [record.order for record in read_retrievals(path)]
[[1, 0]]
"""

from bookend_rag.recorder.call import (
    RECORD_SWITCH,
    MetadataKeys,
    Retrieval,
    UnrecordableCallError,
    recording_on,
)
from bookend_rag.recorder.file import QUESTIONLESS_TOLD_AFTER, Redactor, RetrievalRecorder
from bookend_rag.recorder.handoff import (
    Recorder,
    RecorderLike,
    as_recorder,
    call_not_made,
    record_call,
)
from bookend_rag.recorder.losses import LOGGER, RecorderWarning

__all__ = [
    "LOGGER",
    "QUESTIONLESS_TOLD_AFTER",
    "RECORD_SWITCH",
    "MetadataKeys",
    "Recorder",
    "RecorderLike",
    "RecorderWarning",
    "Redactor",
    "Retrieval",
    "RetrievalRecorder",
    "UnrecordableCallError",
    "as_recorder",
    "call_not_made",
    "record_call",
    "recording_on",
]
