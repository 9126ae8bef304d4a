"""The NaturalQuestions suite: deterministic, disjoint splits, clean negatives, sound candidates.

Most checks run on a small file written here (BM25 only: MiniLM is an optional package); one runs
on the bundled file.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from bookend_rag_lab.items.answers import normalize_answer
from bookend_rag_lab.items.item import Item
from bookend_rag_lab.items.nq import NQ_SPLITS, load_records, nq_items, split_of

TOPICS = (
    "river castle violin harbour glacier orchard lantern meadow falcon quarry beacon tundra "
    "compass saddle kettle mosaic anchor bramble cinder dune ember fjord grotto hollow "
    "isthmus jetty knoll lagoon marsh nectar oasis prairie quiver ravine summit thicket"
).split()


def _rows(n: int) -> list[dict[str, object]]:
    """``n`` questions about distinct topics, each with one gold passage. Every passage also
    names the next question's answer (so that passage is no clean negative for it), and
    questions 1 and 2 share their first answer (so their passages cannot both be candidates)."""
    rows = []
    for i in range(n):
        topic, following = TOPICS[i % len(TOPICS)], TOPICS[(i + 1) % len(TOPICS)]
        answer = "Alder Keep" if i in (1, 2) else f"Alder {topic.title()}"
        next_answer = "Alder Keep" if i + 1 in (1, 2) else f"Alder {following.title()}"
        text = (
            f"The {topic} of region {i} is known as {answer}. Travellers from the {following} "
            f"valley call their own landmark {next_answer}. The {topic} sits near the old road."
        )
        rows.append(
            {
                "question": f"what is the {topic} of region {i} known as",
                "answers": [answer, answer.upper()],
                "ctxs": [
                    {"title": "Distractor", "text": "unrelated", "isgold": False},
                    {"title": f"Region {i}", "text": text, "isgold": True},
                ],
            }
        )
    return rows


@pytest.fixture
def small_file(tmp_path: Path) -> str:
    path = tmp_path / "nq-small.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        for row in _rows(36):
            handle.write(json.dumps(row) + "\n")
    return str(path)


def _check_items(items: Sequence[Item], path: str | None, split: str, k: int) -> None:
    """Every property the module docstring promises, against the source records."""
    records = {r.question: r for r in load_records(path)}
    for item in items:
        record = records[item.question]
        assert split_of(item.question) == split
        assert len(item.documents) == k
        assert item.gold is not None
        assert item.candidates is not None
        assert item.scores is not None
        assert item.documents[item.gold] == record.document
        assert item.answer == record.answers[0] == item.candidates[item.gold]
        assert item.candidates.index(item.answer) == item.gold
        assert len({normalize_answer(c) for c in item.candidates}) == k  # distinct candidates
        answers = [normalize_answer(a) for a in record.answers]
        for j, document in enumerate(item.documents):
            if j != item.gold:  # no negative contains any of the question's answers
                assert not any(a in normalize_answer(document) for a in answers), (item.item_id, j)
        assert list(item.scores) == sorted(item.scores, reverse=True)


def test_items_are_deterministic_and_sound(small_file: str) -> None:
    for split in NQ_SPLITS:
        pool = sum(split_of(str(r["question"])) == split for r in _rows(36))
        items = nq_items(min(3, pool), 4, split=split, retrievers=("bm25",), path=small_file)
        assert items == nq_items(
            min(3, pool), 4, split=split, retrievers=("bm25",), path=small_file
        )
        assert items
        _check_items(items, small_file, split, 4)


def test_splits_share_no_question_and_no_passage(small_file: str) -> None:
    seen: dict[str, set[str]] = {}
    for split in NQ_SPLITS:
        pool = sum(split_of(str(r["question"])) == split for r in _rows(36))
        items = nq_items(pool, 3, split=split, retrievers=("bm25",), path=small_file)
        seen[split] = {i.question for i in items} | {d for i in items for d in i.documents}
    names = list(seen)
    for a, b in ((names[0], names[1]), (names[0], names[2]), (names[1], names[2])):
        assert not seen[a] & seen[b], (a, b)


def test_negatives_skip_passages_naming_an_answer_and_repeated_candidates(small_file: str) -> None:
    # Question i+1's answer appears in passage i, and questions 1 and 2 share an answer: across
    # every split and K = 3, no item may hold either kind of document (checked in _check_items).
    for split in NQ_SPLITS:
        pool = sum(split_of(str(r["question"])) == split for r in _rows(36))
        _check_items(
            nq_items(pool, 3, split=split, retrievers=("bm25",), path=small_file),
            small_file,
            split,
            3,
        )


def test_bad_arguments_name_the_parameter(small_file: str) -> None:
    with pytest.raises(ValueError, match="split must be one of"):
        nq_items(1, 3, split="test", retrievers=("bm25",), path=small_file)
    with pytest.raises(ValueError, match="k must be >= 2"):
        nq_items(1, 1, retrievers=("bm25",), path=small_file)
    with pytest.raises(ValueError, match=r"n_items must be in 1\.\."):
        nq_items(0, 3, retrievers=("bm25",), path=small_file)
    with pytest.raises(ValueError, match=r"n_items must be in 1\.\."):
        nq_items(10_000, 3, retrievers=("bm25",), path=small_file)
    with pytest.raises(ValueError, match="retrievers must be drawn from"):
        nq_items(1, 3, retrievers=("tfidf",), path=small_file)


def test_the_bundled_file_gives_sound_items_with_bm25() -> None:
    items = nq_items(6, 10, split="evaluation", retrievers=("bm25",))
    assert len(items) == 6
    assert len({i.question for i in items}) == 6
    assert {i.family for i in items} == {"nq-bm25"}
    _check_items(items, None, "evaluation", 10)
