"""Retrieval from a pool of passages, for the suites that mine hard negatives (NQ, records, SQuAD).

A suite item is built the way a RAG pipeline builds a context: a retriever scores the pool against
the question, and the top passages are what the reorderer is handed. :func:`score_matrix` gives
every (question, passage) score at once; :func:`bucket` assigns names to splits by hash, so that a
split never depends on the order of a file; :func:`in_turn` orders a split's items across its
groups; :func:`mine_item` takes a question's hard negatives from the ranked pool of real QA
passages (NQ, SQuAD), each negative offering an answer of its own as a candidate, and
:func:`titled` (:class:`TitledPassage`) writes such a passage as those suites show it;
:func:`bundled` finds a data file that ships in ``bookend_rag_lab/data`` and :func:`data_rows`
reads one.
"""

from __future__ import annotations

import gzip
import hashlib
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from bookend_rag.retrievals import json_lines
from bookend_rag_lab.items.answers import normalize_answer
from bookend_rag_lab.items.item import Item
from bookend_rag_lab.retrieval import MiniLMRetriever, bm25_tokens

__all__ = [
    "POOL_RETRIEVERS",
    "SPLIT_SHARES",
    "TitledPassage",
    "bucket",
    "bundled",
    "check_request",
    "data_rows",
    "in_turn",
    "mine_item",
    "score_matrix",
    "split_of",
    "titled",
]

POOL_RETRIEVERS = ("bm25", "minilm")
#: The suites' split shares, in tenths of the SHA-256 bucket (:func:`bucket`): calibration 0-2
#: (30%), selection 3-4 (20%), evaluation 5-9 (50%).
SPLIT_SHARES = {"calibration": range(0, 3), "selection": range(3, 5), "evaluation": range(5, 10)}

_T = TypeVar("_T")


def bucket(name: str, shares: Mapping[str, range]) -> str:
    """The split of ``name``: its SHA-256 modulo 10 falls in one of ``shares``' ranges."""
    value = int(hashlib.sha256(name.encode("utf-8")).hexdigest(), 16) % 10
    return next(split for split, buckets in shares.items() if value in buckets)


def split_of(text: str) -> str:
    """The split (:data:`SPLIT_SHARES`) of a suite's question or passage, by the SHA-256 of its
    text."""
    return bucket(text, SPLIT_SHARES)


def check_request(
    split: str, shares: Mapping[str, range], retrievers: Sequence[str], k: int | None = None
) -> None:
    """A suite's split, retrievers and documents per item (``None``: the suite checks them).

    Raises:
        ValueError: for a split not in ``shares``, retrievers not drawn from
            :data:`POOL_RETRIEVERS` (or none), or ``k < 2``.
    """
    if split not in shares:
        raise ValueError(f"split must be one of {tuple(shares)}, got split={split!r}")
    if not retrievers or any(r not in POOL_RETRIEVERS for r in retrievers):
        raise ValueError(
            f"retrievers must be drawn from {POOL_RETRIEVERS}, got retrievers={list(retrievers)!r}"
        )
    if k is not None and k < 2:
        raise ValueError(f"k must be >= 2, got k={k!r}")


def in_turn(groups: Sequence[Sequence[_T]]) -> list[_T]:
    """The groups' members taken in turn: every group's first, then every group's second, ...;
    so the first items of a split come from as many groups as there are."""
    longest = max((len(g) for g in groups), default=0)
    return [g[i] for i in range(longest) for g in groups if i < len(g)]


def bundled(name: str) -> Path:
    """The path of a data file that ships with the lab (``bookend_rag_lab/data/NAME``)."""
    return Path(str(resources.files("bookend_rag_lab").joinpath("data", name)))


def data_rows(path: str | None, name: str) -> list[Any]:
    """The rows of a gzipped JSON Lines data file, in file order: ``path``, else the bundled file
    ``name``.

    Raises:
        ValueError: for a line that is not JSON, naming the file and the line.
    """
    source = path or bundled(name)
    with gzip.open(source, "rt", encoding="utf-8") as lines:
        rows = list(json_lines(lines))
    bad = next((row for row in rows if row.error is not None), None)
    if bad is not None:
        raise ValueError(f"{source}:{bad.number}: {bad.error}")
    return [row.value for row in rows]


