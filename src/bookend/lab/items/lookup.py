"""Synthetic multi-document lookup items: K short documents, exactly one holds the answer.

Pure Python and deterministic; the behavioural probe (:mod:`bookend.lab.fitting.slots`) and the
quality benchmark both build on it.

Public API
----------
``generate_items(n_items, n_docs, *, seed=0, split="calibration", families=None, filler=(0, 6))``
    ``n_items`` items of ``n_docs`` documents each. Item ``i`` of a split has the id
    ``SPLIT_OFFSETS[split] + i`` and is generated from ``random.Random(f"{seed}:{item_id}")``, so
    the same ``(seed, split, i)`` always gives the same item, and calibration ids
    (``0 ..``) and evaluation ids (``1_000_000 ..``) never meet: calibrate on one split and
    evaluate on the other. ``families`` selects template families from :data:`FAMILIES`
    (default all, used in turn: item ``i`` takes family ``families[i % len(families)]``).
    ``filler=(lo, hi)`` sets how many filler sentences surround each fact (uniform in
    ``lo..hi``), which sets the prompt length at a given K; the default ``(0, 6)`` gives the
    items every earlier release generated.

``ProbeItem``
    ``documents[k]`` states one fact of the item's family about its own entity;
    ``answers[k]`` is that fact's value, so the answers are also the candidates (distinct within an
    item, chance accuracy ``1/K``); ``gold`` is the index of the document asked about.
    ``question`` and ``answer_prefix`` complete the prompt. ``order_with_gold_at(slot)`` gives
    the document order that puts the gold document in ``slot`` and keeps the others in their
    original order; ``prompt(order)`` renders the documents in that order (default: as generated).

Documents vary in length (about 15 to 110 words by default): the fact sentence sits among
``filler`` (zero to six by default) filler sentences drawn from a neutral pool, at a random place.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = [
    "DEFAULT_FILLER",
    "FAMILIES",
    "SPLIT_OFFSETS",
    "ProbeItem",
    "generate_items",
    "render_prompt",
]

SPLIT_OFFSETS = {"calibration": 0, "evaluation": 1_000_000}
DEFAULT_FILLER = (0, 6)


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


def _items(text: str) -> tuple[str, ...]:
    return tuple(text.split(", "))


_FIRST = _words(
    "Amelia Bruno Clara Dmitri Elena Farid Greta Hugo Ines Jonas Keiko Lars Maya Nikolai Olga"
    " Pablo Quinn Rosa Stefan Tamsin Umar Vera Walter Ximena Yusuf Zofia Arjun Beatrix Cyrus "
    "Delia"
)
_LAST = _words(
    "Abbott Brennan Castillo Dubois Eriksen Fontaine Garber Halloran Ivanova Jansen Kowalski "
    "Lindqvist Moreau Nakamura Okafor Petrov Quintero Rasmussen Santoro Thorne Underwood "
    "Vasquez Whitfield Yilmaz"
)
_CITIES = _words(
    "Lisbon Oslo Nairobi Lima Hanoi Dublin Quito Tbilisi Perth Turin Kraków Porto Bergen "
    "Seville Ghent Lyon Zagreb Tallinn Cusco Osaka"
)
_CODENAMES = _words(
    "Falcon Juniper Granite Harbor Lantern Meridian Nimbus Orchid Quartz Saffron Tundra "
    "Willow Cobalt Ember Glacier Horizon Ivory Mosaic"
)
_COMPANIES = _words(
    "Altavia Brightwell Corvane Dunmore Estrella Fennick Galvora Holloway Irongate Juneberry "
    "Kestrel Lumora Marlowe Northcroft Ostrava Pellham"
)
_PRODUCTS = _items(
    "bicycles, umbrellas, telescopes, violins, lanterns, kayaks, typewriters, barometers, "
    "sewing machines, pianos, compasses, teapots, microscopes, saddles"
)
_ANIMALS = ("horse", "parrot", "cat", "dog", "goat", "rabbit", "tortoise", "donkey")
_COLOURS = _words("red blue green yellow purple orange white black grey pink brown")

_FILLER = (
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
class _Family:
    fact: str  # "{entity}" and "{value}" are filled in
    question: str
    answer_prefix: str


FAMILIES: dict[str, _Family] = {
    "birthplace": _Family(
        "{entity} was born in {value}.", "Where was {entity} born?", "{entity} was born in"
    ),
    "access_code": _Family(
        "The access code for Project {entity} is {value}.",
        "What is the access code for Project {entity}?",
        "The access code for Project {entity} is",
    ),
    "product": _Family(
        "The company {entity} manufactures {value}.",
        "What does the company {entity} manufacture?",
        "The company {entity} manufactures",
    ),
    "pet_colour": _Family("{entity} is {value}.", "What colour is {entity}?", "{entity} is"),
}


@dataclass(frozen=True)
class ProbeItem:
    """One lookup item (see the module docstring).

    ``roles`` names each document's part in a hard item
    (:data:`bookend.lab.items.hard.ROLES`; ``roles[gold] == "gold"``); plain items leave it
    empty.
    """

    item_id: int
    split: str
    family: str
    documents: tuple[str, ...]
    answers: tuple[str, ...]
    gold: int
    question: str
    answer_prefix: str
    filler: tuple[int, int] = DEFAULT_FILLER
    roles: tuple[str, ...] = ()

    @property
    def gold_answer(self) -> str:
        """The value stated by the gold document."""
        return self.answers[self.gold]

    def order_with_gold_at(self, slot: int) -> tuple[int, ...]:
        """Document order placing the gold document at ``slot``, the others in original order."""
        if not 0 <= slot < len(self.documents):
            raise ValueError(f"slot must lie in [0, {len(self.documents) - 1}], got slot={slot!r}")
        others = [k for k in range(len(self.documents)) if k != self.gold]
        return (*others[:slot], self.gold, *others[slot:])

    def prompt(self, order: Sequence[int] | None = None) -> str:
        """The prompt with documents in ``order`` (a permutation of ``range(K)``), ending with the
        answer prefix; the answer follows as ``" " + answer``."""
        return self.rendered(order)[0]

    def rendered(self, order: Sequence[int] | None = None) -> tuple[str, list[tuple[int, int]]]:
        """The prompt (as :meth:`prompt`) and the character span ``[start, end)`` of each rendered
        ``"Document k: ..."`` in it, slot 1 first; the documents block is
        ``[spans[0][0], spans[-1][1])``."""
        indices = list(range(len(self.documents))) if order is None else list(order)
        if sorted(indices) != list(range(len(self.documents))):
            raise ValueError(f"order must be a permutation of range({len(self.documents)})")
        return render_prompt(
            [self.documents[k] for k in indices], self.question, self.answer_prefix
        )


def render_prompt(
    documents: Sequence[str], question: str, answer_prefix: str = ""
) -> tuple[str, list[tuple[int, int]]]:
    """The completion-style lookup prompt and the character span of each ``"Document k: ..."``.

    Instruction, numbered documents in the given order, the question, and ``"Answer:"`` followed
    by ``answer_prefix``; the answer follows as ``" " + answer``. No chat template: base and
    instruction-tuned models both continue it.
    """
    text = "Read the documents and answer the question.\n\n"
    spans = []
    for slot, document in enumerate(documents):
        if slot:
            text += "\n\n"
        start = len(text)
        text += f"Document {slot + 1}: {document}"
        spans.append((start, len(text)))
    answer = f"Answer: {answer_prefix}" if answer_prefix else "Answer:"
    return f"{text}\n\nQuestion: {question}\n{answer}", spans


def _entities(family: str, rng: random.Random, n: int) -> list[str]:
    if family == "birthplace":
        names = {f"{rng.choice(_FIRST)} {rng.choice(_LAST)}" for _ in range(8 * n)}
        return rng.sample(sorted(names), n)
    if family == "access_code":
        return rng.sample(_CODENAMES, n)
    if family == "product":
        return rng.sample(_COMPANIES, n)
    owners = rng.sample(_FIRST, n)
    return [f"{owner}'s {rng.choice(_ANIMALS)}" for owner in owners]


def _values(family: str, rng: random.Random, n: int) -> list[str]:
    if family == "birthplace":
        return rng.sample(_CITIES, n)
    if family == "access_code":
        return [str(v) for v in rng.sample(range(1000, 10000), n)]
    if family == "product":
        return rng.sample(_PRODUCTS, n)
    return rng.sample(_COLOURS, n)


def _document(fact: str, rng: random.Random, filler: tuple[int, int]) -> str:
    sentences = rng.sample(_FILLER, rng.randint(*filler))
    sentences.insert(rng.randint(0, len(sentences)), fact)
    return " ".join(sentences)


def _max_docs(family: str) -> int:
    pools = {
        "birthplace": len(_CITIES),
        "access_code": len(_CODENAMES),
        "product": min(len(_COMPANIES), len(_PRODUCTS)),
        "pet_colour": min(len(_FIRST), len(_COLOURS)),
    }
    return pools[family]


def checked_families(
    split: str,
    families: Sequence[str] | None,
    n_items: int,
    n_docs: int,
    max_docs: Callable[[str], int],
) -> list[str]:
    """The chosen families (all by default), once the generator's arguments are checked.

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


