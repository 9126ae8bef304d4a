"""The ``--endpoint`` options that ``bookend eval``, ``tune`` and ``calibrate`` share, and the
scorer they describe:

- by default, :class:`~bookend_rag.lab.models.endpoint.EndpointScorer` (completion text through
  ``/v1/completions``, next-token log-probabilities);
- ``--chat``: :class:`~bookend_rag.lab.models.chat.ChatEndpointScorer` (chat prompts through
  ``/v1/chat/completions`` with log-probabilities);
- ``--no-logprobs`` (implies ``--chat``): :class:`~bookend_rag.lab.models.chat.GenerationScorer`
  (generated answers, matched against the gold one: accuracy only), for APIs without
  log-probabilities.

The API key is never an option: ``--api-key-env`` names the environment variable that holds it, so
it stays out of the command line and its history.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # httpx is imported only when a server is used: the CLI imports without it
    from bookend_rag.lab.models.endpoint import ServedScorer

__all__ = ["add_endpoint_options", "endpoint_scorer", "served_theory"]


def add_endpoint_options(parser: Any) -> None:
    """Add ``--endpoint``, ``--served-model`` and the transport options to ``parser``."""
    group = parser.add_argument_group("served model (instead of --weights)")
    group.add_argument(
        "--endpoint",
        metavar="URL",
        help="an OpenAI-compatible server's base URL, such as http://127.0.0.1:8000/v1 (vLLM, "
        "llama-cpp-python); scored by next-token log-probabilities",
    )
    group.add_argument("--served-model", metavar="NAME", help="the model name the server serves")
    group.add_argument(
        "--api-key-env",
        default="OPENAI_API_KEY",
        metavar="VAR",
        help="environment variable holding the API key, if the server wants one "
        "(default OPENAI_API_KEY)",
    )
    group.add_argument(
        "--concurrency", type=int, default=4, help="requests in flight at once (default 4)"
    )
    group.add_argument(
        "--timeout", type=float, default=120.0, help="seconds per request (default 120)"
    )
    group.add_argument(
        "--top-logprobs",
        type=int,
        metavar="N",
        default=None,
        help="next tokens asked per context; a token beyond them is scored by an upper bound "
        "and counted in the report (default 1000, with --chat 20; vLLM allows its "
        "--max-logprobs, 20 by default; OpenAI's chat API 20 at most)",
    )
    group.add_argument(
        "--chat",
        action="store_true",
        help="score chat prompts through /v1/chat/completions with log-probabilities: whole "
        "answers where the server continues an assistant prefix (llama-server, vLLM), else "
        "their first tokens (the report's endpoint.method says which)",
    )
    group.add_argument(
        "--no-logprobs",
        action="store_true",
        help="for chat APIs without log-probabilities (implies --chat): generate each answer "
        "and match it against the gold one; the report has exact_match and accuracy only",
    )
    group.add_argument(
        "--max-answer-tokens",
        type=int,
        default=32,
        metavar="N",
        help="with --no-logprobs, the longest answer generated (default 32)",
    )


def endpoint_scorer(args: argparse.Namespace, cache: str | Path | None) -> ServedScorer:
    """The scorer of ``--endpoint`` (probed once), with its call cache at ``cache``: completions,
    chat (``--chat``) or generation only (``--no-logprobs``), as the module docstring says.

    Raises:
        ValueError: without ``--served-model``, together with ``--weights``, or when the server
            cannot be used (see :class:`~bookend_rag.lab.models.endpoint.EndpointScorer`).
    """
    if not args.served_model:
        raise ValueError(f"--endpoint {args.endpoint} needs --served-model NAME")
    if args.weights is not None:
        raise ValueError(
            f"give either --weights or --endpoint, got --weights {args.weights} and "
            f"--endpoint {args.endpoint}"
        )
    from bookend_rag.lab.models.cache import CallCache
    from bookend_rag.lab.models.chat import ChatEndpointScorer, GenerationScorer
    from bookend_rag.lab.models.endpoint import EndpointScorer

    no_logprobs = getattr(args, "no_logprobs", False)
    chat = getattr(args, "chat", False) or no_logprobs
    top = getattr(args, "top_logprobs", None)
    if no_logprobs and top is not None:
        raise ValueError("--no-logprobs asks for no log-probabilities: drop --top-logprobs")
    transport: dict[str, Any] = {
        "cache": CallCache(cache),
        "api_key_env": args.api_key_env,
        "concurrency": args.concurrency,
        "timeout": args.timeout,
    }
    if no_logprobs:
        return GenerationScorer(
            args.endpoint,
            args.served_model,
            max_tokens=getattr(args, "max_answer_tokens", 32),
            **transport,
        )
    if chat:
        return ChatEndpointScorer(
            args.endpoint, args.served_model, top_logprobs=top or 20, **transport
        )
    return EndpointScorer(args.endpoint, args.served_model, top_logprobs=top or 1000, **transport)


def served_theory(args: argparse.Namespace) -> str:
    """``--served-model``, checked to name a preset, for the theory strategies when ``--theory``
    is not given (a server has no model config to read): any spelling
    :func:`bookend_rag.spec.preset_key` reads, a vLLM served name such as
    ``Qwen/Qwen2.5-7B-Instruct`` (``qwen2.5-7b``) or an Ollama tag such as ``llama3.1:8b``
    (``llama-3.1-8b``); ``model=`` resolves it to that preset.

    Raises:
        ValueError: when the name is no preset.
    """
    from bookend_rag.spec import preset_key

    key = preset_key(args.served_model)
    if key is None:
        raise ValueError(
            f"--served-model {args.served_model} names no preset for bookend-theory: give "
            "--theory (a preset such as llama-3.1-8b, or an inline spec such as "
            "'{\"depth\": 32}')"
        )
    return str(args.served_model)
