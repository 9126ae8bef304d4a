"""Plain lookup items: K short documents, each one fact about its own entity; one is asked about.

Pure Python and deterministic. ``lookup_items(n_items, n_docs, ...)`` gives ``n_items``
:class:`~bookend_rag_lab.items.item.Item` objects of ``n_docs`` documents: document ``k`` states the
family's fact about entity ``k`` with value ``k``, so the values are the candidates (distinct
within an item, chance accuracy ``1/K``) and ``gold`` is the document asked about.

Item ``i`` of a split has the number ``SPLIT_OFFSETS[split] + i`` and comes from
``random.Random(f"{seed}:{number}")`` (:mod:`~bookend_rag_lab.items.families`): the same
``(seed, split, i)`` always gives the same item. ``families`` selects template families (default
all, used in turn: item ``i`` takes family ``families[i % len(families)]``). ``filler=(lo, hi)``
sets how many filler sentences surround each fact (uniform in ``lo..hi``, at a random place),
which sets the prompt length at a given K; the default ``(0, 6)`` gives documents of about 15 to
110 words, the items every earlier release generated.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from bookend_rag_lab.items.families import (
    CITIES,
    CODENAMES,
    COLOURS,
    COMPANIES,
    FAMILIES,
    FILLER,
    FIRST_NAMES,
    PRODUCTS,
    checked_families,
    entities,
    item_id,
    numbered,
    values,
)
from bookend_rag_lab.items.item import Item

__all__ = ["DEFAULT_FILLER", "lookup_items", "max_docs"]

DEFAULT_FILLER = (0, 6)


def _document(fact: str, rng: random.Random, filler: tuple[int, int]) -> str:
    sentences = rng.sample(FILLER, rng.randint(*filler))
    sentences.insert(rng.randint(0, len(sentences)), fact)
    return " ".join(sentences)


def max_docs(family: str) -> int:
    """The largest K a family supports (distinct entities and values)."""
    pools = {
        "birthplace": len(CITIES),
        "access_code": len(CODENAMES),
        "product": min(len(COMPANIES), len(PRODUCTS)),
        "pet_colour": min(len(FIRST_NAMES), len(COLOURS)),
    }
    return pools[family]


def lookup_items(
    n_items: int,
    n_docs: int,
    *,
    seed: int = 0,
    split: str = "calibration",
    families: Sequence[str] | None = None,
    filler: tuple[int, int] = DEFAULT_FILLER,
) -> list[Item]:
    """``n_items`` lookup items of ``n_docs`` documents (see the module docstring).

    Raises:
        ValueError: for an unknown split or family, ``n_items < 1``, ``n_docs`` outside
            ``[2, max]`` where ``max`` is the smallest value pool of the chosen families, or a
            ``filler`` range that is not ``0 <= lo <= hi <= 20`` (the size of the filler pool).
    """
    chosen = checked_families(split, families, n_items, n_docs, max_docs)
    lo, hi = filler
    if not 0 <= lo <= hi <= len(FILLER):
        raise ValueError(
            f"filler must satisfy 0 <= lo <= hi <= {len(FILLER)}, got filler={filler!r}"
        )
    items = []
    for number, family in numbered(split, chosen, n_items):
        rng = random.Random(f"{seed}:{number}")
        template = FAMILIES[family]
        names = entities(family, rng, n_docs)
        answers = values(family, rng, n_docs)
        documents = tuple(
            _document(template.fact.format(entity=e, value=v), rng, (lo, hi))
            for e, v in zip(names, answers, strict=True)
        )
        gold = rng.randrange(n_docs)
        items.append(
            Item(
                item_id=item_id(split, number),
                question=template.question.format(entity=names[gold]),
                documents=documents,
                answer=answers[gold],
                candidates=tuple(answers),
                gold=gold,
                family=family,
                answer_prefix=template.answer_prefix.format(entity=names[gold]),
                filler=(lo, hi),
            )
        )
    return items
