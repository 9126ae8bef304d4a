"""Self-answer probes: label-free items that keep the user's own question.

From each recorded retrieval (:mod:`bookend_rag.retrievals`) with a question,
:func:`self_answer_items` builds one :class:`~bookend_rag_lab.items.item.Item` that is the user's
prompt unaltered: their question over their K documents, in their retriever's order, with their
scores, rendered later into their template. Only the answer is made up, by the model itself:

- **Candidates.** The model answers the question from each document alone, greedily, through the
  same template: ``a_i = cut(generate(template([d_i], question)))``, at most
  :data:`ANSWER_TOKENS` tokens, cut by :func:`short_answer` to its first line and sentence. The
  candidates are the distinct answers (:func:`~bookend_rag_lab.items.answers.answer_key`).
- **Target.** The answer from the retriever's first document (the highest score; the first on
  ties): the document the retriever backs, so the probe measures how much of the model's answer a
  placement leaves to that document when all K are in the prompt. No label is needed: the
  retriever's ranking is the pseudo-gold.

Why not an inserted code (:mod:`~bookend_rag_lab.items.codes`): a lookup of a code named by a
quoted phrase is another task than the user's question, and on the measured cell its position
curve was the reverse of the labelled items' one (first slots best where real questions read the
last slot best); this design, with the user's question and their answer type, tracked the
labelled curve within 5 points at every slot (``bench/probe_designs.py``, ``bench/RESULTS.md``).

Cost: one generation per document (K short requests per retrieval, each one document long),
then the scoring calls of any run. The answers are the model's own, so they are deterministic for
a deterministic backend and cached in the run's call cache.

A retrieval is skipped with a counted, one-line reason
(:data:`SKIP_REASONS`): no question, fewer than 2 documents, an
empty first document, a prompt longer than the model's context, no answer from the first
document, or one answer from every document (nothing to tell apart). The user's file is only read.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from bookend_rag.retrievals import RetrievalRecord
from bookend_rag_lab.items import probes
from bookend_rag_lab.items.answers import answer_key
from bookend_rag_lab.items.item import Item
from bookend_rag_lab.items.probes import PROBE_FAMILY, Probes, ranked
from bookend_rag_lab.items.template import BOOKEND_PROMPT, PromptTemplate
from bookend_rag_lab.models.scorer import Prompt, prompt_text

__all__ = [
    "ANSWER_TOKENS",
    "DESIGN",
    "SKIP_REASONS",
    "SelfAnswerProbes",
    "answer_key",
    "answer_prompts",
    "self_answer_items",
    "short_answer",
    "unusable",
]

#: The design's name in reports.
DESIGN = "self-answer"

#: The longest answer generated from one document, in tokens.
ANSWER_TOKENS = 16

#: Why a retrieval gives no self-answer probe (the keys of :attr:`SelfAnswerProbes.skipped`).
SKIP_REASONS = probes.SKIP_REASONS | {
    "question": "no question recorded (self-answer probes ask the user's own)",
    "unanswered": "no answer from the retriever's first document alone",
    "agree": "one answer from every document (no other candidate)",
}

# A sentence ends at a full stop and a space, but not after a capital or a digit ("J. R. R.
# Tolkien" stays whole).
_SENTENCE_END = re.compile(r"(?<=[^A-Z0-9])\. ")


@dataclass(frozen=True)
class SelfAnswerProbes(Probes):
    """What :func:`self_answer_items` built from a file of retrievals
    (:class:`~bookend_rag_lab.items.probes.Probes`), and the answer the model gave most often.

    Attributes:
        commonest: the answer generated most often and from how many documents (``None``: none
            generated), which tells a model that repeats its prompt from one that answers.
    """

    design = DESIGN
    reasons = SKIP_REASONS

    commonest: tuple[str, int] | None = None

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

    @property
    def worth_scoring(self) -> bool:
        """Not when the model repeated one answer (:attr:`repeated`)."""
        return self.repeated is None

    def _details(self) -> dict[str, Any]:
        common = self.commonest
        shown = None if common is None else {"answer": common[0], "documents": common[1]}
        return {"commonest_answer": shown}

    def _clauses(self) -> list[str]:
        if self.repeated is None:
            return []
        text, count = self.repeated
        return [
            f"{count} of the {self.answers} answers generated were {_shown(text)}"
            " (the model repeats one answer instead of answering the question in this prompt)"
        ]


def _shown(text: str, most: int = 60) -> str:
    """A generated answer quoted for a one-line message, cut to ``most`` characters."""
    return repr(text if len(text) <= most else text[: most - 3] + "...")


def short_answer(text: str) -> str:
    """A generation cut to its answer: its first line (after leading white space), up to the end
    of its first sentence, without a final full stop."""
    line = text.strip().split("\n")[0].strip()
    return _SENTENCE_END.split(line)[0].rstrip(".").strip()


def answer_prompts(record: RetrievalRecord, template: PromptTemplate) -> list[Prompt]:
    """The prompts that ask the record's question of each of its documents alone, in order."""
    question = record.question or ""
    return [template.prompt([d.text], question) for d in record.documents]


