"""Real SQuAD 2.0 questions: a gold Wikipedia paragraph among retrieved hard negatives.

Source: the first five articles of the SQuAD 2.0 development set (Rajpurkar et al. 2016, 2018;
CC BY-SA 4.0; the paragraphs are Wikipedia text): 173 paragraphs and their 705 answerable
questions, converted by ``bench/squad_data.py``. The file and its licence ship in
``bookend_rag_lab/data`` (``SQUAD-README.md``, ``SQUAD-LICENSE``). It complements the NQ suite:
crowd-written questions asked of the paragraph in front of the writer (several per paragraph),
and negatives that are mostly other paragraphs of the same article, so they share its title and
its subject.

Construction (deterministic, no model involved):

1. **Splits.** Each paragraph goes to ``calibration`` (30%), ``selection`` (20%) or
   ``evaluation`` (50%) by the SHA-256 of its text (``SPLIT_SHARES`` of
   :mod:`~bookend_rag_lab.items.pool`), and its questions follow it; negatives come from the same
   split's paragraphs only, so the splits never share a passage (nor, therefore, a question).
2. **Item order.** The split's questions are taken in turn across its paragraphs (file order):
   every paragraph's first question, then every paragraph's second, and so on; the question at
   position ``i`` takes retriever ``retrievers[i % len(retrievers)]`` (BM25 for even positions,
   MiniLM for odd ones by default). A question that gets no item (below) leaves its position
   empty, and the first ``n`` items are the first ``n`` built in this order.
3. **Hard negatives.** The question's retriever ranks the split's paragraphs; the top ones that
   contain none of its answers (SQuAD normalisation: lower case, no punctuation, no articles)
   become the K - 1 negatives, each offering as its candidate the first answer of the first of its
   own questions whose answer is distinct, after normalisation, from the candidates already taken;
   a paragraph that offers none is passed over (:func:`~bookend_rag_lab.items.pool.mine_item`).
   A question whose split cannot give K - 1 such negatives gets no item.
4. **Order.** The K documents are ranked by the same retriever; each carries its score, so the gold
   paragraph's rank is whatever real retrieval gives it (evaluate with retriever ``"file"``).
5. **Candidates.** The gold answer (the question's first answer) and each negative's.

Each passage reads ``(Title: TITLE) TEXT``, as the NQ suite's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from bookend_rag_lab.items.item import Item
from bookend_rag_lab.items.pool import (
    POOL_RETRIEVERS,
    SPLIT_SHARES,
    TitledPassage,
    check_request,
    data_rows,
    in_turn,
    mine_item,
    score_matrix,
    split_of,
)

__all__ = ["DATA", "Question", "SquadParagraph", "load_paragraphs", "split_of", "squad_items"]

#: The bundled file (``bench/squad_data.py`` wrote it).
DATA = "squad2-dev-paragraphs.jsonl.gz"


@dataclass(frozen=True)
class Question:
    """One answerable SQuAD question: its id, its text and its distinct answers (first: gold)."""

    qid: str
    text: str
    answers: tuple[str, ...]


@dataclass(frozen=True)
class SquadParagraph(TitledPassage):
    """One paragraph of an article with its answerable questions (a paragraph's split:
    :func:`~bookend_rag_lab.items.pool.split_of` its text)."""

    title: str
    text: str
    questions: tuple[Question, ...]


@lru_cache(maxsize=4)
def load_paragraphs(path: str | None = None) -> tuple[SquadParagraph, ...]:
    """Every paragraph of the file (default: the bundled one), in file order."""
    rows = data_rows(path, DATA)
    return tuple(
        SquadParagraph(
            row["title"],
            row["text"],
            tuple(Question(q["id"], q["question"], tuple(q["answers"])) for q in row["questions"]),
        )
        for row in rows
    )


def squad_items(
    n_items: int,
    k: int,
    *,
    split: str = "evaluation",
    retrievers: Sequence[str] = POOL_RETRIEVERS,
    path: str | None = None,
) -> list[Item]:
    """The first ``n_items`` items of ``k`` paragraphs of a split (construction in the module
    docstring).

    Raises:
        ValueError: for an unknown split or retriever, ``k < 2``, or more items than the split
            gives at this ``k``.
    """
    check_request(split, SPLIT_SHARES, retrievers, k)
    pool = [p for p in load_paragraphs(path) if split_of(p.text) == split]
    order = in_turn([[(p, q) for q in range(len(par.questions))] for p, par in enumerate(pool)])
    assigned = [retrievers[n % len(retrievers)] for n in range(len(order))]
    documents = [p.document for p in pool]
    offers = [[q.answers[0] for q in p.questions] for p in pool]
    rows: dict[int, np.ndarray] = {}
    # Every question of the split is scored: which of them get an item is known only after.
    for retriever in dict.fromkeys(retrievers):
        mine = [n for n, r in enumerate(assigned) if r == retriever]
        questions = [pool[order[n][0]].questions[order[n][1]].text for n in mine]
        rows.update(zip(mine, score_matrix(retriever, questions, documents), strict=True))
    out: list[Item] = []
    for n, (p, q) in enumerate(order):
        question = pool[p].questions[q]
        item = mine_item(
            item_id=f"squad:{split}:{question.qid}",
            question=question.text,
            answers=question.answers,
            gold=p,
            documents=documents,
            offers=offers,
            scores=rows[n],
            k=k,
            family=f"squad-{assigned[n]}",
        )
        if item is not None:
            out.append(item)
        if len(out) == n_items:
            return out
    raise ValueError(
        f"n_items must be in 1..{len(out)} for split {split!r} at k={k}, got n_items={n_items!r}"
    )
