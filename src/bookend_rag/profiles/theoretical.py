"""The theory kind: the continuous Cesàro influence profile of a :class:`~bookend_rag.ModelSpec`."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from bookend_rag.arrays import FloatArray
from bookend_rag.profiles.base import InfluenceProfile, ProfileDescription
from bookend_rag.spec import ModelSpec
from bookend_rag.theory import influence_cdf, recency_delta

__all__ = ["TheoryProfile"]


@dataclass(frozen=True)
class TheoryProfile(InfluenceProfile):
    """``F(x) = sum_{k>=1} w_k Q(k, ln 1/x)`` with the Recency Delta ``(1 - alpha)^H`` at ``x = 1``
    (:func:`bookend_rag.theory.influence_cdf`), for the spec's depth ``H`` and attention share
    ``alpha``. Its JSON form is the spec's (``{"depth": ..., "attn_share": ...}``)."""

    spec: ModelSpec
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Profiles key the slot-ranking cache, so hash once instead of on every lookup.
        object.__setattr__(self, "_hash", hash(self.spec))

    def __hash__(self) -> int:
        return self._hash

    @property
    def name(self) -> str:
        return self.spec.label()

    def cdf(self, x: npt.ArrayLike) -> FloatArray:
        return influence_cdf(x, self.spec.depth, self.spec.alpha)

    def describe(self) -> ProfileDescription:
        """A theory profile, whose final token holds the Recency Delta."""
        return ProfileDescription(kind="theory profile", final_token="the Recency Delta")

    @property
    def density_falls_to_final_token(self) -> bool:
        """Always: every ``(ln 1/x)^(k-1)`` term decreases; the delta is the final token's
        alone."""
        return True

    @property
    def has_point_masses(self) -> bool:
        """The Recency Delta ``(1 - alpha)^H`` sits on the final token."""
        return self.spec.alpha < 1.0

    def point_mass_cdf_at_tokens(self, offsets: npt.ArrayLike, total: float) -> FloatArray:
        """``(1 - alpha)^H`` from the end of the sequence on (offsets within rounding of
        ``total`` count as the end), 0 before."""
        x = np.asarray(offsets, dtype=np.float64) / total
        delta = recency_delta(self.spec.depth, self.spec.alpha)
        return np.where(x >= 1.0 - 1e-12, delta, 0.0)
