"""The suite registry and load_items: each suite is its generator, options it lacks are refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from bookend_rag_lab.items.hard import hard_items
from bookend_rag_lab.items.item import load_jsonl
from bookend_rag_lab.items.lookup import lookup_items
from bookend_rag_lab.items.suites import SUITES, load_items, suite_items

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "eval_items.jsonl"


def test_the_registry_names_five_suites() -> None:
    assert sorted(SUITES) == ["hard", "lookup", "nq", "records", "squad"]
    assert [name for name, s in SUITES.items() if not s.templated] == ["nq", "records", "squad"]
    assert [name for name, s in SUITES.items() if s.filler] == ["lookup"]


def test_generated_suites_are_their_generators() -> None:
    families = ["birthplace", "product"]
    assert suite_items("hard", 4, 5, seed=2, split="calibration", families=families) == (
        hard_items(4, 5, seed=2, split="calibration", families=families)
    )
    assert suite_items("lookup", 4, 5, seed=2, split="evaluation", filler=(1, 2)) == (
        lookup_items(4, 5, seed=2, split="evaluation", filler=(1, 2))
    )
    assert suite_items("lookup", 3, 4) == lookup_items(3, 4, split="evaluation")


def test_options_a_suite_does_not_take_are_refused() -> None:
    with pytest.raises(ValueError, match="suite must be one of"):
        suite_items("trivia", 2, 3)
    with pytest.raises(ValueError, match="suite 'nq' has no template families"):
        suite_items("nq", 2, 3, families=["birthplace"])
    with pytest.raises(ValueError, match="filler does not apply to suite 'hard'"):
        suite_items("hard", 2, 3, filler=(0, 1))
    with pytest.raises(ValueError, match="split must be one of"):
        suite_items("hard", 2, 3, split="selection")  # a split of the nq suite only


def test_load_items_takes_a_path_a_list_or_a_suite() -> None:
    assert load_items(EXAMPLE) == load_jsonl(EXAMPLE)
    assert load_items(str(EXAMPLE)) == load_jsonl(EXAMPLE)
    given = lookup_items(2, 3)
    assert load_items(given) == given
    assert load_items(None, suite="hard", n_items=2, k=3, seed=1) == hard_items(2, 3, seed=1)
    with pytest.raises(ValueError, match="items must not be empty"):
        load_items([])
