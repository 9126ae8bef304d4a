"""Every strategy compared, as one kind of function: retrieved list in, prompt order out.

A strategy sees what a pipeline sees: the K retrieved documents in retrieval order (index 0 is the
top result) with their scores and token lengths. It returns the prompt order as indices into that
list. The oracle is the exception by construction: it also knows the model's position curve and
the retriever's rank distribution.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy.typing as npt

import bookend
from placement_quality.expected import oracle_order
from placement_quality.frameworks import FRAMEWORKS

#: (scores in retrieval order, token lengths) -> prompt order as indices into the retrieved list.
Strategy = Callable[[Sequence[float], Sequence[float]], list[int]]

#: The fixed patterns every pipeline can use today, by strategy name.
FIXED_NAMES = ("langchain", "llamaindex", "haystack", "retrieval", "reversed")


def bookend_strategy(model: bookend.ModelLike, *, rank_only: bool = False) -> Strategy:
    """``bookend.reorder`` with the given model (a preset, spec, profile or profile path).

    ``rank_only=True`` hides the token lengths (every chunk counts as one equal slot), so bookend
    sorts chunks by relevance into slots by weight: a diagnostic of what the lengths change.
    """
    placer: bookend.Bookend[int] = bookend.Bookend(model)

    def order(scores: Sequence[float], lengths: Sequence[float]) -> list[int]:
        seen = [1.0] * len(lengths) if rank_only else lengths
        return list(placer.place(list(range(len(scores))), scores, lengths=seen).order)

    return order


def retrieval_order(scores: Sequence[float], lengths: Sequence[float]) -> list[int]:
    """The retrieved list as it comes: top result first."""
    return list(range(len(scores)))


def reversed_order(scores: Sequence[float], lengths: Sequence[float]) -> list[int]:
    """The retrieved list reversed: top result last, next to the question."""
    return list(range(len(scores)))[::-1]


def fixed_strategies() -> dict[str, Strategy]:
    """The framework reorderers (real classes) and the two trivial orders."""
    out: dict[str, Strategy] = {
        name: (lambda scores, lengths, f=fn: f(scores)) for name, fn in FRAMEWORKS.items()
    }
    out["retrieval"] = retrieval_order
    out["reversed"] = reversed_order
    return out


def oracle_strategy(rank_probs: npt.ArrayLike, slot_accuracy: npt.ArrayLike) -> Strategy:
    """The best fixed assignment of retrieval ranks to slots for this curve and rank law."""
    best = oracle_order(rank_probs, slot_accuracy)

    def order(scores: Sequence[float], lengths: Sequence[float]) -> list[int]:
        if len(scores) != len(best):
            raise ValueError(f"the oracle was built for K={len(best)}, got {len(scores)} documents")
        return list(best)

    return order
