"""Probe items from recorded retrievals: items whose answer is known by construction, no labels.

A team has its retriever's output (:mod:`bookend_rag.retrievals`), rarely gold answers. From each
recorded retrieval, :func:`probe_items` builds one :class:`~bookend_rag_lab.items.item.Item` that
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
- **Scores** are the recorded ones; a retrieval with a document without a score gets the core's
  reciprocal-rank prior ``1 / (i + 1)`` (what ``bookend_rag.reorder`` uses without scores), so
  the retriever's order is kept.

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
from bookend_rag_lab.items.item import Item
from bookend_rag_lab.items.template import BOOKEND_PROMPT, PromptTemplate, flat_text
from bookend_rag_lab.models.scorer import answer_text, prompt_text

__all__ = [
    "CODE_WORDS",
    "MAX_DOCUMENTS",
    "MAX_WORDS",
    "MIN_WORDS",
    "PROBE_FAMILY",
    "SKIP_REASONS",
    "Probes",
    "probe_items",
    "probe_question",
    "retriever_scores",
    "statement",
    "top_document",
    "unusable",
]

#: The family of every probe item (reports group items by family).
PROBE_FAMILY = "probe"

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

#: Why a retrieval gives no probe (the keys of :attr:`Probes.skipped`).
SKIP_REASONS = {
    "few": "fewer than 2 documents",
    "many": f"more than {MAX_DOCUMENTS} documents (one code per first letter)",
    "empty": "the retriever's first document is empty",
    "duplicate": "no phrase of the retriever's first document names it alone (a duplicate)",
    "codes": "too few code words absent from its documents and template",
    "context": "longer than the model's context",
    "question": "no question recorded (self-answer probes ask the user's own)",
    "unanswered": "no answer from the retriever's first document alone",
    "agree": "one answer from every document (no other candidate)",
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
class Probes:
    """What :func:`probe_items` built from a file of retrievals.

    Attributes:
        items: one probe item per usable retrieval, in file order.
        records: the retrievals read.
        skipped: per reason (a key of :data:`SKIP_REASONS`), the numbers of the retrievals
            skipped (1-based, in file order).
        unscored: the retrievals with a document without a score (placed by the rank prior).
        multi_token: the retrievals whose codes are more than one token (scored as whole
            continuations).
        seed: the seed the codes were drawn with.
        context: the model's context in tokens that prompts were checked against (``None``: not
            known, not checked).
        design: how the items were built: ``"codes"`` (this module) or ``"self-answer"``
            (:mod:`~bookend_rag_lab.items.self_answer`).
        answers: the answers generated for self-answer probes (generation calls).
        commonest: the answer generated most often and from how many documents (self-answer
            probes; ``None``: none generated), which tells a model that repeats its prompt
            from one that answers.
    """

    items: list[Item]
    records: int
    skipped: dict[str, list[int]] = field(default_factory=dict)
    unscored: list[int] = field(default_factory=list)
    multi_token: list[int] = field(default_factory=list)
    seed: int = 0
    context: int | None = None
    design: str = "codes"
    answers: int = 0
    commonest: tuple[str, int] | None = None

    def to_json(self) -> dict[str, Any]:
        """The report's record of the probes."""
        return {
            "design": self.design,
            "generated_answers": self.answers,
            "records": self.records,
            "probes": len(self.items),
            "skipped": {SKIP_REASONS[k]: v for k, v in self.skipped.items()},
            "unscored": self.unscored,
            "multi_token_codes": self.multi_token,
            "seed": self.seed,
            "context_tokens": self.context,
            "commonest_answer": None
            if self.commonest is None
            else {"answer": self.commonest[0], "documents": self.commonest[1]},
            "summary": self.summary(),
        }

    def summary(self) -> str:
        """One line: the probes built, and each reason a retrieval was skipped, counted."""
        made = "probe" if len(self.items) == 1 else "probes"
        read = "retrieval" if self.records == 1 else "retrievals"
        parts = [f"{len(self.items)} {self.design} {made} from {self.records} {read}"]
        parts += [f"{len(v)} skipped: {SKIP_REASONS[k]}" for k, v in self.skipped.items()]
        if self.unscored:
            unscored = len(self.unscored)
            parts.append(f"{unscored} without retriever scores (ranked by the retriever's order)")
        if self.multi_token:
            parts.append(f"{len(self.multi_token)} with codes of several tokens")
        if self.repeated is not None:
            text, count = self.repeated
            parts.append(
                f"{count} of the {self.answers} answers generated were {_shown(text)}"
                " (the model repeats one answer instead of answering the question in this prompt)"
            )
        return "; ".join(parts)

    @property
    def repeated(self) -> tuple[str, int] | None:
        """The answer generated for more than half the documents, and how often (``None``:
        none was). A model that answers gives many answers (at most 22 of 600 alike in the
        label-free cells of ``bench/label_free.py``); a base model in a chat prompt repeats the
        prompt's opening for almost every document (566 of 582), and the few probes left
        would measure that echo, so a run refuses them."""
        if self.commonest is not None and 2 * self.commonest[1] > self.answers:
            return self.commonest
        return None


def _shown(text: str, most: int = 60) -> str:
    """A generated answer quoted for a one-line message, cut to ``most`` characters."""
    return repr(text if len(text) <= most else text[: most - 3] + "...")


def probe_items(
    records: Iterable[RetrievalRecord],
    *,
    seed: int = 0,
    template: PromptTemplate = BOOKEND_PROMPT,
    token_length: Callable[[str], int] | None = None,
    context: int | None = None,
) -> Probes:
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
    return Probes(items, count, skipped, unscored, multi_token, seed, context)


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
    reason = unusable(record)
    if reason is not None:
        return reason
    texts = [d.text for d in record.documents]
    k = len(texts)
    scores = retriever_scores(record)
    target = top_document(scores)
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


def unusable(record: RetrievalRecord, design: str = "codes") -> str | None:
    """Why ``record`` gives no probe of ``design`` (``"codes"`` or ``"self-answer"``) whatever
    the model, a key of :data:`SKIP_REASONS` (``None``: it may give one): what a run checks
    before it loads a model. Self-answer probes need a question; code probes at most
    :data:`MAX_DOCUMENTS` documents; both 2 documents or more, the retriever's first not empty."""
    if design == "self-answer" and not (record.question or "").strip():
        return "question"
    k = len(record.documents)
    if k < 2:
        return "few"
    if design == "codes" and k > MAX_DOCUMENTS:
        return "many"
    if not record.documents[top_document(retriever_scores(record))].text.split():
        return "empty"
    return None


def retriever_scores(record: RetrievalRecord) -> tuple[float, ...]:
    """The recorded scores, or where a document has none the core's reciprocal-rank prior
    ``1 / (i + 1)`` for every document (the retriever's order kept)."""
    recorded = [d.score for d in record.documents]
    if all(s is not None for s in recorded):
        return tuple(float(s) for s in recorded if s is not None)
    return tuple(1.0 / (i + 1) for i in range(len(recorded)))


def top_document(scores: Sequence[float]) -> int:
    """The retriever's first document: the highest score, the first on ties."""
    return max(range(len(scores)), key=lambda i: (scores[i], -i))


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
