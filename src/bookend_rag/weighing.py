"""Chunk weighing: the one place that says how much influence a chunk gets in a given span.

Placement asks a :class:`ChunkWeigher`, built once per call from the profile, the layout, the
chunk lengths and a :class:`WeightRule`, for the weight of chunk ``i`` spanning tokens ``[s, e)``
of an analysed sequence of ``N`` tokens. Write the profile's cumulative mass as
``F = F_c + P``: a continuous part ``F_c`` and point masses ``P`` (the theory's Recency Delta
``(1 - alpha)^H`` on the final token), ``l_i`` for the chunk's length and ``lbar`` for the mean
chunk length. A rule divides the span's mass by a divisor per chunk, and may divide its point
masses by another: ``N · (F_c(e) - F_c(s)) / c_i + N · (P(e) - P(s)) / p_i``
(:meth:`WeightRule.divisors`). The rules bookend ships (:data:`WEIGHT_RULES`, ``slot`` the
default) are the :class:`WeightRule` subclasses below, each with its formula. All agree when the
lengths are equal (then ``l_i = lbar``), so equal-length placement does not depend on the rule.

A per-document profile (``profile.per_document``) weighs document slots: every chunk counts as one
unit whatever its tokens, and whatever surrounds the chunks.

A new rule is a :class:`WeightRule` subclass (its formula in its docstring) and
:func:`register_weight_rule`; a rule bookend ships is registered by its entry in ``_REGISTRY``.
Nothing else names a rule: ``weight_rule=`` takes the name, the optimisers read the rule's flags
and ``explain()`` its description.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Annotated, ClassVar, NamedTuple

import numpy as np
import numpy.typing as npt
from pydantic import BeforeValidator, Field

from bookend_rag.arrays import FloatArray
from bookend_rag.layout import Layout
from bookend_rag.profiles.base import InfluenceProfile
from bookend_rag.registry import Registry

__all__ = [
    "DEFAULT_WEIGHT_RULE",
    "WEIGHT_RULES",
    "AnchoredRule",
    "ChunkWeigher",
    "DensityRule",
    "Frame",
    "MassRule",
    "SlotRule",
    "WeightRule",
    "WeightRuleName",
    "chunk_frame",
    "chunk_weights",
    "register_weight_rule",
    "slot_weights",
    "unregister_weight_rule",
    "weight_rule_named",
    "weight_rule_names",
]


class WeightRule(ABC):
    """How the influence on a chunk's span becomes the chunk's weight: one object per rule,
    selected by its :attr:`name` (``weight_rule=``) once registered (:func:`register_weight_rule`).

    A subclass sets the class attributes and :meth:`divisors`, and gives its formula in its
    docstring. With equal lengths (``l_i = lbar``) its weights must be the mean density
    ``N · (F(e) - F(s)) / l_i``, as every rule here gives: slots are ranked on that
    (:mod:`bookend_rag.placement.sorted_assignment`).
    """

    #: What ``weight_rule=`` calls the rule.
    name: ClassVar[str]
    #: What a weight means under the rule, as ``Placement.explain()`` prints it.
    description: ClassVar[str]
    #: Every chunk counts at the mean length ``lbar``, so the weights depend on the slots only and
    #: sorting the chunks into the slots is exact whatever the lengths.
    at_mean_length: ClassVar[bool] = False
    #: A weight is its span's mass over a divisor every chunk shares, so on a density that does
    #: not rise the relevance order with the best final chunk is exact
    #: (:mod:`bookend_rag.placement.mass_path`).
    mass_path: ClassVar[bool] = False

    @abstractmethod
    def divisors(
        self, lengths: FloatArray, mean: float, profile: InfluenceProfile
    ) -> tuple[FloatArray, FloatArray | None]:
        """Per chunk, what its span's continuous mass is divided by, and what its point masses are
        divided by (``None``: as the continuous mass, so ``F`` is not split).

        Args:
            lengths: per chunk its length in the weigher's frame (all ``mean`` when
                :attr:`at_mean_length` or the profile is per-document).
            mean: the mean chunk length ``lbar`` in that frame, fixed chunks included.
            profile: the influence profile.
        """

    def __repr__(self) -> str:
        return f"<weight rule {self.name!r}>"


class SlotRule(WeightRule):
    """``slot``, the default: every chunk counted at the mean length ``lbar``, so its weight is
    ``N · (F(e) - F(s)) / lbar`` on the span its document slot would have with every chunk
    ``lbar`` long, whatever its own length (``bench/RESULTS.md``, "Chunk-weight rules"). Lengths
    still set the sequence length ``N`` and the budget. The most relevant chunk always takes the
    slot that the equal-length weights rank heaviest (sorting, rearrangement inequality)."""

    name = "slot"
    description = "weight of the document slot, every chunk at the mean length"
    at_mean_length = True
    mass_path = True

    def divisors(
        self, lengths: FloatArray, mean: float, profile: InfluenceProfile
    ) -> tuple[FloatArray, FloatArray | None]:
        """``lbar`` (every length already is the mean), no point masses apart."""
        return lengths, None


class MassRule(WeightRule):
    """``mass``: ``N · (F(e) - F(s)) / lbar``, the influence the chunk's tokens receive in units
    of a mean-length chunk. No chunk gains weight by being shorter, but a long one does. With a
    density that does not rise before the final token the optimal order is the relevance order
    with one chunk moved to the end (an exchange argument,
    :mod:`bookend_rag.placement.mass_path`), so the most relevant chunk always lands first or
    last."""

    name = "mass"
    description = "influence on the chunk's tokens per mean chunk length"
    mass_path = True

    def divisors(
        self, lengths: FloatArray, mean: float, profile: InfluenceProfile
    ) -> tuple[FloatArray, FloatArray | None]:
        """``lbar`` for every chunk, no point masses apart."""
        return np.full(lengths.size, mean), None


class AnchoredRule(WeightRule):
    """``anchored``: ``N · (F_c(e) - F_c(s)) / l_i + N · (P(e) - P(s)) / lbar``: mean density,
    with point masses credited to the slot that holds them as if it had the mean length."""

    name = "anchored"
    description = "mean influence density, point masses per mean chunk length"

    def divisors(
        self, lengths: FloatArray, mean: float, profile: InfluenceProfile
    ) -> tuple[FloatArray, FloatArray | None]:
        """``l_i``, and ``lbar`` for point masses when the profile has any (without, the second
        term is zero and ``F`` need not be split)."""
        return lengths, np.full(lengths.size, mean) if profile.has_point_masses else None


class DensityRule(WeightRule):
    """``density``: ``N · (F(e) - F(s)) / l_i``: mean influence density over the span (the first
    design). A point mass then counts ``delta · N / l_i``, so short chunks win the ends."""

    name = "density"
    description = "mean influence density over the chunk's span"

    def divisors(
        self, lengths: FloatArray, mean: float, profile: InfluenceProfile
    ) -> tuple[FloatArray, FloatArray | None]:
        """``l_i``, no point masses apart."""
        return lengths, None


#: Every rule ``weight_rule=`` takes, by name: the ones bookend ships, then the registered ones.
_REGISTRY: Registry[WeightRule] = Registry(
    "weight_rule",
    "weight rule",
    WeightRule,
    (SlotRule(), MassRule(), AnchoredRule(), DensityRule()),
    argument="rule",
)
#: The names of the rules bookend ships (:func:`weight_rule_names` adds the registered ones).
WEIGHT_RULES: tuple[str, ...] = _REGISTRY.shipped
#: Chosen by measurement (``python bench/weight_rules.py``; ``bench/RESULTS.md``): of the rules that
#: never put the most relevant chunk in the middle, the best on real runs.
DEFAULT_WEIGHT_RULE: str = SlotRule.name

#: A setting that names a registered rule (``PlacementConfig.weight_rule``): a ``str`` checked
#: against the registry when validated, so a registered rule is accepted everywhere.
WeightRuleName = Annotated[
    str, BeforeValidator(_REGISTRY.validated), Field(json_schema_extra=_REGISTRY.schema)
]


def register_weight_rule(rule: WeightRule) -> WeightRule:
    """Make ``rule`` a value of ``weight_rule=`` under ``rule.name`` (in ``reorder``,
    ``Bookend``, ``PlacementConfig`` and the adapters); returns ``rule``.

    Raises:
        TypeError: ``rule`` is not a :class:`WeightRule` instance (a class, say).
        ValueError: a rule already has that name.
    """
    return _REGISTRY.register(rule)


def unregister_weight_rule(name: str) -> None:
    """Withdraw the rule registered as ``name``: ``weight_rule=name`` raises again.

    Raises:
        ValueError: no rule has that name, or it is one bookend ships (placement's default and
            its saved configurations name them).
    """
    _REGISTRY.unregister(name)


def weight_rule_names() -> tuple[str, ...]:
    """The names ``weight_rule=`` takes: the rules bookend ships, then the registered ones."""
    return _REGISTRY.names()


def weight_rule_named(name: object) -> WeightRule:
    """The rule ``weight_rule=name`` selects, else a ``ValueError`` naming the parameter and the
    value."""
    return _REGISTRY.named(name)


class Frame(NamedTuple):
    """Where movable chunks sit in a weigher's frame (:meth:`ChunkWeigher.build`).

    Attributes:
        mean: the mean chunk length ``lbar`` in the frame, fixed chunks included.
        prefix: frame length before the first movable chunk.
        total: frame length of the whole analysed sequence, ``N``.
        at_mean_length: every movable chunk counts at ``mean`` (the rule's
            :attr:`~WeightRule.at_mean_length`, or a per-document profile, where ``mean`` is 1).
    """

    mean: float
    prefix: float
    total: float
    at_mean_length: bool


def chunk_frame(
    profile: InfluenceProfile,
    rule: WeightRule,
    total_length: float,
    k: int,
    layout: Layout | None = None,
    fixed: tuple[float, float] = (0.0, 0.0),
) -> Frame:
    """The frame of ``k`` movable chunks of ``total_length`` tokens in all (arguments as in
    :meth:`ChunkWeigher.build`).

    Scalars only, so the small-K path (:mod:`bookend_rag.placement.small_k`), which sums its
    lengths in Python, gets the frame the array path gets: whole token counts sum exactly either
    way (:data:`~bookend_rag.inputs.MAX_TOKENS`).
    """
    front, back = fixed
    count = k + (front > 0) + (back > 0)
    mean = (total_length + front + back) / count if count else 1.0
    per_document = profile.per_document
    at_mean_length = per_document or rule.at_mean_length
    if at_mean_length:
        if per_document:
            mean = 1.0
        total_length = mean * k
        front, back = (mean if front > 0 else 0.0), (mean if back > 0 else 0.0)
    if per_document:
        prefix, suffix = front, back
    else:
        lay = layout or Layout()
        prefix = lay.prefix_tokens + front
        suffix = lay.suffix_tokens + back
    return Frame(mean, float(prefix), float(prefix + total_length + suffix), at_mean_length)


class ChunkWeigher(NamedTuple):
    """Weights of chunks in spans, under one profile, layout and rule (see the module docstring).

    Build it with :meth:`build`; every length and offset it takes and returns is in its frame
    (tokens, every length the mean under an :attr:`~WeightRule.at_mean_length` rule, or unit slots
    for a per-document profile). An immutable record (a named tuple: placement builds one per
    call, and a frozen dataclass costs several times as much to build).

    Attributes:
        profile: the influence profile.
        rule: the weight rule.
        lengths: per chunk, its length in the frame.
        prefix: frame length before the first movable chunk (fixed text and fixed chunks).
        total: frame length of the whole analysed sequence, ``N``.
        continuous_divisor: per chunk, what the continuous mass is divided by
            (:meth:`WeightRule.divisors`).
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
        rule: str = DEFAULT_WEIGHT_RULE,
        *,
        fixed: tuple[float, float] = (0.0, 0.0),
    ) -> ChunkWeigher:
        """A weigher for movable chunks of ``lengths`` (tokens) inside ``layout``.

        Args:
            profile: the influence profile.
            lengths: per movable chunk its token count, positive and finite (checked where they
                enter: :func:`bookend_rag.inputs.validate_lengths`, :func:`chunk_weights`).
            layout: tokens before and after the chunks (default :class:`~bookend_rag.Layout`).
            rule: the name of a registered weight rule (else a ``ValueError``).
            fixed: token lengths of a chunk fixed before and after the movable ones (a repeated
                top chunk), 0 for none. They count in the mean length and, for a per-document
                profile, as one slot each.
        """
        weight_rule = weight_rule_named(rule)
        lens = np.asarray(lengths, dtype=np.float64)
        k = lens.size
        frame = chunk_frame(profile, weight_rule, float(np.add.reduce(lens)), k, layout, fixed)
        if frame.at_mean_length:
            lens = np.empty(k)
            lens.fill(frame.mean)
        divisor, point = weight_rule.divisors(lens, frame.mean, profile)
        return cls(profile, weight_rule, lens, frame.prefix, frame.total, divisor, point)

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
        if self.rule.at_mean_length or self.profile.per_document:
            return True  # every length was set to the mean
        lens = self.lengths
        return bool(lens.size == 0 or lens.min() == lens.max())


