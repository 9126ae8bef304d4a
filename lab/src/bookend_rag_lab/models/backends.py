"""Scorer backends by name, and :class:`ScorerSpec`: the scorer a run builds when it needs it.

:data:`BACKENDS` holds every backend a run can name, each registered (:func:`register`) with what
the runs and the command line need to know of it, without importing it (torch, httpx):

- ``local``: local weights in-process (:class:`~bookend_rag_lab.models.local.LocalScorer`);
- ``completions``: a served model's ``/v1/completions``, next-token log-probabilities
  (:class:`~bookend_rag_lab.models.endpoint.EndpointScorer`; ``--endpoint``);
- ``chat``: its ``/v1/chat/completions`` with log-probabilities
  (:class:`~bookend_rag_lab.models.chat.ChatEndpointScorer`; ``--chat``);
- ``generation``: generated chat answers, for APIs without log-probabilities
  (:class:`~bookend_rag_lab.models.chat.GenerationScorer`; ``--no-logprobs``).

A run (``evaluate``, ``tune``, ``calibrate``) takes a :class:`ScorerSpec` or a scorer itself. It
builds a spec's scorer (:func:`scorer_for`) only after its own arguments and items are checked, so
that a mistake never waits for a model to load or a server to answer, and closes it at its end.

A new backend is a module with its scorer class (the :class:`~bookend_rag_lab.models.scorer.Scorer`
members and its :class:`~bookend_rag_lab.models.scorer.Capabilities`) and one :func:`register`
call here: its name, its capabilities, when the command line's arguments choose it, the options it
reads from them and how it builds its scorer.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bookend_rag_lab.models.cache import CallCache
from bookend_rag_lab.models.local import LocalScorer, load_trained
from bookend_rag_lab.models.scorer import (
    CHAT_GENERATION,
    CHAT_LOGPROBS,
    COMPLETION_LOGPROBS,
    IN_PROCESS,
    Capabilities,
    Scorer,
)

__all__ = ["BACKENDS", "Backend", "ScorerSpec", "register", "scorer_for"]

Say = Callable[[str], None]


@dataclass(frozen=True)
class ScorerSpec:
    """The model a run scores with, built when the run needs it (:func:`scorer_for`).

    Attributes:
        backend: a name in :data:`BACKENDS` (default ``"local"``).
        weights: the local model: a model directory, a ``.gguf`` file, or a named weight:
            ``"smollm2"``, ``"gemma3-270m"`` or ``"qwen2.5-coder-0.5b"``.
        device, dtype: where the local model runs and its precision; a run's report records them.
        options: the backend's own settings, keywords of its scorer class (a served model's
            ``base_url``, ``served_model`` and transport, such as ``top_logprobs``).
        cache: the call-cache JSONL (default: the run's ``out_dir/calls.jsonl``; in memory
            without one).

    Raises:
        ValueError: for a backend that is not registered.
    """

    backend: str = "local"
    weights: str | Path = "smollm2"
    device: str = "cpu"
    dtype: str = "float32"
    options: Mapping[str, Any] = field(default_factory=dict)
    cache: str | Path | None = None

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ValueError(
                f"backend must be one of {sorted(BACKENDS)}, got backend={self.backend!r}"
            )

    @property
    def capabilities(self) -> Capabilities:
        """What the backend's scorers measure, known before one is built."""
        return BACKENDS[self.backend].capabilities


@dataclass(frozen=True)
class Backend:
    """A scorer backend as the runs and the command line see it.

    Attributes:
        name: what a :class:`ScorerSpec` calls it.
        capabilities: what its scorers measure.
        chosen: whether parsed command-line arguments ask for it.
        options: its :attr:`ScorerSpec.options` from those arguments (``ValueError`` for
            arguments it cannot take).
        build: its scorer for a spec, answering repeated calls from the cache; it imports what the
            backend needs only when called, and may say a status line.
    """

    name: str
    capabilities: Capabilities
    chosen: Callable[[argparse.Namespace], bool]
    options: Callable[[argparse.Namespace], dict[str, Any]]
    build: Callable[[ScorerSpec, CallCache, Say], Scorer]


#: The registered backends by name, in the order they were registered.
BACKENDS: dict[str, Backend] = {}


