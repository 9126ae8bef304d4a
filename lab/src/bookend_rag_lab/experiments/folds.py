"""Folds for cross-fitting, and the order in which items are judged, both from the items' ids.

Items are sorted by the SHA-256 of their id (:func:`hash_order`), which no generator, file order
or retriever can correlate with an item's difficulty; the ``j``-th item of that order belongs to
fold ``j mod F``. So the folds are deterministic, differ in size by at most one, and every prefix
of the order (what a race that stops early has judged) holds the folds in equal measure.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from bookend_rag_lab.items.item import Item

__all__ = ["Folds", "hash_order"]


def hash_order(items: Sequence[Item]) -> list[int]:
    """Item indices sorted by the SHA-256 of the item id (ties cannot occur: ids are unique)."""
    return sorted(
        range(len(items)),
        key=lambda i: hashlib.sha256(items[i].item_id.encode("utf-8")).hexdigest(),
    )


@dataclass(frozen=True)
class Folds:
    """The judging order of a run's items and the fold of each item.

    Attributes:
        order: item indices in judging order (:func:`hash_order`).
        of: ``of[i]`` is the fold of item ``i``.
        count: the number of folds.
    """

    order: tuple[int, ...]
    of: tuple[int, ...]
    count: int

    @classmethod
    def of_items(cls, items: Sequence[Item], count: int) -> Folds:
        """``count`` folds of ``items`` (module docstring).

        Raises:
            ValueError: with fewer than two items per fold.
        """
        if len(items) < 2 * count:
            raise ValueError(
                f"folds={count} needs at least {2 * count} items (two per fold), got "
                f"{len(items)} items"
            )
        order = hash_order(items)
        fold = [0] * len(items)
        for position, index in enumerate(order):
            fold[index] = position % count
        return cls(tuple(order), tuple(fold), count)

    def members(self, fold: int) -> list[int]:
        """The items of ``fold``, in judging order."""
        return [i for i in self.order if self.of[i] == fold]
