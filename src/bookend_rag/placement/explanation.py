"""What a :class:`~bookend_rag.Placement` says about itself: the rows of its table
(:class:`ChunkSlot`), :func:`explain` and the :func:`baselines` it is compared with.

The words for the profile come from the profile
(:meth:`~bookend_rag.profiles.base.InfluenceProfile.describe`), so a new kind of profile explains
itself without a branch here. ``Placement`` is imported for type checking only (the result calls
this module; import-linter leaves type-only imports out).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from bookend_rag.arrays import FloatArray, IntArray
from bookend_rag.placement.orders import alternate_order, rank_order, weight_tiers
from bookend_rag.placement.strategies import strategy_named
from bookend_rag.weighing import weight_rule_named

if TYPE_CHECKING:
    from bookend_rag.placement.result import Placement

__all__ = ["ChunkSlot", "baselines", "explain"]


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


def baselines(
    placement: Placement[Any], objective_of: Callable[[IntArray], float]
) -> dict[str, float]:
    """:attr:`bookend_rag.Placement.baselines` (which names the orders): per order, the
    objective of the placement's kept chunks in it, ``objective_of`` an order of input indices."""
    kept = np.asarray(placement.kept, dtype=np.int64)
    top = placement.order[0] if placement.repeated else None
    if top is not None:
        kept = kept[kept != top]
    rel = placement.relevance[kept]
    orders = {
        "input": np.arange(kept.size),
        "relevance": rank_order(rel),
        "alternate": alternate_order(rel),
    }
    out = {}
    for name, local in orders.items():
        order = kept[local]
        if top is not None:
            order = np.concatenate(([top], order, [top]))
        out[name] = objective_of(order)
    return out


def explain(placement: Placement[Any], previews: Sequence[str] | None = None) -> str:
    """The text of :meth:`bookend_rag.Placement.explain` (which documents it)."""
    profile, layout, competition = placement.profile, placement.layout, placement.competition
    meaning = weight_rule_named(placement.weight_rule).description
    final = profile.describe().final_token
    view = (
        f"chunks fill the sequence: the final chunk holds {final}"
        if layout.suffix_tokens == 0
        else f"{final} falls after the chunks, on the suffix"
    )
    # The notes first: what could not apply (a model bookend has not measured, a missing score)
    # changes how the rest reads.
    lines = [f"note: {note}" for note in placement.notes]
    lines += [
        f"profile: {profile.name}",
        f"layout: prefix={layout.prefix_tokens} suffix={layout.suffix_tokens} tokens ({view})",
        f"strategy: {placement.strategy}",
        f"weight rule: {placement.weight_rule} ({meaning})",
        "objective: "
        + (
            "relevance x weight"
            if competition is None
            else f"expected answer share, chunks competing (competition={competition:g})"
        ),
        f"decided by: {_decided_by(placement)}",
        "",
    ]
    header = f"{'slot':>4}  {'chunk':>5}  {'relevance':>9}  {'score':>9}  "
    header += f"{'tokens':>13}  {'weight':>7}  {'rank':>4}"
    if previews is not None:
        header += "  text"
    lines += [header, "-" * len(header)]
    rank_of = {int(i): r + 1 for r, i in enumerate(rank_order(placement.relevance))}
    for s in placement.slots:
        score = "-" if s.score is None else f"{s.score:9.4g}"
        row = f"{s.slot:>4}  {s.index:>5}  {s.relevance:>9.3f}  {score:>9}  "
        row += f"{f'[{s.start}, {s.end})':>13}  {s.weight:>7.3f}  {rank_of[s.index]:>4}"
        if previews is not None:
            row += "  " + previews[s.index][:48].replace("\n", " ")
        lines.append(row)
    lines.append("")
    legend = f"weight = {meaning} (1.0 = a uniform share)"
    if layout.suffix_tokens and not profile.per_document:
        legend += f"; the answer token after the chunks holds {_answer_share(placement):.1%}"
    lines.append(legend + "; rank = relevance rank.")
    if len(placement.slots) > 1:
        lines.append(f"why: {_why_top(placement)}")
    objective = placement.objective
    lines.append(f"objective (sum relevance x weight): {objective:.4f}")
    for name, value in placement.baselines.items():
        lines.append(f"  vs {name:<9} order: {value:.4f} ({_relative(objective, value)})")
    lines += _dropped(placement)
    return "\n".join(lines)


def _dropped(p: Placement[Any]) -> list[str]:
    """One line per limit that dropped chunks: look-alikes, ``top_k``, the token budget."""
    named = {*p.dropped_by_top_k, *p.dropped_as_lookalikes}
    by_budget = [i for i in p.dropped if i not in named]
    lines = []
    if p.dropped_as_lookalikes:
        lines.append(
            f"dropped as look-alikes of more relevant chunks: {list(p.dropped_as_lookalikes)}"
        )
    if p.dropped_by_top_k:
        lines.append(f"dropped by top_k: {list(p.dropped_by_top_k)}")
    if by_budget:
        lines.append(f"dropped by the token budget: {by_budget}")
    return lines


def _decided_by(p: Placement[Any]) -> str:
    """One line: which profile and view decided the order, the shape of the weights, and
    whether (and why) the result is the input order."""
    if p.profile.per_document:
        view = "one weight per slot (the layout does not move them)"
    elif p.layout.suffix_tokens == 0:
        view = "bookend view (the chunks end the analysed sequence)"
    else:
        view = "whole-prompt view (the answer follows the chunks)"
    text = f"{p.profile.describe().kind} {p.profile.name}, {view}: {_shape(p.weights)}"
    decided = strategy_named(p.strategy).decided_by()
    if decided is not None:
        text += f"; {decided}"
    kept = p.kept
    if p.order == kept and len(kept) > 1:
        if p.scores is None:
            reason = "without scores the input order is the relevance order"
        elif np.array_equal(rank_order(p.relevance[list(kept)]), np.arange(len(kept))):
            reason = "the input is already in relevance order"
        else:
            reason = "the weights leave no better order"
        text += f"; the result is the input order ({reason})"
    return text


def _why_top(p: Placement[Any]) -> str:
    """Where the most relevant chunk went, by its slot's weight tier (ties named as such)."""
    top = max(p.slots, key=lambda s: (s.relevance, -s.index))
    tiers = weight_tiers(p.weights)
    tier = int(tiers[top.slot])
    tied = int(np.count_nonzero(tiers == tier))
    place = f"the {_ordinal(tier + 1)} heaviest" if tier else "the heaviest"
    if tied > 1:
        place = f"one of {tied} slots tied as {place}"
    return (
        f"the most relevant chunk ({top.index}) sits in slot {top.slot}, {place} of "
        f"{len(p.slots)} (weight {top.weight:.3f})."
    )


def _answer_share(p: Placement[Any]) -> float:
    """The influence on the final token of the analysed sequence (the answer's position)."""
    total = float(p.layout.prefix_tokens + p.lengths[list(p.order)].sum() + p.layout.suffix_tokens)
    before = p.profile.cdf_at_tokens(np.array([total - 1.0]), total)
    return 1.0 - float(before[0])


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
