"""Code probes: each document gets an inserted code word, and the question asks for one's code.

A probe design (:mod:`~bookend_rag_lab.items.probes`), kept for the comparison that chose the
default (:mod:`~bookend_rag_lab.items.self_answer`). From each recorded retrieval,
:func:`probe_items` builds one :class:`~bookend_rag_lab.items.item.Item` that
keeps everything of the user's prompt but the question: their K documents, in their retriever's
order, with their scores and lengths, rendered later into their template. Each document gets one
inserted statement at its end, ``"The code of this document is <code>."``, with a code word that
occurs nowhere else in the prompt; the question asks for the code of one document, named by a
phrase it alone contains (its opening words, else the first run of its words that no other
document holds); the K codes are the candidates and the named document's code the answer. Exact
match is then unambiguous, so generation-only APIs measure it too.

Construction, for the record numbered ``n`` (1-based, in file order) and a ``seed``:

- **The named document** is the retriever's first (the highest score; the first on ties): the
  document a question most often needs, so that where a placement puts it is what the probe
  measures.
- **Codes** are words of :data:`CODE_WORDS`, drawn with ``random.Random(f"{seed}:{n}")`` (so
  deterministic given the seed), with pairwise distinct first letters (any tokenizer then gives
  them distinct first tokens, and a server that only returns its top next tokens still tells
  them apart), none occurring in the user's documents or template (case-insensitively, as a
  substring). Where the scorer's tokenizer is given, only words that are one token in the form the
  answer takes after the prompt (``" " + code`` after completion text, ``code`` opening a chat
  turn) are drawn, so one next-token distribution scores every candidate: one model call or
  request per order and no continuation pass. A tokenizer with too few such words (a byte-level
  one) gets words of several tokens, scored as whole continuations, and the probes count them.
- **The naming phrase** has at least :data:`MIN_WORDS` words (or the whole document when it is
  shorter) and at most :data:`MAX_WORDS`, and occurs in no other document (case-insensitively,
  white space collapsed), statements included: the shortest such opening, else the shortest such
  run of words, the first of those.
- **Scores** are the recorded ones, else the rank prior
  (:func:`~bookend_rag_lab.items.probes.retriever_scores`).

The user's text is never altered otherwise (every probe document is the recorded text followed by
its statement, on a line of its own), and the user's file is only read. A retrieval that cannot
give a sound probe is skipped with a counted, one-line reason
(:data:`SKIP_REASONS`): fewer than 2 documents, more than :data:`MAX_DOCUMENTS`, an empty named
document, no phrase that names it alone (a duplicate), too few code words absent from its text,
or a prompt longer than the model's context.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bookend_rag.retrievals import RetrievalRecord
from bookend_rag_lab.items import probes
from bookend_rag_lab.items.item import Item
from bookend_rag_lab.items.probes import PROBE_FAMILY, Probes, ranked
from bookend_rag_lab.items.template import BOOKEND_PROMPT, PromptTemplate, flat_text
from bookend_rag_lab.models.scorer import answer_text, prompt_text

__all__ = [
    "CODE_WORDS",
    "DESIGN",
    "MAX_DOCUMENTS",
    "MAX_WORDS",
    "MIN_WORDS",
    "SKIP_REASONS",
    "CodeProbes",
    "probe_items",
    "probe_question",
    "statement",
    "unusable",
]

#: The design's name in reports.
DESIGN = "codes"

#: The fewest and most words of a naming phrase.
MIN_WORDS = 4
MAX_WORDS = 12

#: Code words: common concrete nouns, lower case, none inside another, grouped by first letter.
CODE_WORDS: tuple[str, ...] = (
    "amber", "anchor", "apple", "alpaca", "atlas", "acorn", "almond", "anvil",
    "badger", "banjo", "barley", "beacon", "bison", "bottle", "bucket", "button",
    "cactus", "camel", "candle", "canyon", "carrot", "cobalt", "copper", "cotton",
    "dagger", "daisy", "dolphin", "donkey", "dragon", "drum", "duck", "dune",
    "eagle", "easel", "elbow", "emerald", "engine", "envelope", "elk", "eel",
    "falcon", "feather", "fern", "fiddle", "flute", "fossil", "fox", "frog",
    "garlic", "geyser", "ginger", "glacier", "goblet", "granite", "gravel", "guitar",
    "hammer", "harbor", "hazel", "helmet", "hornet", "hyena", "horse", "honey",
    "igloo", "indigo", "iris", "ivory", "island", "ink", "iceberg", "ibis",
    "jackal", "jade", "jaguar", "jasmine", "jelly", "jigsaw", "juniper", "jacket",
    "kayak", "kettle", "kiwi", "koala", "kernel", "kitten", "kite", "knight",
    "ladder", "lantern", "lemon", "lizard", "lobster", "locket", "lotus", "lion",
    "magnet", "mango", "maple", "marble", "meadow", "mirror", "muffin", "moose",
    "napkin", "nectar", "needle", "nickel", "nutmeg", "newt", "nest", "noodle",
    "oasis", "olive", "onion", "orchid", "otter", "oyster", "owl", "oak",
    "paddle", "panda", "parrot", "pebble", "pepper", "pigeon", "puzzle", "pumpkin",
    "quail", "quartz", "quill", "quilt", "quiver", "quince",
    "rabbit", "radish", "raven", "ribbon", "rocket", "ruby", "rhino", "robin",
    "saddle", "salmon", "shovel", "silver", "spider", "sponge", "squid", "swan",
    "tablet", "teapot", "thistle", "tiger", "timber", "tomato", "tulip", "turnip",
    "umbrella", "urchin", "unicorn", "udon", "ukulele", "umpire",
    "valley", "velvet", "violin", "vulture", "vessel", "volcano", "vase", "vine",
    "walnut", "walrus", "wagon", "whistle", "willow", "wizard", "wombat", "wolf",
    "xylophone", "xenon", "xerox",
    "yacht", "yarrow", "yogurt", "yeti", "yew", "yolk", "yarn", "yam",
    "zebra", "zephyr", "zinc", "zipper", "zucchini", "zither",
)  # fmt: skip

#: The most documents a retrieval may have: one code per first letter.
MAX_DOCUMENTS = len({word[0] for word in CODE_WORDS})

#: Why a retrieval gives no code probe (the keys of :attr:`CodeProbes.skipped`).
SKIP_REASONS = probes.SKIP_REASONS | {
    "many": f"more than {MAX_DOCUMENTS} documents (one code per first letter)",
    "duplicate": "no phrase of the retriever's first document names it alone (a duplicate)",
    "codes": "too few code words absent from its documents and template",
}


def statement(code: str) -> str:
    """The statement inserted at the end of a document."""
    return f"The code of this document is {code}."


def probe_question(phrase: str, opening: bool) -> str:
    """The question asked: the code of the document that begins with (``opening``) or contains
    ``phrase``."""
    where = "begins" if opening else "contains"
    return f'What is the code of the document that {where} "{phrase}"? Answer with the code alone.'


@dataclass(frozen=True)
class CodeProbes(Probes):
    """What :func:`probe_items` built from a file of retrievals
    (:class:`~bookend_rag_lab.items.probes.Probes`), and which retrievals' codes take several
    tokens.

    Attributes:
        multi_token: the retrievals whose codes are more than one token (scored as whole
            continuations).
    """

    design = DESIGN
    reasons = SKIP_REASONS

    multi_token: list[int] = field(default_factory=list)

    def _details(self) -> dict[str, Any]:
        return {"multi_token_codes": self.multi_token}

    def _clauses(self) -> list[str]:
        if not self.multi_token:
            return []
        return [f"{len(self.multi_token)} with codes of several tokens"]


def probe_items(
    records: Iterable[RetrievalRecord],
    *,
    seed: int = 0,
    template: PromptTemplate = BOOKEND_PROMPT,
    token_length: Callable[[str], int] | None = None,
    context: int | None = None,
) -> CodeProbes:
    """One probe item per usable retrieval (module docstring).

    Args:
        records: the retrievals, in file order (:func:`bookend_rag.retrievals.read_retrievals`).
        seed: draws the codes; the same seed, records, template and tokenizer give the same items.
        template: the prompt the items will be rendered into: its own text is kept free of the
            codes, and it decides the form the answer takes (after a space, or opening a chat
            turn).
        token_length: the model's tokenizer (tokens of a text), to draw single-token codes and
            to check ``context``; ``None``: codes of any length, no context check.
        context: the most tokens a prompt and its answer may take (``None``: not checked).
    """
    items: list[Item] = []
    skipped: dict[str, list[int]] = {}
    unscored: list[int] = []
    multi_token: list[int] = []
    own_text = _template_text(template)
    count = 0
    for number, record in enumerate(records, start=1):
        count = number
        built = _probe(number, record, seed, template, own_text, token_length, context)
        if isinstance(built, str):
            skipped.setdefault(built, []).append(number)
            continue
        item, several = built
        items.append(item)
        if any(d.score is None for d in record.documents):
            unscored.append(number)
        if several:
            multi_token.append(number)
    return CodeProbes(items, count, skipped, unscored, seed, context, multi_token=multi_token)


def _template_text(template: PromptTemplate) -> str:
    """The words of the prompt that are not the user's documents, case-folded: the template's
    own (a render with empty documents and question), the statement's and the question's."""
    own = flat_text(template.prompt(["", ""], ""))
    words = [own, statement(""), probe_question("", True), probe_question("", False)]
    return "\n".join(words).casefold()


def _normal(text: str) -> str:
    return " ".join(text.casefold().split())


def _probe(
    number: int,
    record: RetrievalRecord,
    seed: int,
    template: PromptTemplate,
    own_text: str,
    token_length: Callable[[str], int] | None,
    context: int | None,
) -> tuple[Item, bool] | str:
    """The probe of one retrieval and whether its codes are known to take several tokens, or
    why there is none (a key of :data:`SKIP_REASONS`)."""
    checked = ranked(record, unusable)
    if isinstance(checked, str):
        return checked
    texts, scores, target = checked
    k = len(texts)
    lead = answer_text(template.prompt(texts, "?"), "x")[:-1]
    chosen = _codes(random.Random(f"{seed}:{number}"), k, texts, own_text, lead, token_length)
    if chosen is None:
        return "codes"
    codes, several = chosen
    documents = tuple(_with_statement(text, code) for text, code in zip(texts, codes, strict=True))
    named = _naming_phrase(texts[target], [d for i, d in enumerate(documents) if i != target])
    if named is None:
        return "duplicate"
    item = Item(
        item_id=f"retrieval:{number}",
        question=probe_question(*named),
        documents=documents,
        answer=codes[target],
        candidates=tuple(codes),
        scores=scores,
        gold=target,
        family=PROBE_FAMILY,
    )
    if context is not None and token_length is not None:
        prompt = template.prompt(documents, item.question)
        if token_length(prompt_text(prompt)) + token_length(lead + item.answer) > context:
            return "context"
    return item, several


def unusable(record: RetrievalRecord) -> str | None:
    """Why ``record`` gives no code probe whatever the model, a key of :data:`SKIP_REASONS`
    (``None``: it may give one): what a run checks before it loads a model. The shared checks
    (:func:`~bookend_rag_lab.items.probes.unusable`), and at most :data:`MAX_DOCUMENTS`
    documents."""
    if len(record.documents) > MAX_DOCUMENTS:
        return "many"
    return probes.unusable(record)


def _with_statement(text: str, code: str) -> str:
    """The recorded text, then its statement on a line of its own (a text that ends without a
    full stop still ends where it did)."""
    joint = "" if not text or text[-1] == "\n" else "\n"
    return f"{text}{joint}{statement(code)}"


def _codes(
    rng: random.Random,
    k: int,
    texts: Sequence[str],
    own_text: str,
    lead: str,
    token_length: Callable[[str], int] | None,
) -> tuple[list[str], bool] | None:
    """``k`` code words with distinct first letters, absent from ``texts`` and the template
    (``own_text``), single tokens after ``lead`` where the tokenizer has enough of them; and
    whether the tokenizer had too few (so they may take several tokens). ``None`` when there are
    not ``k``."""
    text = "\n".join(t.casefold() for t in texts)
    free = [w for w in CODE_WORDS if w not in text and w not in own_text]
    rng.shuffle(free)
    if token_length is not None:
        single = [w for w in free if token_length(lead + w) == 1]
        drawn = _distinct_letters(single, k)
        if drawn is not None:
            return drawn, False
    drawn = _distinct_letters(free, k)
    return None if drawn is None else (drawn, token_length is not None)


def _distinct_letters(words: Sequence[str], k: int) -> list[str] | None:
    """The first ``k`` of ``words`` whose first letters are all different (``None``: fewer)."""
    by_letter: dict[str, str] = {}
    for word in words:
        by_letter.setdefault(word[0], word)
        if len(by_letter) == k:
            return list(by_letter.values())
    return None


def _naming_phrase(text: str, others: Sequence[str]) -> tuple[str, bool] | None:
    """A phrase of ``text``'s words found in none of ``others``: its shortest unique opening
    (``True``), else its shortest unique run of words, the first of those (``False``); ``None``
    when there is none."""
    words = text.split()
    pool = [_normal(o) for o in others]
    if any(_normal(text) in o for o in pool):
        return None  # every phrase of a text that another document holds whole is held too

    def unique(start: int, n: int) -> bool:
        wanted = _normal(" ".join(words[start : start + n]))
        return not any(wanted in o for o in pool)

    lengths = range(min(MIN_WORDS, len(words)), min(MAX_WORDS, len(words)) + 1)
    for n in lengths:
        if unique(0, n):
            return " ".join(words[:n]), True
    for n in lengths:
        for start in range(1, len(words) - n + 1):
            if unique(start, n):
                return " ".join(words[start : start + n]), False
    return None
