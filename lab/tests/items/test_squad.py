"""The SQuAD suite: deterministic, splits disjoint by paragraph, clean negatives, sound candidates,
and the data's licence in the package.

Most checks run on a small file written here (BM25 only: MiniLM is an optional package); the
others on the bundled file.
"""

from __future__ import annotations

import fnmatch
import gzip
import json
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bookend_rag_lab.items import squad
from bookend_rag_lab.items.answers import normalize_answer
from bookend_rag_lab.items.item import Item
from bookend_rag_lab.items.pool import SPLIT_SHARES, score_matrix
from bookend_rag_lab.items.squad import load_paragraphs, split_of, squad_items

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: import-linter brings tomli
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[3]
BM25 = ("bm25",)
PLACES = (
    "abbey bastion causeway citadel dockyard estuary foundry granary heath inlet knoll lighthouse "
    "mill nave outpost pier quay rampart spire tannery upland vineyard weir yard brewery canal "
    "dovecote ferry gatehouse hamlet jetty kiln lock moat orchard pond"
).split()


def _paragraph(i: int) -> dict[str, Any]:
    """Paragraph ``i`` of the small file, with two questions. It names paragraph ``i + 1``'s first
    answer, so it is no clean negative for that question; paragraphs 1 and 2 share their first
    answer, so neither is a clean negative for the other's first question. (A negative offering
    its second question's answer is checked on the bundled file and in ``test_pool.py``.)"""
    place, following = PLACES[i % len(PLACES)], PLACES[(i + 1) % len(PLACES)]
    name = "Alder Keep" if i in (1, 2) else f"Alder {place.title()}"
    next_name = "Alder Keep" if i + 1 in (1, 2) else f"Alder {following.title()}"
    text = (
        f"The {place} of parish {i} is called {name}. Its warden is Warden {place.title()}. "
        f"Walkers from the {following} lane name their own landmark {next_name}."
    )
    questions = [
        {
            "id": f"q{i}a",
            "question": f"what is the {place} of parish {i} called",
            "answers": [name],
        },
        {
            "id": f"q{i}b",
            "question": f"who is the warden of the {place}",
            "answers": [f"Warden {place.title()}"],
        },
    ]
    return {"title": f"Parish {i}", "text": text, "questions": questions}


@pytest.fixture
def small_file(tmp_path: Path) -> str:
    path = tmp_path / "squad-small.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        for i in range(36):
            handle.write(json.dumps(_paragraph(i)) + "\n")
    return str(path)


def _questions(split: str, path: str | None) -> int:
    return sum(len(p.questions) for p in load_paragraphs(path) if split_of(p.text) == split)


def _check_items(items: Sequence[Item], path: str | None, split: str, k: int) -> None:
    """Every property the module docstring promises, against the source paragraphs."""
    paragraphs = load_paragraphs(path)
    by_document = {p.document: p for p in paragraphs}
    by_id = {q.qid: (p, q) for p in paragraphs for q in p.questions}
    pool = [p.document for p in paragraphs if split_of(p.text) == split]
    for item in items:
        paragraph, question = by_id[item.item_id.rsplit(":", 1)[1]]
        assert item.item_id == f"squad:{split}:{question.qid}"
        assert item.question == question.text
        assert split_of(paragraph.text) == split
        assert len(item.documents) == k == len(set(item.documents))
        assert all(split_of(by_document[d].text) == split for d in item.documents)
        assert item.gold is not None
        assert item.candidates is not None
        assert item.scores is not None
        assert [d == paragraph.document for d in item.documents].count(True) == 1
        assert item.documents[item.gold] == paragraph.document
        assert item.answer == question.answers[0] == item.candidates[item.gold]
        assert len({normalize_answer(c) for c in item.candidates}) == k  # distinct candidates
        answers = [normalize_answer(a) for a in question.answers]
        for j, document in enumerate(item.documents):
            if j != item.gold:  # no negative contains any of the question's answers
                assert not any(a in normalize_answer(document) for a in answers), (item.item_id, j)
                own = [q.answers[0] for q in by_document[document].questions]
                assert item.candidates[j] in own, (item.item_id, j)
        # The retriever's scores over the split's pool, in its order.
        retriever = item.family.removeprefix("squad-")
        row = score_matrix(retriever, [item.question], pool)[0]
        assert item.scores == tuple(float(row[pool.index(d)]) for d in item.documents)
        assert list(item.scores) == sorted(item.scores, reverse=True)


