"""Items: one question, its documents and the gold answer; one prompt renderer; the JSONL format.

Every source of items gives this one type: the generated lookup and hard items
(:mod:`~bookend_rag_lab.items.lookup`, :mod:`~bookend_rag_lab.items.hard`), the NaturalQuestions
suite (:mod:`~bookend_rag_lab.items.nq`) and the user's own JSONL file (:func:`load_jsonl`). Every
experiment renders it with :meth:`Item.rendered`: the prompt text is part of the call-cache key and
of every recorded run, so it never changes.

The JSONL file has one JSON object per line:

``question`` (string, required)
    The question asked after the documents.
``documents`` (list, required, at least 2)
    The retrieved documents: strings, or objects ``{"text": ..., "score": ...}`` carrying the
    retriever's score (higher is better). Either every document has a score or none has.
``answer`` (string, required)
    The gold answer. Its log-probability as the continuation ``" " + answer`` of the prompt is the
    primary score.
``candidates`` (list of strings, optional)
    Possible answers including ``answer``: adds the gold answer's probability among them and
    accuracy as "the gold answer scores highest". Without it, accuracy is "greedy decoding
    reproduces the answer".
``gold`` (integer, optional)
    Index of the document that holds the answer; by default the first document containing the
    answer (case-insensitive), if any (used for the position curve and the oracle).
``id`` (string or integer, optional)
    The item's name in the report (default: its line number).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bookend_rag.retrievals import JsonLine, json_lines
from bookend_rag_lab.items.template import BOOKEND_PROMPT, PromptTemplate
from bookend_rag_lab.models.scorer import Prompt

__all__ = ["Item", "items_sha256", "load_jsonl"]


@dataclass(frozen=True)
class Item:
    """One item (see the module docstring).

    Attributes:
        item_id: its name in reports and outcomes (``"evaluation:1000003"`` for generated items,
            ``"nq:evaluation:12"`` for the NQ suite, the file's ``id`` or line number).
        question: the question.
        documents: the documents, in the source's order.
        answer: the gold answer.
        candidates: possible answers including ``answer`` (distinct), or ``None``.
        scores: the retriever's score of each document, or ``None``.
        gold: index of the document holding the answer, or ``None`` when unknown.
        family: template family (``"file"`` for user data, ``"nq-bm25"`` ... for the NQ suite).
        answer_prefix: text after ``"Answer:"`` that the answer continues (generated items).
        roles: each document's part in a hard item (:data:`bookend_rag_lab.items.hard.ROLES`,
            ``roles[gold] == "gold"``); empty for other items.
        filler: the ``(lo, hi)`` filler sentences per document of a plain lookup item, or
            ``None``.
        template: the prompt it is rendered into (:mod:`~bookend_rag_lab.items.template`; ``None``:
            bookend's own, :func:`~bookend_rag_lab.items.template.render_prompt`). Not part of
            the item's identity: items compare and hash (:func:`items_sha256`) alike under any
            template.
    """

    item_id: str
    question: str
    documents: tuple[str, ...]
    answer: str
    candidates: tuple[str, ...] | None = None
    scores: tuple[float, ...] | None = None
    gold: int | None = None
    family: str = "file"
    answer_prefix: str = ""
    roles: tuple[str, ...] = ()
    filler: tuple[int, int] | None = None
    template: PromptTemplate | None = dataclasses.field(default=None, compare=False, repr=False)

    def with_template(self, template: PromptTemplate | None) -> Item:
        """The same item rendered into ``template``."""
        return replace(self, template=template)

    @property
    def continuations(self) -> tuple[str, ...]:
        """What the model scores after the prompt: the candidates, or the answer alone."""
        return self.candidates if self.candidates is not None else (self.answer,)

    @property
    def answer_index(self) -> int:
        """Index of the gold answer in :attr:`continuations`."""
        return self.continuations.index(self.answer)

    def order_with_gold_at(self, slot: int) -> tuple[int, ...]:
        """Document order placing the gold document at ``slot``, the others in original order.

        Raises:
            ValueError: when the gold document is unknown or ``slot`` is not a slot.
        """
        if self.gold is None:
            raise ValueError(f"item {self.item_id!r} has no known gold document to place")
        if not 0 <= slot < len(self.documents):
            raise ValueError(f"slot must lie in [0, {len(self.documents) - 1}], got slot={slot!r}")
        others = [k for k in range(len(self.documents)) if k != self.gold]
        return (*others[:slot], self.gold, *others[slot:])

    def prompt(self, order: Sequence[int] | None = None) -> Prompt:
        """The prompt with documents in ``order`` (see :meth:`rendered`), rendered once: no
        spans are looked for."""
        template = self.template or BOOKEND_PROMPT
        return template.prompt(self._ordered(order), self.question, self.answer_prefix)

    def rendered(self, order: Sequence[int] | None = None) -> tuple[Prompt, list[tuple[int, int]]]:
        """The prompt with the documents in ``order`` (a permutation of ``range(K)``; default: as
        given) rendered into the item's template, and the character span ``[start, end)`` of
        each document, slot 1 first (bookend's own prompt,
        :func:`~bookend_rag_lab.items.template.render_prompt`, spans each ``"Document k: ..."``;
        a template's spans are described in
        :mod:`~bookend_rag_lab.items.template`).

        Raises:
            ValueError: when ``order`` is not a permutation of the documents.
        """
        template = self.template or BOOKEND_PROMPT
        return template.render(self._ordered(order), self.question, self.answer_prefix)

    def _ordered(self, order: Sequence[int] | None) -> list[str]:
        """The documents in ``order`` (default: as given), checked to be a permutation."""
        indices = list(range(len(self.documents))) if order is None else list(order)
        if sorted(indices) != list(range(len(self.documents))):
            raise ValueError(
                f"order must be a permutation of range({len(self.documents)}), got {indices!r}"
            )
        return [self.documents[k] for k in indices]


def _strings(value: Any, field: str, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"{where}: {field} must be a list of non-empty strings, got {value!r}")
    return tuple(value)


def _documents(value: Any, where: str) -> tuple[tuple[str, ...], tuple[float, ...] | None]:
    if not isinstance(value, list) or len(value) < 2:
        raise ValueError(f"{where}: documents must be a list of at least 2, got {value!r}")
    if all(isinstance(d, str) for d in value):
        return _strings(value, "documents", where), None
    if not all(isinstance(d, dict) and isinstance(d.get("text"), str) for d in value):
        raise ValueError(
            f'{where}: documents must be all strings or all {{"text", "score"?}} objects'
        )
    texts = tuple(str(d["text"]) for d in value)
    has_score = [d.get("score") is not None for d in value]
    if not any(has_score):
        return texts, None
    if not all(has_score):
        raise ValueError(f"{where}: either every document has a score or none has")
    scores = []
    for d in value:
        score = d["score"]
        if isinstance(score, bool) or not isinstance(score, (int, float)) or score != score:
            raise ValueError(f"{where}: document score must be a finite number, got {score!r}")
        scores.append(float(score))
    return texts, tuple(scores)


def _parse(line: JsonLine) -> Item:
    where = f"line {line.number}"
    if line.error is not None:
        raise ValueError(f"{where}: {line.error}")
    data = line.value
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected a JSON object, got {type(data).__name__}")
    for field in ("question", "answer"):
        if not isinstance(data.get(field), str) or not data[field].strip():
            raise ValueError(
                f"{where}: {field} must be a non-empty string, got {data.get(field)!r}"
            )
    documents, scores = _documents(data.get("documents"), where)
    candidates = None
    if data.get("candidates") is not None:
        candidates = _strings(data["candidates"], "candidates", where)
        if data["answer"] not in candidates:
            raise ValueError(f"{where}: candidates must include the answer {data['answer']!r}")
    gold = data.get("gold")
    if gold is None:
        needle = data["answer"].lower()
        gold = next((k for k, d in enumerate(documents) if needle in d.lower()), None)
    elif isinstance(gold, bool) or not isinstance(gold, int) or not 0 <= gold < len(documents):
        raise ValueError(f"{where}: gold must be a document index, got gold={gold!r}")
    return Item(
        item_id=str(data.get("id", line.number)),
        question=data["question"],
        documents=documents,
        answer=data["answer"],
        candidates=candidates,
        scores=scores,
        gold=gold,
    )


def load_jsonl(path: str | Path) -> list[Item]:
    """Read items from a JSONL file (format in the module docstring).

    Raises:
        ValueError: naming the line and field of the first malformed item, or for an empty file.
    """
    source = Path(path)
    if source.is_dir():
        raise ValueError(f"items file is a folder, not a JSONL file: path={str(path)!r}")
    if not source.is_file():
        raise ValueError(f"items file does not exist: path={str(path)!r}")
    items = [_parse(line) for line in json_lines(source.read_text(encoding="utf-8").splitlines())]
    if not items:
        raise ValueError(f"items file holds no items: path={str(path)!r}")
    ids = [item.item_id for item in items]
    if len(set(ids)) != len(ids):
        raise ValueError(f"item ids must be unique in path={str(path)!r}")
    return items


def items_sha256(items: Sequence[Item]) -> str:
    """The SHA-256 of every field of every item, in order (JSON, keys sorted): the same items
    give the same hash on any machine, and any changed field, document or order changes it."""
    rows = [
        {f.name: getattr(item, f.name) for f in dataclasses.fields(item) if f.name != "template"}
        for item in items
    ]
    text = json.dumps(rows, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
