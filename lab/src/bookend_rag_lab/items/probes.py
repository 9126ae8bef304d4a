"""Probe items from recorded retrievals: what every probe design shares.

A team has its retriever's output (:mod:`bookend_rag.retrievals`), rarely gold answers. A probe
design builds, from each recorded retrieval, one :class:`~bookend_rag_lab.items.item.Item` whose
answer is known without a label: the user's K documents, in their retriever's order, with their
scores, rendered later into their template, and as the target the answer that rests on the
retriever's first document. Two designs do so:

- :mod:`~bookend_rag_lab.items.self_answer` (the default): the user's own question, with the
  model's answer from each document alone as the candidates;
- :mod:`~bookend_rag_lab.items.codes`: an inserted code word per document, and a question that
  asks for the code of the retriever's first.

This module holds what both use: the result (:class:`Probes`), the shared reasons a retrieval
gives no probe (:data:`SKIP_REASONS`) and checks (:func:`unusable`), and the retriever's scores
and first document. Scores are the recorded ones; a retrieval with a document without a score
gets the core's reciprocal-rank prior ``1 / (i + 1)`` (what ``bookend_rag.reorder`` uses without
scores), so the retriever's order is kept. The user's file is only read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from bookend_rag.retrievals import RetrievalRecord
from bookend_rag_lab.items.item import Item

__all__ = [
    "PROBE_FAMILY",
    "SKIP_REASONS",
    "Probes",
    "ranked",
    "retriever_scores",
    "top_document",
    "unusable",
]

#: The family of every probe item (reports group items by family).
PROBE_FAMILY = "probe"

#: Why a retrieval gives no probe of any design (each design adds its own reasons).
SKIP_REASONS = {
    "few": "fewer than 2 documents",
    "empty": "the retriever's first document is empty",
    "context": "longer than the model's context",
}


@dataclass(frozen=True)
class Probes:
    """What a probe design built from a file of retrievals; each design's own type
    (:class:`~bookend_rag_lab.items.codes.CodeProbes`,
    :class:`~bookend_rag_lab.items.self_answer.SelfAnswerProbes`) adds what only it records.

    Attributes:
        items: one probe item per usable retrieval, in file order.
        records: the retrievals read.
        skipped: per reason (a key of the design's :attr:`reasons`), the numbers of the
            retrievals skipped (1-based, in file order).
        unscored: the retrievals with a document without a score (placed by the rank prior).
        seed: the seed the design was given.
        context: the model's context in tokens that prompts were checked against (``None``: not
            known, not checked).
        answers: the answers generated to build the probes (generation calls; none for a design
            that generates nothing).
    """

    #: The design's name in reports and summaries.
    design: ClassVar[str]
    #: Why a retrieval gives no probe of this design (the keys of :attr:`skipped`).
    reasons: ClassVar[Mapping[str, str]] = SKIP_REASONS

    items: list[Item]
    records: int
    skipped: dict[str, list[int]] = field(default_factory=dict)
    unscored: list[int] = field(default_factory=list)
    seed: int = 0
    context: int | None = None
    answers: int = 0

    def to_json(self) -> dict[str, Any]:
        """The report's record of the probes."""
        return {
            "design": self.design,
            "generated_answers": self.answers,
            "records": self.records,
            "probes": len(self.items),
            "skipped": {self.reasons[k]: v for k, v in self.skipped.items()},
            "unscored": self.unscored,
            "seed": self.seed,
            "context_tokens": self.context,
            **self._details(),
            "summary": self.summary(),
        }

    def summary(self) -> str:
        """One line: the probes built, and each reason a retrieval was skipped, counted."""
        made = "probe" if len(self.items) == 1 else "probes"
        read = "retrieval" if self.records == 1 else "retrievals"
        parts = [f"{len(self.items)} {self.design} {made} from {self.records} {read}"]
        parts += [f"{len(v)} skipped: {self.reasons[k]}" for k, v in self.skipped.items()]
        if self.unscored:
            unscored = len(self.unscored)
            parts.append(f"{unscored} without retriever scores (ranked by the retriever's order)")
        return "; ".join([*parts, *self._clauses()])

    @property
    def worth_scoring(self) -> bool:
        """Whether a run may score the items (a design says when its items would measure
        something else than placement)."""
        return True

    def _details(self) -> dict[str, Any]:
        """The design's own entries of :meth:`to_json`."""
        return {}

    def _clauses(self) -> list[str]:
        """The design's own clauses of :meth:`summary`, after the shared ones."""
        return []


def unusable(record: RetrievalRecord) -> str | None:
    """Why ``record`` gives no probe of any design whatever the model, a key of
    :data:`SKIP_REASONS` (``None``: it may give one): fewer than 2 documents, or the retriever's
    first empty. Each design adds its own checks to these."""
    if len(record.documents) < 2:
        return "few"
    if not record.documents[top_document(retriever_scores(record))].text.split():
        return "empty"
    return None


def ranked(
    record: RetrievalRecord, unusable: Callable[[RetrievalRecord], str | None]
) -> tuple[list[str], tuple[float, ...], int] | str:
    """A retrieval's texts, scores (:func:`retriever_scores`) and first document
    (:func:`top_document`) where it passes a design's checks (``unusable``), else why it gives
    no probe."""
    reason = unusable(record)
    if reason is not None:
        return reason
    scores = retriever_scores(record)
    return [d.text for d in record.documents], scores, top_document(scores)


def retriever_scores(record: RetrievalRecord) -> tuple[float, ...]:
    """The recorded scores, or where a document has none the core's reciprocal-rank prior
    ``1 / (i + 1)`` for every document (the retriever's order kept)."""
    recorded = [d.score for d in record.documents]
    if all(s is not None for s in recorded):
        return tuple(float(s) for s in recorded if s is not None)
    return tuple(1.0 / (i + 1) for i in range(len(recorded)))


def top_document(scores: Sequence[float]) -> int:
    """The retriever's first document: the highest score, the first on ties."""
    return max(range(len(scores)), key=lambda i: (scores[i], -i))
