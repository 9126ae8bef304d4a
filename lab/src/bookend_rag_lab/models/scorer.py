"""The scorer interface every model backend implements, and scoring many prompts through one.

A scorer answers one question: after ``prompt``, how likely is each continuation ``c``?
:class:`Continuations` holds, per continuation, the total log-probability
``sum_t ln P(c_t | prompt, c_<t)`` and whether greedy decoding produces it (every token the most
likely one). A generation-only backend (a chat API without log-probabilities) cannot answer that
question; it answers with the text the model generates instead (:attr:`Continuations.generated`,
no log-probabilities), which the metrics match against the gold answer.

What a backend can do is its :class:`Capabilities` (:func:`capabilities`), and what it knows of
its model are its optional members (:class:`Scorer`): code that needs to know (which metrics exist,
whether a report carries served settings, the model's own theory spec, the weights to hash) asks
the scorer (:func:`capabilities`, :func:`own_spec`, :func:`weights_path`,
:func:`endpoint_settings`), never its class.

A prompt (:data:`Prompt`) is either text, which the answer continues after one space
(``prompt + " " + c``, the completion style; directly after text that ends in white space), or
a :class:`ChatPrompt`: chat messages that the model's own chat template renders, whose assistant
turn the answer opens (``c`` alone, no space).
:func:`answer_text` says which text follows a prompt.

The in-process model (:class:`~bookend_rag_lab.models.local.LocalScorer`) is one backend; another
(an OpenAI-compatible server) implements the same members. Every backend answers repeated
requests from its call cache (:class:`~bookend_rag_lab.models.cache.CallCache`); the registry of
backends by name is :mod:`~bookend_rag_lab.models.backends`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeAlias

import bookend_rag
from bookend_rag_lab.progress import progress_bar

__all__ = [
    "CHAT_GENERATION",
    "CHAT_LOGPROBS",
    "COMPLETION_LOGPROBS",
    "IN_PROCESS",
    "ROLES",
    "Capabilities",
    "ChatPrompt",
    "Continuations",
    "Prompt",
    "Scorer",
    "answer_text",
    "capabilities",
    "context_length",
    "endpoint_settings",
    "exact_tokens",
    "first_line",
    "generate",
    "own_spec",
    "prompt_key",
    "prompt_text",
    "score_all",
    "weights_path",
]

#: The roles a chat message may have.
ROLES = ("system", "user", "assistant")


@dataclass(frozen=True)
class Continuations:
    """Per continuation: total log-probability and whether greedy decoding produces it; or, from a
    generation-only backend, the generated text (``generated``) and no log-probabilities."""

    logprob: tuple[float, ...]
    greedy: tuple[bool, ...]
    generated: str | None = None


@dataclass(frozen=True)
class Capabilities:
    """What a scorer measures, for the code that must know (metrics, reports, refusals).

    Attributes:
        method: how it scores: ``"in-process"``, ``"next-token"`` (completions),
            ``"chat-first-token"``, ``"chat-continuation"`` or ``"generation"``.
        logprobs: it gives log-probabilities of continuations (every method but generation).
        full_continuation: they are of the whole continuation, not only its first token.
        text_prompts: it takes completion text prompts.
        chat_prompts: it takes :class:`ChatPrompt` prompts.
        served: a served model, with a ``settings()`` for the report's ``endpoint`` entry.
    """

    method: str
    logprobs: bool = True
    full_continuation: bool = True
    text_prompts: bool = True
    chat_prompts: bool = True
    served: bool = False

    @property
    def generation_only(self) -> bool:
        """The backend generates an answer and gives no log-probabilities."""
        return not self.logprobs


#: The in-process scorer's capabilities (and any scorer's that declares none).
IN_PROCESS = Capabilities("in-process")
#: The served backends' (their classes declare these, and the registry of backends describes them
#: by these without importing their transport): completion text scored by next-token
#: log-probabilities; chat prompts scored by their first tokens (a server that continues an
#: assistant prefix is found at the probe to score whole answers); chat answers generated.
COMPLETION_LOGPROBS = Capabilities("next-token", chat_prompts=False, served=True)
CHAT_LOGPROBS = Capabilities(
    "chat-first-token", full_continuation=False, text_prompts=False, served=True
)
CHAT_GENERATION = Capabilities(
    "generation", logprobs=False, full_continuation=False, text_prompts=False, served=True
)


def capabilities(scorer: object) -> Capabilities:
    """The scorer's :class:`Capabilities` (its ``capabilities`` attribute; :data:`IN_PROCESS` for a
    scorer that declares none)."""
    found = getattr(scorer, "capabilities", None)
    return found if isinstance(found, Capabilities) else IN_PROCESS


def own_spec(scorer: object) -> bookend_rag.ModelSpec | None:
    """The theory spec of the scorer's model, read from its config (its optional ``spec``);
    ``None`` for a scorer that cannot read one (a served model): a run is then told ``theory``."""
    found = getattr(scorer, "spec", None)
    return found if isinstance(found, bookend_rag.ModelSpec) else None


def weights_path(scorer: object) -> Path | None:
    """The local weights the scorer runs (its optional ``weights``): what names a model bookend has
    measured, and what a tuned config's provenance hashes; ``None`` for a scorer without them."""
    found = getattr(scorer, "weights", None)
    return Path(found) if isinstance(found, (str, Path)) else None


