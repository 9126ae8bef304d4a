"""The :class:`Placement` result: the chosen order and everything needed to explain it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Generic, TypeVar

import numpy as np

from bookend_rag.arrays import FloatArray, IntArray
from bookend_rag.layout import Layout
from bookend_rag.placement.orders import alternate_order, rank_order, weight_tiers
from bookend_rag.profiles.base import InfluenceProfile
from bookend_rag.profiles.tabulated import TabulatedProfile
from bookend_rag.profiles.theory import TheoryProfile
from bookend_rag.weighing import ChunkWeigher, weight_rule_named

__all__ = ["ChunkSlot", "Placement"]

T = TypeVar("T")


@dataclass(frozen=True)
class ChunkSlot:
    """Where one chunk went and why.

    Attributes:
        slot: position in the prompt, 0 first.
        index: the chunk's index in the caller's input.
        start: first token of its span inside the analysed sequence (prefix included).
        end: one past its last token.
        weight: the chunk's weight under the placement's weight rule (1 = a uniform share for a
            mean-length chunk).
        relevance: the relevance used by the objective (normalised score or rank prior).
        score: the caller's raw score, or ``None``.
    """

    slot: int
    index: int
    start: int
    end: int
    weight: float
    relevance: float
    score: float | None


@dataclass(frozen=True, eq=False, init=False)
class Placement(Generic[T]):
    """The result of placing chunks: order, spans, weights and objective.

    Attributes:
        order: input indices in prompt order (the top chunk appears first and last when
            ``repeated``).
        items: the caller's items in prompt order.
        relevance: per input index, the relevance the objective used (dropped items included).
        lengths: per input index, the token count used.
        scores: per input index, the caller's raw score, or ``None`` without scores.
        dropped: input indices left out by ``drop_lookalikes``, ``top_k`` or a token budget
            (empty without them).
        dropped_by_top_k: those of :attr:`dropped` that ``top_k`` left out.
        dropped_as_lookalikes: those of :attr:`dropped` that were look-alikes of a more relevant
            chunk (``drop_lookalikes``); the token budget left out the others.
        strategy: the strategy that chose ``order``.
        profile: the influence profile used.
        layout: tokens before and after the chunks in the analysed sequence.
        weight_rule: the name of the rule by which span influence became chunk weights
            (:class:`~bookend_rag.weighing.WeightRule`).
        competition: ``None`` (relevance times weight was maximised) or the pull of an
            irrelevant chunk under which the expected answer share was maximised
            (:mod:`bookend_rag.placement.competing`).
        repeated: whether the top chunk was repeated at both ends (``repeat_top``).
        notes: why a requested option did not apply (for example no room for a repeat, or
            scores given with one missing, so that the input order stood for relevance), and
            that the model was placed with the default order when bookend knows no
            architecture for its name (a closed API model such as ``gpt-4o``).

    Two placements are equal when they hold the same order, items, arrays and settings; the hash
    leaves the items out, so placements of unhashable items (documents) hash too.
    """

    order: tuple[int, ...]
    items: list[T]
    relevance: FloatArray
    lengths: FloatArray
    scores: FloatArray | None
    dropped: tuple[int, ...]
    dropped_by_top_k: tuple[int, ...]
    dropped_as_lookalikes: tuple[int, ...]
    strategy: str
    profile: InfluenceProfile
    layout: Layout
    weight_rule: str
    competition: float | None
    repeated: bool
    notes: tuple[str, ...]

    def __init__(
        self,
        *,
        order: tuple[int, ...],
        items: list[T],
        relevance: FloatArray,
        lengths: FloatArray,
        scores: FloatArray | None,
        dropped: tuple[int, ...],
        dropped_by_top_k: tuple[int, ...],
        dropped_as_lookalikes: tuple[int, ...],
        strategy: str,
        profile: InfluenceProfile,
        layout: Layout,
        weight_rule: str,
        competition: float | None,
        repeated: bool,
        notes: tuple[str, ...],
    ) -> None:
        # Frozen: the fields go once, straight into the instance dict; the generated __init__
        # pays an object.__setattr__ per field, more than placing 20 chunks costs (and locals()
        # costs more than naming them).
        vars(self).update(
            order=order,
            items=items,
            relevance=relevance,
            lengths=lengths,
            scores=scores,
            dropped=dropped,
            dropped_by_top_k=dropped_by_top_k,
            dropped_as_lookalikes=dropped_as_lookalikes,
            strategy=strategy,
            profile=profile,
            layout=layout,
            weight_rule=weight_rule,
            competition=competition,
            repeated=repeated,
            notes=notes,
        )

    def _key(self) -> tuple[Any, ...]:
        return (
            self.order,
            self.dropped,
            self.dropped_by_top_k,
            self.dropped_as_lookalikes,
            self.strategy,
            self.profile,
            self.layout,
            self.weight_rule,
            self.competition,
            self.repeated,
            self.notes,
            self.relevance.tobytes(),
            self.lengths.tobytes(),
            None if self.scores is None else self.scores.tobytes(),
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Placement):
            return NotImplemented
        return self._key() == other._key() and self.items == other.items

    def __hash__(self) -> int:
        return hash(self._key())

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[T]:
        return iter(self.items)

    def __getitem__(self, position: int) -> T:
        return self.items[position]

    @property
    def kept(self) -> tuple[int, ...]:
        """Input indices placed, each once, in input order."""
        return tuple(sorted(set(self.order)))

    def _weigher(self, order: IntArray) -> ChunkWeigher:
        """The weigher of the chunks of ``order``, laid out in that order."""
        return ChunkWeigher.build(self.profile, self.lengths[order], self.layout, self.weight_rule)

    def _objective(self, order: Sequence[int] | IntArray) -> float:
        idx = np.asarray(order, dtype=np.int64)
        return float(self._weigher(idx).objective(np.arange(idx.size), self.relevance[idx]))

    @cached_property
    def weights(self) -> FloatArray:
        """Per prompt position, the chunk's weight under :attr:`weight_rule`.

        Computed when first read, so a caller that only needs the order pays nothing for it.
        """
        idx = np.asarray(self.order, dtype=np.int64)
        return self._weigher(idx).weights_of_orders(np.arange(idx.size))

    @cached_property
    def objective(self) -> float:
        """``sum_p relevance[order[p]] · weights[p]`` (a repeated top chunk counts at both ends)."""
        return self._objective(self.order)

    @cached_property
    def baselines(self) -> dict[str, float]:
        """Objective of the same kept chunks in other orders, under the same profile.

        ``input`` (the caller's order), ``relevance`` (most relevant first, i.e. retrieval order)
        and ``alternate`` (best first, second best last, inwards). When the top chunk is
        repeated, each baseline repeats it at both ends too.
        """
        kept = np.asarray(self.kept, dtype=np.int64)
        if self.repeated:
            kept = kept[kept != self.order[0]]
        rel = self.relevance[kept]
        orders = {
            "input": np.arange(kept.size),
            "relevance": rank_order(rel),
            "alternate": alternate_order(rel),
        }
        out = {}
        for name, local in orders.items():
            order = kept[local]
            if self.repeated:
                order = np.concatenate(([self.order[0]], order, [self.order[0]]))
            out[name] = self._objective(order)
        return out

    @cached_property
    def slots(self) -> list[ChunkSlot]:
        """One :class:`ChunkSlot` per prompt position."""
        out = []
        start = self.layout.prefix_tokens
        for slot, (index, weight) in enumerate(zip(self.order, self.weights, strict=True)):
            length = int(self.lengths[index])
            out.append(
                ChunkSlot(
                    slot=slot,
                    index=index,
                    start=start,
                    end=start + length,
                    weight=float(weight),
                    relevance=float(self.relevance[index]),
                    score=None if self.scores is None else float(self.scores[index]),
                )
            )
            start += length
        return out

    def to_records(self) -> list[dict[str, Any]]:
        """The slots as plain dicts (JSON-ready)."""
        return [vars(s).copy() for s in self.slots]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary: order, slots, objective, baselines, dropped, settings."""
        return {
            "order": list(self.order),
            "slots": self.to_records(),
            "objective": self.objective,
            "baselines": self.baselines,
            "dropped": list(self.dropped),
            "dropped_by_top_k": list(self.dropped_by_top_k),
            "dropped_as_lookalikes": list(self.dropped_as_lookalikes),
            "strategy": self.strategy,
            "profile": self.profile.name,
            "layout": self.layout.to_dict(),
            "weight_rule": self.weight_rule,
            "competition": self.competition,
            "repeated": self.repeated,
            "notes": list(self.notes),
        }

    def explain(self, *, previews: Sequence[str] | None = None) -> str:
        """A table of slot, chunk, relevance, score, span and weight, with one line on what
        decided the order, the objective compared with the baselines and what was dropped by
        which limit.

        Args:
            previews: optional per input index text to show (for example the first words).
        """
        meaning = weight_rule_named(self.weight_rule).description
        theory = isinstance(self.profile, TheoryProfile)
        final = "the Recency Delta" if theory else "the final token"
        view = (
            f"chunks fill the sequence: the final chunk holds {final}"
            if self.layout.suffix_tokens == 0
            else f"{final} falls after the chunks, on the suffix"
        )
        lines = [
            f"profile: {self.profile.name}",
            f"layout: prefix={self.layout.prefix_tokens} suffix={self.layout.suffix_tokens} "
            f"tokens ({view})",
            f"strategy: {self.strategy}",
            f"weight rule: {self.weight_rule} ({meaning})",
            "objective: "
            + (
                "relevance x weight"
                if self.competition is None
                else f"expected answer share, chunks competing (competition={self.competition:g})"
            ),
            f"decided by: {self._decided_by()}",
            "",
        ]
        header = f"{'slot':>4}  {'chunk':>5}  {'relevance':>9}  {'score':>9}  "
        header += f"{'tokens':>13}  {'weight':>7}  {'rank':>4}"
        if previews is not None:
            header += "  text"
        lines += [header, "-" * len(header)]
        rank_of = {int(i): r + 1 for r, i in enumerate(rank_order(self.relevance))}
        for s in self.slots:
            score = "-" if s.score is None else f"{s.score:9.4g}"
            row = f"{s.slot:>4}  {s.index:>5}  {s.relevance:>9.3f}  {score:>9}  "
            row += f"{f'[{s.start}, {s.end})':>13}  {s.weight:>7.3f}  {rank_of[s.index]:>4}"
            if previews is not None:
                row += "  " + previews[s.index][:48].replace("\n", " ")
            lines.append(row)
        lines.append("")
        legend = f"weight = {meaning} (1.0 = a uniform share)"
        if self.layout.suffix_tokens and not self.profile.per_document:
            legend += f"; the answer token after the chunks holds {self._answer_share():.1%}"
        lines.append(legend + "; rank = relevance rank.")
        if len(self.slots) > 1:
            lines.append(f"why: {self._why_top()}")
        lines.append(f"objective (sum relevance x weight): {self.objective:.4f}")
        for name, value in self.baselines.items():
            change = _relative(self.objective, value)
            lines.append(f"  vs {name:<9} order: {value:.4f} ({change})")
        named = {*self.dropped_by_top_k, *self.dropped_as_lookalikes}
        by_budget = [i for i in self.dropped if i not in named]
        if self.dropped_as_lookalikes:
            lines.append(
                "dropped as look-alikes of more relevant chunks: "
                f"{list(self.dropped_as_lookalikes)}"
            )
        if self.dropped_by_top_k:
            lines.append(f"dropped by top_k: {list(self.dropped_by_top_k)}")
        if by_budget:
            lines.append(f"dropped by the token budget: {by_budget}")
        lines.extend(f"note: {note}" for note in self.notes)
        return "\n".join(lines)

    def _decided_by(self) -> str:
        """One line: which profile and view decided the order, the shape of the weights, and
        whether (and why) the result is the input order."""
        kind = (
            "theory profile"
            if isinstance(self.profile, TheoryProfile)
            else f"{self.profile.kind} table"
            if isinstance(self.profile, TabulatedProfile)
            else "profile"
        )
        if self.profile.per_document:
            view = "one weight per slot (the layout does not move them)"
        elif self.layout.suffix_tokens == 0:
            view = "bookend view (the chunks end the analysed sequence)"
        else:
            view = "whole-prompt view (the answer follows the chunks)"
        text = f"{kind} {self.profile.name}, {view}: {_shape(self.weights)}"
        if self.strategy != "bookend":
            text += f"; the {self.strategy} strategy fixes the pattern"
        kept = tuple(sorted(set(self.order)))
        if self.order == kept and len(kept) > 1:
            if self.scores is None:
                reason = "without scores the input order is the relevance order"
            elif np.array_equal(rank_order(self.relevance[list(kept)]), np.arange(len(kept))):
                reason = "the input is already in relevance order"
            else:
                reason = "the weights leave no better order"
            text += f"; the result is the input order ({reason})"
        return text

    def _why_top(self) -> str:
        """Where the most relevant chunk went, by its slot's weight tier (ties named as such)."""
        top = max(self.slots, key=lambda s: (s.relevance, -s.index))
        tiers = weight_tiers(self.weights)
        tier = int(tiers[top.slot])
        tied = int(np.count_nonzero(tiers == tier))
        place = f"the {_ordinal(tier + 1)} heaviest" if tier else "the heaviest"
        if tied > 1:
            place = f"one of {tied} slots tied as {place}"
        return (
            f"the most relevant chunk ({top.index}) sits in slot {top.slot}, {place} of "
            f"{len(self.slots)} (weight {top.weight:.3f})."
        )

    def _answer_share(self) -> float:
        """The influence on the final token of the analysed sequence (the answer's position)."""
        total = float(
            self.layout.prefix_tokens
            + self.lengths[list(self.order)].sum()
            + self.layout.suffix_tokens
        )
        before = self.profile.cdf_at_tokens(np.array([total - 1.0]), total)
        return 1.0 - float(before[0])

    def __repr__(self) -> str:
        return (
            f"Placement(order={list(self.order)}, strategy={self.strategy!r}, "
            f"objective={self.objective:.4f}, dropped={list(self.dropped)})"
        )


def _shape(weights: FloatArray) -> str:
    """The shape of the slot weights in words, and what it does to the most relevant chunks."""
    tiers = weight_tiers(weights)
    if weights.size < 2 or not tiers.any():
        return "every slot weighs the same, so the chunks keep their relevance order"
    if np.all(np.diff(tiers) >= 0):
        return "weights fall from front to back, so the most relevant chunk goes first"
    if np.all(np.diff(tiers) <= 0):
        return "weights rise from front to back, so the most relevant chunk goes last"
    lightest = int(np.argmax(tiers))
    if 0 < lightest < weights.size - 1 and tiers[0] < tiers[lightest] > tiers[-1]:
        return "U-shaped: the most relevant chunks take both ends"
    return "the weights vary along the prompt, so the most relevant chunks take the heaviest slots"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _relative(value: float, base: float) -> str:
    if base == 0:
        return "n/a"
    return f"{100.0 * (value - base) / abs(base):+.1f}%"
