"""The one item type: the JSONL format and the prompt's permutation check."""

import json
from pathlib import Path

import pytest

from bookend_rag_lab.items.item import Item, load_jsonl

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
    item = Item("x", "q?", ("a", "b"), "a")
    assert item.prompt([1, 0]).index("Document 1: b") < item.prompt([1, 0]).index("Document 2: a")
    with pytest.raises(ValueError, match="permutation"):
        item.prompt([0, 0])
