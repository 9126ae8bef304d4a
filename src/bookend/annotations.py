"""The annotations adapters write on request: each chunk's prompt slot and influence weight.

One helper and one pair of key names for every framework adapter. Adapters never touch the
caller's objects unless annotations are asked for.
"""

from __future__ import annotations

from typing import TypeVar

from bookend.result import Placement

__all__ = ["SLOT_KEY", "WEIGHT_KEY", "Annotation", "first_slot_annotations", "slot_annotations"]

T = TypeVar("T")

#: Metadata key for the prompt slot (0 first).
SLOT_KEY = "bookend_slot"
#: Metadata key for the slot's influence weight (1.0 = uniform share).
WEIGHT_KEY = "bookend_weight"

Annotation = dict[str, int | float]


def slot_annotations(placement: Placement[T]) -> list[Annotation]:
    """``{SLOT_KEY: slot, WEIGHT_KEY: weight}`` for each prompt position, in prompt order (for
    adapters that return annotated copies: a repeated chunk gets one per copy)."""
    return [{SLOT_KEY: s.slot, WEIGHT_KEY: s.weight} for s in placement.slots]


def first_slot_annotations(placement: Placement[T]) -> list[tuple[T, Annotation]]:
    """Each distinct item (by identity) with the annotation of its first slot, in prompt order
    (for adapters that annotate the caller's objects in place: a chunk repeated by
    ``repeat_top`` is one object, and keeps its first slot)."""
    seen: set[int] = set()
    out: list[tuple[T, Annotation]] = []
    for item, annotation in zip(placement.items, slot_annotations(placement), strict=True):
        if id(item) not in seen:
            seen.add(id(item))
            out.append((item, annotation))
    return out
