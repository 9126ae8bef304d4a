"""Scoring continuations through an OpenAI-compatible server (vLLM, llama.cpp's servers, ...).

The score is the in-process scorer's (:mod:`bookend_rag_lab.models.local`): for each continuation
``c`` of ``prompt``, the total log-probability of ``" " + c`` and whether greedy decoding produces
it,

    ln P(c | prompt) = sum_{t=1..n} ln P(c_t | prompt, c_<t),   greedy = AND_t [c_t = argmax],

with ``c_1 .. c_n`` the served model's own tokens of ``" " + c`` after the prompt's.

Method (``EndpointScorer.method == "next-token"``): every context ``prompt + c_<t`` is sent once
to ``/v1/completions`` with ``max_tokens=1`` and ``logprobs=N``; the first generated position's
top log-probabilities are the N most likely next tokens after the context (keyed by their text),
which give ``ln P(c_t | prompt, c_<t)`` and the argmax. Two answer formats are read: the legacy
``logprobs.top_logprobs[0]`` dict (llama-cpp-python, vLLM) and the chat-style
``logprobs.content[0].top_logprobs`` list of ``{token, logprob}`` (upstream ``llama-server``'s
``/v1/completions``). Contexts that several continuations share (the prompt itself, common first
tokens) are asked once, and servers that reuse a cached prompt prefix (llama.cpp's do) evaluate
only the tokens that are new. The prompt log-probabilities of ``echo=true`` would need one request
per continuation, but llama-cpp-python's are shifted by one position (its issue 1983) and upstream
``llama-server`` returns none, so they are not used.

A token outside the top N has an unknown log-probability, at most the smallest one returned:
``beyond_top="bound"`` (the default) counts that upper bound in (so the continuation's total is an
upper bound, and greedy is false) and counts the token in ``bounded_tokens``, which the reports
carry; ``beyond_top="error"`` raises instead.

Tokens come from the server's tokenizer (:data:`TOKENIZERS`): llama-cpp-python's
``/extras/tokenize``, vLLM's ``/tokenize`` (``{"prompt": ...}``, from its documentation) or
upstream ``llama-server``'s ``/tokenize`` (``{"content": ...}``), each with its detokenize
endpoint. A tokenize endpoint counts only when it answers the probe text with a non-empty list of
token ids: a server that ignores a field it does not know and tokenizes nothing is not mistaken for
a tokenizer. The continuation's tokens are what follows the prompt's tokens in the tokenization of
``prompt + " " + c``; each token's text is the server's detokenization of that token alone, the
text that keys the top log-probabilities. Every request's ``usage.prompt_tokens`` is checked
against the context's token count, so a context the server splits differently fails loudly instead
of scoring another sequence.

The server is probed once, at construction: the served model must be listed by ``/v1/models``
(llama-cpp-python answers a request for a model it does not serve with its default model, so the
name is checked here), a tokenize endpoint must answer, and a completion must return next-token
log-probabilities. A server without them (a chat-only API, a server without a tokenizer endpoint,
such as Ollama's) is refused with one line: the chat scorers of :mod:`bookend_rag_lab.models.chat`
serve those. This scorer takes completion text only; a chat prompt
(:class:`~bookend_rag_lab.models.scorer.ChatPrompt`) is refused with one line.

Transport (:class:`ServedScorer`, shared by every served scorer): httpx on one asyncio loop, at
most ``concurrency`` requests in flight; every request has a ``timeout``; timeouts, connection
errors, 429 and 5xx are retried ``retries`` times with exponential backoff
(``backoff * 2**attempt`` seconds), then raise :class:`EndpointError`; any other 4xx raises at
once. The API key is read from the environment variable ``api_key_env`` only.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypedDict, Unpack

import httpx

from bookend_rag_lab.models.cache import CallCache, call_key, generation_key
from bookend_rag_lab.models.scorer import (
    COMPLETION_LOGPROBS,
    Capabilities,
    ChatPrompt,
    Continuations,
    Prompt,
    answer_text,
    first_line,
)

if TYPE_CHECKING:
    from typing import Self

__all__ = [
    "BEYOND_TOP",
    "TOKENIZERS",
    "EndpointError",
    "EndpointScorer",
    "ServedScorer",
    "TopTokens",
    "top_logprobs",
]

BEYOND_TOP = ("bound", "error")
METHOD = COMPLETION_LOGPROBS.method
_PROBE_TEXT = "The capital of France is"


class EndpointError(ValueError):
    """The server failed or refused a request (after the retries, where they apply).

    A ``ValueError`` so that the command line ends with its one line, like a bad argument.

    Attributes:
        status: the HTTP status of the last answer (``None`` when there was none).
    """

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class _Tokenizer:
    """One server's tokenize and detokenize endpoints: where they are, how their requests are
    spelled, and how that server continues an assistant prefix in a chat (``prefill``)."""

    name: str
    path: str
    text_field: str
    detokenize_path: str
    detokenize_field: str
    extra: tuple[tuple[str, Any], ...] = ()
    #: ``"last-assistant"``: a last assistant message is continued as it stands (llama-server);
    #: ``"continue_final_message"``: it is, with vLLM's two chat-template switches; ``None``: the
    #: server closes the assistant turn (llama-cpp-python), so no prefix can be continued.
    prefill: str | None = None

    def body(self, text: str, model: str) -> dict[str, Any]:
        return {"model": model, self.text_field: text, **dict(self.extra)}


#: Tokenize endpoints tried in turn at the probe; paths are relative to the server root (the
#: base URL without ``/v1``). llama-cpp-python adds the model's BOS token when it adds one to
#: prompts too; vLLM and llama-server are asked for the text's tokens alone.
TOKENIZERS = (
    _Tokenizer(
        "llama-cpp-python /extras/tokenize", "/extras/tokenize", "input", "/extras/detokenize",
        "text",
    ),
    _Tokenizer(
        "vLLM /tokenize", "/tokenize", "prompt", "/detokenize", "prompt",
        (("add_special_tokens", False),), "continue_final_message",
    ),
    _Tokenizer(
        "llama-server /tokenize", "/tokenize", "content", "/detokenize", "content",
        (("add_special", False),), "last-assistant",
    ),
)  # fmt: skip


class Transport(TypedDict, total=False):
    """How a served scorer reaches its server: :class:`ServedScorer`'s keyword settings, which
    every served backend takes as they are (its Args give their meaning and defaults)."""

    cache: CallCache | None
    api_key_env: str
    concurrency: int
    timeout: float
    retries: int
    backoff: float


class ServedScorer:
    """What every served scorer shares: settings, the HTTP transport, the probe of the model list
    and of a tokenizer, the call cache and the one-line refusal of a prompt it does not take.

    A subclass sets :attr:`capabilities` (or a property), implements ``_probe`` (awaited once at
    construction) and ``_score`` (one uncached call), and may add a ``_key_suffix`` that separates
    its cache keys from another method's on the same model.

    Args:
        base_url: the API's base URL, such as ``http://127.0.0.1:8000/v1`` (``/v1`` is added when
            missing).
        served_model: the model name the server serves (listed by ``/v1/models``).
        cache: the call cache (default: in memory only).
        api_key_env: environment variable holding the API key, sent as a bearer token when set.
        concurrency: requests in flight at once.
        timeout: seconds each request may take (connect, send, each read).
        retries: further attempts after a timeout, connection error, 429 or 5xx.
        backoff: seconds before the first retry; doubled for each further one.

    Attributes:
        model_id: ``base_url/served_model``, the report's model (whose last part names the model
            in calibrated profiles' labels).
        method: how it scores: its capabilities' method (a chat scorer's probe may change it).
        calls: model calls made (cache misses): prompts scored.
        requests: HTTP requests sent to the model's completion routes.
    """

    capabilities: Capabilities = Capabilities(METHOD, served=True)
    _key_suffix = ""

    def __init__(
        self,
        base_url: str,
        served_model: str,
        *,
        cache: CallCache | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        concurrency: int = 4,
        timeout: float = 120.0,
        retries: int = 3,
        backoff: float = 0.5,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {base_url!r}")
        if not served_model:
            raise ValueError("served_model must name the served model, got ''")
        for name, value, low in (("concurrency", concurrency, 1), ("retries", retries, 0)):
            if value < low:
                raise ValueError(f"{name} must be >= {low}, got {name}={value!r}")
        if not timeout > 0 or not backoff >= 0:
            raise ValueError(
                f"timeout must be > 0 and backoff >= 0, got timeout={timeout!r}, "
                f"backoff={backoff!r}"
            )
        base = base_url.rstrip("/")
        self.base_url = base if base.endswith("/v1") else base + "/v1"
        self.root = self.base_url[: -len("/v1")]
        self.served_model = served_model
        self.model_id = f"{self.base_url}/{served_model}"
        self.method = self.capabilities.method
        self.cache = cache if cache is not None else CallCache()
        self.api_key_env = api_key_env
        self.concurrency = concurrency
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.calls = 0
        self.requests = 0
        self._lengths: dict[str, int] = {}
        self._texts: dict[int, str] = {}
        self._loop = asyncio.new_event_loop()
        key = os.environ.get(api_key_env)
        self._client = httpx.AsyncClient(
            timeout=httpx.Timeout(timeout),
            headers={"Authorization": f"Bearer {key}"} if key else {},
            limits=httpx.Limits(max_connections=concurrency),
        )
        self._slots: asyncio.Semaphore | None = None
        # Set by the probe: the tokenize endpoint (None: the server has none) and the special
        # tokens it adds to any text.
        self._tok: _Tokenizer | None = None
        self._special = 0

    def _start(self) -> None:
        """Probe the server (a subclass's ``__init__`` calls this last); closes on failure."""
        try:
            self._run(self._probe())
        except BaseException:
            self.close()
            raise

    @property
    def tokenizer(self) -> str | None:
        """Which tokenize endpoint counts tokens (``None``: the server has none)."""
        return None if self._tok is None else self._tok.name

    def token_length(self, text: str) -> int:
        """Tokens of ``text`` under the served model's tokenizer (no special tokens); without a
        tokenize endpoint, :func:`bookend_rag.tokens.approx_token_count` (``ceil(chars / 4)``)."""
        found = self._lengths.get(text)
        if found is None:
            if self._tok is None:
                from bookend_rag.tokens import approx_token_count

                found = approx_token_count(text)
            else:
                found = len(self._run(self._tokenize(text))) - self._special
            self._lengths[text] = found
        return found

    def is_cached(self, prompt: Prompt, continuations: Sequence[str]) -> bool:
        """Whether this request is answered without a model call."""
        return self.cache.get(self._key(prompt, continuations)) is not None

    def score(self, prompt: Prompt, continuations: Sequence[str]) -> Continuations:
        """The scores of the continuations after ``prompt`` (cached).

        Raises:
            ValueError: for a prompt of a kind this scorer does not take, or when the
                continuations cannot be scored (see the subclass).
            EndpointError: when the server fails after the retries.
        """
        self._accept(prompt)
        key = self._key(prompt, continuations)
        found = self.cache.get(key)
        if found is None:
            found = self._run(self._score(prompt, list(continuations)))
            self.calls += 1
            self.cache.put(key, found)
        return found

    def generate(self, prompt: Prompt, max_tokens: int) -> str:
        """The served model's greedy answer after ``prompt`` (``temperature=0``), at most
        ``max_tokens`` tokens, cut to its first line
        (:func:`~bookend_rag_lab.models.scorer.first_line`; cached).

        Raises:
            ValueError: for a prompt of a kind this scorer does not take.
            EndpointError: when the server fails after the retries.
        """
        self._accept(prompt)
        key = generation_key(self.model_id, prompt, max_tokens)
        found = self.cache.get(key)
        if found is None:
            text = first_line(self._run(self._generate(prompt, max_tokens)))
            found = Continuations((), (), text)
            self.calls += 1
            self.cache.put(key, found)
        return found.generated or ""

    def settings(self) -> dict[str, Any]:
        """How this scorer measured, for a report (the counts are this object's calls)."""
        return {
            "endpoint": self.base_url,
            "served_model": self.served_model,
            "method": self.capabilities.method,
            "tokenizer": self.tokenizer,
            "concurrency": self.concurrency,
            "completion_requests": self.requests,
        }

    def close(self) -> None:
        """Close the connections and the event loop (the scorer cannot be used afterwards)."""
        if not self._loop.is_closed():
            self._loop.run_until_complete(self._client.aclose())
            self._loop.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _key(self, prompt: Prompt, continuations: Sequence[str]) -> str:
        return call_key(self.model_id + self._key_suffix, prompt, continuations)

    def _accept(self, prompt: Prompt) -> None:
        """Refuse, in one line, a prompt of a kind this scorer does not take."""
        caps = self.capabilities
        if isinstance(prompt, ChatPrompt) and not caps.chat_prompts:
            raise ValueError(
                f"{type(self).__name__} scores completion text through /v1/completions, got a "
                "chat prompt: score chat messages through /v1/chat/completions (--chat)"
            )
        if isinstance(prompt, str) and not caps.text_prompts:
            raise ValueError(
                f"{type(self).__name__} scores chat prompts through /v1/chat/completions, got "
                "completion text: give chat messages, or score text without --chat"
            )

    def _run(self, job: Any) -> Any:
        return self._loop.run_until_complete(job)

    async def _probe(self) -> None:  # pragma: no cover - every subclass has its own
        raise NotImplementedError

    async def _score(self, prompt: Any, continuations: list[str]) -> Continuations:
        raise NotImplementedError  # pragma: no cover

    async def _generate(self, prompt: Any, max_tokens: int) -> str:
        raise NotImplementedError  # pragma: no cover

    async def _send(self, method: str, url: str, body: dict[str, Any] | None = None) -> Any:
        """One request, retried on timeouts, connection errors, 429 and 5xx; the JSON answer."""
        if self._slots is None:  # made on the loop that uses it
            self._slots = asyncio.Semaphore(self.concurrency)
        last, status = "", None
        for attempt in range(self.retries + 1):
            if attempt:
                await asyncio.sleep(self.backoff * 2 ** (attempt - 1))
            try:
                async with self._slots:
                    answer = await self._client.request(method, url, json=body)
            except httpx.TimeoutException:
                last, status = f"no answer within timeout={self.timeout} s", None
                continue
            except httpx.TransportError as exc:
                last, status = f"{type(exc).__name__}: {exc}", None
                continue
            status = answer.status_code
            if status == 429 or status >= 500:
                last = f"HTTP {status}: {_detail(answer)}"
                continue
            if status >= 400:
                raise EndpointError(
                    f"{method} {url} was refused: HTTP {status}: {_detail(answer)}", status
                )
            try:
                return answer.json()
            except ValueError:
                raise EndpointError(f"{method} {url} answered with no JSON", status) from None
        raise EndpointError(
            f"{method} {url} failed after {self.retries + 1} attempts: {last}", status
        )

    async def _check_model(self) -> None:
        """Refuse a model that ``/v1/models`` does not list."""
        listed = await self._send("GET", self.base_url + "/models")
        rows = listed.get("data") if isinstance(listed, dict) else None
        served = [m.get("id") for m in rows or [] if isinstance(m, dict)]
        if self.served_model not in served:
            raise ValueError(
                f"served_model={self.served_model!r} is not served at {self.base_url} (it "
                f"serves {served}); llama-cpp-python would answer with its default model instead"
            )

    async def _find_tokenizer(self) -> _Tokenizer | None:
        """The first of :data:`TOKENIZERS` that tokenizes the probe text into a non-empty list."""
        for tok in TOKENIZERS:
            try:
                answer = await self._send(
                    "POST", self.root + tok.path, tok.body(_PROBE_TEXT, self.served_model)
                )
                if _token_ids(answer, tok.path):
                    self._tok = tok
                    self._special = len(await self._tokenize(""))
                    return tok
            except ValueError:  # refused (an EndpointError: 404 on other servers) or malformed
                continue
        return None

    async def _tokenize(self, text: str) -> list[int]:
        assert self._tok is not None
        url = self.root + self._tok.path
        return _token_ids(
            await self._send("POST", url, self._tok.body(text, self.served_model)), url
        )

    async def _token_text(self, token: int) -> str:
        """The text of one token as the server writes it in its top log-probabilities."""
        found = self._texts.get(token)
        if found is None:
            assert self._tok is not None
            answer = await self._send(
                "POST",
                self.root + self._tok.detokenize_path,
                {"model": self.served_model, "tokens": [token]},
            )
            found = answer.get(self._tok.detokenize_field) if isinstance(answer, dict) else None
            if not isinstance(found, str) or not found:
                raise ValueError(
                    f"token {token} has no text of its own (part of a multi-byte character?): "
                    "its log-probability cannot be read from the top log-probabilities"
                )
            self._texts[token] = found
        return found

    async def _spelled(
        self, tokens: Sequence[Sequence[int]], texts: Sequence[str]
    ) -> list[list[str]]:
        """Each token sequence's pieces, checked to spell its text back."""
        distinct = sorted({t for ids in tokens for t in ids})
        pieces = dict(
            zip(distinct, await asyncio.gather(*map(self._token_text, distinct)), strict=True)
        )
        out = []
        for text, ids in zip(texts, tokens, strict=True):
            spelling = [pieces[t] for t in ids]
            if "".join(spelling) != text:
                raise ValueError(
                    f"the tokens of {text!r} do not spell it back ({spelling!r}): their "
                    "log-probabilities cannot be read from the top log-probabilities"
                )
            out.append(spelling)
        return out


class TopTokens:
    """Reading continuations from next-token top log-probabilities, for the scorers that do
    (completions and chat): the settings, the bound for a token beyond the top, and the counts.

    Attributes:
        top_logprobs: next tokens asked per context.
        beyond_top: ``"bound"`` or ``"error"`` (the module docstring).
        scored_tokens: continuation tokens scored by this object's calls.
        bounded_tokens: of those, tokens outside the top ``top_logprobs`` (scored by the bound).
    """

    def _top_settings(self, top_logprobs: int, beyond_top: str) -> None:
        if top_logprobs < 1:
            raise ValueError(f"top_logprobs must be >= 1, got top_logprobs={top_logprobs!r}")
        if beyond_top not in BEYOND_TOP:
            raise ValueError(f"beyond_top must be one of {BEYOND_TOP}, got {beyond_top!r}")
        self.top_logprobs = top_logprobs
        self.beyond_top = beyond_top
        self.scored_tokens = 0
        self.bounded_tokens = 0

    def _top_report(self) -> dict[str, Any]:
        return {
            "top_logprobs": self.top_logprobs,
            "beyond_top": self.beyond_top,
            "scored_tokens": self.scored_tokens,
            "bounded_tokens": self.bounded_tokens,
        }

    def _bound(self, text: str, top: dict[str, float]) -> float:
        """The log-probability bound of a token of ``text`` outside ``top`` (or raise)."""
        if self.beyond_top == "error":
            raise ValueError(
                f"a token of {text!r} is not among the top_logprobs={self.top_logprobs} next "
                "tokens: its log-probability is unknown (ask for more, or beyond_top='bound')"
            )
        self.bounded_tokens += 1
        return min(top.values())

    def _walk(
        self, text: str, steps: Sequence[dict[str, float]], pieces: Sequence[str]
    ) -> tuple[float, bool]:
        """The total log-probability of ``pieces`` read from each step's top tokens, and whether
        each is the most likely one; a piece beyond the top gets the bound (or raises)."""
        total, best = 0.0, True
        for top, piece in zip(steps, pieces, strict=True):
            if piece in top:
                total += top[piece]
                best = best and max(top, key=top.__getitem__) == piece
            else:
                total += self._bound(text, top)
                best = False
        self.scored_tokens += len(pieces)
        return total, best

    def _walks(
        self,
        texts: Sequence[str],
        tokens: Sequence[Sequence[int]],
        spellings: Sequence[Sequence[str]],
        tops: Mapping[tuple[int, ...], dict[str, float]],
    ) -> Continuations:
        """The scores of continuations (their ``texts``, token ids and the ids' spellings) from
        the top tokens after each of their prefixes of ids (``tops``, keyed by the prefix)."""
        logprob: list[float] = []
        greedy: list[bool] = []
        for text, ids, spelling in zip(texts, tokens, spellings, strict=True):
            steps = [tops[tuple(ids[:t])] for t in range(len(ids))]
            total, best = self._walk(text, steps, spelling)
            logprob.append(total)
            greedy.append(best)
        return Continuations(tuple(logprob), tuple(greedy))


class EndpointScorer(ServedScorer, TopTokens):
    """Scores completion-text prompts with a model served over an OpenAI-compatible
    ``/v1/completions``, through a cache (the module docstring).

    Args:
        base_url, served_model, cache, api_key_env, concurrency, timeout, retries, backoff: the
            transport (:class:`ServedScorer`).
        top_logprobs: next tokens asked per context. The more, the fewer tokens are left to the
            bound; vLLM refuses more than its ``--max-logprobs`` (20 unless started with more).
        beyond_top: what a token outside the top ``top_logprobs`` gets (see the module docstring).

    Attributes:
        method: how the log-probabilities are obtained (``"next-token"``).
        tokenizer: which tokenize endpoint counts tokens.
        requests: completion requests sent (each scores one context).
        scored_tokens: continuation tokens scored by this object's calls.
        bounded_tokens: of those, tokens outside the top ``top_logprobs`` (scored by the bound).

    Raises:
        ValueError: for bad settings, a model the server does not list, or a server without a
            tokenize endpoint or next-token log-probabilities.
        EndpointError: when the server does not answer the probe.
    """

    capabilities = COMPLETION_LOGPROBS

    def __init__(
        self,
        base_url: str,
        served_model: str,
        *,
        top_logprobs: int = 1000,
        beyond_top: Literal["bound", "error"] = "bound",
        **transport: Unpack[Transport],
    ) -> None:
        self._top_settings(top_logprobs, beyond_top)
        super().__init__(base_url, served_model, **transport)
        # Set by the probe: how many more tokens the completion endpoint counts in a prompt than
        # the tokenize endpoint does.
        self._offset = 0
        self._start()

    def settings(self) -> dict[str, Any]:
        """How this scorer measured, for a report (the counts are this object's calls)."""
        return {**super().settings(), **self._top_report()}

    async def _next_tokens(self, text: str, n_tokens: int) -> dict[str, float]:
        """The top next tokens after ``text`` (which the server must split into ``n_tokens``)."""
        url = self.base_url + "/completions"
        answer = await self._send("POST", url, self._completion(text))
        self.requests += 1
        top = self._top(answer, url)
        used = _prompt_tokens(answer)
        if used is not None and used != n_tokens + self._offset:
            raise ValueError(
                f"the server split a scoring context into {used - self._offset} tokens, not the "
                f"{n_tokens} of its tokenization (context ends {text[-40:]!r})"
            )
        return top

    def _top(self, answer: Any, url: str) -> dict[str, float]:
        """The first generated position's top log-probabilities of a completions answer."""
        top = top_logprobs(answer)
        if not top:
            raise ValueError(
                f"{url} returned no next-token log-probabilities (logprobs="
                f"{self.top_logprobs} was asked): bookend's metrics need them (with "
                "llama-cpp-python, start the server with --logits_all true; it also returns "
                "none where the most likely next token ends the text: serve with llama-server)"
            )
        return top

    async def _generate(self, prompt: str, max_tokens: int) -> str:
        url = self.base_url + "/completions"
        body = {
            "model": self.served_model,
            "prompt": prompt,
            "max_tokens": max_tokens,
            "temperature": 0.0,
        }
        answer = await self._send("POST", url, body)
        self.requests += 1
        try:
            text = answer["choices"][0]["text"]
        except (KeyError, IndexError, TypeError):
            raise ValueError(f"{url} answered without choices[0].text") from None
        return text if isinstance(text, str) else ""

    def _completion(self, text: str) -> dict[str, Any]:
        return {
            "model": self.served_model,
            "prompt": text,
            "max_tokens": 1,
            "temperature": 0.0,
            "logprobs": self.top_logprobs,
        }

    async def _probe(self) -> None:
        """Check the model and the next-token log-probabilities; find the tokenizer."""
        await self._check_model()
        url = self.base_url + "/completions"
        try:
            answer = await self._send("POST", url, self._completion(_PROBE_TEXT))
        except EndpointError as exc:
            if exc.status in (404, 405):
                raise ValueError(
                    f"{self.base_url} has no /v1/completions (a chat-only API?): score chat "
                    "prompts through /v1/chat/completions instead (--chat, or --no-logprobs "
                    "for a server without log-probabilities)"
                ) from None
            if exc.status == 400:
                raise ValueError(
                    f"{exc}; a server may cap the log-probabilities it returns (vLLM at its "
                    f"--max-logprobs, 20 by default): lower top_logprobs={self.top_logprobs} "
                    "(--top-logprobs) or raise the server's cap"
                ) from None
            raise
        self._top(answer, url)
        if await self._find_tokenizer() is None:
            raise ValueError(
                f"the server at {self.root} has no tokenize endpoint bookend knows "
                f"({', '.join(sorted({t.path for t in TOKENIZERS}))}): without the served "
                "model's tokens the continuations cannot be scored"
            )
        probe = len(await self._tokenize(_PROBE_TEXT))
        used = _prompt_tokens(answer)
        self._offset = 0 if used is None else used - probe

    async def _score(self, prompt: str, continuations: list[str]) -> Continuations:
        texts = [answer_text(prompt, c) for c in continuations]
        n_prompt, tokens = await self._split(prompt, texts)
        spellings = await self._spelled(tokens, texts)
        # Every context prompt + c_<t, keyed by c_<t: shared prefixes are asked once.
        contexts: dict[tuple[int, ...], str] = {}
        for text, ids, spelling in zip(texts, tokens, spellings, strict=True):
            end = 0
            for t in range(len(ids)):
                contexts.setdefault(tuple(ids[:t]), prompt + text[:end])
                end += len(spelling[t])
        answers = await asyncio.gather(
            *(self._next_tokens(text, n_prompt + len(ids)) for ids, text in contexts.items())
        )
        tops = dict(zip(contexts, answers, strict=True))
        return self._walks(texts, tokens, spellings, tops)

    async def _split(self, prompt: str, texts: list[str]) -> tuple[int, list[list[int]]]:
        """The prompt's token count and each continuation's tokens after it."""
        prompt_ids, *full = await asyncio.gather(
            self._tokenize(prompt), *(self._tokenize(prompt + t) for t in texts)
        )
        tokens: list[list[int]] = []
        for text, ids in zip(texts, full, strict=True):
            if ids[: len(prompt_ids)] != prompt_ids:
                raise ValueError(
                    f"the prompt's last tokens change when {text!r} follows it: its tokens are "
                    "not the prompt's followed by the continuation's"
                )
            if len(ids) == len(prompt_ids):
                raise ValueError(f"a continuation encodes to no tokens: {texts!r}")
            tokens.append(ids[len(prompt_ids) :])
        return len(prompt_ids), tokens


def top_logprobs(answer: Any) -> dict[str, float]:
    """The first generated position's top log-probabilities, token text to log-probability, of a
    completions or chat answer (``{}`` when it has none).

    Reads the legacy completions format (``choices[0].logprobs.top_logprobs[0]``, a dict:
    llama-cpp-python, vLLM) and the chat format (``choices[0].logprobs.content[0].top_logprobs``,
    a list of ``{"token", "logprob"}``: every chat API, and upstream llama-server's completions).
    A text that several tokens spell keeps its largest log-probability.
    """
    try:
        logprobs = answer["choices"][0]["logprobs"]
    except (KeyError, IndexError, TypeError):
        return {}
    if not isinstance(logprobs, dict):
        return {}
    legacy = logprobs.get("top_logprobs")
    if isinstance(legacy, list) and legacy and isinstance(legacy[0], dict):
        return {str(k): float(v) for k, v in legacy[0].items()}
    content = logprobs.get("content")
    if not isinstance(content, list) or not content or not isinstance(content[0], dict):
        return {}
    out: dict[str, float] = {}
    for row in content[0].get("top_logprobs") or []:
        if isinstance(row, dict) and isinstance(row.get("token"), str) and "logprob" in row:
            token, value = row["token"], float(row["logprob"])
            out[token] = max(value, out.get(token, value))
    return out


def _detail(answer: httpx.Response) -> str:
    """The server's error message in one line (JSON ``detail``/``error``/``message``, or text)."""
    try:
        data = answer.json()
    except ValueError:
        data = answer.text
    if isinstance(data, dict):
        for field in ("detail", "error", "message"):
            if field in data:
                data = data[field]
                break
        if isinstance(data, dict) and "message" in data:
            data = data["message"]
    return " ".join(str(data).split())[:300]


def _token_ids(answer: Any, where: str) -> list[int]:
    ids = answer.get("tokens") if isinstance(answer, dict) else None
    if not isinstance(ids, list) or not all(isinstance(t, int) for t in ids):
        raise ValueError(f"{where} answered without a list of token ids")
    return ids


def _prompt_tokens(answer: Any) -> int | None:
    usage = answer.get("usage") if isinstance(answer, dict) else None
    used = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    return used if isinstance(used, int) else None
