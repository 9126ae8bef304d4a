"""The strategies of the curve panel: the lab's (:mod:`bookend_rag_lab.reorderers`) and the panel's
oracle, which knows the model's position curve and the retriever's rank distribution."""

from __future__ import annotations

from collections.abc import Sequence

import numpy.typing as npt

from bookend_rag_lab.reorderers import Reorderer, bookend_strategy, fixed_strategies
from placement_quality.expected import oracle_order

__all__ = ["FIXED_NAMES", "bookend_strategy", "fixed_strategies", "oracle_strategy"]

#: The fixed patterns every pipeline can use today, by strategy name.
FIXED_NAMES = ("langchain", "llamaindex", "haystack", "retrieval", "reversed")


def oracle_strategy(rank_probs: npt.ArrayLike, slot_accuracy: npt.ArrayLike) -> Reorderer:
    """The best fixed assignment of retrieval ranks to slots for this curve and rank law."""
    best = oracle_order(rank_probs, slot_accuracy)

    def order(
        scores: Sequence[float], lengths: Sequence[float], documents: Sequence[str] | None = None
    ) -> list[int]:
        if len(scores) != len(best):
            raise ValueError(f"the oracle was built for K={len(best)}, got {len(scores)} documents")
        return list(best)

    return order
