"""The profile protocol every kind implements, and the versioned JSON form stored kinds share.

An influence profile says how much each part of the analysed sequence influences the answer, as a
cumulative mass function ``F`` on ``[0, 1]`` (fractions of the sequence, ``F(0) = 0``,
``F(1) = 1``, the final token included). Turning ``F`` into chunk weights is
:mod:`bookend_rag.weighing`'s job; a profile only answers questions about its own shape.

Profiles with a JSON form (:class:`StoredProfile`) write one object, ``{"format":
"bookend-profile", "version": 1, "kind": ..., ...}``; :func:`check_header` is the one check of
that header, which every kind's ``from_json`` calls before reading its own fields.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from bookend_rag.arrays import FloatArray

__all__ = [
    "PROFILE_FORMAT",
    "PROFILE_VERSION",
    "InfluenceProfile",
    "ProfileDescription",
    "StoredProfile",
    "check_header",
]

PROFILE_FORMAT = "bookend-profile"
PROFILE_VERSION = 1

# Keys of a Hugging Face config.json: a common mix-up worth naming in the error.
_HF_CONFIG_KEYS = ("num_hidden_layers", "n_layer", "model_type")


@dataclass(frozen=True)
class ProfileDescription:
    """How :meth:`~bookend_rag.Placement.explain` speaks of a kind of profile
    (:meth:`InfluenceProfile.describe`).

    Attributes:
        kind: what the profile is, said before its name on the ``decided by`` line
            (``"theory profile"``, ``"slot table"``).
        final_token: what the final token of the analysed sequence holds, as the ``layout`` line
            names it (``"the Recency Delta"``).
    """

    kind: str
    final_token: str


class InfluenceProfile(ABC):
    """Influence over the analysed sequence as a cumulative mass function on ``[0, 1]``."""

    @property
    @abstractmethod
    def name(self) -> str:
        """A label for reports."""

    @abstractmethod
    def cdf(self, x: npt.ArrayLike) -> FloatArray:
        """Mass on ``[0, x]``: non-decreasing, 0 at 0 and 1 at 1 (the final token included)."""

    @property
    def per_document(self) -> bool:
        """Whether the weights belong to document slots rather than to token positions.

        A per-document profile (for example the accuracy of a model with the answer in slot
        ``k`` of ``K``) gives the chunk in slot ``k`` slot ``k``'s weight whatever its token length
        and whatever surrounds the chunks.
        """
        return False

    @property
    def has_point_masses(self) -> bool:
        """Whether the profile puts mass on single tokens (see :meth:`point_mass_cdf_at_tokens`)."""
        return False

    def point_mass_cdf_at_tokens(self, offsets: npt.ArrayLike, total: float) -> FloatArray:
        """The point-mass part ``P`` of :meth:`cdf_at_tokens` (``F = F_c + P``); none by default."""
        return np.zeros(np.shape(offsets))

    @property
    def density_falls_to_final_token(self) -> bool:
        """Whether the density never rises anywhere before the final token (a table's rising
        final bin is such a rise: it spans many tokens).

        Then equal spans that end before the final token weigh less from front to back, and
        placement ranks such slots front to back without weighing them; under the ``mass`` rule
        the relevance order with one chunk moved to the end is optimal; and local search needs
        one start (a density that rises again has several local optima). ``False`` unless a
        profile knows better.
        """
        return False

    def describe(self) -> ProfileDescription:
        """How an explanation speaks of this kind of profile: a kind that has more to say (the
        theory's Recency Delta, a table's unit) overrides this, so the explanation needs no
        branch per kind."""
        return ProfileDescription(kind="profile", final_token="the final token")

    def cdf_at_tokens(self, offsets: npt.ArrayLike, total: float) -> FloatArray:
        """``F(offset / total)`` for token offsets in ``[0, total]``.

        Offsets within floating-point rounding of ``total`` are the end of the sequence, so the
        final token's mass (the Recency Delta) is never lost to a cumulative sum that rounds low.
        """
        x = np.asarray(offsets, dtype=np.float64) / total
        return self.cdf(np.where(x >= 1.0 - 1e-12, 1.0, x))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class StoredProfile(InfluenceProfile):
    """A profile with a versioned JSON form (:meth:`to_json`), which :meth:`save` writes and
    :func:`bookend_rag.profiles.io.load_profile` reads back."""

    @abstractmethod
    def to_json(self) -> dict[str, Any]:
        """The versioned JSON object (``format``, ``version``, ``kind`` and the profile's data)."""

    def save(self, path: str | Path) -> Path:
        """Write the profile as JSON; returns the path."""
        out = Path(path)
        out.write_text(json.dumps(self.to_json(), indent=2) + "\n", encoding="utf-8")
        return out


def check_header(data: object, *, where: str, kind: str | None = None) -> Mapping[str, Any]:
    """``data`` as a mapping, once its header is checked: a JSON object, ``format`` and
    ``version`` as this bookend writes them and, when ``kind`` is given, that ``kind``.

    ``where`` names the input in the messages (a path, or ``model``).

    Raises:
        ValueError: not an object, not a bookend profile (a Hugging Face ``config.json`` is named
            as such), an unsupported version, or another kind.
    """
    if not isinstance(data, Mapping):
        raise ValueError(
            f"{where} must be a JSON object with format={PROFILE_FORMAT!r}, "
            f"got a {type(data).__name__}"
        )
    what = f"{kind} bookend profile" if kind else "bookend profile"
    if data.get("format") != PROFILE_FORMAT or (kind and data.get("kind") != kind):
        hint = ""
        if any(k in data for k in _HF_CONFIG_KEYS):
            hint = (
                "; it looks like a Hugging Face config.json: pass "
                "ModelSpec.from_hf_config(path) as the model instead"
            )
        expected = f"format={PROFILE_FORMAT!r}" + (f", kind={kind!r}" if kind else "")
        raise ValueError(
            f"{where} is not a {what}: format={data.get('format')!r}, kind={data.get('kind')!r} "
            f"(expected {expected}){hint}"
        )
    version = data.get("version")
    if version != PROFILE_VERSION:
        raise ValueError(
            f"{where} has an unsupported profile version={version!r} "
            f"(this bookend reads {PROFILE_VERSION})"
        )
    return data
