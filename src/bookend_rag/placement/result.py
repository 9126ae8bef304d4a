"""The :class:`Placement` result: the chosen order and everything needed to explain it (the
explanation itself is :mod:`bookend_rag.placement.explanation`'s)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Generic, TypeAlias, TypeVar

import numpy as np

from bookend_rag.arrays import FloatArray, IntArray
from bookend_rag.layout import Layout
from bookend_rag.placement import explanation
from bookend_rag.placement.explanation import ChunkSlot
from bookend_rag.profiles.base import InfluenceProfile
from bookend_rag.weighing import ChunkWeigher

__all__ = ["ChunkSlot", "Numbers", "Placement"]

T = TypeVar("T")

#: Per-chunk numbers as a placement takes them: an array, a sequence, or a function without
#: arguments that gives them when first read (the small-K path's deferred relevance and token
#: counts; a ``functools.partial`` of a module function, so that the placement still pickles).
Numbers: TypeAlias = "FloatArray | Sequence[float] | Callable[[], FloatArray | Sequence[float]]"


@dataclass(frozen=True, eq=False, init=False)
class Placement(Generic[T]):
    """The result of placing chunks: order, spans, weights and objective.

    Attributes:
        order: input indices in prompt order (the top chunk appears first and last when
            ``repeated``).
        items: the caller's items in prompt order.
        relevance: per input index, the relevance the objective used (dropped items included).
        lengths: per input index, the token count used.
        scores: per input index, the caller's raw score, or ``None`` without scores.
        dropped: input indices left out by ``drop_lookalikes``, ``top_k`` or a token budget
            (empty without them).
        dropped_by_top_k: those of :attr:`dropped` that ``top_k`` left out.
        dropped_as_lookalikes: those of :attr:`dropped` that were look-alikes of a more relevant
            chunk (``drop_lookalikes``); the token budget left out the others.
        strategy: the strategy that chose ``order``.
        profile: the influence profile used.
        layout: tokens before and after the chunks in the analysed sequence.
        weight_rule: the name of the rule by which span influence became chunk weights
            (:class:`~bookend_rag.weighing.WeightRule`).
        competition: ``None`` (relevance times weight was maximised) or the pull of an
            irrelevant chunk under which the expected answer share was maximised
            (:mod:`bookend_rag.placement.competing`).
        repeated: whether the top chunk was repeated at both ends (``repeat_top``).
        notes: why a requested option did not apply (for example no room for a repeat, or
            scores given with one missing, so that the input order stood for relevance), and
            that the model was placed with the default order when bookend knows no
            architecture for its name (a closed API model such as ``gpt-4o``).

    Two placements are equal when they hold the same order, items, arrays and settings; the hash
    leaves the items out, so placements of unhashable items (documents) hash too.
    """

    order: tuple[int, ...]
    items: list[T]
    relevance: FloatArray
    lengths: FloatArray
    scores: FloatArray | None
    dropped: tuple[int, ...]
    dropped_by_top_k: tuple[int, ...]
    dropped_as_lookalikes: tuple[int, ...]
    strategy: str
    profile: InfluenceProfile
    layout: Layout
    weight_rule: str
    competition: float | None
    repeated: bool
    notes: tuple[str, ...]

    def __init__(
        self,
        *,
        order: tuple[int, ...],
        items: list[T],
        relevance: Numbers,
        lengths: Numbers,
        scores: FloatArray | Sequence[float] | None,
        dropped: tuple[int, ...],
        dropped_by_top_k: tuple[int, ...],
        dropped_as_lookalikes: tuple[int, ...],
        strategy: str,
        profile: InfluenceProfile,
        layout: Layout,
        weight_rule: str,
        competition: float | None,
        repeated: bool,
        notes: tuple[str, ...],
    ) -> None:
        # The keyword form of _of, for a caller's own placement (the placing paths call _of).
        settings = {
            "dropped": dropped,
            "dropped_by_top_k": dropped_by_top_k,
            "dropped_as_lookalikes": dropped_as_lookalikes,
            "strategy": strategy,
            "profile": profile,
            "layout": layout,
            "weight_rule": weight_rule,
            "competition": competition,
            "repeated": repeated,
        }
        vars(self).update(vars(self._of(order, items, relevance, lengths, scores, notes, settings)))

    @classmethod
    def _of(
        cls,
        order: tuple[int, ...],
        items: list[T],
        relevance: Numbers,
        lengths: Numbers,
        scores: FloatArray | Sequence[float] | None,
        notes: tuple[str, ...],
        settings: dict[str, Any],
    ) -> Placement[T]:
        """The placement of these fields, ``settings`` holding the others by name (copied: a
        placer's paths pass one dict to every placement that drops and repeats nothing); the one
        constructor of every placing path, :meth:`bookend_rag.place.setup.Setup.result`."""
        # Frozen: the fields go once, as the instance dict; the generated __init__ paid an
        # object.__setattr__ per field, a call by keyword through type.__call__ costs half a
        # microsecond more than this, and a dict of every field built per call a fifth more
        # than a copy of the shared settings. The numbers stay as given (the small-K path's
        # lists) until an array is read.
        placement: Placement[T] = object.__new__(cls)
        fields = settings.copy()
        fields["order"] = order
        fields["items"] = items
        fields["_relevance"] = relevance
        fields["_lengths"] = lengths
        fields["_scores"] = scores
        fields["notes"] = notes
        object.__setattr__(placement, "__dict__", fields)
        return placement

    def __getattr__(self, name: str) -> Any:
        # Only when the instance lacks ``name``: the arrays, built from the numbers given (the
        # small-K path's lists) when first read, then kept.
        if name in _ARRAYS:
            given = vars(self)["_" + name]
            if callable(given):  # the small-K path's deferred numbers
                given = given()
            value = None if given is None else np.asarray(given, dtype=np.float64)
            vars(self)[name] = value
            return value
        raise AttributeError(f"'Placement' object has no attribute {name!r}")

    def _key(self) -> tuple[Any, ...]:
        return (
            self.order,
            self.dropped,
            self.dropped_by_top_k,
            self.dropped_as_lookalikes,
            self.strategy,
            self.profile,
            self.layout,
            self.weight_rule,
            self.competition,
            self.repeated,
            self.notes,
            self.relevance.tobytes(),
            self.lengths.tobytes(),
            None if self.scores is None else self.scores.tobytes(),
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Placement):
            return NotImplemented
        return self._key() == other._key() and self.items == other.items

    def __hash__(self) -> int:
        return hash(self._key())

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[T]:
        return iter(self.items)

    def __getitem__(self, position: int) -> T:
        return self.items[position]

    @property
    def kept(self) -> tuple[int, ...]:
        """Input indices placed, each once, in input order."""
        return tuple(sorted(set(self.order)))

    def _weigher(self, order: IntArray) -> ChunkWeigher:
        """The weigher of the chunks of ``order``, laid out in that order."""
        return ChunkWeigher.build(self.profile, self.lengths[order], self.layout, self.weight_rule)

    def _objective(self, order: Sequence[int] | IntArray) -> float:
        idx = np.asarray(order, dtype=np.int64)
        return float(self._weigher(idx).objective(np.arange(idx.size), self.relevance[idx]))

    @cached_property
    def weights(self) -> FloatArray:
        """Per prompt position, the chunk's weight under :attr:`weight_rule`.

        Computed when first read, so a caller that only needs the order pays nothing for it.
        """
        idx = np.asarray(self.order, dtype=np.int64)
        return self._weigher(idx).weights_of_orders(np.arange(idx.size))

    @cached_property
    def objective(self) -> float:
        """``sum_p relevance[order[p]] · weights[p]`` (a repeated top chunk counts at both ends)."""
        return self._objective(self.order)

    @cached_property
    def baselines(self) -> dict[str, float]:
        """Objective of the same kept chunks in other orders, under the same profile.

        ``input`` (the caller's order), ``relevance`` (most relevant first, i.e. retrieval order)
        and ``alternate`` (best first, second best last, inwards). When the top chunk is
        repeated, each baseline repeats it at both ends too.
        """
        return explanation.baselines(self, self._objective)

    @cached_property
    def slots(self) -> list[ChunkSlot]:
        """One :class:`ChunkSlot` per prompt position."""
        out = []
        start = self.layout.prefix_tokens
        for slot, (index, weight) in enumerate(zip(self.order, self.weights, strict=True)):
            length = int(self.lengths[index])
            out.append(
                ChunkSlot(
                    slot=slot,
                    index=index,
                    start=start,
                    end=start + length,
                    weight=float(weight),
                    relevance=float(self.relevance[index]),
                    score=None if self.scores is None else float(self.scores[index]),
                )
            )
            start += length
        return out

    def to_records(self) -> list[dict[str, Any]]:
        """The slots as plain dicts (JSON-ready)."""
        return [vars(s).copy() for s in self.slots]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary: order, slots, objective, baselines, dropped, settings."""
        return {
            "order": list(self.order),
            "slots": self.to_records(),
            "objective": self.objective,
            "baselines": self.baselines,
            "dropped": list(self.dropped),
            "dropped_by_top_k": list(self.dropped_by_top_k),
            "dropped_as_lookalikes": list(self.dropped_as_lookalikes),
            "strategy": self.strategy,
            "profile": self.profile.name,
            "layout": self.layout.to_dict(),
            "weight_rule": self.weight_rule,
            "competition": self.competition,
            "repeated": self.repeated,
            "notes": list(self.notes),
        }

    def explain(self, *, previews: Sequence[str] | None = None) -> str:
        """A table of slot, chunk, relevance, score, span and weight, with one line on what
        decided the order, the objective compared with the baselines and what was dropped by
        which limit.

        Args:
            previews: optional per input index text to show (for example the first words).
        """
        return explanation.explain(self, previews)

    def __repr__(self) -> str:
        return (
            f"Placement(order={list(self.order)}, strategy={self.strategy!r}, "
            f"objective={self.objective:.4f}, dropped={list(self.dropped)})"
        )


#: The fields :class:`Placement` keeps as given until first read (``__getattr__``).
_ARRAYS = frozenset({"relevance", "lengths", "scores"})
