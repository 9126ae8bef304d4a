"""The ``--endpoint`` options that ``bookend eval``, ``tune`` and ``calibrate`` share, and the
scorer they describe (:class:`~bookend.lab.models.endpoint.EndpointScorer`).

The API key is never an option: ``--api-key-env`` names the environment variable that holds it, so
it stays out of the command line and its history.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # httpx is imported only when a server is used: the CLI imports without it
    from bookend.lab.models.endpoint import EndpointScorer

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
        default=1000,
        metavar="N",
        help="next tokens asked per context; a token beyond them is scored by an upper bound "
        "and counted in the report (default 1000; vLLM allows its --max-logprobs, 20 by default)",
    )


def endpoint_scorer(args: argparse.Namespace, cache: str | Path | None) -> EndpointScorer:
    """The scorer of ``--endpoint`` (probed once), with its call cache at ``cache``.

    Raises:
        ValueError: without ``--served-model``, together with ``--weights``, or when the server
            cannot be used (see :class:`~bookend.lab.models.endpoint.EndpointScorer`).
    """
    if not args.served_model:
        raise ValueError(f"--endpoint {args.endpoint} needs --served-model NAME")
    if args.weights is not None:
        raise ValueError(
            f"give either --weights or --endpoint, got --weights {args.weights} and "
            f"--endpoint {args.endpoint}"
        )
    from bookend.lab.models.cache import CallCache
    from bookend.lab.models.endpoint import EndpointScorer

    return EndpointScorer(
        args.endpoint,
        args.served_model,
        cache=CallCache(cache),
        api_key_env=args.api_key_env,
        concurrency=args.concurrency,
        timeout=args.timeout,
        top_logprobs=args.top_logprobs,
    )


def served_theory(args: argparse.Namespace) -> str:
    """``--served-model``, checked to name a preset, for the theory strategies when ``--theory``
    is not given (a server has no model config to read): any spelling
    :func:`bookend.spec.preset_key` reads, a vLLM served name such as
    ``Qwen/Qwen2.5-7B-Instruct`` (``qwen2.5-7b``) or an Ollama tag such as ``llama3.1:8b``
    (``llama-3.1-8b``); ``model=`` resolves it to that preset.

    Raises:
        ValueError: when the name is no preset.
    """
    from bookend.spec import preset_key

    key = preset_key(args.served_model)
    if key is None:
        raise ValueError(
            f"--served-model {args.served_model} names no preset for bookend-theory: give "
            "--theory (a preset such as llama-3.1-8b, or an inline spec such as "
            "'{\"depth\": 32}')"
        )
    return str(args.served_model)
