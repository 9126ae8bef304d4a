"""The retrieval record: one retriever call as bookend sees it, the unit that label-free tuning
starts from (``bookend tune --retrievals FILE``).

A record file is JSON Lines, one :class:`RetrievalRecord` per line, in schema
:data:`RETRIEVALS_SCHEMA`. Every record holds the user's question (where the framework passes
it), the documents in the retriever's order with their scores, the model named for the
placement and the order bookend chose. The schema is versioned by its ``schema`` field; a reader
reads every version in :data:`READ_SCHEMAS` and refuses another, naming it, rather than guessing.
A recorder's file may be rotated into several (``path.N`` the oldest ... ``path.1``, then
``path``): :func:`retrieval_files` finds them from paths and glob patterns, oldest first, and
:class:`RetrievalReader` reads them in turn, counting what a reader meets besides records.

>>> record = RetrievalRecord(
...     question="Who wrote it?",
...     documents=[RecordedDocument(text="A", score=0.9), RecordedDocument(text="B")],
...     model="llama-3.1-8b",
...     order=[0, 1],
...     source="reorder",
... )
>>> RetrievalRecord.model_validate_json(record.to_json_line()) == record
True
"""

from __future__ import annotations

import glob
import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any, Final, Literal, get_args

from pydantic import (
    BeforeValidator,
    ConfigDict,
    Field,
    JsonValue,
    StringConstraints,
    field_validator,
    model_validator,
)

from bookend_rag.errors import OneLineModel, no_bool, shown

__all__ = [
    "READ_SCHEMAS",
    "RECORD_SOURCES",
    "RECORD_SOURCE_PATTERN",
    "RETRIEVALS_SCHEMA",
    "JsonLine",
    "RecordSource",
    "RecordedDocument",
    "RetrievalReader",
    "RetrievalRecord",
    "SchemaVersion",
    "checked_record_source",
    "json_lines",
    "json_scalars",
    "read_retrievals",
    "record_from",
    "retrieval_files",
    "write_retrievals",
]

#: The version of the record format this library writes.
RETRIEVALS_SCHEMA: Final = "bookend-retrievals/2"

#: Every version a record may name: version 1 is version 2 without ``unrecorded`` (read as 0).
SchemaVersion = Literal["bookend-retrievals/1", "bookend-retrievals/2"]
#: The versions it reads: version 1 has no ``unrecorded`` field (read as 0).
READ_SCHEMAS: Final = get_args(SchemaVersion)

#: The sources bookend's own writers name: the core's function, the three adapters, the command
#: line, and a conversion of objects a team logged itself (:func:`record_from`).
RECORD_SOURCES: Final = ("reorder", "langchain", "llama_index", "haystack", "cli", "import")
#: What a source looks like: a lower-case identifier of at most 64 characters.
RECORD_SOURCE_PATTERN: Final = r"^[a-z][a-z0-9_]{0,63}$"
#: Where a record came from: one of :data:`RECORD_SOURCES`, or the name another framework's
#: adapter records under (its :attr:`~bookend_rag.adapters.FrameworkAdapter.record_source`). Any
#: name of :data:`RECORD_SOURCE_PATTERN`'s form is valid, so a new adapter needs no edit here and
#: a reader reads its records whether it is installed or not.
RecordSource = Annotated[str, StringConstraints(pattern=RECORD_SOURCE_PATTERN)]


