"""The :class:`Layout`: where the chunks sit inside the sequence a profile describes."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Layout"]


@dataclass(frozen=True)
class Layout:
    """Where the chunks sit inside the analysed sequence.

    Args:
        prefix_tokens: tokens before the first chunk (system prompt, instructions).
        suffix_tokens: tokens after the last chunk (the question, the answer cue).

    With ``0, 0`` (this class's default, the primitive) the chunks fill the analysed sequence, so
    the final chunk holds the final token and with it the theory's Recency Delta: the weights form
    a U (the bookend view). With a suffix, the delta falls on the suffix and, at initialisation,
    chunk weights decrease from front to back. Placement (:class:`~bookend.PlacementConfig`)
    defaults to ``suffix_tokens=1``: the answer always follows the chunks.
    """

    prefix_tokens: int = 0
    suffix_tokens: int = 0

    def __post_init__(self) -> None:
        # A plain frozen dataclass rather than a pydantic model: it is hashed on every call.
        for name in ("prefix_tokens", "suffix_tokens"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {name}={value!r}")

    def to_dict(self) -> dict[str, int]:
        """``{"prefix_tokens": ..., "suffix_tokens": ...}``."""
        return {"prefix_tokens": int(self.prefix_tokens), "suffix_tokens": int(self.suffix_tokens)}
