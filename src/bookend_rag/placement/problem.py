"""The one interface of the optimisers: each takes a :class:`Problem` and returns an order.

The objective of an order ``o`` (input indices in prompt order) is ``sum_p r[o_p] · w_p``: the
relevance of the chunk in position ``p`` times the weight of its span under the problem's weigher
(:mod:`bookend_rag.weighing`). With ``competition`` set, the competing-chunks objective replaces it
(:mod:`bookend_rag.placement.competing`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import NamedTuple, TypeAlias

import numpy.typing as npt

from bookend_rag.arrays import FloatArray, IntArray
from bookend_rag.layout import Layout
from bookend_rag.placement.groups import group_ids
from bookend_rag.profiles.base import InfluenceProfile
from bookend_rag.weighing import DEFAULT_WEIGHT_RULE, ChunkWeigher

__all__ = ["EXACT_MAX_K", "Optimiser", "Problem"]

#: The largest number of chunks the exact subset programme places by default (``2^12`` subsets).
EXACT_MAX_K = 12


class Problem(NamedTuple):
    """Chunks to order: what every optimiser receives (an immutable record).

    Attributes:
        relevance: per chunk, higher is better.
        weigher: the weights of the chunks' spans (profile, layout, lengths, rule).
        groups: per chunk a group id, -1 for none (:func:`~bookend_rag.placement.groups.group_ids`),
            or ``None`` when nothing is constrained; a group keeps its input order.
        competition: ``None`` for the linear objective, else the pull ``c >= 0`` of an
            irrelevant chunk (:mod:`bookend_rag.placement.competing`).
        exact_max_k: the largest number of chunks the exact subset programme places.
    """

    relevance: FloatArray
    weigher: ChunkWeigher
    groups: IntArray | None = None
    competition: float | None = None
    exact_max_k: int = EXACT_MAX_K

    @classmethod
    def build(
        cls,
        relevance: FloatArray,
        lengths: npt.ArrayLike,
        profile: InfluenceProfile,
        layout: Layout | None = None,
        *,
        rule: str = DEFAULT_WEIGHT_RULE,
        groups: Sequence[Hashable | None] | None = None,
        fixed: tuple[float, float] = (0.0, 0.0),
        competition: float | None = None,
        exact_max_k: int = EXACT_MAX_K,
    ) -> Problem:
        """The problem of chunks of ``lengths`` tokens inside ``layout`` under ``profile``.

        ``rule`` names a registered weight rule; ``groups`` holds per chunk a hashable source key
        or ``None``; ``fixed`` the token lengths of a chunk fixed before and after these ones (a
        repeated top chunk), see
        :meth:`ChunkWeigher.build <bookend_rag.weighing.ChunkWeigher.build>`.
        """
        weigher = ChunkWeigher.build(profile, lengths, layout, rule, fixed=fixed)
        return cls(relevance, weigher, group_ids(groups, relevance.size), competition, exact_max_k)

    @property
    def size(self) -> int:
        """The number of chunks, ``K``."""
        return int(self.relevance.size)

    def objective(self, orders: npt.ArrayLike) -> FloatArray:
        """The linear objective of each row of ``orders`` (a 0-d array for one order)."""
        return self.weigher.objective(orders, self.relevance)

    def with_relevance(self, relevance: FloatArray) -> Problem:
        """The same chunks and constraints under the linear objective with other relevance."""
        return self._replace(relevance=relevance, competition=None)


#: An optimiser: a problem in, an order out (input indices in prompt order, each once).
Optimiser: TypeAlias = Callable[[Problem], IntArray]
