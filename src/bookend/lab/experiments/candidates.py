"""The candidates ``tune`` chooses among, each a :class:`~bookend.PlacementConfig` (what it writes).

With ``theory`` the model's theory spec and ``K`` the run's number of documents:

- ``default``: the library default, ``PlacementConfig(model=theory)``;
- ``relevance``: most relevant first (``strategy="relevance"``);
- ``reversed``: a slot table whose weights rise with the slot, ``w_s = s + 1``: the most relevant
  chunk last, the least relevant first;
- ``view``: the bookend view of the theory (``suffix_tokens=0``: the final chunk holds the
  Recency Delta);
- ``alternate``: Haystack's ``LostInTheMiddleRanker`` pattern (``strategy="alternate"``: best
  first, second best last, inwards);
- ``langchain``: LangChain's ``LongContextReorder`` at this K, written as a slot table
  (:func:`langchain_table`); LlamaIndex's ``LongContextReorder`` gives the same order when the
  retriever's scores are given (it sorts by them, then alternates the same way);
- ``measured-slots``: a slot table measured on the user's items, cross-fitted
  (:mod:`~bookend.lab.experiments.measured_slots`): one table per fold, measured on the other
  folds' items.

A fitted parametric profile (primacy, a recency window, a floor) is not a candidate yet.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import bookend
from bookend.lab.experiments.measured_slots import SlotMeasurement

__all__ = [
    "DEFAULT",
    "FRAMEWORK_PATTERNS",
    "MEASURED",
    "Candidates",
    "fixed_candidates",
    "langchain_slots",
    "langchain_table",
]

DEFAULT = "default"
MEASURED = "measured-slots"
#: The candidates that are a framework's fixed pattern.
FRAMEWORK_PATTERNS = ("alternate", "langchain")


def langchain_slots(k: int) -> list[int]:
    """The relevance rank (0 = best) LangChain's ``LongContextReorder`` puts in each of ``k``
    slots.

    It reverses the list, then inserts the items at even positions ``i`` of the reversed list at
    the front and appends those at odd ones; the item of rank ``r`` sits at ``i = k - 1 - r``. So
    the ranks with ``k - 1 - r`` even come first, by increasing rank (the last inserted is the
    most relevant), then the others by decreasing rank.
    """
    front = [r for r in range(k) if (k - 1 - r) % 2 == 0]
    back = [r for r in reversed(range(k)) if (k - 1 - r) % 2 == 1]
    return front + back


def langchain_table(k: int) -> bookend.TabulatedProfile:
    """LangChain's order at ``k`` as a slot table: ``w_s = k - r_s`` with ``r_s`` the rank it
    puts in slot ``s`` (:func:`langchain_slots`), so sorting by relevance into the slots by
    weight reproduces its order."""
    return bookend.TabulatedProfile(
        weights=tuple(float(k - r) for r in langchain_slots(k)),
        kind="slot",
        label=f"LangChain LongContextReorder at K={k}",
    )


def _reversed_table(k: int) -> bookend.TabulatedProfile:
    return bookend.TabulatedProfile(
        weights=tuple(float(s + 1) for s in range(k)), kind="slot", label="reversed: best last"
    )


def fixed_candidates(theory: bookend.ModelLike, k: int) -> dict[str, bookend.PlacementConfig]:
    """Every candidate but ``measured-slots``, for items of ``k`` documents (module docstring)."""
    return {
        DEFAULT: bookend.PlacementConfig(model=theory),
        "relevance": bookend.PlacementConfig(model=theory, strategy="relevance"),
        "reversed": bookend.PlacementConfig(model=_reversed_table(k)),
        "view": bookend.PlacementConfig(model=theory, suffix_tokens=0),
        "alternate": bookend.PlacementConfig(model=theory, strategy="alternate"),
        "langchain": bookend.PlacementConfig(model=langchain_table(k)),
    }


@dataclass(frozen=True)
class Candidates:
    """The candidates of a run.

    Attributes:
        fixed: the candidates with one config on every fold.
        measured: the ``measured-slots`` config judged on each fold (measured on the others), or
            empty when there was too little to measure.
        pooled: the ``measured-slots`` config measured on every fold's items: what a run that
            chooses it writes.
    """

    fixed: dict[str, bookend.PlacementConfig]
    measured: Sequence[bookend.PlacementConfig] = ()
    pooled: bookend.PlacementConfig | None = None

    @classmethod
    def build(cls, theory: bookend.ModelLike, k: int, measurement: SlotMeasurement) -> Candidates:
        """The candidates of a run: :func:`fixed_candidates`, and ``measured-slots`` when every
        fold's table and the pooled one could be measured."""
        fixed = fixed_candidates(theory, k)
        tables = [measurement.table(fold) for fold in range(measurement.folds.count)]
        pooled = measurement.table()
        if pooled is None or any(t is None for t in tables):
            return cls(fixed)
        per_fold = tuple(bookend.PlacementConfig(model=t) for t in tables)
        return cls(fixed, per_fold, bookend.PlacementConfig(model=pooled))

    @property
    def names(self) -> list[str]:
        """Every candidate, the default first."""
        return [*self.fixed, *([MEASURED] if self.measured else [])]

    def of_fold(self, fold: int) -> dict[str, bookend.PlacementConfig]:
        """The config of every candidate on the items of ``fold``."""
        return {**self.fixed, **({MEASURED: self.measured[fold]} if self.measured else {})}

    def written(self, name: str) -> bookend.PlacementConfig:
        """The config that choosing ``name`` writes."""
        if name == MEASURED and self.pooled is not None:
            return self.pooled
        return self.fixed[name]

    def to_json(self) -> dict[str, Any]:
        """Every candidate's config as JSON (per fold for ``measured-slots``)."""
        out: dict[str, Any] = {n: c.model_dump(mode="json") for n, c in self.fixed.items()}
        if self.measured and self.pooled is not None:
            out[MEASURED] = {
                "per_fold": [c.model_dump(mode="json") for c in self.measured],
                "pooled": self.pooled.model_dump(mode="json"),
            }
        return out
