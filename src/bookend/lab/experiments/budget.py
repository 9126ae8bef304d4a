"""The budget of a run that chooses by measurement: model calls, minutes, or both.

Calls are the scorer's cache misses since the budget started (a cached answer is free, so a
resumed run spends nothing on what it already measured); minutes are wall time since then. A step
asks, before each unit of work, whether it still fits (:meth:`Budget.affords`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from bookend.lab.models import Scorer
from bookend.lab.models.scorer import Prompt

__all__ = ["Budget"]


@dataclass(frozen=True)
class Budget:
    """At most ``max_calls`` model calls and ``minutes`` of wall time (``None``: no limit).

    Attributes:
        scorer: the scorer whose calls count.
        max_calls, minutes: the limits.
        started: ``time.perf_counter()`` when the budget started.
        calls_before: the scorer's calls when it started.
    """

    scorer: Scorer
    max_calls: int | None = None
    minutes: float | None = None
    started: float = field(default_factory=time.perf_counter)
    calls_before: int = -1

    def __post_init__(self) -> None:
        if self.calls_before < 0:
            object.__setattr__(self, "calls_before", self.scorer.calls)

    @property
    def calls(self) -> int:
        """Model calls made since the budget started."""
        return self.scorer.calls - self.calls_before

    @property
    def seconds(self) -> float:
        """Wall time since the budget started."""
        return time.perf_counter() - self.started

    def cost(self, requests: Mapping[Prompt, Sequence[str]]) -> int:
        """The model calls ``requests`` (prompt -> continuations) would make: those not cached."""
        return sum(
            1 for prompt, options in requests.items() if not self.scorer.is_cached(prompt, options)
        )

    def affords(self, new_calls: int) -> bool:
        """Whether ``new_calls`` more model calls stay within the calls and the time is not up."""
        if self.max_calls is not None and self.calls + new_calls > self.max_calls:
            return False
        return self.minutes is None or self.seconds < 60.0 * self.minutes

    def share(self, fraction: float) -> Budget:
        """The first ``fraction`` of this budget (same start): of its calls and of its minutes."""
        calls = None if self.max_calls is None else int(self.max_calls * fraction)
        minutes = None if self.minutes is None else self.minutes * fraction
        return replace(self, max_calls=calls, minutes=minutes)
