"""The retrieval record: one retriever call as bookend sees it, the unit that label-free tuning
starts from (``bookend tune --retrievals FILE``).

A record file is JSON Lines, one :class:`RetrievalRecord` per line, in schema
:data:`RETRIEVALS_SCHEMA`. Every record holds the user's question (where the framework passes
it), the documents in the retriever's order with their scores, the model named for the
placement and the order bookend chose. The schema is versioned by its ``schema`` field; a reader
refuses a version it does not know, naming it, rather than guessing.

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

import json
import math
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Final, Literal

from pydantic import ConfigDict, Field, JsonValue, field_validator, model_validator

from bookend_rag.errors import OneLineModel, shown

__all__ = [
    "RETRIEVALS_SCHEMA",
    "RecordedDocument",
    "RetrievalRecord",
    "read_retrievals",
]

#: The version of the record format this library writes and reads.
RETRIEVALS_SCHEMA: Final = "bookend-retrievals/1"

#: Where a record came from: the core's function, one of the three adapters, the command line,
#: or a conversion of objects a team logged itself.
RecordSource = Literal["reorder", "langchain", "llama_index", "haystack", "cli", "import"]


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
    the order bookend placed them (``None`` where nothing was placed, as for imported logs)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    schema_version: Literal["bookend-retrievals/1"] = Field(
        default=RETRIEVALS_SCHEMA, alias="schema"
    )
    question: str | None = None
    documents: Annotated[list[RecordedDocument], Field(min_length=1)]
    model: str | None = None
    order: list[int] | None = None
    source: RecordSource = "import"
    time: str = Field(default_factory=_now)

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

    def to_json_line(self) -> str:
        """The record as one line of JSON (no newline), as a record file holds it."""
        return self.model_dump_json(by_alias=True)


def read_retrievals(path: str | Path) -> Iterator[RetrievalRecord]:
    """The records of a JSON Lines file, in file order; blank lines are skipped.

    Raises:
        ValueError: the file is missing, or a line is not JSON or not a record of a known
            schema version, named by its line number.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"retrievals={str(path)!r}: file not found")
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: not JSON ({exc.msg})") from None
            if not isinstance(data, dict):
                raise ValueError(f"{path}:{number}: a record is a JSON object, got {shown(data)}")
            version = data.get("schema", RETRIEVALS_SCHEMA)
            if version != RETRIEVALS_SCHEMA:
                raise ValueError(
                    f"{path}:{number}: schema={shown(version)} is not one this version of "
                    f"bookend reads ({RETRIEVALS_SCHEMA})"
                )
            try:
                yield RetrievalRecord(**data)
            except ValueError as exc:
                raise ValueError(f"{path}:{number}: {exc}") from None
