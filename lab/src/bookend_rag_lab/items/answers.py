"""When two answers are the same: SQuAD's answer normalisation, the one the metrics, the real-text
suites and the self-answer probes share."""

from __future__ import annotations

import re
import string

__all__ = ["answer_key", "normalize_answer"]

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str, *, articles: bool = True) -> str:
    """SQuAD's normalisation: lowercase, remove punctuation, remove the articles a/an/the (kept
    with ``articles=False``), collapse whitespace."""
    plain = text.lower().translate(_PUNCTUATION)
    return " ".join((_ARTICLES.sub(" ", plain) if articles else plain).split())


def answer_key(answer: str) -> str:
    """What makes two answers the same: :func:`normalize_answer`, keeping the articles where
    removing them would leave nothing (an answer "A", a blood type or an option letter)."""
    return normalize_answer(answer) or normalize_answer(answer, articles=False)