def context_length(scorer: object) -> int | None:
    """The tokens the scorer's model reads at most, prompt and answer together (its optional
    ``context_length``); ``None`` where it is not known (a served model): nothing is checked
    against it then, and a server refuses an overlong prompt itself."""
    found = getattr(scorer, "context_length", None)
    return found if isinstance(found, int) and not isinstance(found, bool) else None


def exact_tokens(scorer: object) -> bool:
    """Whether the scorer's ``token_length`` is its model's own tokenizer: always in process; for
    a served model, when the server has a tokenize endpoint (its ``tokenizer``), without which
    tokens are estimated from characters."""
    return not capabilities(scorer).served or getattr(scorer, "tokenizer", None) is not None


def first_line(text: str) -> str:
    """``text`` up to the end of its first line that holds more than white space (the white space
    before it kept): what :func:`generate` returns of a generation."""
    start = len(text) - len(text.lstrip())
    end = text.find("\n", start)
    return text if end < 0 else text[:end]


def generate(scorer: object, prompt: Prompt, max_tokens: int) -> str:
    """The model's greedy answer after ``prompt``: at most ``max_tokens`` tokens, cut to its first
    line (:func:`first_line`; a backend may stop generating there), through the scorer's optional
    ``generate(prompt, max_tokens)`` member (every backend of bookend's has one: in process,
    completions and both chat routes), answered from its call cache when asked before.

    Raises:
        ValueError: for a scorer without ``generate``, or ``max_tokens < 1``.
    """
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be >= 1, got max_tokens={max_tokens!r}")
    found = getattr(scorer, "generate", None)
    if not callable(found):
        raise ValueError(
            f"{type(scorer).__name__} cannot generate an answer (it has no generate member), "
            "which self-answer probes need"
        )
    text: str = found(prompt, max_tokens)
    return text


def generate_all(scorer: object, prompts: Sequence[Prompt], max_tokens: int) -> list[str]:
    """:func:`generate` for each prompt, in order: through the scorer's optional
    ``generate_batch(prompts, max_tokens)`` member where it has one (the in-process model, which
    answers one batch of one-document prompts in about the time of one), else one by one.

    Raises:
        ValueError: as :func:`generate`.
    """
    batch = getattr(scorer, "generate_batch", None)
    if not callable(batch):
        return [generate(scorer, p, max_tokens) for p in prompts]
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be >= 1, got max_tokens={max_tokens!r}")
    texts: list[str] = batch(list(prompts), max_tokens)
    return texts


def endpoint_settings(scorer: object) -> dict[str, Any] | None:
    """A report's ``endpoint`` entry: how a served model was scored (its ``settings()``), ``None``
    for a scorer that is not served (its :class:`Capabilities`)."""
    settings = getattr(scorer, "settings", None)
    if not capabilities(scorer).served or not callable(settings):
        return None
    found: dict[str, Any] = settings()
    return found