def checked_record_source(source: object) -> str:
    """``source`` if it is a valid :data:`RecordSource`, else a ``ValueError`` naming it (what a
    record's validation would say later, said where the name is declared)."""
    if not isinstance(source, str) or re.fullmatch(RECORD_SOURCE_PATTERN, source) is None:
        raise ValueError(
            f"record_source must be a lower-case identifier ({RECORD_SOURCE_PATTERN}) such as "
            f"{RECORD_SOURCES[1]!r}, got record_source={source!r}"
        )
    return source


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class RecordedDocument(OneLineModel):
    """One retrieved document: its text as the prompt shows it, the retriever's score (``None``
    where it gave none) and the JSON-serialisable part of its metadata."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str
    score: float | None = None
    metadata: dict[str, JsonValue] = Field(default_factory=dict)

    @field_validator("score")
    @classmethod
    def _finite(cls, score: float | None) -> float | None:
        # JSON has no NaN or infinity; a record must survive its own round trip.
        if score is not None and not math.isfinite(score):
            raise ValueError("must be finite or None")
        return score


class RetrievalRecord(OneLineModel):
    """One retriever call: ``documents`` in the retriever's order, ``order`` the input indices in
    the order bookend placed them (``None`` where nothing was placed, as for imported logs), and
    ``unrecorded``, how many calls its recorder could not record (a full buffer, a record that
    could not be made, a failed write) since the record it wrote before this one.

    A record of version 1 (``"schema": "bookend-retrievals/1"``, which has no ``unrecorded``) is
    valid too, with ``unrecorded`` 0; a record is written as version 2."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    schema_version: SchemaVersion = Field(default=RETRIEVALS_SCHEMA, alias="schema")
    question: str | None = None
    documents: Annotated[list[RecordedDocument], Field(min_length=1)]
    model: str | None = None
    order: list[int] | None = None
    source: RecordSource = "import"
    time: str = Field(default_factory=_now)
    unrecorded: Annotated[int, BeforeValidator(no_bool), Field(ge=0)] = 0

    @model_validator(mode="after")
    def _order_is_a_permutation_of_kept_documents(self) -> RetrievalRecord:
        # A placement may keep fewer chunks than it was given (top_k, budget) and may repeat the
        # top chunk at both ends; every index must still name a recorded document.
        if self.order is not None:
            bad = [i for i in self.order if not 0 <= i < len(self.documents)]
            if bad:
                raise ValueError(
                    f"order={shown(self.order)}: index {bad[0]} is not one of the "
                    f"{len(self.documents)} documents"
                )
        return self

    @model_validator(mode="after")
    def _unrecorded_needs_version_2(self) -> RetrievalRecord:
        if self.unrecorded and self.schema_version == "bookend-retrievals/1":
            raise ValueError(
                f"unrecorded={self.unrecorded}: schema 'bookend-retrievals/1' has no unrecorded "
                f"count (it is {RETRIEVALS_SCHEMA!r}'s)"
            )
        return self

    def to_json_line(self) -> str:
        """The record as one line of JSON (no newline), as a record file holds it (in the
        version it was read as: a version 1 record stays one)."""
        return self.model_dump_json(by_alias=True)


#: The longest message a bad line is named in: the file, the line and the field, cut short.
_MAX_MESSAGE = 200

#: The fields of a record as a file spells them (the model's, by alias), by version: version 1
#: has all but ``unrecorded``.
_WRITTEN: Final = tuple(f.alias or name for name, f in RetrievalRecord.model_fields.items())
_FIELDS: Final = {
    READ_SCHEMAS[0]: tuple(name for name in _WRITTEN if name != "unrecorded"),
    RETRIEVALS_SCHEMA: _WRITTEN,
}

#: A glob pattern's special characters.
_PATTERN = re.compile(r"[*?[]")

#: A rotated part of a recorder's file: the file's name, then ``.N`` (the larger, the older).
_ROTATED = re.compile(r"(?P<base>.+)\.(?P<n>[0-9]+)")


