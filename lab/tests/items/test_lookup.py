"""The plain lookup items: deterministic, disjoint splits, selectable families, valid orders."""

from __future__ import annotations

import pytest

from bookend_rag_lab.items.families import FAMILIES, SPLIT_OFFSETS, item_id
from bookend_rag_lab.items.lookup import lookup_items


def test_same_seed_same_items_and_different_seed_differs() -> None:
    a = lookup_items(6, 5, seed=3)
    assert a == lookup_items(6, 5, seed=3)
    assert a != lookup_items(6, 5, seed=4)


def test_calibration_and_evaluation_ids_are_disjoint() -> None:
    cal = {item.item_id for item in lookup_items(50, 4, split="calibration")}
    ev = {item.item_id for item in lookup_items(50, 4, split="evaluation")}
    assert not cal & ev
    assert min(ev) == item_id("evaluation", SPLIT_OFFSETS["evaluation"])


def test_items_are_well_formed() -> None:
    for item in lookup_items(12, 8, seed=1):
        assert item.family in FAMILIES
        assert len(item.documents) == len(item.candidates) == 8
        assert len(set(item.candidates)) == 8  # candidates are distinct
        assert item.answer in item.documents[item.gold]
        assert item.prompt().endswith(item.answer_prefix)


def test_families_are_selectable_and_used_in_turn() -> None:
    items = lookup_items(4, 3, families=["access_code", "product"])
    assert [i.family for i in items] == ["access_code", "product", "access_code", "product"]


def test_document_lengths_vary() -> None:
    lengths = {len(d.split()) for item in lookup_items(10, 6) for d in item.documents}
    assert max(lengths) - min(lengths) >= 30


@pytest.mark.parametrize("slot", [0, 2, 4])
def test_order_with_gold_at_places_gold_and_keeps_others(slot: int) -> None:
    item = lookup_items(1, 5, seed=7)[0]
    order = item.order_with_gold_at(slot)
    assert sorted(order) == list(range(5))
    assert order[slot] == item.gold
    others = [k for k in order if k != item.gold]
    assert others == sorted(others)
    assert f"Document {slot + 1}: {item.documents[item.gold]}" in item.prompt(order)


def test_bad_arguments_raise() -> None:
    with pytest.raises(ValueError, match="split"):
        lookup_items(1, 3, split="test")
    with pytest.raises(ValueError, match="families"):
        lookup_items(1, 3, families=["nope"])
    with pytest.raises(ValueError, match="n_docs"):
        lookup_items(1, 1)
    with pytest.raises(ValueError, match="slot"):
        lookup_items(1, 3)[0].order_with_gold_at(3)
    with pytest.raises(ValueError, match="permutation"):
        lookup_items(1, 3)[0].prompt([0, 0, 1])


def test_filler_range_sets_document_length_and_default_keeps_the_items() -> None:
    short = lookup_items(8, 4, seed=2, filler=(0, 0))
    long = lookup_items(8, 4, seed=2, filler=(8, 10))
    words = [sum(len(d.split()) for d in item.documents) for item in short]
    assert max(words) < 4 * 15
    assert min(sum(len(d.split()) for d in item.documents) for item in long) > 4 * 60
    assert all(item.filler == (8, 10) for item in long)
    assert lookup_items(3, 4, seed=2) == lookup_items(3, 4, seed=2, filler=(0, 6))
    with pytest.raises(ValueError, match="filler"):
        lookup_items(2, 3, filler=(3, 1))


def test_rendered_spans_locate_every_document() -> None:
    item = lookup_items(1, 5, seed=9)[0]
    order = item.order_with_gold_at(3)
    prompt, spans = item.rendered(order)
    assert prompt == item.prompt(order)
    for slot, (start, end) in enumerate(spans):
        assert prompt[start:end] == f"Document {slot + 1}: {item.documents[order[slot]]}"
