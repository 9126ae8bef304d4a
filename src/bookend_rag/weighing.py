"""Chunk weighing: the one place that says how much influence a chunk gets in a given span.

Placement asks a :class:`ChunkWeigher`, built once per call from the profile, the layout, the
chunk lengths and a :data:`WeightRule`, for the weight of chunk ``i`` spanning tokens ``[s, e)``
of an analysed sequence of ``N`` tokens. Write the profile's cumulative mass as
``F = F_c + P``: a continuous part ``F_c`` and point masses ``P`` (the theory's Recency Delta
``(1 - alpha)^H`` on the final token). With ``lbar`` the mean chunk length, the rules are

===========  =====================================================================================
rule         weight of chunk ``i`` on ``[s, e)``
===========  =====================================================================================
``slot``     every chunk counted at the mean length ``lbar``: the weight of its document slot,
             whatever its own length (the default; see ``bench/RESULTS.md``, "Chunk-weight
             rules"). Lengths still set the sequence length ``N`` and the budget.
``mass``     ``N · (F(e) - F(s)) / lbar``: the influence the chunk's tokens receive, in units of a
             mean-length chunk. No chunk gains weight by being shorter, but a long one does.
``anchored`` ``N · (F_c(e) - F_c(s)) / l_i + N · (P(e) - P(s)) / lbar``: mean density, with point
             masses credited to the slot that holds them as if it had the mean length.
``density``  ``N · (F(e) - F(s)) / l_i``: mean influence density over the span (the first
             design). A point mass then counts ``delta · N / l_i``, so short chunks win the ends.
===========  =====================================================================================

All four agree when the lengths are equal (then ``l_i = lbar``), so equal-length placement does not
depend on the rule. Under ``slot`` the most relevant chunk always takes the slot that the
equal-length weights rank heaviest (sorting, rearrangement inequality). Under ``mass`` a chunk never
gains weight by being shorter, and with a density
that does not rise before the final token the optimal order is the relevance order with one chunk
moved to the end (an exchange argument: swapping neighbours ``a, b`` changes the objective by
``(r_a - r_b) · (M(s, s + l_a) + M(s, s + l_b) - M(s, s + l_a + l_b))``, which is ``>= 0`` when the
density does not rise), so the most relevant chunk always lands first or last.

A per-document profile (``profile.per_document``) weighs document slots: every chunk counts as one
unit whatever its tokens, and whatever surrounds the chunks.

A new rule is a name in :data:`WeightRule`, its divisors in :meth:`ChunkWeigher.build` and its line
of ``explain()`` in :mod:`bookend_rag.placement.result`.
"""

from __future__ import annotations

import math
from typing import Literal, NamedTuple, TypeAlias

import numpy as np
import numpy.typing as npt

from bookend_rag.arrays import FloatArray
from bookend_rag.layout import Layout
from bookend_rag.profiles.base import InfluenceProfile

__all__ = [
    "DEFAULT_WEIGHT_RULE",
    "WEIGHT_RULES",
    "ChunkWeigher",
    "WeightRule",
    "check_weight_rule",
    "chunk_weights",
    "slot_weights",
]

WeightRule: TypeAlias = Literal["slot", "mass", "anchored", "density"]
WEIGHT_RULES: tuple[WeightRule, ...] = ("slot", "mass", "anchored", "density")
#: Chosen by measurement (``python bench/weight_rules.py``; ``bench/RESULTS.md``): of the rules that
#: never put the most relevant chunk in the middle, the best on real runs.
DEFAULT_WEIGHT_RULE: WeightRule = "slot"


def check_weight_rule(rule: object) -> WeightRule:
    """``rule`` if it names a rule, else a ``ValueError`` naming the parameter and the value."""
    if rule not in WEIGHT_RULES:
        raise ValueError(f"weight_rule must be one of {WEIGHT_RULES}, got weight_rule={rule!r}")
    return rule