@dataclass(frozen=True)
class ChatPrompt:
    """Chat messages whose assistant reply is scored: ``(role, content)`` pairs, the last one the
    user's turn. The model's chat template renders them (locally the tokenizer's
    ``apply_chat_template`` with the generation prompt; served, ``/v1/chat/completions``), and the
    answer opens the assistant turn.

    Raises:
        ValueError: for no messages, an unknown role, a non-string content, or a last message that
            is not the user's.
    """

    messages: tuple[tuple[str, str], ...]

    def __post_init__(self) -> None:
        if not self.messages:
            raise ValueError("a chat prompt needs at least one message, got messages=()")
        for role, content in self.messages:
            if role not in ROLES or not isinstance(content, str):
                raise ValueError(
                    f"each chat message must be (role, text) with a role in {ROLES}, got "
                    f"({role!r}, {type(content).__name__})"
                )
        if self.messages[-1][0] != "user":
            raise ValueError(
                f"the last chat message must be the user's (the answer opens the assistant "
                f"turn after it), got role={self.messages[-1][0]!r}"
            )

    def as_dicts(self) -> list[dict[str, str]]:
        """The messages as the OpenAI API and ``apply_chat_template`` take them."""
        return [{"role": role, "content": content} for role, content in self.messages]


#: What a scorer scores after: completion text, or chat messages.
Prompt: TypeAlias = str | ChatPrompt


def answer_text(prompt: Prompt, continuation: str) -> str:
    """The text that follows ``prompt`` when the model gives ``continuation``: ``" " + c`` after
    completion text (``"Answer:"`` then ``" Paris"``), ``c`` alone after text that ends in
    white space (a template that ends with a newline or a chat turn written out as text) and at
    the start of the assistant turn of a chat."""
    if isinstance(prompt, ChatPrompt) or prompt[-1:].isspace():
        return continuation
    return " " + continuation


def prompt_key(prompt: Prompt) -> Any:
    """The JSON form of a prompt in cache keys and reports: the text itself (so the keys of
    completion prompts never change), or ``{"chat": [[role, content], ...]}``."""
    if isinstance(prompt, ChatPrompt):
        return {"chat": [list(m) for m in prompt.messages]}
    return prompt


def prompt_text(prompt: Prompt) -> str:
    """One string for a prompt (the text, or its messages as JSON): what hashes and token
    estimates read."""
    return prompt if isinstance(prompt, str) else json.dumps(prompt_key(prompt), ensure_ascii=False)


class Scorer(Protocol):
    """What the experiments need from a model.

    A backend may also have, read through the functions named: ``capabilities``
    (:func:`capabilities`), ``spec``, its model's theory spec (:func:`own_spec`), ``weights``, the
    path of its local weights (:func:`weights_path`), ``context_length``, the tokens its model
    reads at most (:func:`context_length`), ``settings()``, a served model's report entry
    (:func:`endpoint_settings`), ``generate(prompt, max_tokens)``, its greedy answer
    (:func:`generate`), and ``close()``, which a run that built the scorer calls at its
    end (:func:`~bookend_rag_lab.models.backends.scorer_for`).

    Attributes:
        model_id: the id used in the call-cache key and the report.
        calls: model calls made (cache misses).
    """

    model_id: str
    calls: int

    def token_length(self, text: str) -> int:
        """Tokens of ``text`` under the model's tokenizer (no special tokens)."""
        ...

    def is_cached(self, prompt: Prompt, continuations: Sequence[str]) -> bool:
        """Whether this request is answered without a model call."""
        ...

    def score(self, prompt: Prompt, continuations: Sequence[str]) -> Continuations:
        """The scores of :func:`answer_text` ``(prompt, c)`` after ``prompt`` for every
        continuation ``c``."""
        ...


def score_all(
    scorer: Scorer,
    requests: Mapping[Prompt, Sequence[str]],
    *,
    desc: str,
    progress: bool = True,
) -> dict[Prompt, Continuations]:
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
