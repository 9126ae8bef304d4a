"""Item suites by name, and the one entry point from which the experiments take their items.

:data:`SUITES` maps a name to its builder:

- ``hard`` (:mod:`~bookend_rag_lab.items.hard`): generated lookups with near-duplicates, distractors
  and documents of 20 to 400 tokens, on which retrievers often miss;
- ``lookup`` (:mod:`~bookend_rag_lab.items.lookup`): the plain generated lookups, one fact per
  document, with ``filler`` setting the prompt length;
- ``nq`` (:mod:`~bookend_rag_lab.items.nq`): real NaturalQuestions passages among retrieved hard
  negatives; fixed by its split (no seed, no template families, no filler);
- ``records`` (:mod:`~bookend_rag_lab.items.records`): real ISO 3166-2 subdivision records, K
  look-alikes of one country per item: short records of nearly equal length; fixed by its split;
- ``squad`` (:mod:`~bookend_rag_lab.items.squad`): real SQuAD 2.0 questions, their Wikipedia
  paragraph among retrieved hard negatives (mostly paragraphs of the same article); fixed by its
  split.

A new suite is a function ``Request -> list[Item]`` added to :data:`SUITES`; ``bookend eval
--suite NAME`` then offers it. :func:`load_items` turns what an experiment is given (a JSONL path,
a list of items, or nothing: a suite) into the items.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bookend_rag_lab.items.hard import hard_items
from bookend_rag_lab.items.item import Item, load_jsonl
from bookend_rag_lab.items.lookup import DEFAULT_FILLER, lookup_items
from bookend_rag_lab.items.nq import nq_items
from bookend_rag_lab.items.records import records_items
from bookend_rag_lab.items.squad import squad_items

__all__ = ["SUITES", "Request", "Suite", "load_items", "suite_items"]


@dataclass(frozen=True)
class Request:
    """What a suite is asked for: the first ``n_items`` items of ``k`` documents of a split
    (``seed``, ``families`` and ``filler`` where the suite takes them)."""

    n_items: int
    k: int
    seed: int
    split: str
    families: Sequence[str] | None
    filler: tuple[int, int] | None


@dataclass(frozen=True)
class Suite:
    """A named source of items.

    Attributes:
        build: the builder, ``Request -> items``.
        templated: whether its items come from template families (``seed`` and ``families``
            apply; the ``nq``, ``records`` and ``squad`` suites have neither).
        filler: whether ``filler`` sets its documents' lengths (the others' are their own).
    """

    build: Callable[[Request], list[Item]]
    templated: bool
    filler: bool


def _hard(r: Request) -> list[Item]:
    return hard_items(r.n_items, r.k, seed=r.seed, split=r.split, families=r.families)


def _lookup(r: Request) -> list[Item]:
    filler = r.filler or DEFAULT_FILLER
    return lookup_items(
        r.n_items, r.k, seed=r.seed, split=r.split, families=r.families, filler=filler
    )


def _nq(r: Request) -> list[Item]:
    return nq_items(r.n_items, r.k, split=r.split)


def _records(r: Request) -> list[Item]:
    return records_items(r.n_items, r.k, split=r.split)


def _squad(r: Request) -> list[Item]:
    return squad_items(r.n_items, r.k, split=r.split)


SUITES: dict[str, Suite] = {
    "hard": Suite(_hard, templated=True, filler=False),
    "lookup": Suite(_lookup, templated=True, filler=True),
    "nq": Suite(_nq, templated=False, filler=False),
    "records": Suite(_records, templated=False, filler=False),
    "squad": Suite(_squad, templated=False, filler=False),
}


def suite_items(
    suite: str,
    n_items: int,
    k: int,
    *,
    seed: int = 0,
    split: str = "evaluation",
    families: Sequence[str] | None = None,
    filler: tuple[int, int] | None = None,
) -> list[Item]:
    """The first ``n_items`` items of ``k`` documents of a suite.

    ``seed`` selects the generated items (``nq``, ``records`` and ``squad`` have none: their items
    are fixed by the split);
    ``families`` the template families (default: all); ``filler`` the lookup items' filler.

    Raises:
        ValueError: for an unknown suite, an option the suite does not take, or bad sizes.
    """
    if suite not in SUITES:
        raise ValueError(f"suite must be one of {sorted(SUITES)}, got suite={suite!r}")
    chosen = SUITES[suite]
    if families is not None and not chosen.templated:
        raise ValueError(f"suite {suite!r} has no template families, got families={families!r}")
    if filler is not None and not chosen.filler:
        raise ValueError(
            f"filler does not apply to suite {suite!r} (its lengths are its own), "
            f"got filler={filler!r}"
        )
    return chosen.build(Request(n_items, k, seed, split, families, filler))


def load_items(
    source: str | Path | Sequence[Item] | None,
    *,
    suite: str = "hard",
    n_items: int = 100,
    k: int = 10,
    seed: int = 0,
    split: str = "evaluation",
    families: Sequence[str] | None = None,
) -> list[Item]:
    """The items of an experiment: a JSONL path (:func:`~bookend_rag_lab.items.item.load_jsonl`), a
    list of items, or ``None`` for the first ``n_items`` of ``suite`` (:func:`suite_items`).

    Raises:
        ValueError: for an empty list, a malformed file, or bad suite arguments.
    """
    if source is None:
        return suite_items(suite, n_items, k, seed=seed, split=split, families=families)
    if isinstance(source, (str, Path)):
        return load_jsonl(source)
    items = list(source)
    if not items:
        raise ValueError("items must not be empty")
    return items