def self_answer_items(
    records: Iterable[RetrievalRecord],
    answer: Callable[[Sequence[Prompt]], list[str]],
    *,
    seed: int = 0,
    template: PromptTemplate = BOOKEND_PROMPT,
    token_length: Callable[[str], int] | None = None,
    context: int | None = None,
    distinct_first_words: bool = False,
    limit: int | None = None,
) -> SelfAnswerProbes:
    """One self-answer probe per usable retrieval (module docstring).

    Args:
        records: the retrievals, in file order (:func:`bookend_rag.retrievals.read_retrievals`).
        answer: the model's generated text after each of some prompts (at most
            :data:`ANSWER_TOKENS` tokens each), such as ``lambda ps: generate_all(scorer, ps,
            ANSWER_TOKENS)``; called for the first document of a retrieval that passes the other
            checks, then, when it gave an answer, for the others at once.
        seed: recorded in the report (the design draws nothing).
        template: the user's prompt, which both the answers and the items are rendered into.
        token_length: the model's tokenizer, to check ``context`` (``None``: not checked).
        context: the most tokens a prompt and its answer may take (``None``: not checked).
        distinct_first_words: keep only candidates whose first words differ too (for a scorer
            that reads first tokens only, which cannot tell apart answers that begin alike).
        limit: stop once this many probes are built (``None``: read every retrieval), so that
            no answer is generated for a probe the run would not use.
    """
    items: list[Item] = []
    skipped: dict[str, list[int]] = {}
    unscored: list[int] = []
    generated = 0
    said: Counter[str] = Counter()
    count = 0
    for number, record in enumerate(records, start=1):
        if limit is not None and len(items) >= limit:
            break
        count = number
        built = _probe(record, template, token_length, context)
        if isinstance(built, str):
            skipped.setdefault(built, []).append(number)
            continue
        scores, target = built
        prompts = answer_prompts(record, template)
        first = short_answer(answer([prompts[target]])[0])
        generated += 1
        said[first] += 1
        if not answer_key(first):
            skipped.setdefault("unanswered", []).append(number)
            continue
        others = [
            short_answer(a) for a in answer([p for i, p in enumerate(prompts) if i != target])
        ]
        generated += len(others)
        said.update(others)
        candidates = _candidates([first, *others], distinct_first_words)
        if len(candidates) < 2:
            skipped.setdefault("agree", []).append(number)
            continue
        items.append(
            Item(
                item_id=f"retrieval:{number}",
                question=record.question or "",
                documents=tuple(d.text for d in record.documents),
                answer=candidates[0],
                candidates=tuple(candidates),
                scores=scores,
                gold=target,
                family=PROBE_FAMILY,
            )
        )
        if any(d.score is None for d in record.documents):
            unscored.append(number)
    return SelfAnswerProbes(
        items,
        count,
        skipped,
        unscored,
        seed,
        context,
        answers=generated,
        commonest=said.most_common(1)[0] if said else None,
    )


def _probe(
    record: RetrievalRecord,
    template: PromptTemplate,
    token_length: Callable[[str], int] | None,
    context: int | None,
) -> tuple[tuple[float, ...], int] | str:
    """The scores and the first document of a retrieval that may give a probe, or why it cannot
    (a key of :data:`SKIP_REASONS`), before any generation."""
    checked = ranked(record, unusable)
    if isinstance(checked, str):
        return checked
    texts, scores, target = checked
    if context is not None and token_length is not None:
        prompt = template.prompt(texts, record.question or "")
        if token_length(prompt_text(prompt)) + ANSWER_TOKENS > context:
            return "context"
    return scores, target


def unusable(record: RetrievalRecord) -> str | None:
    """Why ``record`` gives no self-answer probe whatever the model, a key of
    :data:`SKIP_REASONS` (``None``: it may give one): what a run checks before it loads a model.
    No question, else the shared checks (:func:`~bookend_rag_lab.items.probes.unusable`)."""
    if not (record.question or "").strip():
        return "question"
    return probes.unusable(record)


def _candidates(answers: Sequence[str], distinct_first_words: bool) -> list[str]:
    """The distinct non-empty answers, in order (normalised alike; with
    ``distinct_first_words``, their first words distinct too)."""
    kept: list[str] = []
    seen: set[str] = set()
    firsts: set[str] = set()
    for a in answers:
        key = answer_key(a)
        first = a.split()[0].casefold() if a.split() else ""
        if not key or key in seen or (distinct_first_words and first in firsts):
            continue
        kept.append(a)
        seen.add(key)
        firsts.add(first)
    return kept
