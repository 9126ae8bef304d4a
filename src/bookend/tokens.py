"""Token counting: a fast default approximation, or any tokenizer the caller has."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeAlias, runtime_checkable

__all__ = ["TokenCounter", "TokenCounterLike", "approx_token_count", "make_token_counter"]

TokenCounter: TypeAlias = Callable[[str], int]

# English BPE tokenizers (cl100k, Llama, Qwen) average about four characters per token.
CHARS_PER_TOKEN = 4


@runtime_checkable
class _Encoder(Protocol):
    def encode(self, text: str, /) -> Any: ...


TokenCounterLike: TypeAlias = "TokenCounter | _Encoder | None"


def approx_token_count(text: str) -> int:
    """``ceil(len(text) / 4)``, at least 1: the usual rule of thumb for English BPE tokenizers."""
    return max(1, -(-len(text) // CHARS_PER_TOKEN))


def make_token_counter(counter: TokenCounterLike) -> TokenCounter:
    """Normalise what a caller passes as ``token_counter=``.

    ``None`` gives :func:`approx_token_count`; an object with ``encode`` (a ``tiktoken`` encoding or
    a Hugging Face tokenizer) counts ``len(encode(text))``; any other callable is used as is.
    """
    if counter is None:
        return approx_token_count
    if isinstance(counter, _Encoder) and not isinstance(counter, type):
        encoder = counter

        def count(text: str) -> int:
            return len(encoder.encode(text))

        return count
    if callable(counter):
        return counter
    raise ValueError(
        "token_counter must be None, a callable str -> int, or an object with .encode(), "
        f"got token_counter={counter!r}"
    )
