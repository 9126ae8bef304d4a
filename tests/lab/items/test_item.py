"""The JSONL item format and the hard built-in items."""

import json
from collections import Counter
from pathlib import Path

import pytest

from bookend.lab.items.hard import MAX_TOKENS, MIN_TOKENS, generate_hard_items
from bookend.lab.items.item import EvalItem, load_jsonl
from bookend.lab.items.lookup import SPLIT_OFFSETS, generate_items
from bookend.lab.retrieval import bm25_scores, rank

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "eval_items.jsonl"


def _write(tmp_path: Path, *rows: object) -> Path:
    path = tmp_path / "items.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_the_shipped_example_parses() -> None:
    items = load_jsonl(EXAMPLE)
    assert len(items) == 10
    assert all(item.gold is not None for item in items)
    assert all(item.answer.lower() in item.documents[item.gold or 0].lower() for item in items)


def test_strings_objects_scores_candidates_and_gold(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        {"question": "Q?", "documents": ["a b", "the answer is X"], "answer": "X"},
        {
            "id": "two",
            "question": "Q?",
            "documents": [{"text": "Y here", "score": 0.2}, {"text": "Z", "score": 0.9}],
            "answer": "Y",
            "candidates": ["Z", "Y"],
        },
    )
    first, second = load_jsonl(path)
    assert first.item_id == "1"
    assert first.gold == 1
    assert first.scores is None
    assert first.continuations == ("X",)
    assert first.answer_index == 0
    assert second.item_id == "two"
    assert second.scores == (0.2, 0.9)
    assert second.gold == 0
    assert second.continuations == ("Z", "Y")
    assert second.answer_index == 1


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"documents": ["a", "b"], "answer": "a"}, "line 1: question"),
        ({"question": "q", "documents": ["a"], "answer": "a"}, "at least 2"),
        ({"question": "q", "documents": [{"text": "a", "score": 1}, "b"], "answer": "a"}, "all"),
        (
            {
                "question": "q",
                "documents": [{"text": "a", "score": 1}, {"text": "b"}],
                "answer": "a",
            },
            "every document has a score",
        ),
        ({"question": "q", "documents": ["a", "b"], "answer": "a", "candidates": ["b"]}, "include"),
        ({"question": "q", "documents": ["a", "b"], "answer": "a", "gold": 5}, "gold"),
    ],
)
def test_malformed_items_name_line_and_field(tmp_path: Path, row: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        load_jsonl(_write(tmp_path, row))


def test_prompt_needs_a_permutation() -> None:
    item = EvalItem("x", "q?", ("a", "b"), "a")
    assert item.prompt([1, 0]).index("Document 1: b") < item.prompt([1, 0]).index("Document 2: a")
    with pytest.raises(ValueError, match="permutation"):
        item.prompt([0, 0])


def test_hard_items_defeat_bm25_most_of_the_time() -> None:
    items = generate_hard_items(100, 10, families=["birthplace", "access_code"])
    ranks = Counter(rank(bm25_scores(i.question, i.documents)).rank_of(i.gold) for i in items)
    assert ranks[0] / len(items) < 0.6
    assert len(ranks) >= 4  # the gold document reaches the middle ranks too


def test_hard_items_lengths_splits_and_determinism() -> None:
    items = generate_hard_items(20, 9, seed=3, families=["birthplace"])
    words = [len(d.split()) for item in items for d in item.documents]
    assert min(words) >= MIN_TOKENS / 1.3 - 1
    assert max(words) <= MAX_TOKENS / 1.3 + 15
    assert max(words) > 4 * min(words)
    assert all(len(set(item.answers)) == 9 for item in items)
    assert items == generate_hard_items(20, 9, seed=3, families=["birthplace"])
    calibration = generate_hard_items(5, 9, split="calibration")
    assert {i.item_id for i in calibration}.isdisjoint({i.item_id for i in items})
    assert min(i.item_id for i in items) == SPLIT_OFFSETS["evaluation"]
    with pytest.raises(ValueError, match="n_docs"):
        generate_hard_items(1, 30, families=["pet_colour"])


@pytest.mark.parametrize(
    ("k", "near", "entity", "families"),
    [(3, 1, 0, ["pet_colour"]), (10, 2, 2, ["product", "birthplace"]), (20, 2, 3, ["access_code"])],
)
def test_hard_items_record_each_documents_role(
    k: int, near: int, entity: int, families: list[str]
) -> None:
    for item in generate_hard_items(12, k, families=families):
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
    assert all(item.roles == () for item in generate_items(3, 4))
