"""Retrieval from a pool of passages, for the suites that mine hard negatives (NQ, records).

A suite item is built the way a RAG pipeline builds a context: a retriever scores the pool against
the question, and the top passages are what the reorderer is handed. :func:`score_matrix` gives
every (question, passage) score at once; :func:`bucket` assigns names to splits by hash, so that a
split never depends on the order of a file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from bookend_rag.lab.retrieval import MiniLMRetriever, bm25_tokens

__all__ = ["POOL_RETRIEVERS", "bucket", "score_matrix"]

POOL_RETRIEVERS = ("bm25", "minilm")


def bucket(name: str, shares: Mapping[str, range]) -> str:
    """The split of ``name``: its SHA-256 modulo 10 falls in one of ``shares``' ranges."""
    value = int(hashlib.sha256(name.encode("utf-8")).hexdigest(), 16) % 10
    return next(split for split, buckets in shares.items() if value in buckets)


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
