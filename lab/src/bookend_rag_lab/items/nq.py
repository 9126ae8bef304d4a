"""Real NaturalQuestions-Open items: a gold Wikipedia passage among retrieved hard negatives.

Source: the 2,655 NaturalQuestions-Open questions with their gold passages that Liu et al. 2023
("Lost in the Middle", arXiv 2307.03172) publish as ``qa_data/nq-open-oracle.jsonl.gz`` (MIT; the
passages are Wikipedia text, CC BY-SA; the questions Natural Questions, CC BY-SA 3.0). The file
and its licence ship in ``bookend_rag_lab/data`` (``NQ-README.md``, ``NQ-LICENSE``). No one here
wrote a word of it: it is the suite a default is checked on after being chosen elsewhere.

Construction (deterministic, no model involved):

1. **Splits.** Each question goes to ``calibration`` (30%), ``selection`` (20%) or ``evaluation``
   (50%) by the SHA-256 of its text, so the splits never share a question. Negatives come from the
   pool of the same split's gold passages only, so the splits never share a passage either.
2. **Hard negatives.** For question ``q``, its retriever (BM25 for even positions of the split,
   MiniLM for odd ones) ranks the split's pool; the top passages that contain none of ``q``'s
   answers (SQuAD normalisation: lower case, no punctuation, no articles) become the K - 1
   negatives. A negative whose own question's answer repeats a candidate already taken is passed
   over, so the candidates stay distinct.
3. **Order.** The K documents are ranked by the same retriever; each carries its score, so the gold
   passage's rank is whatever real retrieval gives it (evaluate with retriever ``"file"``).
4. **Candidates.** The gold answer (the question's first answer) and, for each negative, its own
   question's first answer: the K answers a reader of these passages could give.

Each passage reads ``(Title: TITLE) TEXT``, as in the paper's prompts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from bookend_rag_lab.items.item import Item
from bookend_rag_lab.items.pool import (
    POOL_RETRIEVERS,
    SPLIT_SHARES,
    TitledPassage,
    check_request,
    data_rows,
    mine_item,
    score_matrix,
    split_of,
)

__all__ = ["NQ_SPLITS", "NQRecord", "load_records", "nq_items", "split_of"]

NQ_SPLITS = SPLIT_SHARES


@dataclass(frozen=True)
class NQRecord(TitledPassage):
    """One question with its answers and its gold passage (a question's split:
    :func:`~bookend_rag_lab.items.pool.split_of` its text)."""

    question: str
    answers: tuple[str, ...]
    title: str
    text: str


@lru_cache(maxsize=4)
def load_records(path: str | None = None) -> tuple[NQRecord, ...]:
    """Every record of the file (default: the bundled one), in file order; a question or passage
    text seen before is skipped, so every pool passage belongs to one question."""
    out: list[NQRecord] = []
    seen: set[str] = set()
    for row in data_rows(path, "nq-open-oracle.jsonl.gz"):
        gold = next(c for c in row["ctxs"] if c.get("isgold"))
        if row["question"] in seen or gold["text"] in seen or not row["answers"]:
            continue
        seen.update((row["question"], gold["text"]))
        answers = tuple(row["answers"])
        out.append(NQRecord(row["question"], answers, gold["title"], gold["text"]))
    return tuple(out)


def nq_items(
    n_items: int,
    k: int,
    *,
    split: str = "evaluation",
    retrievers: Sequence[str] = POOL_RETRIEVERS,
    path: str | None = None,
) -> list[Item]:
    """The first ``n_items`` items of ``k`` documents of a split (construction in the module
    docstring); item ``i`` takes retriever ``retrievers[i % len(retrievers)]``.

    Raises:
        ValueError: for an unknown split or retriever, ``k < 2``, or more items than the split has.
    """
    check_request(split, NQ_SPLITS, retrievers, k)
    pool = [r for r in load_records(path) if split_of(r.question) == split]
    if not 1 <= n_items <= len(pool):
        raise ValueError(f"n_items must be in 1..{len(pool)} for split {split!r}, got {n_items!r}")
    passages = [r.document for r in pool]
    offers = [r.answers[:1] for r in pool]
    out: list[Item] = []
    for offset, retriever in enumerate(retrievers):
        positions = range(offset, len(pool), len(retrievers))
        wanted = [i for n, i in enumerate(positions) if n < n_items]
        matrix = score_matrix(retriever, [pool[i].question for i in wanted], passages)
        for i, row in zip(wanted, matrix, strict=True):
            item = mine_item(
                item_id=f"nq:{split}:{i}",
                question=pool[i].question,
                answers=pool[i].answers,
                gold=i,
                documents=passages,
                offers=offers,
                scores=row,
                k=k,
                family=f"nq-{retriever}",
            )
            if item is not None:
                out.append(item)
    out.sort(key=lambda item: int(item.item_id.rsplit(":", 1)[1]))
    return out[:n_items]