def chunk_weights(
    profile: InfluenceProfile,
    lengths: npt.ArrayLike,
    layout: Layout | None = None,
    rule: str = DEFAULT_WEIGHT_RULE,
) -> FloatArray:
    """Weights of chunks of ``lengths`` laid end to end in the given order inside ``layout``
    (default :class:`~bookend_rag.Layout`), under the rule named ``rule``.

    Chunk ``i`` occupies ``[s_i, e_i)`` with ``s_0 = prefix`` and ``e_i = s_i + l_i`` in a
    sequence of ``N = prefix + sum(l) + suffix`` tokens; the rule says how the mass
    ``F(e_i / N) - F(s_i / N)`` becomes a weight (:class:`WeightRule`). With equal lengths every
    rule gives the mean influence density, 1.0 being a uniform share.
    """
    lens = np.asarray(lengths, dtype=np.float64)
    # min > 0 fails for NaN too; a finite sum rules out infinities (two reductions, no scan).
    if lens.ndim != 1 or (
        lens.size and not (np.minimum.reduce(lens) > 0 and math.isfinite(np.add.reduce(lens)))
    ):
        raise ValueError(f"lengths must be positive and finite, got lengths={lens.tolist()!r}")
    weigher = ChunkWeigher.build(profile, lens, layout, rule)
    return weigher.weights_of_orders(np.arange(lens.size))


def slot_weights(
    profile: InfluenceProfile, n_slots: int, layout: Layout | None = None
) -> FloatArray:
    """Weights of ``n_slots`` equal-length chunks (see :func:`chunk_weights`): the weight of each
    document slot, which the default ``slot`` rule gives every chunk whatever its length."""
    if n_slots < 0:
        raise ValueError(f"n_slots must be >= 0, got n_slots={n_slots!r}")
    return chunk_weights(profile, np.ones(n_slots), layout)
