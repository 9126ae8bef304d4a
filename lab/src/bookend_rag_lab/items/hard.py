"""Hard lookup items: close distractors, near-duplicates of the gold and unequal lengths.

The plain lookup items (:mod:`bookend_rag_lab.items.lookup`) give every document one fact about its
own entity, so a retriever finds the gold document first almost always and only the slot of the top
result is ever tested. These items make retrieval err the way real retrieval does:

- **near-duplicate**: a copy of the gold document (same filler, same wording) about a near entity
  (one name part changed: "Amelia Brennan" for "Amelia Abbott", "Project Falcon North" for
  "Project Falcon") with a different value;
- **entity distractor**: a document about the *gold* entity that states a value of the same type
  in another relation ("Amelia Abbott later moved to Oslo.");
- **same-family distractors**: the family's fact about other entities (same wording, same type);
- **unequal lengths**: each document is padded with neutral filler to a target of 20 to 400
  tokens (about 1.3 tokens per word), drawn log-uniformly with a bias towards short documents.

Each item records every document's role (:attr:`~bookend_rag_lab.items.item.Item.roles`). Item ``i``
of a split has the number ``SPLIT_OFFSETS[split] + i`` (calibration and evaluation never share an
item) and comes from ``random.Random(f"hard:{seed}:{number}")``; template families are chosen as
for the plain items, so a transfer check evaluates on families the calibration never saw.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from bookend_rag_lab.items.families import (
    CITIES,
    COLOURS,
    COMPANIES,
    FAMILIES,
    FILLER,
    FIRST_NAMES,
    LAST_NAMES,
    PRODUCTS,
    checked_families,
    entities,
    item_id,
    numbered,
    values,
)
from bookend_rag_lab.items.item import Item

__all__ = ["DISTRACTORS", "GOLD", "MAX_TOKENS", "MIN_TOKENS", "ROLES", "hard_items", "max_docs"]

#: Each document's part in an item (``Item.roles``), in the module docstring's terms.
GOLD, NEAR, ENTITY, FAMILY = "gold", "near-duplicate", "entity-distractor", "family-distractor"
ROLES = (GOLD, NEAR, ENTITY, FAMILY)
MIN_TOKENS = 20
MAX_TOKENS = 400
_TOKENS_PER_WORD = 1.3

#: Per family, sentences about the gold entity stating a value of the answer's type in another
#: relation: they share the question's words but do not answer it.
DISTRACTORS: dict[str, tuple[str, str]] = {
    "birthplace": (
        "{entity} was born into a family of merchants and later moved to {value}.",
        "{entity} often said that {value} felt more like home than the town of birth.",
    ),
    "access_code": (
        "The former access code for Project {entity}, replaced last spring, was {value}.",
        "The access code for the archive of Project {entity} is {value}, not the project's own.",
    ),
    "product": (
        "The company {entity} once planned to manufacture {value} but never did.",
        "The company {entity} does not manufacture {value}; it only sells them.",
    ),
    "pet_colour": (
        "The colour of the blanket {entity} sleeps on is {value}.",
        "The colour of the gate in front of the field where {entity} stays is {value}.",
    ),
}

_EXTRA_CODENAMES = (
    "Aurora",
    "Beacon",
    "Cascade",
    "Drift",
    "Falcon",
    "Gale",
    "Halcyon",
    "Kestrel",
    "Lumen",
    "Onyx",
    "Pinnacle",
    "Sable",
)
_VARIANT_SUFFIXES = ("North", "Prime", "Two", "West", "Minor")
_MORE_FILLER = (
    "The annual report that year ran to more than two hundred pages.",
    "A second copy of the ledger was kept by the town clerk.",
    "Visitors from the capital arrived by coach twice a month.",
    "The local school taught both arithmetic and music.",
    "Several families in the valley kept bees and sold honey.",
    "The bridge over the river was widened in the spring.",
    "A fire in the old warehouse destroyed many early papers.",
    "Letters from the period mention long and cold winters.",
    "The parish kept careful records of births and marriages.",
    "Most houses on the main street had slate roofs.",
    "The harbour was busy with fishing boats in the summer.",
    "An inventory lists tools, furniture and a few books.",
    "The lighthouse keeper wrote a short diary every evening.",
    "Farmers brought their grain to the mill after harvest.",
    "The regional museum holds a small collection of maps.",
    "A storm in the autumn damaged the roof of the chapel.",
    "The library opened on weekday afternoons only.",
    "Two inns competed for travellers on the coast road.",
    "The town council debated the new tax for several weeks.",
    "Children walked several miles to reach the village school.",
)
_POOL = (*FILLER, *_MORE_FILLER)


def _target_words(rng: random.Random) -> int:
    """Words of a document of ``MIN_TOKENS``..``MAX_TOKENS`` tokens, log-uniform, skewed short."""
    u = rng.random() ** 3.5  # more short documents than long: keeps prompts affordable on a CPU
    tokens = float(MIN_TOKENS * (MAX_TOKENS / MIN_TOKENS) ** u)
    return max(1, round(tokens / _TOKENS_PER_WORD))


def _filler(rng: random.Random, words: int) -> list[str]:
    """Filler sentences adding up to about ``words`` words (never more than the pool)."""
    chosen = rng.sample(_POOL, len(_POOL))
    out: list[str] = []
    count = 0
    for sentence in chosen:
        if count >= words:
            break
        out.append(sentence)
        count += len(sentence.split())
    return out


def _place(fact: str, filler: Sequence[str], position: float) -> str:
    sentences = list(filler)
    sentences.insert(round(position * len(sentences)), fact)
    return " ".join(sentences)


def _near_entity(family: str, entity: str, rng: random.Random, taken: set[str]) -> str:
    """An entity sharing all but one name part with ``entity`` and not in ``taken``."""
    for _ in range(100):
        if family == "birthplace":
            first, last = entity.split(" ", 1)
            candidate = (
                f"{first} {rng.choice(LAST_NAMES)}"
                if rng.random() < 0.5
                else f"{rng.choice(FIRST_NAMES)} {last}"
            )
        elif family == "access_code":
            candidate = f"{entity} {rng.choice(_VARIANT_SUFFIXES)}"
        elif family == "product":
            candidate = f"{entity} {rng.choice(('Group', 'Works', 'International', 'Brothers'))}"
        else:
            owner = entity.split("'s ", 1)[0]
            candidate = f"{owner}'s {rng.choice(('kitten', 'pony', 'puppy', 'hamster', 'lamb'))}"
        if candidate not in taken:
            return candidate
    raise ValueError(f"no near entity found for entity={entity!r}")  # pragma: no cover


def _entity_pool(family: str, rng: random.Random, n: int) -> list[str]:
    if family == "access_code":
        pool = sorted(set(entities("access_code", rng, 18)) | set(_EXTRA_CODENAMES))
        return rng.sample(pool, n)
    return entities(family, rng, n)


def max_docs(family: str) -> int:
    """The largest K a family supports (distinct values and entities)."""
    limits = {
        "birthplace": len(CITIES),
        "access_code": 26,
        "product": min(len(COMPANIES), len(PRODUCTS)),
        "pet_colour": min(len(FIRST_NAMES), len(COLOURS)),
    }
    return limits[family]


def _item(identifier: str, family: str, n_docs: int, rng: random.Random) -> Item:
    template = FAMILIES[family]
    answers = values(family, rng, n_docs)
    names = _entity_pool(family, rng, n_docs)
    gold_entity = names[0]
    # Document roles: the gold document, then near-duplicates and entity distractors in turn
    # (at most two and three, while room remains), then same-family facts about other entities.
    # The gold passage tends to be long (the larger of two length draws): its fact is buried.
    gold_filler = _filler(rng, max(_target_words(rng), _target_words(rng)))
    gold_position = rng.random()
    documents = [
        _place(
            template.fact.format(entity=gold_entity, value=answers[0]), gold_filler, gold_position
        )
    ]
    roles = [GOLD]
    competitors = (NEAR, ENTITY, NEAR, ENTITY, ENTITY)[: min(5, (n_docs - 1) // 2)]
    taken = set(names)
    for role, k in zip(competitors, range(1, n_docs), strict=False):
        roles.append(role)
        if role == NEAR:
            near = _near_entity(family, gold_entity, rng, taken)
            taken.add(near)
            fact = template.fact.format(entity=near, value=answers[k])
            documents.append(_place(fact, gold_filler, gold_position))
        else:
            distractor = DISTRACTORS[family][k // 4 % 2]
            fact = distractor.format(entity=gold_entity, value=answers[k])
            documents.append(_place(fact, _filler(rng, _target_words(rng)), rng.random()))
    for k in range(len(documents), n_docs):
        roles.append(FAMILY)
        fact = template.fact.format(entity=names[k], value=answers[k])
        documents.append(_place(fact, _filler(rng, _target_words(rng)), rng.random()))
    shuffle = list(range(n_docs))
    rng.shuffle(shuffle)
    gold = shuffle.index(0)
    return Item(
        item_id=identifier,
        question=template.question.format(entity=gold_entity),
        documents=tuple(documents[i] for i in shuffle),
        answer=answers[0],
        candidates=tuple(answers[i] for i in shuffle),
        gold=gold,
        family=family,
        answer_prefix=template.answer_prefix.format(entity=gold_entity),
        roles=tuple(roles[i] for i in shuffle),
    )


def hard_items(
    n_items: int,
    n_docs: int,
    *,
    seed: int = 0,
    split: str = "evaluation",
    families: Sequence[str] | None = None,
) -> list[Item]:
    """``n_items`` hard lookup items of ``n_docs`` documents (see the module docstring); item
    ``i`` takes family ``families[i % len(families)]`` (default: all families).

    Raises:
        ValueError: for an unknown split or family, ``n_items < 1``, or ``n_docs`` outside
            ``[2, max]`` for the chosen families.
    """
    chosen = checked_families(split, families, n_items, n_docs, max_docs)
    return [
        _item(item_id(split, number), family, n_docs, random.Random(f"hard:{seed}:{number}"))
        for number, family in numbered(split, chosen, n_items)
    ]
