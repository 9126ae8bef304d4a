"""Template families of the generated items: the fact templates, the word pools and the splits.

Shared by the plain lookup items (:mod:`bookend_rag_lab.items.lookup`) and the hard items
(:mod:`bookend_rag_lab.items.hard`). A family is one relation with its fact sentence, its question
and the answer prefix that the answer continues; entities and values are drawn from the pools below
with the item's own ``random.Random``, so the same seed always gives the same item.

Splits: item ``i`` of a split has the number ``SPLIT_OFFSETS[split] + i`` and the id
``"SPLIT:NUMBER"``; calibration numbers (``0 ..``) and evaluation numbers (``1_000_000 ..``) never
meet, so a profile calibrated on one split is evaluated on items it never saw.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = [
    "CITIES",
    "CODENAMES",
    "COLOURS",
    "COMPANIES",
    "FAMILIES",
    "FILLER",
    "FIRST_NAMES",
    "LAST_NAMES",
    "PRODUCTS",
    "SPLIT_OFFSETS",
    "Family",
    "checked_families",
    "entities",
    "item_id",
    "numbered",
    "values",
]

SPLIT_OFFSETS = {"calibration": 0, "evaluation": 1_000_000}


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


FIRST_NAMES = _words(
    "Amelia Bruno Clara Dmitri Elena Farid Greta Hugo Ines Jonas Keiko Lars Maya Nikolai Olga"
    " Pablo Quinn Rosa Stefan Tamsin Umar Vera Walter Ximena Yusuf Zofia Arjun Beatrix Cyrus "
    "Delia"
)
LAST_NAMES = _words(
    "Abbott Brennan Castillo Dubois Eriksen Fontaine Garber Halloran Ivanova Jansen Kowalski "
    "Lindqvist Moreau Nakamura Okafor Petrov Quintero Rasmussen Santoro Thorne Underwood "
    "Vasquez Whitfield Yilmaz"
)
CITIES = _words(
    "Lisbon Oslo Nairobi Lima Hanoi Dublin Quito Tbilisi Perth Turin Kraków Porto Bergen "
    "Seville Ghent Lyon Zagreb Tallinn Cusco Osaka"
)
CODENAMES = _words(
    "Falcon Juniper Granite Harbor Lantern Meridian Nimbus Orchid Quartz Saffron Tundra "
    "Willow Cobalt Ember Glacier Horizon Ivory Mosaic"
)
COMPANIES = _words(
    "Altavia Brightwell Corvane Dunmore Estrella Fennick Galvora Holloway Irongate Juneberry "
    "Kestrel Lumora Marlowe Northcroft Ostrava Pellham"
)
PRODUCTS = tuple(
    "bicycles, umbrellas, telescopes, violins, lanterns, kayaks, typewriters, barometers, "
    "sewing machines, pianos, compasses, teapots, microscopes, saddles".split(", ")
)
_ANIMALS = ("horse", "parrot", "cat", "dog", "goat", "rabbit", "tortoise", "donkey")
COLOURS = _words("red blue green yellow purple orange white black grey pink brown")

#: Neutral sentences that surround a fact (they mention no entity and no value).
FILLER = (
    "The records from that period are kept in a small archive.",
    "Several visitors mentioned the place in their letters.",
    "The weather that season was mild, with little rain.",
    "Most of the surrounding land was used for farming.",
    "A local newspaper printed a short note about it at the time.",
    "Nobody involved expected the matter to attract attention.",
    "The nearest railway station was about an hour away on foot.",
    "Later accounts add a few details that are hard to verify.",
    "Neighbours described the household as quiet and orderly.",
    "The building was repainted twice in the following decade.",
    "An old map of the district shows a mill by the river.",
    "Some of the original documents were lost in a flood.",
    "The market in the town square opened every Thursday.",
    "The road to the coast was rebuilt after a hard winter.",
    "Few photographs from those years have survived.",
    "Travellers often stopped there on their way to the hills.",
    "The committee met in the evenings, usually on Tuesdays.",
    "A small garden with fruit trees lay behind the house.",
    "Historians still disagree about the exact dates involved.",
    "The surrounding streets were lit by gas lamps until much later.",
)


@dataclass(frozen=True)
class Family:
    """One relation: ``fact``, ``question`` and ``answer_prefix`` take ``{entity}`` (and the fact
    ``{value}``); the answer follows the prefix as ``" " + value``."""

    fact: str
    question: str
    answer_prefix: str


FAMILIES: dict[str, Family] = {
    "birthplace": Family(
        "{entity} was born in {value}.", "Where was {entity} born?", "{entity} was born in"
    ),
    "access_code": Family(
        "The access code for Project {entity} is {value}.",
        "What is the access code for Project {entity}?",
        "The access code for Project {entity} is",
    ),
    "product": Family(
        "The company {entity} manufactures {value}.",
        "What does the company {entity} manufacture?",
        "The company {entity} manufactures",
    ),
    "pet_colour": Family("{entity} is {value}.", "What colour is {entity}?", "{entity} is"),
}


def entities(family: str, rng: random.Random, n: int) -> list[str]:
    """``n`` distinct entities of a family (people, projects, companies or pets)."""
    if family == "birthplace":
        names = {f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}" for _ in range(8 * n)}
        return rng.sample(sorted(names), n)
    if family == "access_code":
        return rng.sample(CODENAMES, n)
    if family == "product":
        return rng.sample(COMPANIES, n)
    owners = rng.sample(FIRST_NAMES, n)
    return [f"{owner}'s {rng.choice(_ANIMALS)}" for owner in owners]


def values(family: str, rng: random.Random, n: int) -> list[str]:
    """``n`` distinct values of a family's relation (cities, 4-digit codes, products, colours)."""
    if family == "access_code":
        return [str(v) for v in rng.sample(range(1000, 10000), n)]
    pools = {"birthplace": CITIES, "product": PRODUCTS, "pet_colour": COLOURS}
    return rng.sample(pools[family], n)


def item_id(split: str, number: int) -> str:
    """The id of the generated item with this number: ``"SPLIT:NUMBER"``."""
    return f"{split}:{number}"


def numbered(split: str, families: Sequence[str], n_items: int) -> list[tuple[int, str]]:
    """The number and family of each of ``n_items`` items of a split: item ``i`` has the number
    ``SPLIT_OFFSETS[split] + i`` and the family ``families[i % len(families)]``."""
    return [(SPLIT_OFFSETS[split] + i, families[i % len(families)]) for i in range(n_items)]


def checked_families(
    split: str,
    families: Sequence[str] | None,
    n_items: int,
    n_docs: int,
    max_docs: Callable[[str], int],
) -> list[str]:
    """The chosen families (all by default), once a generator's arguments are checked.

    Raises:
        ValueError: an unknown split or family, ``n_items < 1``, or ``n_docs`` outside
            ``[2, max]`` where ``max`` is the smallest ``max_docs`` of the chosen families.
    """
    if split not in SPLIT_OFFSETS:
        raise ValueError(f"split must be one of {sorted(SPLIT_OFFSETS)}, got split={split!r}")
    chosen = list(FAMILIES) if families is None else list(families)
    if not chosen or any(f not in FAMILIES for f in chosen):
        raise ValueError(
            f"families must be drawn from {sorted(FAMILIES)}, got families={families!r}"
        )
    if n_items < 1:
        raise ValueError(f"n_items must be >= 1, got n_items={n_items!r}")
    limit = min(max_docs(f) for f in chosen)
    if not 2 <= n_docs <= limit:
        raise ValueError(
            f"n_docs must lie in [2, {limit}] for these families, got n_docs={n_docs!r}"
        )
    return chosen
