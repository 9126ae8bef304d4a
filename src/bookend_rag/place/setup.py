"""What every placement path places with (:class:`Setup`), and what they all do alike: the notes
of a call and the :class:`~bookend_rag.Placement` they return."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from bookend_rag.arrays import FloatArray
from bookend_rag.config import PlacementConfig
from bookend_rag.layout import Layout
from bookend_rag.place.items import ItemReader, pick
from bookend_rag.placement.result import Numbers, Placement
from bookend_rag.profiles.base import InfluenceProfile

__all__ = ["Setup"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Setup:
    """A placer's settings as the paths read them: the validated ``config``, the ``profile`` its
    model resolved to, the ``notices`` that begin every placement's notes (a model bookend knows
    no architecture for, a tuned config used with another model), the ``layout`` and how items
    are read (``reader``)."""

    config: PlacementConfig
    profile: InfluenceProfile
    notices: tuple[str, ...]
    layout: Layout
    reader: ItemReader

    def notes(self, score_note: str | None = None) -> list[str]:
        """The notes of every placement: the notice of a model bookend knows no architecture
        for, that of a tuned config used with another model, and what was done with missing
        scores (``missing_scores``)."""
        notes = list(self.notices)
        if score_note is not None:
            notes.append(score_note)
        return notes

    def result(
        self,
        items: list[T],
        prompt: list[int],
        item_relevance: Numbers,
        item_lengths: Numbers,
        checked_scores: FloatArray | list[float] | None,
        notes: list[str],
        dropped: tuple[int, ...] = (),
        dropped_by_top_k: tuple[int, ...] = (),
        dropped_as_lookalikes: tuple[int, ...] = (),
        repeated: bool = False,
    ) -> Placement[T]:
        """The :class:`~bookend_rag.Placement` of ``prompt`` (input indices in prompt order), the
        one result of every path."""
        config = self.config
        return Placement._of(
            tuple(prompt),
            pick(items, prompt),
            item_relevance,
            item_lengths,
            checked_scores,
            dropped,
            dropped_by_top_k,
            dropped_as_lookalikes,
            config.strategy,
            self.profile,
            self.layout,
            config.weight_rule,
            config.competition,
            repeated,
            tuple(notes),
        )
