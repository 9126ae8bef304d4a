"""The small-K path (:mod:`bookend_rag.placement.small_k`) gives the placement the array path gives.

Every call below is placed twice by the same placer: as it comes (the small-K path whenever it
applies) and with the small-K path switched off, and the two placements must be equal: the same
order, items, relevance, lengths and scores bit for bit, drops, notes and settings.
"""

from __future__ import annotations

import dataclasses
import pickle
from contextlib import nullcontext
from typing import Any
from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from bookend_rag import Bookend, Placement
from bookend_rag.relevance import normalised_floats, relevance
from bookend_rag.tokens import approx_token_count, approx_token_counts
from bookend_rag.weighing import WEIGHT_RULES

MODELS = [
    "llama-3.1-8b",
    "smollm2-135m",
    "gpt2",
    "liu2023:gpt-3.5-turbo",
    {"depth": 4, "attn_share": 0.5},
]

#: Scores as retrievers give them and as they go wrong: floats of any sign and size (ties,
#: signed zeros, near the float limits), ints, NumPy floats, a missing one, NaN and infinities.
SCORE = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.floats(-2, 2),
    st.sampled_from([0.0, -0.0, 0.5, 1.0, 1e308, -1e308]),
    st.integers(-5, 5),
    st.builds(np.float64, st.floats(-1, 1)),
    st.sampled_from([None, float("nan"), float("inf"), True]),
)

SETTINGS = st.fixed_dictionaries(
    {},
    optional={
        "strategy": st.sampled_from(["bookend", "alternate", "relevance"]),
        "weight_rule": st.sampled_from(WEIGHT_RULES),
        "distance": st.booleans(),
        "equal_lengths": st.booleans(),
        "top_k": st.integers(1, 12),
        "budget": st.integers(200, 3000),
        "repeat_top": st.booleans(),
        "competition": st.sampled_from([0.0, 0.05, 0.5]),
        "prefix_tokens": st.integers(0, 300),
        "suffix_tokens": st.integers(0, 300),
        "drop_lookalikes": st.booleans(),
    },
)


def both_paths(placer: Bookend[Any], items: list[Any], scores: Any) -> tuple[Any, Any]:
    """The placement (or the error) of the call as it comes, and with the small-K path off."""
    results: list[Placement[Any] | str] = []
    for switch in (nullcontext(), mock.patch("bookend_rag.place.SMALL_K_MAX", 0)):
        with switch:
            try:
                results.append(placer.place(items, scores))
            except ValueError as error:
                results.append(str(error))
    return results[0], results[1]


@settings(deadline=None, max_examples=400)
@given(
    model=st.sampled_from(MODELS),
    rows=st.lists(st.tuples(st.text(max_size=300), st.floats(0, 1)), min_size=0, max_size=14),
    scores=st.one_of(st.none(), st.just("from rows"), st.lists(SCORE, max_size=14)),
    chosen=SETTINGS,
    source=st.booleans(),
    as_records=st.booleans(),
)
def test_both_paths_give_the_same_placement(
    model: Any,
    rows: list[tuple[str, float]],
    scores: Any,
    chosen: dict[str, Any],
    source: bool,
    as_records: bool,
) -> None:
    texts = [text for text, _ in rows]
    if scores == "from rows":
        scores = [score for _, score in rows]
    items: list[Any] = (
        [{"text": t, "src": i % 3} for i, t in enumerate(texts)] if as_records else texts
    )
    placer: Bookend[Any] = Bookend(
        model,
        text="text" if as_records else None,
        source="src" if source and as_records else None,
        **chosen,
    )
    small, array = both_paths(placer, items, scores)
    if isinstance(small, Placement):
        assert isinstance(array, Placement)
        assert small == array
        assert small.relevance.dtype == array.relevance.dtype == np.float64
    else:
        assert small == array  # the same one-line error


def test_the_default_call_takes_the_small_k_path() -> None:
    """The case the path is for: a few texts with float scores, the default settings."""
    placer: Bookend[str] = Bookend()
    texts = [f"chunk {i} " * (i + 1) for i in range(20)]
    scores = [1.0 - i / 40 for i in range(20)]
    with mock.patch.object(Bookend, "_place_few", wraps=placer._place_few) as few:
        placement = placer.place(texts, scores)
    assert few.call_count == 1
    assert placer._place_few(texts, scores) == placement


@settings(deadline=None, max_examples=500)
@given(
    st.lists(
        st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.floats(-2, 2)),
        min_size=1,
        max_size=30,
    ),
    st.booleans(),
)
def test_the_relevance_on_floats_is_the_relevance_on_arrays(
    scores: list[float], distance: bool
) -> None:
    """Bit for bit, near the float limits too (the span halved) and for signed zeros."""
    signed = [-s for s in scores] if distance else scores
    on_floats = normalised_floats(signed, min(signed), max(signed))
    on_array = relevance(np.array(scores), len(scores), distance)
    assert np.array(on_floats).tobytes() == on_array.tobytes()


@given(st.lists(st.text(max_size=200), max_size=30))
def test_the_token_counts_on_lists_are_the_approximation(texts: list[str]) -> None:
    assert approx_token_counts(texts) == [approx_token_count(text) for text in texts]
    assert approx_token_counts([*texts, 3]) is None


def test_a_small_k_placement_copies_and_pickles_like_any_other() -> None:
    """Its arrays are built when first read, but ``dataclasses.replace``, ``pickle`` and equality
    see the same placement as the array path's."""
    texts = [f"chunk {i} " * (i + 1) for i in range(8)]
    scores = [0.5 + i / 20 for i in range(8)]
    placer: Bookend[str] = Bookend()
    small, array = both_paths(placer, texts, scores)
    assert isinstance(small, Placement)
    assert small == array
    copied = dataclasses.replace(small, notes=("copied",))
    assert copied.notes == ("copied",)
    assert copied.relevance.tobytes() == array.relevance.tobytes()
    assert pickle.loads(pickle.dumps(small)) == array
