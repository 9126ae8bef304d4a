"""Look-alike detection (the sparse Jaccard matrix against brute force, the groups) and the
option that drops them."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bookend_rag
from bookend_rag.lookalikes import jaccard_matrix, lookalike_groups, shingles

WORDS = st.sampled_from("alpha beta gamma delta born in lisbon oslo the was".split())
TEXTS = st.lists(st.lists(WORDS, max_size=12).map(" ".join), max_size=8)


def _brute(a: str, b: str, n: int) -> float:
    sa, sb = shingles(a, n), shingles(b, n)
    union = sa | sb
    return len(sa & sb) / len(union) if union else 0.0


@settings(max_examples=60, deadline=None)
@given(texts=TEXTS, n=st.integers(1, 4))
def test_jaccard_matrix_is_the_brute_force_one(texts: list[str], n: int) -> None:
    got = jaccard_matrix(texts, n)
    assert got.shape == (len(texts), len(texts))
    for a, b in itertools.product(range(len(texts)), repeat=2):
        want = 1.0 if a == b else _brute(texts[a], texts[b], n)
        assert got[a, b] == pytest.approx(want)


@settings(max_examples=60, deadline=None)
@given(texts=TEXTS, threshold=st.floats(0.05, 1.0))
def test_groups_are_the_components_of_similar_pairs(texts: list[str], threshold: float) -> None:
    groups = lookalike_groups(texts, threshold=threshold)
    similar = jaccard_matrix(texts) >= threshold
    assert len(groups) == len(texts)
    for a, b in itertools.combinations(range(len(texts)), 2):
        if similar[a, b]:
            assert groups[a] == groups[b]
    for i, g in enumerate(groups):
        assert g <= i
        assert groups[g] == g, "a group is named by its first member"


def test_near_duplicates_group_and_distinct_texts_do_not() -> None:
    filler = "Most houses on the main street had slate roofs. The parish kept careful records."
    texts = [
        f"Beatrix Abbott was born in Turin. {filler}",
        "Rosa Brennan was born in Seville. Travellers stopped there on their way north.",
        f"Yusuf Abbott was born in Lyon. {filler}",
    ]
    assert lookalike_groups(texts) == (0, 1, 0)
    assert lookalike_groups(texts, threshold=1.0) == (0, 1, 2)


def test_exact_duplicates_have_similarity_one() -> None:
    m = jaccard_matrix(["a b c d", "A, b c d!", ""])
    assert m[0, 1] == 1.0
    assert m[0, 2] == 0.0
    np.testing.assert_array_equal(np.diag(m), 1.0)


@pytest.mark.parametrize(
    ("call", "error", "needle"),
    [
        (lambda: lookalike_groups(["a"], threshold=0), ValueError, "threshold=0"),
        (lambda: lookalike_groups(["a"], threshold=1.5), ValueError, "threshold=1.5"),
        (lambda: jaccard_matrix(["a"], n=0), ValueError, "n=0"),
        (lambda: jaccard_matrix("abc"), TypeError, "texts"),
        (lambda: jaccard_matrix(["a", 3]), TypeError, "texts"),  # type: ignore[list-item]
    ],
)
def test_bad_arguments(call: object, error: type[Exception], needle: str) -> None:
    with pytest.raises(error, match=needle):
        call()  # type: ignore[operator]


# Placement: drop_lookalikes keeps the most relevant chunk of each look-alike group.
DISTINCT = [f"topic{i} " + " ".join(f"w{i}x{j}" for j in range(30)) for i in range(6)]


@settings(max_examples=60, deadline=None)
@given(
    picks=st.lists(st.integers(0, 3), min_size=1, max_size=10),
    scores=st.lists(st.floats(0, 1), min_size=10, max_size=10),
    top_k=st.none() | st.integers(1, 10),
)
def test_drop_lookalikes_keeps_the_most_relevant_of_each_group(
    picks: list[int], scores: list[float], top_k: int | None
) -> None:
    texts = [DISTINCT[p] for p in picks]  # repeats of four texts: exact duplicates
    score = scores[: len(texts)]
    placement = bookend_rag.reorder(texts, score, drop_lookalikes=True, top_k=top_k)
    kept = set(placement.order)
    assert sorted([*kept, *placement.dropped]) == list(range(len(texts)))  # each item once
    assert set(placement.dropped_as_lookalikes) <= set(placement.dropped)
    assert len({texts[i] for i in kept}) == len(kept)  # no look-alikes left
    survivors = {texts[i]: i for i in range(len(texts)) if i not in placement.dropped_as_lookalikes}
    assert len(survivors) == len(set(texts))  # one of each text before top_k
    for i in placement.dropped_as_lookalikes:
        keep = survivors[texts[i]]
        rel = placement.relevance
        assert (rel[keep], -keep) > (rel[i], -i)  # the most relevant, the earlier on ties


def test_drop_lookalikes_needs_texts() -> None:
    with pytest.raises(ValueError, match=r"drop_lookalikes=True compares texts: items\[0\]"):
        bookend_rag.reorder([1, 2], [0.5, 0.4], lengths=[3, 3], drop_lookalikes=True)
