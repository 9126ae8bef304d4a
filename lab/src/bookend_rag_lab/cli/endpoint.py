"""The ``--endpoint`` options that ``bookend eval``, ``tune`` and ``calibrate`` share, and the
model they and ``--weights`` name (:func:`scorer_spec`, a backend of
:mod:`~bookend_rag_lab.models.backends`):

- ``--weights`` (or neither): local weights in-process (``local``);
- ``--endpoint``: :class:`~bookend_rag_lab.models.endpoint.EndpointScorer` (``completions``:
  completion text through ``/v1/completions``, next-token log-probabilities);
- ``--chat``: :class:`~bookend_rag_lab.models.chat.ChatEndpointScorer` (``chat``: chat prompts
  through ``/v1/chat/completions`` with log-probabilities);
- ``--no-logprobs`` (implies ``--chat``): :class:`~bookend_rag_lab.models.chat.GenerationScorer`
  (``generation``: generated answers, matched against the gold one: accuracy only), for APIs
  without log-probabilities.

The API key is never an option: ``--api-key-env`` names the environment variable that holds it, so
it stays out of the command line and its history.
"""

from __future__ import annotations

import argparse
from typing import Any

from bookend_rag_lab.models.backends import BACKENDS, ScorerSpec

__all__ = ["add_endpoint_options", "scorer_spec", "served_theory"]


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


def scorer_spec(args: argparse.Namespace) -> ScorerSpec:
    """The model the arguments name: the first backend of
    :data:`~bookend_rag_lab.models.backends.BACKENDS` they choose, with the options it reads from
    them, and ``--weights``, ``--device``, ``--dtype`` and ``--cache`` where the command has them
    (``calibrate`` has no ``--device``, ``--dtype`` or ``--cache``: the spec's defaults).

    Raises:
        ValueError: for options the backend cannot take (``--endpoint`` without
            ``--served-model``, or with ``--weights``; ``--no-logprobs`` with
            ``--top-logprobs``).
    """
    backend = next(b for b in BACKENDS.values() if b.chosen(args))
    given = {name: getattr(args, name, None) for name in ("weights", "device", "dtype", "cache")}
    return ScorerSpec(
        backend.name,
        options=backend.options(args),
        **{name: value for name, value in given.items() if value is not None},
    )


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
