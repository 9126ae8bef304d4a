"""The tabulated kinds: measured weights over equal bins, per token position or per slot."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Literal, TypeAlias, get_args

import numpy as np
import numpy.typing as npt

from bookend_rag.arrays import FloatArray
from bookend_rag.profiles.base import (
    PROFILE_FORMAT,
    PROFILE_VERSION,
    ProfileDescription,
    StoredProfile,
    check_header,
)

__all__ = ["TABLE_KINDS", "TableKind", "TabulatedProfile", "slot_table_at"]

TableKind: TypeAlias = Literal["position", "slot"]
TABLE_KINDS: tuple[TableKind, ...] = get_args(TableKind)


@dataclass(frozen=True, eq=False)
class TabulatedProfile(StoredProfile):
    """A measured profile: non-negative weights over equal bins of the analysed sequence.

    ``kind="position"`` holds one weight per token position (for example a Jacobian profile,
    position 1 first); ``kind="slot"`` one per equal slot (for example the accuracy of a model when
    the answer sits in slot ``k`` of ``K``). Either way the density is constant within a bin and the
    CDF is piecewise linear and monotone, so any chunk lengths can be evaluated.

    A slot table read at more slots ``K' > n`` than it has (:meth:`cdf_at_tokens` with
    ``total = K'``) gives slot ``j`` the weight at its centre of the line through the measured
    weights at their slot centres (:func:`slot_table_at`), not its bin's constant density: read
    that way, the two halves of a measured slot would tie, and the tie would go to the earlier
    one, away from a rising end. Read at fewer slots, each slot takes the mass of its span.

    Args:
        weights: non-negative, finite, not all zero; any scale (they are normalised).
        kind: ``"position"`` or ``"slot"``.
        label: a name for reports.
        metadata: free-form provenance (model, settings, confidence intervals ...).
    """

    weights: tuple[float, ...]
    kind: TableKind = "position"
    label: str = "tabulated"
    metadata: Mapping[str, Any] = field(default_factory=dict)
    _knots: tuple[FloatArray, FloatArray] = field(init=False, repr=False)
    _falls_throughout: bool = field(init=False, repr=False)
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
        if self.kind not in TABLE_KINDS:
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
        object.__setattr__(self, "_falls_throughout", bool(np.all(np.diff(w) <= 0)))

    @property
    def name(self) -> str:
        return self.label

    @property
    def per_document(self) -> bool:
        """``kind="slot"`` profiles are measured per document slot."""
        return self.kind == "slot"

    @property
    def density_falls_to_final_token(self) -> bool:
        """Whether no weight rises, the final bin's included: a bin spans many tokens, so a
        rising final bin is a rise before the final token."""
        return self._falls_throughout

    def describe(self) -> ProfileDescription:
        """A ``slot table`` or a ``position table``, by :attr:`kind`."""
        return replace(super().describe(), kind=f"{self.kind} table")

    def cdf(self, x: npt.ArrayLike) -> FloatArray:
        knots, cum = self._knots
        return np.asarray(np.interp(np.asarray(x, dtype=np.float64), knots, cum), dtype=np.float64)

    def cdf_at_tokens(self, offsets: npt.ArrayLike, total: float) -> FloatArray:
        """``F(offset / total)``; for a slot table read at ``total`` slots, more than it has, the
        CDF of the table resampled to ``total`` slots (:func:`slot_table_at`)."""
        if self.kind != "slot" or total <= len(self.weights) or not float(total).is_integer():
            return super().cdf_at_tokens(offsets, total)
        return _resampled(self, int(total)).cdf_at_tokens(offsets, total)

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
        weights = _at_centres(np.asarray(positions), np.asarray(values), n_bins)
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
    def from_json(cls, data: object, *, where: str = "profile") -> TabulatedProfile:
        """Build from the object written by :meth:`to_json`, its header checked first.

        Raises:
            ValueError: a bad header, missing or bad ``weights``, or no ``kind``: the same weights
                mean different things per position and per slot, so a table must say which.
        """
        table = check_header(data, where=where)
        if not isinstance(table.get("weights"), list):
            raise ValueError(
                f"{where} needs 'weights', a list of numbers, got weights={table.get('weights')!r}"
            )
        if "kind" not in table:
            raise ValueError(
                f"{where} needs 'kind': 'position' (one weight per token position) or 'slot' "
                "(one per document slot); the weights mean different things in each"
            )
        if table["kind"] not in TABLE_KINDS:
            raise ValueError(
                f"{where} has kind={table['kind']!r}; a table is 'position' or 'slot', and "
                "'fitted' holds fitted parameters"
            )
        return cls(
            weights=tuple(table["weights"]),
            kind=table["kind"],
            label=str(table.get("label", "tabulated")),
            metadata=dict(table.get("metadata", {})),
        )

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TabulatedProfile):
            return NotImplemented
        return (self.weights, self.kind) == (other.weights, other.kind)


def slot_table_at(weights: Sequence[float], n_slots: int) -> FloatArray:
    """A slot table of ``n`` weights read at ``n_slots >= n`` slots:
    ``w'_j = L((j + 1/2) / n_slots)`` with ``L`` the line through ``((i + 1/2) / n, w_i)``, flat
    beyond the outer centres.

    At ``n_slots = n`` the table itself; a monotone table stays monotone, every measured weight
    above zero keeps a slot above zero, and two new slots share a weight only where the table is
    flat.
    """
    if n_slots < len(weights):
        raise ValueError(
            f"n_slots must be >= the table's {len(weights)} slots, got n_slots={n_slots!r}"
        )
    w = np.asarray(weights, dtype=np.float64)
    return _at_centres((np.arange(w.size) + 0.5) / w.size, w, n_slots)


def _at_centres(positions: FloatArray, values: FloatArray, n_bins: int) -> FloatArray:
    """Values known at normalised ``positions``, interpolated linearly at the centres of
    ``n_bins`` equal bins (flat beyond the outer positions)."""
    centres = (np.arange(n_bins) + 0.5) / n_bins
    return np.asarray(np.interp(centres, positions, values), dtype=np.float64)


@lru_cache(maxsize=256)
def _resampled(table: TabulatedProfile, n_slots: int) -> TabulatedProfile:
    """``table`` at ``n_slots`` slots (cached on the table, whose hash is computed once:
    placement reads it on every call)."""
    weights = slot_table_at(table.weights, n_slots)
    return TabulatedProfile(weights=tuple(weights.tolist()), kind="slot")
