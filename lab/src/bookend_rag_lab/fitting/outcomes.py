"""Per-item outcomes of a calibration: where the gold document sat, and how it went.

One :class:`SlotOutcome` per (item, slot) scored by :mod:`bookend_rag_lab.experiments.calibrate`.
Positions are token offsets inside the *documents block* (from the first ``"Document 1:"`` to the
end of the last document), the part of the prompt that placement arranges; ``n_tokens`` is that
block's length, ``prompt_tokens`` the whole prompt's. A token offset is the token count of the
prompt's text before that character (:func:`slot_outcome`, the one place that measures spans), so
a boundary token shared by two spans may be off by one. This module needs neither torch nor
transformers, so fits can be redone from a saved report.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from bookend_rag_lab.items.item import Item
from bookend_rag_lab.items.template import flat_text

__all__ = ["SlotOutcome", "outcomes_from_json", "outcomes_to_json", "slot_outcome"]


@dataclass(frozen=True)
class SlotOutcome:
    """One item scored with its gold document in one slot.

    Attributes:
        item_id: the item's id (reports written before ids were strings hold the number).
        family: its template family.
        n_docs: K, the number of documents.
        slot: the gold document's slot, 0-based.
        gold_start: first token of the gold document in the documents block.
        gold_end: one past its last token.
        n_tokens: tokens of the documents block (the length ``N`` a profile is evaluated at).
        prompt_tokens: tokens of the whole prompt.
        correct: whether the gold answer scored highest among the K candidates.
        candidate_prob: softmax probability of the gold answer among the candidates.
        logprob: total log-probability of the gold answer.
        filler: the ``(lo, hi)`` filler sentences per document the item was generated with.
    """

    item_id: str
    family: str
    n_docs: int
    slot: int
    gold_start: int
    gold_end: int
    n_tokens: int
    prompt_tokens: int
    correct: bool
    candidate_prob: float
    logprob: float
    filler: tuple[int, int]

    def __post_init__(self) -> None:
        if not 0 <= self.slot < self.n_docs:
            raise ValueError(f"slot must lie in [0, {self.n_docs - 1}], got slot={self.slot!r}")
        if not 0 <= self.gold_start < self.gold_end <= self.n_tokens:
            raise ValueError(
                "gold span must satisfy 0 <= gold_start < gold_end <= n_tokens, got "
                f"gold_start={self.gold_start!r}, gold_end={self.gold_end!r}, "
                f"n_tokens={self.n_tokens!r}"
            )
        if not 0.0 <= self.candidate_prob <= 1.0:
            raise ValueError(
                f"candidate_prob must lie in [0, 1], got candidate_prob={self.candidate_prob!r}"
            )

    @property
    def cell(self) -> tuple[int, tuple[int, int]]:
        """``(K, filler)``: the calibration cell the outcome belongs to."""
        return self.n_docs, self.filler


def slot_outcome(
    item: Item,
    order: Sequence[int],
    slot: int,
    values: Mapping[str, float],
    token_length: Callable[[str], int],
    filler: tuple[int, int],
) -> SlotOutcome:
    """The outcome of ``item`` rendered with its documents in ``order``, the gold document at
    ``slot``, scored as ``values`` (:func:`~bookend_rag_lab.metrics.item_metrics` with candidates).

    With ``c_0`` the character where the documents block starts, ``[c_s, c_e)`` the gold
    document's characters, ``c_1`` where the block ends and ``T(c) = token_length(prompt[:c])``:
    ``gold_start = T(c_s) - T(c_0)``, ``gold_end = T(c_e) - T(c_0)``, ``n_tokens = T(c_1) -
    T(c_0)``.

    Raises:
        KeyError: for ``values`` without ``candidate_prob`` (an item without candidates).
    """
    rendered, spans = item.rendered(order)
    prompt = flat_text(rendered)
    block, start, end, stop = (
        token_length(prompt[:c])
        for c in (spans[0][0], spans[slot][0], spans[slot][1], spans[-1][1])
    )
    return SlotOutcome(
        item_id=item.item_id,
        family=item.family,
        n_docs=len(item.documents),
        slot=slot,
        gold_start=start - block,
        gold_end=end - block,
        n_tokens=stop - block,
        prompt_tokens=token_length(prompt),
        correct=values["accuracy"] == 1.0,
        candidate_prob=values["candidate_prob"],
        logprob=values["gold_logprob"],
        filler=filler,
    )


def outcomes_to_json(outcomes: Sequence[SlotOutcome]) -> list[dict[str, Any]]:
    """JSON-ready records, one per outcome."""
    return [{**asdict(o), "filler": list(o.filler)} for o in outcomes]


def outcomes_from_json(records: Sequence[Mapping[str, Any]]) -> list[SlotOutcome]:
    """Outcomes from the records written by :func:`outcomes_to_json`."""
    out = []
    for r in records:
        lo, hi = r["filler"]
        out.append(
            SlotOutcome(
                item_id=str(r["item_id"]),
                family=str(r["family"]),
                n_docs=int(r["n_docs"]),
                slot=int(r["slot"]),
                gold_start=int(r["gold_start"]),
                gold_end=int(r["gold_end"]),
                n_tokens=int(r["n_tokens"]),
                prompt_tokens=int(r["prompt_tokens"]),
                correct=bool(r["correct"]),
                candidate_prob=float(r["candidate_prob"]),
                logprob=float(r["logprob"]),
                filler=(int(lo), int(hi)),
            )
        )
    return out