class ChunkWeigher(NamedTuple):
    """Weights of chunks in spans, under one profile, layout and rule (see the module docstring).

    Build it with :meth:`build`; every length and offset it takes and returns is in its frame
    (tokens, or unit slots for a per-document profile or the ``slot`` rule). An immutable record
    (a named tuple: placement builds one per call, and a frozen dataclass costs several times as
    much to build).

    Attributes:
        profile: the influence profile.
        rule: the weight rule.
        lengths: per chunk, its length in the frame.
        prefix: frame length before the first movable chunk (fixed text and fixed chunks).
        total: frame length of the whole analysed sequence, ``N``.
        continuous_divisor: per chunk, what the continuous mass is divided by (``l_i`` or ``lbar``).
        point_divisor: per chunk, what point masses are divided by, or ``None`` when the profile's
            point masses need no separate treatment under this rule.
    """

    profile: InfluenceProfile
    rule: WeightRule
    lengths: FloatArray
    prefix: float
    total: float
    continuous_divisor: FloatArray
    point_divisor: FloatArray | None

    @classmethod
    def build(
        cls,
        profile: InfluenceProfile,
        lengths: npt.ArrayLike,
        layout: Layout | None = None,
        rule: WeightRule = DEFAULT_WEIGHT_RULE,
        *,
        fixed: tuple[float, float] = (0.0, 0.0),
    ) -> ChunkWeigher:
        """A weigher for movable chunks of ``lengths`` (tokens) inside ``layout``.

        Args:
            profile: the influence profile.
            lengths: per movable chunk its token count, positive and finite (checked where they
                enter: :func:`bookend_rag.inputs.validate_lengths`, :func:`chunk_weights`).
            layout: tokens before and after the chunks (default :class:`~bookend_rag.Layout`).
            rule: the weight rule.
            fixed: token lengths of a chunk fixed before and after the movable ones (a repeated
                top chunk), 0 for none. They count in the mean length and, for a per-document
                profile, as one slot each.
        """
        lens = np.asarray(lengths, dtype=np.float64)
        k = lens.size
        total_length = float(np.add.reduce(lens))
        front, back = fixed
        count = k + (front > 0) + (back > 0)
        mean = (total_length + front + back) / count if count else 1.0
        per_document = profile.per_document
        if per_document or rule == "slot":
            if per_document:
                mean = 1.0
            lens = np.empty(k)
            lens.fill(mean)
            total_length = mean * k
            front, back = (mean if front > 0 else 0.0), (mean if back > 0 else 0.0)
        if per_document:
            prefix, suffix = front, back
        else:
            lay = layout or Layout()
            prefix = lay.prefix_tokens + front
            suffix = lay.suffix_tokens + back
        # Under "slot" (and per-document profiles) every length already is the mean.
        shared = lens if rule == "slot" else np.full(k, mean)
        divisor = shared if rule == "mass" else lens
        point = shared if rule == "anchored" and profile.has_point_masses else None
        return cls(
            profile,
            rule,
            lens,
            float(prefix),
            float(prefix + total_length + suffix),
            divisor,
            point,
        )

    def parts(self, offsets: FloatArray) -> tuple[FloatArray, FloatArray | None]:
        """``(F_c, P)`` at frame offsets when point masses are weighed apart, else ``(F, None)``."""
        cdf = self.profile.cdf_at_tokens(offsets, self.total)
        if self.point_divisor is None:
            return cdf, None
        point = self.profile.point_mass_cdf_at_tokens(offsets, self.total)
        return cdf - point, point

    def unit_weights(self, chunks: npt.ArrayLike) -> tuple[FloatArray, FloatArray | None]:
        """Per chunk, its weight per unit of continuous mass, ``N / divisor``, and per unit of
        point mass (``None`` when point masses are not weighed apart)."""
        idx = np.asarray(chunks, dtype=np.int64)
        continuous = self.total / self.continuous_divisor[idx]
        point = None if self.point_divisor is None else self.total / self.point_divisor[idx]
        return continuous, point

    def weights_from_mass(
        self,
        chunks: npt.ArrayLike,
        continuous_mass: npt.ArrayLike,
        point_mass: npt.ArrayLike | None,
    ) -> FloatArray:
        """The rule's weight of ``chunks[...]`` whose spans hold these masses (``F_c`` and ``P``
        differences, as :meth:`parts` splits them; ``point_mass`` is ``None`` when it does)."""
        per_continuous, per_point = self.unit_weights(chunks)
        weights = np.asarray(continuous_mass) * per_continuous
        if point_mass is not None and per_point is not None:
            weights = weights + np.asarray(point_mass) * per_point
        return np.asarray(weights, dtype=np.float64)

    def span_weights(
        self, chunks: npt.ArrayLike, starts: npt.ArrayLike, ends: npt.ArrayLike
    ) -> FloatArray:
        """Weight of ``chunks[...]`` spanning ``[starts, ends)`` (arrays broadcast together)."""
        lo, lo_point = self.parts(np.asarray(starts, dtype=np.float64))
        hi, hi_point = self.parts(np.asarray(ends, dtype=np.float64))
        point = None if hi_point is None or lo_point is None else hi_point - lo_point
        return self.weights_from_mass(chunks, hi - lo, point)

    def weights_of_orders(self, orders: npt.ArrayLike) -> FloatArray:
        """Per row of ``orders`` (shape ``(M, K)`` or ``(K,)``), the weight of each position."""
        idx = np.asarray(orders, dtype=np.int64)
        if idx.shape[-1] == 0:
            return np.zeros(idx.shape)
        zero = np.zeros((*idx.shape[:-1], 1))
        # One profile evaluation for all edges of all rows: per-call overhead dominates at small K.
        edges = self.prefix + np.concatenate((zero, np.cumsum(self.lengths[idx], axis=-1)), axis=-1)
        continuous, point = self.parts(edges)
        point_mass = None if point is None else np.diff(point, axis=-1)
        return self.weights_from_mass(idx, np.diff(continuous, axis=-1), point_mass)

    def objective(self, orders: npt.ArrayLike, relevance: FloatArray) -> FloatArray:
        """The objective ``sum_p relevance[o_p] · w_p`` of each row of ``orders``: one value per
        row of an ``(M, K)`` batch, a 0-d array for one order of shape ``(K,)``."""
        idx = np.asarray(orders, dtype=np.int64)
        if idx.shape[-1] == 0:
            return np.zeros(idx.shape[:-1])
        return np.asarray(
            np.sum(relevance[idx] * self.weights_of_orders(idx), axis=-1), dtype=np.float64
        )

    @property
    def equal_lengths(self) -> bool:
        """Whether every movable chunk has the same frame length (weights depend on slots only)."""
        if self.rule == "slot" or self.profile.per_document:
            return True  # every length was set to the mean
        lens = self.lengths
        return bool(lens.size == 0 or lens.min() == lens.max())