def retrieval_files(*paths: str | Path) -> list[Path]:
    """The record files ``paths`` name, each once, the rotated parts of a file oldest first.

    A path names its file and the parts a recorder rotated out of it (``path.1`` ...
    ``path.N``, which the recorder wrote as one stream with it); a glob pattern (``*``, ``?``,
    ``[``; quoted, so that bookend expands it) the files it matches. Parts of one file
    (``path.N`` the oldest ... ``path.1``, then ``path``) are ordered so; files of different
    names stay in the order named.

    Raises:
        ValueError: no path, a file that does not exist, or a pattern that matches no file.
    """
    if not paths:
        raise ValueError("retrievals must name at least one file, got none")
    found: dict[Path, Path] = {}  # resolved -> as named, in the order named
    for named in paths:
        text = str(named)
        matches = [Path(m) for m in sorted(glob.glob(text))] if _PATTERN.search(text) else []
        files = [m for m in matches if m.is_file()] if matches else _with_parts(Path(named))
        if not files or not files[0].is_file():
            problem = "matches no file" if _PATTERN.search(text) else "file not found"
            raise ValueError(f"retrievals={text!r}: {problem}")
        for path in files:
            found.setdefault(path.resolve(), path)
    first: dict[Path, int] = {}  # each file's first part named
    for index, resolved in enumerate(found):
        first.setdefault(_rotation(resolved)[0], index)

    def oldest_first(resolved: Path) -> tuple[int, int]:
        base, n = _rotation(resolved)
        return first[base], -n

    return [found[resolved] for resolved in sorted(found, key=oldest_first)]


def _with_parts(path: Path) -> list[Path]:
    """``path`` and the rotated parts of it that exist (``path.1`` ...), in no set order."""
    pattern = f"{glob.escape(str(path))}.[0-9]*"
    parts = [Path(m) for m in glob.glob(pattern) if _rotation(Path(m))[0].name == path.name]
    return [path, *(part for part in parts if part.is_file())]


def _rotation(path: Path) -> tuple[Path, int]:
    """The file a path is a rotated part of, and its number (0: the file itself)."""
    part = _ROTATED.fullmatch(path.name)
    if part is None:
        return path, 0
    return path.with_name(part["base"]), int(part["n"])


@dataclass(frozen=True)
class JsonLine:
    """One non-blank line of a JSON Lines file, parsed (:func:`json_lines`).

    Attributes:
        number: the line's number in the file (1-based).
        value: its JSON value (``None`` when it is not JSON).
        error: why it is not JSON, ``"not JSON (...)"`` or ``"not UTF-8 (...)"`` (``None``: it
            is).
        ended: whether it ends with a newline (a last line without one may be a record cut off
            by a writer still writing).
    """

    number: int
    value: Any = None
    error: str | None = None
    ended: bool = True


def json_lines(lines: Iterable[bytes | str]) -> Iterator[JsonLine]:
    """Each non-blank line of ``lines`` (a file opened in binary or text mode, or its lines),
    parsed, in order; a line that is not JSON (or not UTF-8) is given with its error, not raised,
    so each reader decides what such a line means.

    >>> lines = json_lines(['{"a": 1}\\n', "\\n", "[1,"])
    >>> [(line.number, line.error or line.value, line.ended) for line in lines]
    [(1, {'a': 1}, True), (3, 'not JSON (Expecting value)', False)]
    """
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        ended = raw.endswith(b"\n") if isinstance(raw, bytes) else raw.endswith("\n")
        try:
            value = json.loads(raw.decode("utf-8") if isinstance(raw, bytes) else raw)
        except json.JSONDecodeError as exc:
            yield JsonLine(number, error=f"not JSON ({exc.msg})", ended=ended)
        except UnicodeDecodeError as exc:
            yield JsonLine(number, error=f"not UTF-8 ({exc.reason})", ended=ended)
        else:
            yield JsonLine(number, value, ended=ended)