def register(backend: Backend) -> Backend:
    """Add ``backend`` to :data:`BACKENDS`.

    Raises:
        ValueError: when its name is taken.
    """
    if backend.name in BACKENDS:
        raise ValueError(f"a backend named {backend.name!r} is registered already")
    BACKENDS[backend.name] = backend
    return backend


def _quiet(_message: str) -> None:
    """A status line nobody reads."""


@contextmanager
def scorer_for(
    scorer: Scorer | ScorerSpec, out_dir: str | Path | None = None, say: Say = _quiet
) -> Iterator[Scorer]:
    """The scorer of a run: ``scorer`` itself (its owner closes it), or the one a spec builds,
    its calls cached in the spec's ``cache`` (default ``out_dir/calls.jsonl``, in memory without
    ``out_dir``) and closed when the run ends (a served scorer's connections and event loop).

    Raises:
        ValueError: when the backend cannot build the scorer (missing weights, a server it
            cannot use).
    """
    if not isinstance(scorer, ScorerSpec):
        yield scorer
        return
    cache = scorer.cache
    if cache is None and out_dir is not None:
        cache = Path(out_dir) / "calls.jsonl"
    built = BACKENDS[scorer.backend].build(scorer, CallCache(cache), say)
    try:
        yield built
    finally:
        close = getattr(built, "close", None)
        if callable(close):
            close()


def _no_options(_args: argparse.Namespace) -> dict[str, Any]:
    return {}


def _local(spec: ScorerSpec, cache: CallCache, say: Say) -> Scorer:
    say(f"loading {spec.weights} ({spec.device}, {spec.dtype})")
    return LocalScorer(load_trained(spec.weights, device=spec.device, dtype=spec.dtype), cache)


def _transport(args: argparse.Namespace) -> dict[str, Any]:
    """The options every served backend reads: the server, its model and the transport."""
    if not args.served_model:
        raise ValueError(f"--endpoint {args.endpoint} needs --served-model NAME")
    if args.weights is not None:
        raise ValueError(
            f"give either --weights or --endpoint, got --weights {args.weights} and "
            f"--endpoint {args.endpoint}"
        )
    return {
        "base_url": args.endpoint,
        "served_model": args.served_model,
        "api_key_env": args.api_key_env,
        "concurrency": args.concurrency,
        "timeout": args.timeout,
    }


def _completions(spec: ScorerSpec, cache: CallCache, _say: Say) -> Scorer:
    from bookend_rag_lab.models.endpoint import EndpointScorer

    return EndpointScorer(cache=cache, **spec.options)


def _chat(spec: ScorerSpec, cache: CallCache, _say: Say) -> Scorer:
    from bookend_rag_lab.models.chat import ChatEndpointScorer

    return ChatEndpointScorer(cache=cache, **spec.options)


def _generation(spec: ScorerSpec, cache: CallCache, _say: Say) -> Scorer:
    from bookend_rag_lab.models.chat import GenerationScorer

    return GenerationScorer(cache=cache, **spec.options)


def _generation_options(args: argparse.Namespace) -> dict[str, Any]:
    transport = _transport(args)
    if args.top_logprobs is not None:
        raise ValueError("--no-logprobs asks for no log-probabilities: drop --top-logprobs")
    return transport | {"max_tokens": args.max_answer_tokens}


register(Backend("local", IN_PROCESS, lambda args: not args.endpoint, _no_options, _local))
register(
    Backend(
        "completions",
        COMPLETION_LOGPROBS,
        lambda args: bool(args.endpoint) and not args.chat and not args.no_logprobs,
        lambda args: _transport(args) | {"top_logprobs": args.top_logprobs or 1000},
        _completions,
    )
)
register(
    Backend(
        "chat",
        CHAT_LOGPROBS,
        lambda args: bool(args.endpoint) and args.chat and not args.no_logprobs,
        # OpenAI's chat API returns 20 at most.
        lambda args: _transport(args) | {"top_logprobs": args.top_logprobs or 20},
        _chat,
    )
)
register(
    Backend(
        "generation",
        CHAT_GENERATION,
        lambda args: bool(args.endpoint) and args.no_logprobs,
        _generation_options,
        _generation,
    )
)
