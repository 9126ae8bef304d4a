"""Evaluation items: a question, its retrieved documents and the gold answer.

Read from a JSONL file (the user's own data) or converted from the built-in generator. One JSON
object per line:

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

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bookend.lab.items.lookup import ProbeItem, render_prompt

__all__ = ["EvalItem", "from_probe", "load_jsonl"]


@dataclass(frozen=True)
class EvalItem:
    """One evaluation item (see the module docstring).

    Attributes:
        item_id: its name in the report.
        question: the question.
        documents: the retrieved documents, in the file's (or generator's) order.
        answer: the gold answer.
        candidates: possible answers including ``answer``, or ``None``.
        scores: the retriever's score of each document, or ``None``.
        gold: index of the document holding the answer, or ``None`` when unknown.
        family: template family of generated items (``"file"`` for user data).
        answer_prefix: text after ``"Answer:"`` that the answer continues (generated items).
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

    def prompt(self, order: Sequence[int]) -> str:
        """The prompt with the documents in ``order`` (indices into :attr:`documents`)."""
        if sorted(order) != list(range(len(self.documents))):
            raise ValueError(
                f"order must be a permutation of range({len(self.documents)}), got {list(order)!r}"
            )
        return render_prompt([self.documents[k] for k in order], self.question, self.answer_prefix)[
            0
        ]

    @property
    def continuations(self) -> tuple[str, ...]:
        """What the model scores after the prompt: the candidates, or the answer alone."""
        return self.candidates if self.candidates is not None else (self.answer,)

    @property
    def answer_index(self) -> int:
        """Index of the gold answer in :attr:`continuations`."""
        return self.continuations.index(self.answer)


def from_probe(item: ProbeItem) -> EvalItem:
    """A generated lookup item: the documents' values are the candidates."""
    return EvalItem(
        item_id=f"{item.split}:{item.item_id}",
        question=item.question,
        documents=item.documents,
        answer=item.gold_answer,
        candidates=item.answers,
        gold=item.gold,
        family=item.family,
        answer_prefix=item.answer_prefix,
    )


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


def _parse(line: str, number: int) -> EvalItem:
    where = f"line {number}"
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{where}: not JSON ({exc.msg})") from None
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
    return EvalItem(
        item_id=str(data.get("id", number)),
        question=data["question"],
        documents=documents,
        answer=data["answer"],
        candidates=candidates,
        scores=scores,
        gold=gold,
    )


def load_jsonl(path: str | Path) -> list[EvalItem]:
    """Read evaluation items from a JSONL file (format in the module docstring).

    Raises:
        ValueError: naming the line and field of the first malformed item, or for an empty file.
    """
    source = Path(path)
    if not source.is_file():
        raise ValueError(f"items file does not exist: path={str(path)!r}")
    items = [
        _parse(line, number)
        for number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), start=1)
        if line.strip()
    ]
    if not items:
        raise ValueError(f"items file holds no items: path={str(path)!r}")
    ids = [item.item_id for item in items]
    if len(set(ids)) != len(ids):
        raise ValueError(f"item ids must be unique in path={str(path)!r}")
    return items