class RetrievalReader:
    """The records of record files, read in turn (each file in file order, blank lines skipped),
    and what the reading met besides records.

    A last line without a newline that is not JSON is a record cut off by a writer still
    writing: it is skipped and counted (:attr:`partial_lines`), not refused. Counts are those of
    the latest pass over the files.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "r.jsonl"
    >>> line = RetrievalRecord(documents=[RecordedDocument(text="A")], unrecorded=3).to_json_line()
    >>> _ = path.write_text(line + "\\n" + line[:20], encoding="utf-8")
    >>> reader = RetrievalReader([path])
    >>> len(list(reader)), reader.partial_lines, reader.unrecorded
    (1, 1, 3)

    Attributes:
        files: the files, in the order read.
        records: the records read.
        partial_lines: the cut-off last lines skipped.
        unrecorded: the calls the recorder could not record, summed over the records
            (:attr:`RetrievalRecord.unrecorded`).
    """

    def __init__(self, files: Iterable[str | Path]) -> None:
        self.files = tuple(Path(f) for f in files)
        self.records = 0
        self.partial_lines = 0
        self.unrecorded = 0

    def __iter__(self) -> Iterator[RetrievalRecord]:
        """The records, file after file.

        Raises:
            ValueError: a file is missing, or a line is not JSON, not UTF-8 or not a record of a
                version in :data:`READ_SCHEMAS`: one line of at most 200 characters naming the
                file, the line and the field.
        """
        self.records = self.partial_lines = self.unrecorded = 0
        for path in self.files:
            yield from self._read(path)

    def _read(self, path: Path) -> Iterator[RetrievalRecord]:
        if not path.is_file():
            raise ValueError(f"retrievals={str(path)!r}: file not found")
        with path.open("rb") as lines:
            for line in json_lines(lines):
                if line.error is not None:
                    if not line.ended:  # the last line, still being written
                        self.partial_lines += 1
                        continue
                    raise ValueError(_cut(f"{path}:{line.number}: {line.error}"))
                record = _record(line.value, f"{path}:{line.number}")
                self.records += 1
                self.unrecorded += record.unrecorded
                yield record


def _record(data: object, where: str) -> RetrievalRecord:
    """The record a line's JSON holds (``where``: its file and line, for the error)."""
    if not isinstance(data, dict):
        raise ValueError(_cut(f"{where}: a record is a JSON object, got {shown(data)}"))
    version = data.get("schema", RETRIEVALS_SCHEMA)
    if version not in READ_SCHEMAS:
        raise ValueError(
            _cut(
                f"{where}: schema={shown(version)} is not one this version of bookend reads "
                f"({', '.join(READ_SCHEMAS)})"
            )
        )
    fields = _FIELDS[version]
    unknown = next((key for key in data if key not in fields), None)
    if unknown is not None:  # another kind of file, or a field of another version
        raise ValueError(_cut(f"{where}: field {shown(unknown)} is not one of a {version} record"))
    if "documents" not in data:
        raise ValueError(_cut(f"{where}: field 'documents' is missing ({version} record)"))
    try:
        return RetrievalRecord(**data)
    except ValueError as exc:
        raise ValueError(_cut(f"{where}: {exc}")) from None


def _cut(message: str) -> str:
    """``message`` within :data:`_MAX_MESSAGE` characters."""
    return message if len(message) <= _MAX_MESSAGE else f"{message[: _MAX_MESSAGE - 3]}..."


def read_retrievals(path: str | Path) -> Iterator[RetrievalRecord]:
    """The records of one JSON Lines file, in file order, as :class:`RetrievalReader` reads
    them (blank lines and a cut-off last line skipped); for several files, the rotated parts of a
    recorder's file and the counts, a :class:`RetrievalReader` of :func:`retrieval_files`.

    Raises:
        ValueError: the file is missing, or a line is not JSON or not a record of a known
            schema version, named by its line number and field.
    """
    return iter(RetrievalReader([path]))


def json_scalars(metadata: Mapping[Any, Any] | None) -> dict[str, JsonValue]:
    """The part of ``metadata`` a record keeps: string, finite number, bool and null values
    (nested objects and anything else left out), without bookend's own ``bookend_*``
    annotations."""
    if not metadata:
        return {}
    return {
        str(key): value
        for key, value in metadata.items()
        if isinstance(value, str | int | float | bool | type(None))
        and not str(key).startswith("bookend_")
        and not (isinstance(value, float) and not math.isfinite(value))
    }


#: The metadata keys a LangChain ``Document``'s score is read from, as ``BookendReorder`` does.
_LANGCHAIN_SCORE_KEYS = ("relevance_score", "score")


