"""What ``Placement.explain()`` says: which limit dropped each chunk, tied slots named as ties,
the Recency Delta only for theory profiles, the answer token's share, and one line on which
profile and view decided the order, in the words of the profile's own ``describe()``; and that
tied slot weights keep relevance order."""

from __future__ import annotations

import warnings

import numpy as np
import numpy.typing as npt

import bookend_rag
from bookend_rag import InfluenceProfile, TabulatedProfile
from bookend_rag.arrays import FloatArray
from bookend_rag.profiles.base import ProfileDescription

ITEMS = list("abcde")
SCORES = [0.9, 0.8, 0.3, 0.2, 0.1]


def test_each_drop_names_its_limit() -> None:
    by_top_k = bookend_rag.reorder(ITEMS, [5, 4, 3, 2, 1], top_k=2)
    assert by_top_k.dropped == by_top_k.dropped_by_top_k == (2, 3, 4)
    text = by_top_k.explain()
    assert "dropped by top_k: [2, 3, 4]" in text
    assert "token budget" not in text
    both = bookend_rag.reorder(ITEMS, [5, 4, 3, 2, 1], top_k=3, budget=2, lengths=[1] * 5)
    assert (both.dropped, both.dropped_by_top_k) == ((2, 3, 4), (3, 4))
    assert "dropped by top_k: [3, 4]" in both.explain()
    assert "dropped by the token budget: [2]" in both.explain()
    assert both.to_dict()["dropped_by_top_k"] == [3, 4]


def test_a_flat_table_keeps_the_input_order_and_calls_its_slots_tied() -> None:
    flat = TabulatedProfile(weights=(1,) * 5, kind="slot")
    placement = bookend_rag.reorder(ITEMS, SCORES, model=flat)
    assert placement.order == (0, 1, 2, 3, 4)
    text = placement.explain()
    assert "one of 5 slots tied as the heaviest" in text
    assert "1st heaviest" not in text
    assert "every slot weighs the same" in text
    assert "the result is the input order (the input is already in relevance order)" in text


def test_tied_middle_slots_take_chunks_in_relevance_order() -> None:
    table = TabulatedProfile(weights=(3,) + (1,) * 8 + (2,), kind="slot")
    scores = [10 - i for i in range(10)]
    order = bookend_rag.reorder(list("abcdefghij"), scores, model=table).order
    assert order == (0, 2, 3, 4, 5, 6, 7, 8, 9, 1)  # best first, second last, the rest in rank


def test_the_recency_delta_is_named_for_theory_profiles_only() -> None:
    theory = bookend_rag.reorder(ITEMS, SCORES).explain()
    assert "the Recency Delta falls after the chunks" in theory
    table = bookend_rag.reorder(ITEMS, SCORES, model="liu2023:gpt-3.5-turbo").explain()
    assert "Recency Delta" not in table
    position = TabulatedProfile(weights=(3, 1, 1, 2), kind="position")
    assert "Recency Delta" not in bookend_rag.reorder(ITEMS, SCORES, model=position).explain()


def test_the_legend_gives_the_answer_tokens_share_when_there_is_a_suffix() -> None:
    placement = bookend_rag.reorder(ITEMS, SCORES, lengths=[10] * 5)
    total = 50 + 1
    share = 1 - float(placement.profile.cdf_at_tokens([total - 1.0], total)[0])
    assert f"the answer token after the chunks holds {share:.1%}" in placement.explain()
    assert "answer token" not in bookend_rag.reorder(ITEMS, SCORES, suffix_tokens=0).explain()


def test_one_line_says_which_profile_and_view_decided_the_order() -> None:
    whole = bookend_rag.reorder(ITEMS, SCORES).explain()
    assert (
        "decided by: theory profile llama-3.1-8b (H=32, alpha=0.03125), whole-prompt view (the "
        "answer follows the chunks): weights fall from front to back, so the most relevant chunk "
        "goes first; the result is the input order (the input is already in relevance order)"
    ) in whole
    ends = bookend_rag.reorder(ITEMS, SCORES, suffix_tokens=0).explain()
    assert "bookend view (the chunks end the analysed sequence): U-shaped" in ends
    assert "the result is the input order" not in ends
    unscored = bookend_rag.reorder(ITEMS).explain()
    assert "(without scores the input order is the relevance order)" in unscored
    slots = bookend_rag.reorder(ITEMS, SCORES, model="liu2023:gpt-3.5-turbo").explain()
    assert "slot table liu2023:gpt-3.5-turbo, one weight per slot" in slots


class _Linear(InfluenceProfile):
    """A profile kind of a test's own: ``F(x) = x``, every token alike."""

    @property
    def name(self) -> str:
        return "linear"

    def cdf(self, x: npt.ArrayLike) -> FloatArray:
        return np.asarray(x, dtype=np.float64)


class _Described(_Linear):
    """The same kind, saying what it is (as each kind bookend ships does)."""

    def describe(self) -> ProfileDescription:
        return ProfileDescription(kind="uniform curve", final_token="the answer's token")


def test_a_profile_kind_says_in_describe_what_explain_calls_it() -> None:
    plain = bookend_rag.reorder(ITEMS, SCORES, model=_Linear()).explain()
    assert "decided by: profile linear, whole-prompt view" in plain
    assert "(the final token falls after the chunks, on the suffix)" in plain
    own = bookend_rag.reorder(ITEMS, SCORES, model=_Described(), suffix_tokens=0).explain()
    assert "decided by: uniform curve linear, bookend view" in own
    assert "(chunks fill the sequence: the final chunk holds the answer's token)" in own


def test_an_unknown_model_is_named_first_with_what_was_used() -> None:
    """Issue 38, 3.2: explain() began with the default profile's line and named the fallback only
    in a note at the bottom."""
    from bookend_rag.spec import UNMEASURED_ORDER

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the notice's warning: its text is checked below
        placement = bookend_rag.reorder(ITEMS, [0.1, 0.9, 0.5, 0.3, 0.2], model="acme-explain-v2")
    first, second = placement.explain().splitlines()[:2]
    assert first == f"note: {placement.notes[0]}"
    assert first.startswith(
        "note: bookend has not measured and knows no architecture for 'acme-explain-v2': "
        f"placed with the default order, under the default layout {UNMEASURED_ORDER}; "
    )
    assert second == f"profile: {bookend_rag.DEFAULT_MODEL} (H=32, alpha=0.03125)"
    assert placement.order == (1, 2, 3, 4, 0)  # what the note says: the relevance order
