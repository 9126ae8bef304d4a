"""The records suite: real ISO 3166-2 look-alike records (BM25 here; MiniLM is optional)."""

from __future__ import annotations

import pytest

from bookend_rag_lab.items.pool import bucket
from bookend_rag_lab.items.records import (
    MIN_GROUP,
    RECORD_SPLITS,
    record_groups,
    records_items,
)

BM25 = ("bm25",)


def test_groups_are_large_numeric_and_split_whole() -> None:
    groups = record_groups()
    assert groups, "pycountry gives at least one group"
    for name, subs in groups.items():
        assert len(subs) >= MIN_GROUP
        assert len({s.code for s in subs}) == len(subs)
        assert all(s.code.split("-", 1)[1].isdigit() for s in subs)
        assert {f"{s.code.split('-')[0]}:{s.kind}" for s in subs} == {name}
    splits = {bucket(name, RECORD_SPLITS) for name in groups}
    assert splits == set(RECORD_SPLITS), "every split gets some group"


def test_items_are_deterministic_and_well_formed() -> None:
    items = records_items(12, 6, retrievers=BM25)
    assert items == records_items(12, 6, retrievers=BM25)
    assert len({i.item_id for i in items}) == 12
    for item in items:
        assert len(item.documents) == 6 == len(item.candidates or ())
        assert item.candidates is not None
        assert item.scores is not None
        assert item.gold is not None
        assert len(set(item.candidates)) == 6
        assert item.answer in item.candidates
        assert item.candidates[item.gold] == item.answer
        assert f"code is {item.answer}." in item.documents[item.gold]
        assert all(c in d for c, d in zip(item.candidates, item.documents, strict=True))
        assert list(item.scores) == sorted(item.scores, reverse=True)
        prefixes = {c.split("-")[0] for c in item.candidates}
        assert len(prefixes) == 1, "look-alikes come from the gold record's own group"


def test_splits_share_no_record() -> None:
    seen: dict[str, set[str]] = {}
    for split in RECORD_SPLITS:
        items = records_items(30, 5, split=split, retrievers=BM25)
        seen[split] = {d for item in items for d in item.documents}
    names = list(seen)
    for a in range(len(names)):
        for b in range(a + 1, len(names)):
            assert not seen[names[a]] & seen[names[b]]


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"split": "train"}, "split="),
        ({"k": 1}, "k="),
        ({"k": MIN_GROUP + 1}, "k="),
        ({"n_items": 0}, "n_items="),
        ({"n_items": 10**6}, "n_items="),
        ({"retrievers": ("tfidf",)}, "retrievers="),
        ({"retrievers": ()}, "retrievers="),
    ],
)
def test_bad_arguments_name_the_parameter(kwargs: dict[str, object], needle: str) -> None:
    args: dict[str, object] = {"n_items": 3, "k": 4, "retrievers": BM25, **kwargs}
    with pytest.raises(ValueError, match=needle):
        records_items(**args)
