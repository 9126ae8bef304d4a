"""Token counting: a fast default approximation, or any tokenizer the caller has."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence, Sized
from functools import partial
from numbers import Real
from pathlib import Path
from typing import Any, Protocol, TypeAlias, TypeGuard, runtime_checkable

import numpy as np

from bookend_rag.arrays import FloatArray, IntArray

__all__ = [
    "TokenCounter",
    "TokenCounterLike",
    "TokenizerCount",
    "all_strings",
    "approx_token_count",
    "approx_token_counts",
    "counts_on_demand",
    "item_text",
    "item_texts",
    "load_tokenizer",
    "make_token_counter",
    "token_lengths",
    "tokenizer_file",
]

TokenCounter: TypeAlias = Callable[[str], int]

# English BPE tokenizers (cl100k, Llama, Qwen) average about four characters per token.
CHARS_PER_TOKEN = 4
_CHARS_PER_TOKEN = np.array(float(CHARS_PER_TOKEN))
_ONE_TOKEN = np.array(1.0)


@runtime_checkable
class _Encoder(Protocol):
    def encode(self, text: str, /) -> Any: ...


TokenCounterLike: TypeAlias = "TokenCounter | _Encoder | str | None"


def approx_token_count(text: str) -> int:
    """``ceil(len(text) / 4)``, at least 1: the usual rule of thumb for English BPE tokenizers."""
    return max(1, -(-len(text) // CHARS_PER_TOKEN))


class TokenizerCount:
    """``len(encode(text))``: the count of a tokenizer (a ``tiktoken`` encoding, a Hugging Face
    tokenizer, a framework's tokenize function such as LlamaIndex's ``Settings.tokenizer``).

    A length is a whole, non-negative number by construction, so it needs no check, and a
    placement whose order the counts cannot move takes them when its lengths are first read
    (:func:`counts_on_demand`).
    """

    __slots__ = ("encode",)

    def __init__(self, encode: Callable[[str], Sized]) -> None:
        self.encode = encode

    def __call__(self, text: str) -> int:
        return len(self.encode(text))


def counts_on_demand(counter: TokenCounter) -> bool:
    """Whether ``counter`` may count when the counts are first read rather than at placement:
    the default approximation or a tokenizer's count (:class:`TokenizerCount`), which give
    valid counts for any text; never a caller's own function, whose bad return values are named
    at once."""
    return counter is approx_token_count or isinstance(counter, TokenizerCount)


def all_strings(values: list[Any]) -> TypeGuard[list[str]]:
    """Whether every value is a string: every type ``str`` itself, counted at C speed (a list's
    count compares by identity first: a quarter faster than an ``isinstance`` per value), else
    each an instance of it (``str.__instancecheck__`` is ``isinstance``, one C loop)."""
    return list(map(type, values)).count(str) == len(values) or all(
        map(str.__instancecheck__, values)
    )


def approx_token_counts(texts: list[str]) -> list[int]:
    """:func:`approx_token_count` of every text, as :func:`token_lengths` counts them with it, on
    Python ints (the small-K path, :mod:`bookend_rag.placement.small_k`, which has checked that
    every text is a string)."""
    # approx_token_count's ceiling on non-negative lengths, inline: a call per text costs more
    # than the arithmetic (tests/core/test_small_k.py holds the two equal).
    per, up = CHARS_PER_TOKEN, CHARS_PER_TOKEN - 1
    return [(len(text) + up) // per or 1 for text in texts]


def item_text(item: Any) -> Any:
    """The text of an item read without ``text=``: a string is its own; any other item's is its
    ``text`` attribute (LlamaIndex's nodes, most chunk types) or, for a mapping, its ``"text"``
    key, as ``text="text"`` reads it; ``None`` when it has neither."""
    if isinstance(item, str):
        return item
    if isinstance(item, Mapping):
        return item.get("text")
    return getattr(item, "text", None)


def item_texts(items: list[Any], text: Callable[[Any], Any] | None) -> list[Any]:
    """Each item's text: ``text(item)``; without ``text``, the items themselves when all are
    strings, else each one's :func:`item_text`."""
    if text is not None:
        return [text(item) for item in items]
    return items if all_strings(items) else [item_text(item) for item in items]


def token_lengths(
    items: list[Any], count: TokenCounter, text: Callable[[Any], Any] | None
) -> FloatArray:
    """Per item the tokens ``count`` finds in its text (:func:`item_texts`), at least one: an
    empty text still takes a slot in the prompt.

    Raises:
        ValueError: an item without a text string, or what ``text`` returns for it that is not a
            string.
    """
    texts = item_texts(items, text)
    if count is approx_token_count:
        chars = _string_lengths(texts)
        if chars is not None:
            # The default counter, vectorised: ceil(chars / 4), at least one token, with 0-d
            # array operands (a Python number costs a ufunc a conversion that takes longer than
            # the arithmetic at the K of a retrieval call).
            lengths: FloatArray = np.divide(chars, _CHARS_PER_TOKEN)
            np.ceil(lengths, out=lengths)
            np.maximum(lengths, _ONE_TOKEN, out=lengths)
            return lengths
    counts = []
    for i, value in enumerate(texts):
        if not isinstance(value, str):
            kind = type(items[i]).__name__
            if text is not None:
                raise ValueError(
                    f"text= must return a string, got {value!r} for items[{i}] of type {kind}"
                )
            raise ValueError(
                f"cannot count tokens of items[{i}] of type {kind}: it is not a string and has no "
                "'text' string; pass lengths=, or text= naming how to get its text"
            )
        counts.append(count(value))
    return np.maximum(np.array(counts, dtype=np.float64), 1.0)


def _string_lengths(texts: Sequence[Any]) -> IntArray | None:
    """``len`` of every text when all are strings, else ``None`` (the caller's loop names the
    first that is not)."""
    # One pass at C speed: the filter drops what is not a string (str.__instancecheck__ is
    # isinstance), and an iterator shorter than ``count`` makes fromiter raise.
    try:
        return np.fromiter(
            map(len, filter(str.__instancecheck__, texts)), dtype=np.int64, count=len(texts)
        )
    except ValueError:
        return None


def make_token_counter(
    counter: TokenCounterLike, *, setting: str = "token_counter"
) -> TokenCounter:
    """Normalise what a caller passes as ``token_counter=`` (or, ``setting`` naming it in the
    errors, as another setting that holds a counter: ``tokenizer``).

    ``None`` gives :func:`approx_token_count`; a string names a tokenizer (see
    :func:`load_tokenizer`); an object with ``encode`` (a ``tiktoken`` encoding or a Hugging Face
    tokenizer) counts ``len(encode(text))`` (:class:`TokenizerCount`); any other callable is used
    as is, checked on each call: it must return a finite, non-negative number.
    """
    if counter is None:
        return approx_token_count
    if isinstance(counter, str):
        return load_tokenizer(counter, setting=setting)
    if isinstance(counter, _Encoder) and not isinstance(counter, type):
        return TokenizerCount(counter.encode)
    if callable(counter):
        return _checked(counter)
    raise ValueError(
        f"{setting} must be None, a tokenizer name, a callable str -> int, or an object with "
        f".encode(), got {setting}={counter!r}"
    )


def _checked(counter: Callable[[str], Any]) -> TokenCounter:
    def count(text: str) -> int:
        n = counter(text)
        if isinstance(n, bool) or not isinstance(n, Real) or not math.isfinite(n) or n < 0:
            raise ValueError(
                f"token_counter must return a finite, non-negative number, got {n!r} for a text "
                f"of {len(text)} characters"
            )
        return math.ceil(float(n))

    return count


def tokenizer_file(name: str) -> Path | None:
    """The local file that :func:`load_tokenizer` reads for ``name`` (a directory's
    ``tokenizer.json``, or the file itself), or ``None`` when ``name`` is no local path (a
    tiktoken encoding name)."""
    path = Path(name).expanduser()
    if not path.exists():
        return None
    return path / "tokenizer.json" if path.is_dir() else path


def load_tokenizer(name: str, *, setting: str = "tokenizer") -> TokenCounter:
    """A token counter from a serialisable name, for configs, pipelines and the command line.

    Args:
        name: a local Hugging Face tokenizer (a directory holding ``tokenizer.json``, or the file
            itself; read with the ``tokenizers`` package, no network), or else a ``tiktoken``
            encoding name such as ``"cl100k_base"`` or ``"o200k_base"``.
        setting: the setting that gave ``name``, for the error messages.

    Raises:
        ValueError: the package it needs is missing, the name is neither, or a tiktoken
            encoding is neither cached nor downloadable.
    """
    file = tokenizer_file(name)
    if file is not None:
        try:
            from tokenizers import Tokenizer
        except ImportError:
            raise ValueError(
                f"{setting}={name!r} is a local path: reading it needs `pip install tokenizers`"
            ) from None
        try:
            tokenizer = Tokenizer.from_file(str(file))
        except Exception as exc:
            raise ValueError(
                f"{setting}={name!r}: cannot read a Hugging Face tokenizer from {str(file)!r} "
                f"({exc})"
            ) from None
        return TokenizerCount(lambda text: tokenizer.encode(text, add_special_tokens=False).ids)
    try:
        import tiktoken
    except ImportError:
        raise ValueError(
            f"{setting}={name!r} is not a local path, and a tiktoken encoding name needs "
            "`pip install tiktoken`"
        ) from None
    try:
        encoding = tiktoken.get_encoding(name)
    except ValueError:
        raise ValueError(
            f"{setting}={name!r} is neither a local Hugging Face tokenizer path nor a tiktoken "
            f"encoding (known: {', '.join(tiktoken.list_encoding_names())})"
        ) from None
    except OSError:  # a download refused or failing (requests' errors are OSErrors too)
        raise ValueError(
            f"tokenizer={name!r}: the tiktoken encoding is not cached here and cannot be "
            "downloaded (offline?); set TIKTOKEN_CACHE_DIR to a folder holding its cached file, "
            "or pass a local Hugging Face tokenizer path"
        ) from None
    return TokenizerCount(partial(encoding.encode, disallowed_special=()))