def record_from(
    retrieved: Sequence[Any],
    *,
    question: str | None = None,
    model: str | None = None,
    score_key: Sequence[str] = _LANGCHAIN_SCORE_KEYS,
) -> RetrievalRecord:
    """One record from what a team already logged of a retriever call, in the retriever's order
    (``order`` is ``None``: nothing was placed). Each entry is read by its shape, so no framework
    is imported:

    * a LangChain ``(Document, score)`` pair (``similarity_search_with_relevance_scores``), or a
      LangChain ``Document`` (its score from the first of ``score_key`` in its metadata);
    * a LlamaIndex ``NodeWithScore`` (its text as the LLM sees it, with the metadata the LLM
      sees, as ``BookendNodePostprocessor`` counts it);
    * a Haystack ``Document`` (``content``, ``score``, ``meta``);
    * a string, or a mapping with ``"text"`` and optionally ``"score"`` (its other fields are the
      metadata).

    Raises:
        ValueError: an empty list, or an entry of none of these shapes, named by its index.
    """
    if isinstance(retrieved, str | bytes) or not isinstance(retrieved, Sequence) or not retrieved:
        raise ValueError(
            f"retrieved must be a non-empty list of documents, got retrieved={shown(retrieved)}"
        )
    documents = [_recorded(item, i, score_key) for i, item in enumerate(retrieved)]
    return RetrievalRecord(question=question, documents=documents, model=model, source="import")


def _recorded(item: Any, index: int, score_key: Sequence[str]) -> RecordedDocument:
    """One logged document as a :class:`RecordedDocument`, read by its shape."""
    text: object
    score: object = None
    metadata: Mapping[Any, Any] | None
    if isinstance(item, tuple) and len(item) == 2 and hasattr(item[0], "page_content"):
        text, score, metadata = item[0].page_content, item[1], item[0].metadata
    elif hasattr(item, "page_content"):  # LangChain Document
        text, metadata = item.page_content, item.metadata
        score = next((metadata[k] for k in score_key if metadata.get(k) is not None), None)
    elif hasattr(item, "node") and hasattr(item, "score"):  # LlamaIndex NodeWithScore
        # "llm" is MetadataMode.LLM's value (a str enum): the text the LLM sees.
        text, score = item.node.get_content(metadata_mode="llm"), item.score
        metadata = item.node.metadata
    elif hasattr(item, "content") and hasattr(item, "meta"):  # Haystack Document
        text, score, metadata = item.content, getattr(item, "score", None), item.meta
    elif isinstance(item, str):
        text, metadata = item, None
    elif isinstance(item, Mapping) and "text" in item:
        text, score = item["text"], item.get("score")
        metadata = {k: v for k, v in item.items() if k not in ("text", "score")}
    else:
        raise ValueError(
            f"retrieved[{index}] of type {type(item).__name__} is not a document bookend reads: "
            "a LangChain Document or (Document, score) pair, a LlamaIndex NodeWithScore, a "
            "Haystack Document, a string or a mapping with 'text'"
        )
    try:
        return RecordedDocument(text=text, score=score, metadata=json_scalars(metadata))
    except ValueError as exc:
        raise ValueError(f"retrieved[{index}]: {exc}") from None


def write_retrievals(path: str | Path, records: Iterable[RetrievalRecord]) -> int:
    """Append ``records`` to the JSON Lines file ``path`` (created if missing) and return how
    many were written: the file the recorder writes, from records made another way
    (:func:`record_from`).

    Raises:
        ValueError: ``path`` is a directory or its directory does not exist.
    """
    path = Path(path)
    if path.is_dir() or not path.parent.is_dir():
        problem = "is a directory" if path.is_dir() else "has no such directory"
        raise ValueError(f"path={str(path)!r} {problem}")
    lines = [record.to_json_line() + "\n" for record in records]
    with path.open("a", encoding="utf-8") as out:
        out.writelines(lines)
    return len(lines)
