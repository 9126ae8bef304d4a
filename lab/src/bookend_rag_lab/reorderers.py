"""The strategies compared: retrieved list in, prompt order out.

A strategy sees what a pipeline sees: the K retrieved documents in retrieval order (index 0 is the
top result) with their scores, token lengths and texts, and returns the prompt order as indices
into that list (a :class:`Reorderer`). :func:`eval_strategies` builds the set ``bookend eval``
compares: bookend with the theory spec, its rank-only form, one bookend per given profile or
placement config, the frameworks' reorderers (:mod:`~bookend_rag_lab.frameworks`), retrieval order
and its reverse. Two strategies are built per item by the run: the seeded random shuffle
(:func:`random_orders`, several draws averaged) and the oracle (:func:`best_slot_order`, which knows
where the gold document is); a slot measurement moves the gold document through the slots
(:func:`gold_at_slot`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

import bookend_rag
from bookend_rag_lab.frameworks import available_frameworks

__all__ = [
    "BASELINES",
    "CURRENT_ORDERS",
    "DEFAULT",
    "ORACLE",
    "RANDOM",
    "RANK_ONLY",
    "THEORY",
    "Reorderer",
    "best_slot_order",
    "bookend_strategy",
    "eval_strategies",
    "fixed_strategies",
    "gold_at_slot",
    "random_orders",
]


class Reorderer(Protocol):
    """(scores in retrieval order, token lengths, the documents' texts or ``None``) -> prompt
    order as indices into the retrieved list."""

    def __call__(
        self,
        scores: Sequence[float],
        lengths: Sequence[float],
        documents: Sequence[str] | None = None,
    ) -> list[int]: ...


RANDOM = "random"
ORACLE = "oracle"
THEORY = "bookend-theory"
#: bookend's default for a model it has measured (its shipped measured profile).
DEFAULT = "bookend-default"
RANK_ONLY = "bookend-rank-only"
#: The orders bookend is compared against, in report order (frameworks only when installed).
BASELINES = ("langchain", "llamaindex", "haystack", RANDOM, "retrieval", "reversed")
#: The orders a user may have today (``--current``): the retriever's, or a framework's reorderer.
CURRENT_ORDERS = ("retrieval", "langchain", "llamaindex", "haystack")


def bookend_strategy(
    model: bookend_rag.ModelLike | bookend_rag.PlacementConfig | bookend_rag.TunedConfig,
    *,
    rank_only: bool = False,
) -> Reorderer:
    """``bookend`` placement with ``model`` (a preset, spec, profile or profile path) and the
    default settings, or with every setting of a :class:`~bookend_rag.PlacementConfig` (or of a
    :class:`~bookend_rag.TunedConfig`).

    ``rank_only=True`` places with the setting ``equal_lengths`` (every chunk counts as one equal
    slot), so bookend sorts chunks by relevance into slots by weight.
    """
    placer: bookend_rag.Bookend[object] = (
        bookend_rag.Bookend.from_config(model)
        if isinstance(model, bookend_rag.PlacementConfig | bookend_rag.TunedConfig)
        else bookend_rag.Bookend(model)
    )
    if rank_only:
        placer = placer.with_settings(equal_lengths=True)

    def order(
        scores: Sequence[float], lengths: Sequence[float], documents: Sequence[str] | None = None
    ) -> list[int]:
        # With the texts, bookend sees what a pipeline gives it (drop_lookalikes reads them).
        items: list[object] = list(range(len(scores))) if documents is None else list(documents)
        seen = None if rank_only else list(lengths)
        return list(placer.place(items, list(scores), lengths=seen).order)

    return order


def _retrieval(
    scores: Sequence[float], lengths: Sequence[float], documents: Sequence[str] | None = None
) -> list[int]:
    return list(range(len(scores)))


def _reversed(
    scores: Sequence[float], lengths: Sequence[float], documents: Sequence[str] | None = None
) -> list[int]:
    return list(range(len(scores)))[::-1]


def _ignoring_lengths(order: Callable[[Sequence[float]], list[int]]) -> Reorderer:
    def strategy(
        scores: Sequence[float], lengths: Sequence[float], documents: Sequence[str] | None = None
    ) -> list[int]:
        return order(scores)

    return strategy


def fixed_strategies() -> dict[str, Reorderer]:
    """The installed framework reorderers (real classes), retrieval order and its reverse."""
    out: dict[str, Reorderer] = {
        name: _ignoring_lengths(fn) for name, fn in available_frameworks().items()
    }
    out["retrieval"] = _retrieval
    out["reversed"] = _reversed
    return out


def eval_strategies(
    theory: bookend_rag.ModelLike,
    profiles: Mapping[
        str, bookend_rag.ModelLike | bookend_rag.PlacementConfig | bookend_rag.TunedConfig
    ],
    *,
    default: bookend_rag.ModelLike | None = None,
) -> dict[str, Reorderer]:
    """:data:`THEORY` and :data:`RANK_ONLY` with ``theory``, :data:`DEFAULT` with ``default``
    when it is not the theory (a model bookend has measured), ``"bookend-NAME"`` for every
    profile or placement config, then :func:`fixed_strategies`."""
    out = {
        THEORY: bookend_strategy(theory),
        RANK_ONLY: bookend_strategy(theory, rank_only=True),
    }
    if default is not None and default != theory:
        out[DEFAULT] = bookend_strategy(default)
    for name, profile in profiles.items():
        out[f"bookend-{name}"] = bookend_strategy(profile)
    out.update(fixed_strategies())
    return out


def random_orders(k: int, draws: int, seed: str) -> list[list[int]]:
    """``draws`` seeded random permutations of ``range(k)`` (the same seed, the same draws)."""
    rng = random.Random(seed)
    out = []
    for _ in range(draws):
        order = list(range(k))
        rng.shuffle(order)
        out.append(order)
    return out


def best_slot_order(gold_rank: int, k: int, slot_means: Mapping[int, float]) -> list[int]:
    """The oracle's order: the gold document (at retrieval rank ``gold_rank``) in the best
    measured slot, the other documents in retrieval order around it. ``slot_means[s]`` is the mean
    score with the gold document in slot ``s``; ties go to the earlier slot."""
    best = max(range(k), key=lambda s: (slot_means.get(s, float("-inf")), -s))
    return gold_at_slot(gold_rank, k, best)


def gold_at_slot(gold_rank: int, k: int, slot: int) -> list[int]:
    """The gold document (at retrieval rank ``gold_rank``) in ``slot``, the other documents in
    retrieval order around it: the order a slot measurement scores."""
    others = [r for r in range(k) if r != gold_rank]
    return [*others[:slot], gold_rank, *others[slot:]]