def titled(title: str, text: str) -> str:
    """A Wikipedia passage as the real-text suites (NQ, SQuAD) show it: ``(Title: TITLE) TEXT``,
    as in the prompts of Liu et al. 2023."""
    return f"(Title: {title}) {text}"


class TitledPassage:
    """What a real-text suite's passage record shares (a base of its dataclass, which holds the
    ``title`` and ``text``): the passage as it appears in a prompt."""

    title: str
    text: str

    @property
    def document(self) -> str:
        """The passage as it appears in a prompt (:func:`titled`)."""
        return titled(self.title, self.text)


def mine_item(
    *,
    item_id: str,
    question: str,
    answers: Sequence[str],
    gold: int,
    documents: Sequence[str],
    offers: Sequence[Sequence[str]],
    scores: np.ndarray,
    k: int,
    family: str,
) -> Item | None:
    """The item of ``k`` documents for a question whose gold passage is ``documents[gold]``, or
    ``None`` when the pool holds too few negatives.

    The pool is walked in the retriever's order (``scores``, higher first); a passage becomes a
    negative when it contains none of ``answers`` (after
    :func:`~bookend_rag_lab.items.answers.normalize_answer`) and one of its
    ``offers`` (answers of its own questions, in preference order) is distinct, after
    normalisation, from every candidate already taken: its first such offer is its candidate. The
    gold candidate is ``answers[0]``. The ``k`` documents are ranked by the same scores.
    """
    wanted = [normalize_answer(a) for a in answers]
    taken = {wanted[0]}
    chosen, candidates = [gold], {gold: answers[0]}
    for j in (int(j) for j in np.argsort(-scores, kind="stable")):
        if len(chosen) == k:
            break
        haystack = normalize_answer(documents[j])
        if j == gold or any(a and a in haystack for a in wanted):
            continue
        offer = next((o for o in offers[j] if normalize_answer(o) not in taken), None)
        if offer is None:
            continue
        taken.add(normalize_answer(offer))
        chosen.append(j)
        candidates[j] = offer
    if len(chosen) < k:
        return None
    ranked = sorted(chosen, key=lambda j: (-scores[j], j))
    return Item(
        item_id=item_id,
        question=question,
        documents=tuple(documents[j] for j in ranked),
        answer=answers[0],
        candidates=tuple(candidates[j] for j in ranked),
        scores=tuple(float(scores[j]) for j in ranked),
        gold=ranked.index(gold),
        family=family,
    )


def _bm25(queries: Sequence[str], passages: Sequence[str]) -> np.ndarray:
    from rank_bm25 import BM25Okapi

    index = BM25Okapi([bm25_tokens(p) for p in passages])
    return np.asarray([index.get_scores(bm25_tokens(q)) for q in queries], dtype=np.float64)


@lru_cache(maxsize=1)
def _minilm_model() -> Any:
    return MiniLMRetriever().model  # loaded once per process: a suite encodes in many calls


def _minilm(queries: Sequence[str], passages: Sequence[str]) -> np.ndarray:
    model = _minilm_model()
    q = model.encode(list(queries), normalize_embeddings=True, batch_size=64)
    p = model.encode(list(passages), normalize_embeddings=True, batch_size=64)
    return np.asarray(q @ p.T, dtype=np.float64)


_MATRICES: dict[str, Callable[[Sequence[str], Sequence[str]], np.ndarray]] = {
    "bm25": _bm25,
    "minilm": _minilm,
}


def score_matrix(retriever: str, queries: Sequence[str], passages: Sequence[str]) -> np.ndarray:
    """``out[q, p]``: the retriever's score of passage ``p`` for query ``q`` (higher is better);
    BM25 (rank-bm25 Okapi defaults, IDF from ``passages``) or MiniLM cosine similarity.

    Raises:
        ValueError: for a retriever not in :data:`POOL_RETRIEVERS`.
    """
    if retriever not in _MATRICES:
        raise ValueError(f"retriever must be one of {POOL_RETRIEVERS}, got retriever={retriever!r}")
    return _MATRICES[retriever](queries, passages)