def test_items_are_deterministic_and_sound(small_file: str) -> None:
    for split in SPLIT_SHARES:
        n = _questions(split, small_file)
        items = squad_items(n, 4, split=split, retrievers=BM25, path=small_file)
        assert items == squad_items(n, 4, split=split, retrievers=BM25, path=small_file)
        assert len(items) == n
        _check_items(items, small_file, split, 4)


def test_splits_share_no_paragraph(small_file: str) -> None:
    seen: dict[str, set[str]] = {}
    for split in SPLIT_SHARES:
        n = _questions(split, small_file)
        items = squad_items(n, 3, split=split, retrievers=BM25, path=small_file)
        seen[split] = {d for i in items for d in i.documents}
        questions = {i.question for i in items}
        assert len(questions) == n, "every question of the split's paragraphs gets an item"
    names = list(seen)
    for a, b in ((names[0], names[1]), (names[0], names[2]), (names[1], names[2])):
        assert not seen[a] & seen[b], (a, b)


def test_questions_are_taken_in_turn_across_paragraphs_and_retrievers_alternate(
    small_file: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # MiniLM is optional: both retrievers score with BM25 here, each under its own name.
    monkeypatch.setattr(squad, "score_matrix", lambda _, q, p: score_matrix("bm25", q, p))
    split = "evaluation"
    paragraphs = [p for p in load_paragraphs(small_file) if split_of(p.text) == split]
    items = squad_items(_questions(split, small_file), 3, split=split, path=small_file)
    firsts = [p.questions[0].qid for p in paragraphs]
    seconds = [p.questions[1].qid for p in paragraphs]
    assert [i.item_id.rsplit(":", 1)[1] for i in items] == firsts + seconds
    assert [i.family for i in items[:4]] == ["squad-bm25", "squad-minilm"] * 2


def test_bad_arguments_name_the_parameter(small_file: str) -> None:
    with pytest.raises(ValueError, match="split must be one of"):
        squad_items(1, 3, split="test", retrievers=BM25, path=small_file)
    with pytest.raises(ValueError, match="k must be >= 2"):
        squad_items(1, 1, retrievers=BM25, path=small_file)
    with pytest.raises(ValueError, match=r"n_items must be in 1\.\."):
        squad_items(0, 3, retrievers=BM25, path=small_file)
    with pytest.raises(ValueError, match=r"n_items must be in 1\.\.\d+ for split 'evaluation'"):
        squad_items(10_000, 3, retrievers=BM25, path=small_file)
    with pytest.raises(ValueError, match="retrievers must be drawn from"):
        squad_items(1, 3, retrievers=("tfidf",), path=small_file)


def test_the_bundled_file_gives_enough_sound_items_with_bm25() -> None:
    paragraphs = load_paragraphs()
    assert (len(paragraphs), sum(len(p.questions) for p in paragraphs)) == (173, 705)
    for split, n in (("calibration", 60), ("evaluation", 150)):
        items = squad_items(n, 10, split=split, retrievers=BM25)
        assert len({i.question for i in items}) == n
        assert {i.family for i in items} == {"squad-bm25"}
        _check_items(items, None, split, 10)
    by_document = {p.document: p for p in paragraphs}
    later = [
        c
        for i in items
        for j, (c, d) in enumerate(zip(i.candidates or (), i.documents, strict=True))
        if j != i.gold and c != by_document[d].questions[0].answers[0]
    ]
    assert later, "some negative offers a later question's answer (its first one was taken)"
    gold_first = np.mean([i.gold == 0 for i in items])
    assert 0.5 < gold_first < 1, "real retrieval: the gold paragraph is often, not always, first"


def test_the_data_ships_with_its_readme_and_licence() -> None:
    data = resources.files("bookend_rag_lab").joinpath("data")
    readme = data.joinpath("SQUAD-README.md").read_text(encoding="utf-8")
    licence = data.joinpath("SQUAD-LICENSE").read_text(encoding="utf-8")
    assert "e2b92bf2c37efe3d7349a1d3518aa67d5619c09a" in readme
    assert "CC BY-SA 4.0" in readme
    assert "Attribution-ShareAlike 4.0" in licence
    # The wheel takes what pyproject's package data names: the data file and both texts.
    pyproject = tomllib.loads((ROOT / "lab" / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = pyproject["tool"]["setuptools"]["package-data"]["bookend_rag_lab"]
    for name in ("squad2-dev-paragraphs.jsonl.gz", "SQUAD-README.md", "SQUAD-LICENSE"):
        assert data.joinpath(name).is_file()
        assert any(fnmatch.fnmatch(f"data/{name}", p) for p in patterns), name
