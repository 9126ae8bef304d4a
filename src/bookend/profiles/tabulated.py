"""The tabulated kinds: measured weights over equal bins, per token position or per slot."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, get_args

import numpy as np
import numpy.typing as npt

from bookend.arrays import FloatArray
from bookend.profiles.base import PROFILE_FORMAT, PROFILE_VERSION, StoredProfile, check_header

__all__ = ["TABLE_KINDS", "TableKind", "TabulatedProfile"]

TableKind: TypeAlias = Literal["position", "slot"]
TABLE_KINDS: tuple[TableKind, ...] = get_args(TableKind)


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
    kind: TableKind = "position"
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
