"""Scoring chat prompts through an OpenAI-compatible ``/v1/chat/completions``, and generating
answers where a chat API gives no log-probabilities.

Both scorers take a :class:`~bookend_rag_lab.models.scorer.ChatPrompt` only (completion text is
refused with one line: it goes to :class:`~bookend_rag_lab.models.endpoint.EndpointScorer`), and
share the transport, the model check and the cache of
:class:`~bookend_rag_lab.models.endpoint.ServedScorer`.

:class:`ChatEndpointScorer` (OpenAI, vLLM, upstream llama-server, llama-cpp-python, Ollama's
OpenAI API): every request has ``max_tokens=1``, ``temperature=0``, ``logprobs=true`` and
``top_logprobs=N`` (OpenAI allows N <= 20), and reads the first generated position's top
log-probabilities. Two methods, chosen at the probe and recorded in ``settings()["method"]``:

- ``"chat-continuation"``, on a server that continues an assistant prefix and has a tokenizer
  (upstream llama-server, whose chat route continues a last assistant message; vLLM, with
  ``continue_final_message=true, add_generation_prompt=false``): the whole answer is scored token
  by token, as :class:`~bookend_rag_lab.models.endpoint.EndpointScorer` does for completions,

      ln P(c | chat) = sum_t ln P(c_t | chat, assistant: c_<t),

  each context ``c_<t`` sent once as the assistant prefix, with ``c_1..c_n`` the server's tokens of
  ``c`` (the in-process scorer's: ``c`` tokenized alone, opening the assistant turn). The probe
  checks that the server really continues a prefix (the prompt grows by the prefix's tokens and
  nothing more) before choosing this method.
- ``"chat-first-token"``, on any other chat API (no tokenizer needed, so hosted APIs qualify): one
  request per prompt, and each candidate scored by its first token: the server's own first token
  of the candidate where it has a tokenize endpoint (llama-cpp-python), else the longest returned
  token text that is a prefix of the candidate (hosted APIs: a guess, since the candidate's real
  first token may be a longer one outside the top N). ``greedy`` then says whether that first
  token is the most likely one. Candidates whose first tokens coincide cannot be told apart this
  way and are refused with one line. The scores are first-token log-probabilities, not the whole
  answer's.

In both, a token outside the top N gets the smallest returned log-probability, an upper bound
(``beyond_top="bound"``, counted in ``bounded_tokens``), or raises (``"error"``).

:class:`GenerationScorer` (Anthropic, Gemini and others behind LiteLLM's OpenAI-compatible proxy;
any chat API): log-probabilities are not requested; the answer is generated
(``temperature=0``, ``max_tokens`` bounded) and returned as
:attr:`~bookend_rag_lab.models.scorer.Continuations.generated`, which the metrics match against the
gold answer (:mod:`bookend_rag_lab.metrics`: exact match and accuracy only).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any, Literal, Unpack

from bookend_rag_lab.models.endpoint import (
    EndpointError,
    ServedScorer,
    TopTokens,
    Transport,
    top_logprobs,
)
from bookend_rag_lab.models.scorer import (
    CHAT_GENERATION,
    CHAT_LOGPROBS,
    ChatPrompt,
    Continuations,
)

__all__ = [
    "CHAT_CONTINUATION",
    "CHAT_FIRST_TOKEN",
    "GENERATION",
    "ChatEndpointScorer",
    "GenerationScorer",
    "first_token",
]

CHAT_FIRST_TOKEN = CHAT_LOGPROBS.method
CHAT_CONTINUATION = "chat-continuation"
GENERATION = CHAT_GENERATION.method
_PROBE = ChatPrompt((("user", "What is the capital of France?"),))
_PREFIX = "The capital of France is"


def first_token(candidate: str, top: dict[str, float]) -> str | None:
    """The candidate's first token among the returned ``top`` tokens: the longest non-empty token
    text that is a prefix of ``candidate`` (``None`` when none is)."""
    found = [token for token in top if token and candidate.startswith(token)]
    return max(found, key=len) if found else None


class _ChatRoute(ServedScorer):
    """What both chat scorers share: the chat request, the greedy answer (``generate``) and the
    refusal of a server without the chat route."""

    def _chat(self, prompt: ChatPrompt, prefix: str = "", **fields: Any) -> dict[str, Any]:
        messages = prompt.as_dicts()
        if prefix:
            messages.append({"role": "assistant", "content": prefix})
        return {"model": self.served_model, "messages": messages, "temperature": 0.0, **fields}

    async def _post_chat(self, body: dict[str, Any]) -> Any:
        url = self.base_url + "/chat/completions"
        try:
            answer = await self._send("POST", url, body)
        except EndpointError as exc:
            if exc.status in (404, 405):
                raise ValueError(
                    f"{self.base_url} has no /v1/chat/completions: score completion text "
                    "through /v1/completions instead (without --chat)"
                ) from None
            raise
        self.requests += 1
        return answer

    async def _generate(self, prompt: ChatPrompt, max_tokens: int) -> str:
        answer = await self._post_chat(self._chat(prompt, max_tokens=max_tokens))
        try:
            content = answer["choices"][0]["message"].get("content")
        except (KeyError, IndexError, TypeError, AttributeError):
            raise ValueError(
                f"{self.base_url}/chat/completions answered without choices[0].message"
            ) from None
        return content if isinstance(content, str) else ""


class ChatEndpointScorer(_ChatRoute, TopTokens):
    """Scores chat prompts by ``/v1/chat/completions`` log-probabilities (the module docstring).

    Args:
        base_url, served_model, cache, api_key_env, concurrency, timeout, retries, backoff: the
            transport (:class:`~bookend_rag_lab.models.endpoint.ServedScorer`).
        top_logprobs: next tokens asked per request (OpenAI allows at most 20).
        beyond_top: what a token outside the top ``top_logprobs`` gets: ``"bound"`` or
            ``"error"``.
        prefill: ``None`` (default) scores whole continuations where the server continues an
            assistant prefix; ``False`` scores first tokens only on every server.

    Attributes:
        method: ``"chat-continuation"`` or ``"chat-first-token"`` (chosen at the probe).
        requests: chat requests sent.
        scored_tokens: answer tokens scored; bounded_tokens: of those, scored by the bound.

    Raises:
        ValueError: for bad settings, a model the server does not list, a server without the chat
            route or without log-probabilities in its answers.
        EndpointError: when the server does not answer the probe.
    """

    capabilities = CHAT_LOGPROBS

    def __init__(
        self,
        base_url: str,
        served_model: str,
        *,
        top_logprobs: int = 20,
        beyond_top: Literal["bound", "error"] = "bound",
        prefill: bool | None = None,
        **transport: Unpack[Transport],
    ) -> None:
        self._top_settings(top_logprobs, beyond_top)
        super().__init__(base_url, served_model, **transport)
        self.prefill = prefill
        self._start()
        # Chat prompts only; whole continuations with chat-continuation. The method is part of
        # the cache key: first-token scores never answer a continuation request.
        self.capabilities = replace(
            CHAT_LOGPROBS, method=self.method, full_continuation=self.method == CHAT_CONTINUATION
        )
        self._key_suffix = "|" + self.method

    def settings(self) -> dict[str, Any]:
        """How this scorer measured, for a report (the counts are this object's calls)."""
        first = None
        if self.method == CHAT_FIRST_TOKEN:
            first = "server tokenizer" if self._tok is not None else "longest returned prefix"
        return {**super().settings(), "first_token": first, **self._top_report()}

    async def _top(self, prompt: ChatPrompt, prefix: str = "") -> tuple[dict[str, float], Any]:
        """The top next tokens after the chat (and the assistant ``prefix``), and the answer."""
        fields: dict[str, Any] = {
            "max_tokens": 1,
            "logprobs": True,
            "top_logprobs": self.top_logprobs,
        }
        if prefix and self._tok is not None and self._tok.prefill == "continue_final_message":
            fields |= {"continue_final_message": True, "add_generation_prompt": False}
        answer = await self._post_chat(self._chat(prompt, prefix, **fields))
        top = top_logprobs(answer)
        if not top:
            raise ValueError(
                f"{self.base_url}/chat/completions returned no log-probabilities (logprobs=true, "
                f"top_logprobs={self.top_logprobs} was asked): score by generated answers "
                "instead (--no-logprobs: exact match and accuracy only)"
            )
        return top, answer

    async def _probe(self) -> None:
        """Check the model and the log-probabilities; choose the method."""
        await self._check_model()
        try:
            _, plain = await self._top(_PROBE)
        except EndpointError as exc:
            if exc.status == 400:
                raise ValueError(
                    f"{exc}; a server may cap the log-probabilities it returns (OpenAI at 20, "
                    f"vLLM at its --max-logprobs): lower top_logprobs={self.top_logprobs} "
                    "(--top-logprobs)"
                ) from None
            raise
        tok = await self._find_tokenizer()
        if self.prefill is False or tok is None or tok.prefill is None:
            return
        # The server continues a prefix when the prompt grows by the prefix's tokens alone (a
        # server that closes the assistant turn adds the template's end and start tokens too).
        _, prefilled = await self._top(_PROBE, _PREFIX)
        grown = _used(prefilled) - _used(plain)
        if grown == len(await self._tokenize(_PREFIX)) - self._special:
            self.method = CHAT_CONTINUATION

    async def _score(self, prompt: ChatPrompt, continuations: list[str]) -> Continuations:
        if self.method == CHAT_CONTINUATION:
            return await self._score_continuations(prompt, continuations)
        top, _ = await self._top(prompt)
        best = max(top, key=top.__getitem__)
        firsts = await self._first_tokens(continuations, top)
        seen: dict[str, str] = {}
        for candidate, token in zip(continuations, firsts, strict=True):
            if token is not None and seen.setdefault(token, candidate) != candidate:
                raise ValueError(
                    f"candidates {seen[token]!r} and {candidate!r} share their first token "
                    f"{token!r}: first-token log-probabilities cannot tell them apart, and this "
                    "server does not continue an assistant prefix (llama-server and vLLM do)"
                )
        logprob: list[float] = []
        greedy: list[bool] = []
        for candidate, token in zip(continuations, firsts, strict=True):
            if token is not None and token in top:
                logprob.append(top[token])
                greedy.append(token == best)
            else:
                logprob.append(self._bound(candidate, top))
                greedy.append(False)
            self.scored_tokens += 1
        return Continuations(tuple(logprob), tuple(greedy))

    async def _first_tokens(
        self, continuations: list[str], top: dict[str, float]
    ) -> list[str | None]:
        """Each candidate's first token: the server's own (its text) when it has a tokenizer,
        else the longest returned token text that is a prefix of it (:func:`first_token`)."""
        if self._tok is None:
            return [first_token(c, top) for c in continuations]
        tokens = await asyncio.gather(*(self._tokenize(c) for c in continuations))
        firsts = [ids[self._special : self._special + 1] for ids in tokens]
        if any(not ids for ids in firsts):
            raise ValueError(f"a continuation encodes to no tokens: {continuations!r}")
        return list(await asyncio.gather(*(self._token_text(ids[0]) for ids in firsts)))

    async def _score_continuations(
        self, prompt: ChatPrompt, continuations: list[str]
    ) -> Continuations:
        tokens = [
            ids[self._special :]
            for ids in await asyncio.gather(*(self._tokenize(c) for c in continuations))
        ]
        if any(not ids for ids in tokens):
            raise ValueError(f"a continuation encodes to no tokens: {continuations!r}")
        spellings = await self._spelled(tokens, continuations)
        contexts: dict[tuple[int, ...], str] = {}
        for ids, spelling in zip(tokens, spellings, strict=True):
            for t in range(len(ids)):
                contexts.setdefault(tuple(ids[:t]), "".join(spelling[:t]))
        # The bare chat first: its prompt length is what every prefix's is checked against.
        base_top, base = await self._top(prompt)
        rest = [key for key in contexts if key]
        answers = await asyncio.gather(*(self._top(prompt, contexts[key]) for key in rest))
        tops: dict[tuple[int, ...], dict[str, float]] = {(): base_top}
        for key, (top, answer) in zip(rest, answers, strict=True):
            grown = _used(answer) - _used(base)
            if _used(answer) and _used(base) and grown != len(key):
                raise ValueError(
                    f"the server read the assistant prefix {contexts[key]!r} as {grown} tokens, "
                    f"not its {len(key)}: it does not continue the prefix as it stands"
                )
            tops[key] = top
        return self._walks(continuations, tokens, spellings, tops)


class GenerationScorer(_ChatRoute):
    """Generates each chat prompt's answer (no log-probabilities asked), for APIs without them
    (the module docstring).

    ``score(prompt, continuations)`` returns ``Continuations((), (), generated=text)``: the
    continuations are not scored (they are part of the cache key only); the metrics match the
    generated text against the gold one.

    Args:
        base_url, served_model, cache, api_key_env, concurrency, timeout, retries, backoff: the
            transport (:class:`~bookend_rag_lab.models.endpoint.ServedScorer`).
        max_tokens: the longest answer generated, in tokens.

    Raises:
        ValueError: for bad settings, a model the server does not list, or a server without the
            chat route.
        EndpointError: when the server does not answer the probe.
    """

    capabilities = CHAT_GENERATION

    def __init__(
        self,
        base_url: str,
        served_model: str,
        *,
        max_tokens: int = 32,
        **transport: Unpack[Transport],
    ) -> None:
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got max_tokens={max_tokens!r}")
        super().__init__(base_url, served_model, **transport)
        self.max_tokens = max_tokens
        self._key_suffix = f"|{GENERATION}:max_tokens={max_tokens}"
        self._start()

    def settings(self) -> dict[str, Any]:
        """How this scorer measured, for a report: accuracy only (no log-probabilities)."""
        return {**super().settings(), "max_tokens": self.max_tokens, "logprobs": False}

    async def _probe(self) -> None:
        await self._check_model()
        await self._generate(_PROBE, 1)
        await self._find_tokenizer()

    async def _score(self, prompt: ChatPrompt, continuations: list[str]) -> Continuations:
        return Continuations((), (), await self._generate(prompt, self.max_tokens))


def _used(answer: Any) -> int:
    usage = answer.get("usage") if isinstance(answer, dict) else None
    used = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    return used if isinstance(used, int) else 0
