"""The rendered prompts stay byte-identical: recorded runs and the call caches depend on them.

Each digest is the SHA-256 of the first items of a source (id, the prompt in document order and
reversed, the continuations, the answer, the gold index and the family), and of the prompts and
document spans with the gold document in every slot; the values were computed on the release
before the items were unified (two item types, two renderers) and must never change.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from bookend_rag_lab.items.hard import hard_items
from bookend_rag_lab.items.item import Item, load_jsonl
from bookend_rag_lab.items.lookup import lookup_items
from bookend_rag_lab.items.nq import nq_items

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "eval_items.jsonl"


def _digest(rows: list[list[object]]) -> str:
    return hashlib.sha256(json.dumps(rows, ensure_ascii=False).encode()).hexdigest()


def _prompts(items: Sequence[Item]) -> str:
    rows: list[list[object]] = []
    for it in items:
        k = len(it.documents)
        for order in (list(range(k)), list(range(k))[::-1]):
            answer = [it.answer, it.gold, it.family]
            rows.append([it.item_id, it.prompt(order), list(it.continuations), *answer])
    return _digest(rows)


def _slots(items: Sequence[Item]) -> str:
    rows: list[list[object]] = []
    for it in items:
        for slot in range(len(it.documents)):
            prompt, spans = it.rendered(it.order_with_gold_at(slot))
            rows.append([prompt, spans, list(it.roles)])
    return _digest(rows)


def test_generated_prompts_are_unchanged() -> None:
    two = ["birthplace", "access_code"]
    assert _prompts(lookup_items(8, 10, seed=0)) == (
        "66d706a06a1a4a30f7a335093d722e401adbcc462b8cafe5f46b63f2a1d2ed61"
    )
    filler = lookup_items(6, 6, seed=3, split="evaluation", filler=(3, 5), families=two)
    assert _prompts(filler) == "16a170601ff1fb2bfbae23c9c206a979e6594473b044fd49435a8ebc277054e9"
    assert _prompts(hard_items(8, 10, seed=0, families=two)) == (
        "c9e8bf80e5dfcf42480a7e49a408ca871e103bf071b5fce3d6416e7621d9d23f"
    )
    assert _prompts(hard_items(8, 9, seed=1, split="calibration")) == (
        "dd547c3f9ac978a2cc4e9cf519e51ff58df193e5f08bd14ae154ceb4c31368f4"
    )


def test_prompts_with_the_gold_in_every_slot_are_unchanged() -> None:
    plain = lookup_items(4, 6, seed=0, families=["birthplace", "access_code"], filler=(0, 1))
    assert _slots(plain) == "2e575cd00f70b88c061ede6eda3b3c46b1317e01f66db33137fd5a1109363909"
    hard = hard_items(4, 10, seed=0, split="calibration", families=["product", "pet_colour"])
    assert _slots(hard) == "af40b3eed5c2bf88e33f39ad0842fc4ff6373ea6771977601c7bc73e2a031c6d"


def test_nq_and_file_prompts_are_unchanged() -> None:
    nq = nq_items(6, 10, split="evaluation", retrievers=("bm25",))
    assert _prompts(nq) == "e20657133fbee1d1657d4ae18ab35552e29e3875964b339be7238f843dbebafa"
    assert _prompts(load_jsonl(EXAMPLE)) == (
        "dea01900f5fc13b3d072a3f11388f58117af68ec36f0800514556bcc0738fed1"
    )
