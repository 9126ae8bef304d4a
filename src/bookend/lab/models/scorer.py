"""The scorer interface every model backend implements, and scoring many prompts through one.

A scorer answers one question: after ``prompt``, how likely is each continuation ``" " + c``?
:class:`Continuations` holds, per continuation, the total log-probability
``sum_t ln P(c_t | prompt, c_<t)`` and whether greedy decoding produces it (every token the most
likely one). The in-process model (:class:`~bookend.lab.models.local.LocalScorer`) is one backend;
another (an OpenAI-compatible server) implements the same members. Every backend answers
repeated requests from its call cache (:class:`~bookend.lab.models.cache.CallCache`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from bookend.lab.progress import progress_bar

__all__ = ["Continuations", "Scorer", "score_all"]


@dataclass(frozen=True)
class Continuations:
    """Per continuation: total log-probability and whether greedy decoding produces it."""

    logprob: tuple[float, ...]
    greedy: tuple[bool, ...]


class Scorer(Protocol):
    """What the experiments need from a model.

    Attributes:
        model_id: the id used in the call-cache key and the report.
        calls: model calls made (cache misses).
    """

    model_id: str
    calls: int

    def token_length(self, text: str) -> int:
        """Tokens of ``text`` under the model's tokenizer (no special tokens)."""
        ...

    def is_cached(self, prompt: str, continuations: Sequence[str]) -> bool:
        """Whether this request is answered without a model call."""
        ...

    def score(self, prompt: str, continuations: Sequence[str]) -> Continuations:
        """The scores of ``" " + c`` after ``prompt`` for every continuation ``c``."""
        ...


def score_all(
    scorer: Scorer,
    requests: Mapping[str, Sequence[str]],
    *,
    desc: str,
    progress: bool = True,
) -> dict[str, Continuations]:
    """Score every prompt of ``requests`` (prompt -> continuations) once.

    Cached prompts are answered first, so that the progress bar (on stderr) counts real calls
    and its ETA means something.
    """
    todo = [(p, c) for p, c in requests.items() if not scorer.is_cached(p, c)]
    out = {p: scorer.score(p, c) for p, c in requests.items() if scorer.is_cached(p, c)}
    with progress_bar(len(todo), desc, unit="call", enabled=progress) as bar:
        for prompt, continuations in todo:
            out[prompt] = scorer.score(prompt, continuations)
            bar.update()
    return out
