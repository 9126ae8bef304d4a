"""Real records: ISO 3166-2 subdivision codes, K look-alike records of one country per item.

Source: the ISO 3166-2 subdivision list that the package ``pycountry`` ships (Debian's iso-codes
data, LGPL-2.1; read from the installed package, not copied here). It complements the NQ suite:
short records of nearly equal length instead of long passages of varied length, and distractors
that are true look-alikes (the same kind of subdivision of the same country, with codes that
differ in digits only), so the model must read the record to answer; none of the facts were
written here.

Construction (deterministic, no model involved):

1. **Groups.** The subdivisions whose code ends in digits only (``JP-13``, ``FR-75``), grouped by
   country and subdivision type; groups of at least :data:`MIN_GROUP` records are kept (30 groups,
   1,585 records in pycountry 26.2.16).
2. **Splits.** Whole groups go to ``calibration`` (30%), ``selection`` (20%) or ``evaluation``
   (50%) by the SHA-256 of the group's name, so the splits share no record.
3. **Items.** The split's records are taken in turn across its groups (every group contributes);
   for a gold record, its retriever (BM25 for even items, MiniLM for odd ones) ranks the other
   records of its group against the question and the top K - 1 join it; the K records are ranked by
   the same retriever, scores attached (evaluate with retriever ``"file"``).
4. **Candidates.** The K records' codes.

A record reads ``NAME is a TYPE of COUNTRY. Its ISO 3166-2 code is CODE.``
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from bookend_rag_lab.items.item import Item
from bookend_rag_lab.items.pool import (
    POOL_RETRIEVERS,
    SPLIT_SHARES,
    bucket,
    check_request,
    in_turn,
    score_matrix,
)

__all__ = ["MIN_GROUP", "RECORD_SPLITS", "Subdivision", "record_groups", "records_items"]

RECORD_SPLITS = SPLIT_SHARES
#: Smallest group kept: K = 20 needs 19 look-alikes from the same group.
MIN_GROUP = 20


@dataclass(frozen=True)
class Subdivision:
    """One ISO 3166-2 subdivision."""

    code: str
    name: str
    kind: str
    country: str

    @property
    def record(self) -> str:
        """The record as it appears in a prompt."""
        kind = self.kind.lower()
        return f"{self.name} is a {kind} of {self.country}. Its ISO 3166-2 code is {self.code}."

    @property
    def question(self) -> str:
        """The question whose answer is :attr:`code`."""
        return f"What is the ISO 3166-2 code of {self.name} ({self.country})?"


@lru_cache(maxsize=1)
def record_groups() -> dict[str, tuple[Subdivision, ...]]:
    """Groups of at least :data:`MIN_GROUP` subdivisions with numeric codes, by
    ``"COUNTRY_CODE:TYPE"``, each sorted by code."""
    try:
        import pycountry
    except ImportError:
        raise ValueError(
            "the records suite needs the package pycountry (pip install pycountry==26.2.16)"
        ) from None
    groups: dict[str, list[Subdivision]] = defaultdict(list)
    for entry in pycountry.subdivisions:
        country_code, suffix = entry.code.split("-", 1)
        country = pycountry.countries.get(alpha_2=country_code)
        if country is not None and re.fullmatch(r"\d+", suffix):
            sub = Subdivision(entry.code, entry.name, entry.type, country.name)
            groups[f"{country_code}:{entry.type}"].append(sub)
    return {
        name: tuple(sorted(subs, key=lambda s: s.code))
        for name, subs in sorted(groups.items())
        if len(subs) >= MIN_GROUP
    }


def _split_records(split: str) -> list[tuple[str, int]]:
    """(group, index) of the split's records, taken in turn across its groups."""
    groups = {g: subs for g, subs in record_groups().items() if bucket(g, RECORD_SPLITS) == split}
    return in_turn([[(g, i) for i in range(len(subs))] for g, subs in groups.items()])


def records_items(
    n_items: int,
    k: int,
    *,
    split: str = "evaluation",
    retrievers: Sequence[str] = POOL_RETRIEVERS,
) -> list[Item]:
    """The first ``n_items`` items of ``k`` records of a split (construction in the module
    docstring); item ``i`` takes retriever ``retrievers[i % len(retrievers)]``.

    Raises:
        ValueError: for an unknown split or retriever, ``k`` outside ``2..MIN_GROUP``, or more
            items than the split has.
    """
    check_request(split, RECORD_SPLITS, retrievers)
    if not 2 <= k <= MIN_GROUP:
        raise ValueError(f"k must be in 2..{MIN_GROUP}, got k={k!r}")
    chosen = _split_records(split)
    if not 1 <= n_items <= len(chosen):
        raise ValueError(
            f"n_items must be in 1..{len(chosen)} for split {split!r}, got n_items={n_items!r}"
        )
    groups = record_groups()
    assigned = [(n, g, i, retrievers[n % len(retrievers)]) for n, (g, i) in enumerate(chosen)]
    scores: dict[tuple[str, int], np.ndarray] = {}
    for retriever in dict.fromkeys(retrievers):
        for group in dict.fromkeys(g for n, g, i, r in assigned[:n_items] if r == retriever):
            golds = [i for n, g, i, r in assigned[:n_items] if g == group and r == retriever]
            subs = groups[group]
            rows = score_matrix(
                retriever, [subs[i].question for i in golds], [s.record for s in subs]
            )
            scores.update({(group, i): row for i, row in zip(golds, rows, strict=True)})
    out: list[Item] = []
    for _, group, index, retriever in assigned[:n_items]:
        subs, row = groups[group], scores[(group, index)]
        gold = subs[index]
        others = [int(j) for j in np.argsort(-row, kind="stable") if int(j) != index]
        ranked = sorted([index, *others[: k - 1]], key=lambda j: (-row[j], j))
        out.append(
            Item(
                item_id=f"records:{split}:{gold.code}",
                question=gold.question,
                documents=tuple(subs[j].record for j in ranked),
                answer=gold.code,
                candidates=tuple(subs[j].code for j in ranked),
                scores=tuple(float(row[j]) for j in ranked),
                gold=ranked.index(index),
                family=f"records-{retriever}",
            )
        )
    return out
