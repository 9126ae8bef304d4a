"""Natural-text inputs: the bundled public-domain text and fixed-length token windows from it.

``data/public_domain_text.txt`` holds passages of works in the public domain: Genesis 1:1-23 (King
James Version, 1611), Lincoln's Gettysburg Address (1863), the opening of Austen's *Pride and
Prejudice* (1813), Dickens's *A Tale of Two Cities* (1859), Melville's *Moby-Dick* (1851) and
Carroll's *Alice's Adventures in Wonderland* (1865). About 1,800 words, 2,400 tokens for a typical
BPE tokenizer; longer windows wrap around the text.
"""

from __future__ import annotations

import re
import zlib
from importlib import resources

import numpy as np
import numpy.typing as npt

__all__ = ["bundled_text", "hashed_word_ids", "token_windows"]


def bundled_text() -> str:
    """The bundled public-domain text."""
    return resources.files("bookend_rag").joinpath("data/public_domain_text.txt").read_text("utf-8")


def hashed_word_ids(text: str, vocab_size: int) -> npt.NDArray[np.int64]:
    """Token ids for a model without a tokenizer: each word or punctuation mark hashed into the
    vocabulary (CRC-32 mod ``vocab_size``).

    For random weights the identity of a token is arbitrary; what natural text adds over random
    tokens is its repetition structure (frequent words recur), which hashing keeps.
    """
    if vocab_size < 2:
        raise ValueError(f"vocab_size must be >= 2, got vocab_size={vocab_size!r}")
    words = re.findall(r"\w+|[^\w\s]", text)
    return np.array([zlib.crc32(w.encode("utf-8")) % vocab_size for w in words], dtype=np.int64)


def token_windows(ids: npt.ArrayLike, n_tokens: int, n_windows: int) -> npt.NDArray[np.int64]:
    """``n_windows`` windows of ``n_tokens`` ids, evenly spaced starts: ``[n_windows, n_tokens]``.

    The ids are repeated end to end when the text is shorter than a window (or than the windows
    need), so any length can be measured from a short text.
    """
    arr = np.asarray(ids, dtype=np.int64)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError("ids must be a non-empty 1-D sequence of token ids")
    if n_tokens < 2 or n_windows < 1:
        raise ValueError(
            f"n_tokens must be >= 2 and n_windows >= 1, "
            f"got n_tokens={n_tokens}, n_windows={n_windows}"
        )
    reps = -(-(n_tokens + arr.size) // arr.size) + 1
    tiled = np.tile(arr, reps)
    starts = np.linspace(0, arr.size, n_windows, endpoint=False).astype(np.int64)
    return np.stack([tiled[s : s + n_tokens] for s in starts])
