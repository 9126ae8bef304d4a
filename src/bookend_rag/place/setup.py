"""What every placement path places with (:class:`Setup`), and what they all do alike: the notes
of a call and the :class:`~bookend_rag.Placement` they return."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

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
    #: The fields of a placement of these settings that drops and repeats nothing, but those of
    #: each call (:meth:`bookend_rag.Placement._of`).
    placement_settings: dict[str, Any] = field(init=False, repr=False, compare=False)

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
        notes: Sequence[str],
        dropped: tuple[int, ...] = (),
        dropped_by_top_k: tuple[int, ...] = (),
        dropped_as_lookalikes: tuple[int, ...] = (),
        repeated: bool = False,
    ) -> Placement[T]:
        """The :class:`~bookend_rag.Placement` of ``prompt`` (input indices in prompt order), the
        one result of every path."""
        settings = self.placement_settings
        if dropped or dropped_by_top_k or dropped_as_lookalikes or repeated:
            settings = {
                **settings,
                "dropped": dropped,
                "dropped_by_top_k": dropped_by_top_k,
                "dropped_as_lookalikes": dropped_as_lookalikes,
                "repeated": repeated,
            }
        return Placement._of(
            tuple(prompt),
            pick(items, prompt),
            item_relevance,
            item_lengths,
            checked_scores,
            tuple(notes),
            settings,
        )

    def __post_init__(self) -> None:
        # Built once per placer: the fields every placement of it shares, unless it drops or
        # repeats chunks.
        config = self.config
        settings = {
            "dropped": (),
            "dropped_by_top_k": (),
            "dropped_as_lookalikes": (),
            "strategy": config.strategy,
            "profile": self.profile,
            "layout": self.layout,
            "weight_rule": config.weight_rule,
            "competition": config.competition,
            "repeated": False,
        }
        object.__setattr__(self, "placement_settings", settings)
