"""The hard built-in items: retrievers miss, lengths vary, splits are disjoint, roles recorded."""

from collections import Counter

import pytest

from bookend_rag_lab.items.families import SPLIT_OFFSETS, item_id
from bookend_rag_lab.items.hard import MAX_TOKENS, MIN_TOKENS, hard_items
from bookend_rag_lab.items.lookup import lookup_items
from bookend_rag_lab.retrieval import bm25_scores, rank


def test_hard_items_defeat_bm25_most_of_the_time() -> None:
    items = hard_items(100, 10, families=["birthplace", "access_code"])
    ranks = Counter(rank(bm25_scores(i.question, i.documents)).rank_of(i.gold) for i in items)
    assert ranks[0] / len(items) < 0.6
    assert len(ranks) >= 4  # the gold document reaches the middle ranks too


def test_hard_items_lengths_splits_and_determinism() -> None:
    items = hard_items(20, 9, seed=3, families=["birthplace"])
    words = [len(d.split()) for item in items for d in item.documents]
    assert min(words) >= MIN_TOKENS / 1.3 - 1
    assert max(words) <= MAX_TOKENS / 1.3 + 15
    assert max(words) > 4 * min(words)
    assert all(len(set(item.candidates)) == 9 for item in items)
    assert items == hard_items(20, 9, seed=3, families=["birthplace"])
    calibration = hard_items(5, 9, split="calibration")
    assert {i.item_id for i in calibration}.isdisjoint({i.item_id for i in items})
    assert min(i.item_id for i in items) == item_id("evaluation", SPLIT_OFFSETS["evaluation"])
    with pytest.raises(ValueError, match="n_docs"):
        hard_items(1, 30, families=["pet_colour"])


@pytest.mark.parametrize(
    ("k", "near", "entity", "families"),
    [(3, 1, 0, ["pet_colour"]), (10, 2, 2, ["product", "birthplace"]), (20, 2, 3, ["access_code"])],
)
def test_hard_items_record_each_documents_role(
    k: int, near: int, entity: int, families: list[str]
) -> None:
    for item in hard_items(12, k, families=families):
        assert len(item.roles) == k
        assert item.roles[item.gold] == "gold"
        counts = Counter(item.roles)
        assert (counts["gold"], counts["near-duplicate"], counts["entity-distractor"]) == (
            1,
            near,
            entity,
        )
        assert counts["family-distractor"] == k - 1 - near - entity
        gold_sentences = set(item.documents[item.gold].split(". "))
        for document, role in zip(item.documents, item.roles, strict=True):
            if role == "near-duplicate":  # the gold document with its one fact swapped
                assert len(gold_sentences ^ set(document.split(". "))) == 2


def test_plain_items_record_no_roles() -> None:
    assert all(item.roles == () for item in lookup_items(3, 4))
