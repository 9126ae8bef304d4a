"""The pool's shared pieces: hard negatives mined from a ranked pool, groups taken in turn."""

from __future__ import annotations

import numpy as np
import pytest

from bookend_rag_lab.items.pool import SPLIT_SHARES, check_request, in_turn, mine_item

#: A gold passage (0) and five others: 1 names the answer; 3's first offer repeats 2's after
#: normalisation, so it offers its second; both of 4's repeat a candidate taken above it.
DOCUMENTS = (
    "(Title: Gold) The harbour is called Port Answer.",
    "(Title: Leak) Sailors say PORT ANSWER, too.",
    "(Title: Two) The lighthouse is Alpha.",
    "(Title: Three) The mill is alpha! and the weir Beta.",
    "(Title: Four) ALPHA and the Beta.",
    "(Title: Five) The quay is Gamma.",
)
OFFERS = (
    ("Port Answer",),
    ("Leak",),
    ("Alpha",),
    ("alpha!", "Beta"),
    ("ALPHA", "the beta"),
    ("Gamma",),
)
SCORES = np.array([0.5, 0.9, 0.8, 0.7, 0.6, 0.1])


def _mine(k: int) -> object:
    return mine_item(
        item_id="x",
        question="what is the harbour called",
        answers=("Port Answer", "the port"),
        gold=0,
        documents=DOCUMENTS,
        offers=OFFERS,
        scores=SCORES,
        k=k,
        family="test-bm25",
    )


def test_negatives_skip_answers_and_repeated_candidates_and_keep_the_retrievers_order() -> None:
    item = _mine(4)
    assert item is not None
    assert item.documents == (DOCUMENTS[2], DOCUMENTS[3], DOCUMENTS[0], DOCUMENTS[5])
    assert item.candidates == ("Alpha", "Beta", "Port Answer", "Gamma")
    assert item.scores == (0.8, 0.7, 0.5, 0.1)
    assert item.gold == 2
    assert item.answer == "Port Answer"


def test_too_few_negatives_give_no_item() -> None:
    assert _mine(5) is None


def test_in_turn_takes_every_groups_first_member_first() -> None:
    assert in_turn([["a1", "a2", "a3"], ["b1"], ["c1", "c2"]]) == [
        "a1",
        "b1",
        "c1",
        "a2",
        "c2",
        "a3",
    ]
    assert in_turn([]) == []


def test_check_request_names_the_parameter() -> None:
    check_request("evaluation", SPLIT_SHARES, ("bm25", "minilm"))
    with pytest.raises(ValueError, match="split must be one of"):
        check_request("train", SPLIT_SHARES, ("bm25",))
    with pytest.raises(ValueError, match="retrievers must be drawn from"):
        check_request("evaluation", SPLIT_SHARES, ())
