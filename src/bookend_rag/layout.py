"""The :class:`Layout`: where the chunks sit inside the sequence a profile describes."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bookend_rag.inputs import MAX_TOKENS

__all__ = ["DEFAULT_SUFFIX_TOKENS", "Layout"]

#: Prompt tokens after the chunks when the caller says nothing, everywhere a layout is implied:
#: the model answers after the chunks, so the final token, which holds the theory's Recency
#: Delta, is never a chunk's. With this default a theory profile weighs chunks front to back
#: (most relevant first), the order measured best (``bench/RESULTS.md``, "Placement quality");
#: ``0`` is the bookend view.
DEFAULT_SUFFIX_TOKENS = 1


@dataclass(frozen=True)
class Layout:
    """Where the chunks sit inside the analysed sequence.

    Args:
        prefix_tokens: tokens before the first chunk (system prompt, instructions).
        suffix_tokens: tokens after the last chunk (the question, the answer cue); defaults to
            :data:`DEFAULT_SUFFIX_TOKENS`, the answer.

    With the default the theory's Recency Delta falls after the chunks and, at initialisation,
    chunk weights decrease from front to back. With ``suffix_tokens=0`` the chunks fill the
    analysed sequence, so the final chunk holds the final token and with it the delta: the
    weights form a U (the bookend view).
    """

    prefix_tokens: int = 0
    suffix_tokens: int = DEFAULT_SUFFIX_TOKENS

    def __post_init__(self) -> None:
        # A plain frozen dataclass rather than a pydantic model: placement builds one per call.
        for name in ("prefix_tokens", "suffix_tokens"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | np.integer):
                raise ValueError(f"{name} must be a non-negative integer, got {name}={value!r}")
            if not 0 <= value <= MAX_TOKENS:
                raise ValueError(f"{name} must lie in [0, {MAX_TOKENS}], got {name}={value!r}")

    def to_dict(self) -> dict[str, int]:
        """``{"prefix_tokens": ..., "suffix_tokens": ...}``."""
        return {"prefix_tokens": int(self.prefix_tokens), "suffix_tokens": int(self.suffix_tokens)}