def chunk_weights(
    profile: InfluenceProfile,
    lengths: npt.ArrayLike,
    layout: Layout | None = None,
    rule: WeightRule = DEFAULT_WEIGHT_RULE,
) -> FloatArray:
    """Weights of chunks of ``lengths`` laid end to end in the given order inside ``layout``
    (default :class:`~bookend_rag.Layout`), under ``rule``.

    Chunk ``i`` occupies ``[s_i, e_i)`` with ``s_0 = prefix`` and ``e_i = s_i + l_i`` in a
    sequence of ``N = prefix + sum(l) + suffix`` tokens; the rule says how the mass
    ``F(e_i / N) - F(s_i / N)`` becomes a weight (module docstring). With equal lengths every rule
    gives the mean influence density, 1.0 being a uniform share.
    """
    lens = np.asarray(lengths, dtype=np.float64)
    # min > 0 fails for NaN too; a finite sum rules out infinities (two reductions, no scan).
    if lens.ndim != 1 or (
        lens.size and not (np.minimum.reduce(lens) > 0 and math.isfinite(np.add.reduce(lens)))
    ):
        raise ValueError(f"lengths must be positive and finite, got lengths={lens.tolist()!r}")
    weigher = ChunkWeigher.build(profile, lens, layout, check_weight_rule(rule))
    return weigher.weights_of_orders(np.arange(lens.size))


def slot_weights(
    profile: InfluenceProfile, n_slots: int, layout: Layout | None = None
) -> FloatArray:
    """Weights of ``n_slots`` equal-length chunks (see :func:`chunk_weights`): the weight of each
    document slot, which the default ``slot`` rule gives every chunk whatever its length."""
    if n_slots < 0:
        raise ValueError(f"n_slots must be >= 0, got n_slots={n_slots!r}")
    return chunk_weights(profile, np.ones(n_slots), layout)
