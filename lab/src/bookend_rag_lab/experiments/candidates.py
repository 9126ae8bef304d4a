"""The candidates ``tune`` chooses among, each a :class:`~bookend_rag.PlacementConfig` (what it
writes).

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
  (:mod:`~bookend_rag_lab.experiments.measured_slots`): one table per fold, measured on the other
  folds' items;
- ``fitted``: the parametric profile (primacy, a recency window in tokens, a floor:
  :class:`~bookend_rag.FittedProfile`) fitted to the same measurement's outcomes, cross-fitted the
  same way (:meth:`~bookend_rag_lab.experiments.measured_slots.SlotMeasurement.fit`), placed with
  the default settings otherwise, as the shipped measured profiles are.

``relevance`` and ``alternate`` are here as strategies that say they are tune candidates
(:attr:`~bookend_rag.placement.strategies.Strategy.tune_candidate`); a strategy registered with
that flag is raced too, after the fixed candidates above (:data:`RACE_ORDER`).

The two measured candidates are *cross-fitted*: one config per fold, and the pooled one (measured
on every fold) is what choosing them writes. One is left out when its pooled config or any fold's
could not be measured, since the race pairs every candidate with the default on the same items.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import bookend_rag
from bookend_rag.placement.strategies import strategy_named, strategy_names
from bookend_rag_lab.experiments.measured_slots import ProfileFit, SlotMeasurement
from bookend_rag_lab.fitting.profile import Target
from bookend_rag_lab.reorderers import CURRENT_ORDERS

__all__ = [
    "CURRENT_CANDIDATES",
    "DEFAULT",
    "FITTED",
    "FRAMEWORK_PATTERNS",
    "MEASURED",
    "RACE_ORDER",
    "Candidates",
    "CrossFitted",
    "fixed_candidates",
    "langchain_slots",
    "langchain_table",
]

DEFAULT = "default"
MEASURED = "measured-slots"
FITTED = "fitted"
#: The candidates that are a framework's fixed pattern.
FRAMEWORK_PATTERNS = ("alternate", "langchain")
#: The candidate that places as each order a user may have today
#: (:data:`~bookend_rag_lab.reorderers.CURRENT_ORDERS`) does: LlamaIndex's equals LangChain's when
#: the documents have scores; Haystack's ``LostInTheMiddleRanker`` is the alternating pattern.
CURRENT_CANDIDATES = dict(
    zip(CURRENT_ORDERS, ("relevance", "langchain", "langchain", "alternate"), strict=True)
)
#: The order the race lists the fixed candidates in, which settles a tie (the earlier leads); a
#: registered strategy's candidate follows them.
RACE_ORDER = (DEFAULT, "relevance", "reversed", "view", "alternate", "langchain")


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


def langchain_table(k: int) -> bookend_rag.TabulatedProfile:
    """LangChain's order at ``k`` as a slot table: ``w_s = k - r_s`` with ``r_s`` the rank it
    puts in slot ``s`` (:func:`langchain_slots`), so sorting by relevance into the slots by
    weight reproduces its order."""
    return bookend_rag.TabulatedProfile(
        weights=tuple(float(k - r) for r in langchain_slots(k)),
        kind="slot",
        label=f"LangChain LongContextReorder at K={k}",
    )


def _reversed_table(k: int) -> bookend_rag.TabulatedProfile:
    return bookend_rag.TabulatedProfile(
        weights=tuple(float(s + 1) for s in range(k)), kind="slot", label="reversed: best last"
    )


def fixed_candidates(
    theory: bookend_rag.ModelLike, k: int, default: bookend_rag.ModelLike | None = None
) -> dict[str, bookend_rag.PlacementConfig]:
    """Every candidate but the cross-fitted ones, for items of ``k`` documents (module
    docstring); the default places with ``default`` (what bookend's default places this model
    with, :func:`~bookend_rag_lab.experiments.setup.default_model`), else with ``theory``; each
    strategy that is a tune candidate places with ``theory``."""
    configs = {
        DEFAULT: bookend_rag.PlacementConfig(model=theory if default is None else default),
        "reversed": bookend_rag.PlacementConfig(model=_reversed_table(k)),
        "view": bookend_rag.PlacementConfig(model=theory, suffix_tokens=0),
        "langchain": bookend_rag.PlacementConfig(model=langchain_table(k)),
    }
    for name in strategy_names():
        if strategy_named(name).tune_candidate:
            configs[name] = bookend_rag.PlacementConfig(model=theory, strategy=name)
    order = [name for name in RACE_ORDER if name in configs]
    order += [name for name in configs if name not in RACE_ORDER]
    return {name: configs[name] for name in order}


@dataclass(frozen=True)
class CrossFitted:
    """A candidate measured on the user's items: the config judged on each fold (measured on
    the others) and the pooled one (measured on every fold), which choosing it writes."""

    per_fold: tuple[bookend_rag.PlacementConfig, ...]
    pooled: bookend_rag.PlacementConfig

    @classmethod
    def of(
        cls, pooled: bookend_rag.ModelLike | None, per_fold: Sequence[bookend_rag.ModelLike | None]
    ) -> CrossFitted | None:
        """The candidate placing with these profiles (default settings otherwise), or ``None``
        when any is missing."""
        if pooled is None or any(p is None for p in per_fold):
            return None
        return cls(
            tuple(bookend_rag.PlacementConfig(model=p) for p in per_fold if p is not None),
            bookend_rag.PlacementConfig(model=pooled),
        )

    def to_json(self) -> dict[str, Any]:
        """``{"per_fold": [...], "pooled": ...}``, each a config as JSON."""
        return {
            "per_fold": [c.model_dump(mode="json") for c in self.per_fold],
            "pooled": self.pooled.model_dump(mode="json"),
        }


@dataclass(frozen=True)
class Candidates:
    """The candidates of a run.

    Attributes:
        fixed: the candidates with one config on every fold.
        measured: the cross-fitted candidates that could be measured (``measured-slots``,
            ``fitted``), by name.
        fits: the fitted profiles behind ``fitted``, by part (``"pooled"``, ``"fold f held
            out"``), each with its reason when there is none.
        fit_target: what the fits scored, or ``None`` when nothing could be fitted.
    """

    fixed: dict[str, bookend_rag.PlacementConfig]
    measured: Mapping[str, CrossFitted] = field(default_factory=dict)
    fits: Mapping[str, ProfileFit] = field(default_factory=dict)
    fit_target: Target | None = None

    @classmethod
    def build(
        cls,
        theory: bookend_rag.ModelLike,
        k: int,
        measurement: SlotMeasurement,
        default: bookend_rag.ModelLike | None = None,
    ) -> Candidates:
        """The candidates of a run: :func:`fixed_candidates`, and each cross-fitted candidate
        whose pooled profile and every fold's could be measured."""
        pooled_table, *tables = (measurement.table(held_out) for _, held_out in measurement.parts())
        fits = measurement.fits()
        pooled_fit, *fitted = (f.profile for f in fits.values())
        found = {
            MEASURED: CrossFitted.of(pooled_table, tables),
            FITTED: CrossFitted.of(pooled_fit, fitted),
        }
        return cls(
            fixed_candidates(theory, k, default),
            {name: c for name, c in found.items() if c is not None},
            fits,
            measurement.fit_target(),
        )

    @property
    def names(self) -> list[str]:
        """Every candidate, the default first."""
        return [*self.fixed, *self.measured]

    def of_fold(self, fold: int) -> dict[str, bookend_rag.PlacementConfig]:
        """The config of every candidate on the items of ``fold``."""
        return {**self.fixed, **{n: c.per_fold[fold] for n, c in self.measured.items()}}

    def written(self, name: str) -> bookend_rag.PlacementConfig:
        """The config that choosing ``name`` writes."""
        return self.measured[name].pooled if name in self.measured else self.fixed[name]

    def to_json(self) -> dict[str, Any]:
        """Every candidate's config as JSON (per fold and pooled for a cross-fitted one)."""
        out: dict[str, Any] = {n: c.model_dump(mode="json") for n, c in self.fixed.items()}
        return out | {n: c.to_json() for n, c in self.measured.items()}

    def fits_to_json(self) -> dict[str, Any]:
        """The fits' target and, per part, the fit or why there is none."""
        return {"target": self.fit_target, **{n: f.to_json() for n, f in self.fits.items()}}
