"""Influence profiles: how much each part of the analysed sequence influences the answer.

Every profile is a cumulative mass function ``F`` on ``[0, 1]`` (fractions of the analysed
sequence, ``F(0) = 0``, ``F(1) = 1``). From it, :meth:`InfluenceProfile.chunk_weights` turns chunk
lengths inside a :class:`Layout` into per-chunk weights: the mean influence density over each
chunk's span, ``(F(e) - F(s)) / (e - s)``, so a weight of 1 is the uniform share and a weight of 2
twice that.

Two implementations: :class:`TheoryProfile` (the Cesàro theory for a :class:`ModelSpec`) and
:class:`TabulatedProfile` (measured per-position or per-slot weights, with a monotone piecewise
linear CDF), which saves to and loads from a versioned JSON file.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeAlias

import numpy as np
import numpy.typing as npt

from bookend.arrays import FloatArray
from bookend.layout import Layout
from bookend.spec import ModelSpec
from bookend.theory import influence_cdf, recency_delta

__all__ = [
    "PROFILE_FORMAT",
    "PROFILE_VERSION",
    "InfluenceProfile",
    "TabulatedProfile",
    "TheoryProfile",
    "load_profile",
    "profile_from_json",
]

PROFILE_FORMAT = "bookend-profile"
PROFILE_VERSION = 1


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
        and whatever surrounds the chunks: see :meth:`placement_frame`.
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
    def density_non_increasing(self) -> bool:
        """Whether the density never rises from front to back, apart from the final token.

        Then, under the ``mass`` rule, the relevance order with one chunk moved to the end is
        optimal, and under the others chunks ordered by relevance per token (Smith's rule) are the
        right start. ``False`` unless a profile knows better.
        """
        return False

    def chunk_weights(
        self, lengths: npt.ArrayLike, layout: Layout | None = None, rule: str | None = None
    ) -> FloatArray:
        """Weights of chunks of ``lengths`` laid end to end in the given order.

        Chunk ``i`` occupies ``[s_i, e_i)`` with ``s_0 = prefix`` and ``e_i = s_i + l_i`` in a
        sequence of ``N = prefix + sum(l) + suffix`` tokens; ``rule`` (default: the library's
        default, ``"slot"``) says how the mass ``F(e_i / N) - F(s_i / N)`` becomes a weight (see
        :mod:`bookend.weighing`). With equal lengths every rule gives the mean influence density,
        1.0 being a uniform share.
        """
        from bookend.weighing import DEFAULT_WEIGHT_RULE, ChunkWeigher, check_weight_rule

        lens = np.asarray(lengths, dtype=np.float64)
        weigher = ChunkWeigher.build(
            self, lens, layout, check_weight_rule(rule or DEFAULT_WEIGHT_RULE)
        )
        return weigher.weights_of_orders(np.arange(lens.size))

    def cdf_at_tokens(self, offsets: npt.ArrayLike, total: float) -> FloatArray:
        """``F(offset / total)`` for token offsets in ``[0, total]``.

        Offsets within floating-point rounding of ``total`` are the end of the sequence, so the
        final token's mass (the Recency Delta) is never lost to a cumulative sum that rounds low.
        """
        x = np.asarray(offsets, dtype=np.float64) / total
        return self.cdf(np.where(x >= 1.0 - 1e-12, 1.0, x))

    def slot_weights(self, n_slots: int, layout: Layout | None = None) -> FloatArray:
        """Weights of ``n_slots`` equal-length chunks (see :meth:`chunk_weights`)."""
        if n_slots < 0:
            raise ValueError(f"n_slots must be >= 0, got n_slots={n_slots!r}")
        return self.chunk_weights(np.ones(n_slots), layout)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class StoredProfile(InfluenceProfile):
    """A profile with a versioned JSON form (:meth:`to_json`) that :meth:`save` writes and
    :func:`load_profile` reads back."""

    @abstractmethod
    def to_json(self) -> dict[str, Any]:
        """The versioned JSON object (``format``, ``version``, ``kind`` and the profile's data)."""

    def save(self, path: str | Path) -> Path:
        """Write the profile as JSON; returns the path."""
        out = Path(path)
        out.write_text(json.dumps(self.to_json(), indent=2) + "\n", encoding="utf-8")
        return out


@dataclass(frozen=True)
class TheoryProfile(InfluenceProfile):
    """The continuous Cesàro influence profile of a :class:`ModelSpec` (:mod:`bookend.theory`)."""

    spec: ModelSpec
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Profiles key the slot-weight caches, so hash once instead of on every lookup.
        object.__setattr__(self, "_hash", hash(self.spec))

    def __hash__(self) -> int:
        return self._hash

    @property
    def name(self) -> str:
        return self.spec.label()

    def cdf(self, x: npt.ArrayLike) -> FloatArray:
        return influence_cdf(x, self.spec.depth, self.spec.alpha)

    @property
    def density_non_increasing(self) -> bool:
        """Always: every ``(ln 1/x)^(k-1)`` term decreases; the delta sits on the final token."""
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


ProfileKind: TypeAlias = Literal["position", "slot"]


@dataclass(frozen=True, eq=False)
class TabulatedProfile(StoredProfile):
    """A measured profile: non-negative weights over equal bins of the analysed sequence.

    ``kind="position"`` holds one weight per token position (for example a Jacobian profile,
    position 1 first); ``kind="slot"`` one per equal slot (for example the accuracy of a model when
    the answer sits in slot ``k`` of ``K``). Either way the density is constant within a bin and the
    CDF is piecewise linear and monotone, so any chunk lengths can be evaluated.

    Args:
        weights: non-negative, finite, not all zero; any scale (they are normalised).
        kind: ``"position"`` or ``"slot"``.
        label: a name for reports.
        metadata: free-form provenance (model, settings, confidence intervals ...).
    """

    weights: tuple[float, ...]
    kind: ProfileKind = "position"
    label: str = "tabulated"
    metadata: Mapping[str, Any] = field(default_factory=dict)
    _knots: tuple[FloatArray, FloatArray] = field(init=False, repr=False)
    _hash: int = field(init=False, repr=False)

    def __post_init__(self) -> None:
        w = np.asarray(self.weights, dtype=np.float64)
        if w.ndim != 1 or w.size == 0:
            raise ValueError(
                f"weights must be a non-empty 1-D sequence, got weights={self.weights!r}"
            )
        if not np.all(np.isfinite(w)) or np.any(w < 0) or not np.any(w > 0):
            raise ValueError(
                "weights must be finite, non-negative and not all zero, "
                f"got weights={self.weights!r}"
            )
        if self.kind not in ("position", "slot"):
            raise ValueError(f"kind must be 'position' or 'slot', got kind={self.kind!r}")
        weights = tuple(float(v) for v in w)
        object.__setattr__(self, "weights", weights)
        # The CDF knots and the hash are used on every placement: compute them once.
        knots = np.linspace(0.0, 1.0, w.size + 1)
        # Scale by the largest weight first: weights near the float maximum must not overflow.
        scaled = w / w.max()
        cum = np.concatenate(([0.0], np.cumsum(scaled))) / scaled.sum()
        object.__setattr__(self, "_knots", (knots, cum))
        object.__setattr__(self, "_hash", hash((weights, self.kind)))

    @property
    def name(self) -> str:
        return self.label

    @property
    def per_document(self) -> bool:
        """``kind="slot"`` profiles are measured per document slot."""
        return self.kind == "slot"

    @property
    def density_non_increasing(self) -> bool:
        """Whether the weights never rise, the final bin (which holds the final token) aside."""
        return bool(np.all(np.diff(self.weights[:-1]) <= 0))

    def cdf(self, x: npt.ArrayLike) -> FloatArray:
        knots, cum = self._knots
        return np.asarray(np.interp(np.asarray(x, dtype=np.float64), knots, cum), dtype=np.float64)

    @classmethod
    def from_points(
        cls,
        positions: Sequence[float],
        values: Sequence[float],
        n_bins: int,
        **kwargs: Any,
    ) -> TabulatedProfile:
        """Interpolate values known at some normalised positions (bin centres in ``[0, 1]``)
        linearly onto ``n_bins`` equal slots; used for published accuracy-by-position curves."""
        if len(positions) != len(values) or len(positions) < 2:
            raise ValueError(
                f"positions and values must have the same length >= 2, got "
                f"{len(positions)} positions and {len(values)} values"
            )
        centres = (np.arange(n_bins) + 0.5) / n_bins
        weights = np.interp(centres, np.asarray(positions), np.asarray(values))
        return cls(weights=tuple(weights.tolist()), kind="slot", **kwargs)

    def to_json(self) -> dict[str, Any]:
        """The versioned JSON object written by :meth:`save`."""
        return {
            "format": PROFILE_FORMAT,
            "version": PROFILE_VERSION,
            "kind": self.kind,
            "label": self.label,
            "weights": list(self.weights),
            "metadata": dict(self.metadata),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TabulatedProfile:
        """Build from the object written by :meth:`to_json`, checking format and version."""
        if data.get("format") != PROFILE_FORMAT:
            raise ValueError(
                f"not a bookend profile: format={data.get('format')!r} "
                f"(expected {PROFILE_FORMAT!r})"
            )
        version = data.get("version")
        if version != PROFILE_VERSION:
            raise ValueError(
                f"unsupported profile version={version!r} (this bookend reads {PROFILE_VERSION})"
            )
        return cls(
            weights=tuple(data["weights"]),
            kind=data.get("kind", "position"),
            label=str(data.get("label", "tabulated")),
            metadata=dict(data.get("metadata", {})),
        )

    @classmethod
    def load(cls, path: str | Path) -> TabulatedProfile:
        """Read a profile written by :meth:`save` (see :func:`load_profile`)."""
        profile = load_profile(path)
        if not isinstance(profile, TabulatedProfile):
            raise ValueError(
                f"profile file path={str(path)!r} holds a {profile.name!r} profile, "
                "not a table: use load_profile"
            )
        return profile

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TabulatedProfile):
            return NotImplemented
        return (self.weights, self.kind) == (other.weights, other.kind)


def profile_from_json(data: Any, *, where: str = "profile") -> InfluenceProfile:
    """A profile from its JSON object (the ``to_json()`` form), checking its shape first: a
    measured table (:meth:`TabulatedProfile.to_json`) or, for ``"kind": "fitted"``, a fitted
    profile (:meth:`bookend.fitted.FittedProfile.to_json`).

    ``where`` names the input in error messages (a path, or ``model``).

    Raises:
        ValueError: not an object, not a bookend profile (a Hugging Face ``config.json`` is named
            as such), an unsupported version or kind, or missing or bad ``weights``.
    """
    if not isinstance(data, Mapping):
        raise ValueError(
            f"{where} must be a JSON object with format={PROFILE_FORMAT!r}, "
            f"got a {type(data).__name__}"
        )
    if data.get("format") != PROFILE_FORMAT:
        hint = ""
        if any(k in data for k in ("num_hidden_layers", "n_layer", "model_type")):
            hint = (
                "; it looks like a Hugging Face config.json: pass "
                "ModelSpec.from_hf_config(path) as the model instead"
            )
        raise ValueError(
            f"{where} is not a bookend profile: format={data.get('format')!r} "
            f"(expected {PROFILE_FORMAT!r}){hint}"
        )
    if data.get("kind") == "fitted":
        from bookend.fitted import FittedProfile  # fitted builds on this module

        return FittedProfile.from_json(data)
    if not isinstance(data.get("weights"), list):
        raise ValueError(
            f"{where} needs 'weights', a list of numbers, got weights={data.get('weights')!r}"
        )
    return TabulatedProfile.from_json(data)


def load_profile(path: str | Path) -> InfluenceProfile:
    """Read a profile JSON file (see :meth:`TabulatedProfile.save`).

    Raises:
        ValueError: a missing file, a directory, a file that is not JSON or not a profile.
    """
    source = Path(path)
    where = f"profile file path={str(path)!r}"
    if not source.is_file():
        problem = "is a directory" if source.is_dir() else "not found"
        raise ValueError(f"profile file {problem}: path={str(path)!r}")
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{where} is not JSON ({exc})") from None
    return profile_from_json(data, where=where)