def generate_items(
    n_items: int,
    n_docs: int,
    *,
    seed: int = 0,
    split: str = "calibration",
    families: Sequence[str] | None = None,
    filler: tuple[int, int] = DEFAULT_FILLER,
) -> list[ProbeItem]:
    """Generate ``n_items`` lookup items of ``n_docs`` documents (see the module docstring).

    Raises:
        ValueError: for an unknown split or family, ``n_items < 1``, ``n_docs`` outside
            ``[2, max]`` where ``max`` is the smallest value pool of the chosen families, or a
            ``filler`` range that is not ``0 <= lo <= hi <= 20`` (the size of the filler pool).
    """
    chosen = checked_families(split, families, n_items, n_docs, _max_docs)
    lo, hi = filler
    if not 0 <= lo <= hi <= len(_FILLER):
        raise ValueError(
            f"filler must satisfy 0 <= lo <= hi <= {len(_FILLER)}, got filler={filler!r}"
        )
    items = []
    for index in range(n_items):
        item_id = SPLIT_OFFSETS[split] + index
        rng = random.Random(f"{seed}:{item_id}")
        family = chosen[index % len(chosen)]
        template = FAMILIES[family]
        entities = _entities(family, rng, n_docs)
        values = _values(family, rng, n_docs)
        documents = tuple(
            _document(template.fact.format(entity=e, value=v), rng, (lo, hi))
            for e, v in zip(entities, values, strict=True)
        )
        gold = rng.randrange(n_docs)
        items.append(
            ProbeItem(
                item_id=item_id,
                split=split,
                family=family,
                documents=documents,
                answers=tuple(values),
                gold=gold,
                question=template.question.format(entity=entities[gold]),
                answer_prefix=template.answer_prefix.format(entity=entities[gold]),
                filler=(lo, hi),
            )
        )
    return items
