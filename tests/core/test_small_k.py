"""The shortcuts (:mod:`bookend_rag.place.shortcut`: the small-K path, and placing by rank above
it) give the placement the array path gives.

Every call below is placed twice by the same placer: as it comes (a shortcut whenever one
applies) and with the shortcuts switched off, and the two placements must be equal: the same
order, items, relevance, lengths and scores bit for bit, drops, notes and settings. The settings
are every field of :class:`~bookend_rag.PlacementConfig`, drawn from its type and constraints, so
that a new setting is drawn here as soon as it exists, and a wrong declaration of how the
shortcuts treat it (:class:`~bookend_rag.config.Shortcuts`) fails here.
"""

from __future__ import annotations

import dataclasses
import pickle
from contextlib import nullcontext, suppress
from functools import partial
from types import NoneType, UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin
from unittest import mock

import annotated_types as at
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from bookend_rag import Bookend, Placement, PlacementConfig
from bookend_rag.config import SHORTCUTS, Shortcuts, declared_shortcuts
from bookend_rag.place import placer as placer_module
from bookend_rag.place import shortcut
from bookend_rag.place.rank_path import place_by_rank
from bookend_rag.place.shortcut import Shortcut
from bookend_rag.place.small_k_path import place_few
from bookend_rag.placement.orders import rank_order
from bookend_rag.placement.small_k import relevance_order
from bookend_rag.placement.strategies import STRATEGIES
from bookend_rag.relevance import normalised_floats, relevance
from bookend_rag.tokens import all_strings, approx_token_count, approx_token_counts
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

#: The settings whose type does not say which values exist (names checked by a validator): the
#: values drawn. A tokenizer's counts take the paths of the ``token_counter`` object drawn in
#: :func:`test_a_tokenizer_counts_when_the_order_needs_it_or_the_lengths_are_read`.
NAMED_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "model": st.sampled_from(MODELS),
    "strategy": st.sampled_from(STRATEGIES),
    "weight_rule": st.sampled_from(WEIGHT_RULES),
    "tokenizer": st.none(),
}


def setting_values(name: str) -> st.SearchStrategy[Any]:
    """The values of the setting ``name`` of :class:`~bookend_rag.PlacementConfig`: from its
    annotation and constraints, or :data:`NAMED_VALUES`."""
    if name in NAMED_VALUES:
        return NAMED_VALUES[name]
    field = PlacementConfig.model_fields[name]
    return _values_of(name, field.annotation, field.metadata)


def _values_of(name: str, annotation: Any, metadata: list[Any]) -> st.SearchStrategy[Any]:
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:  # a type with its own constraints (Count), inside an Optional
        return _values_of(name, args[0], [*annotation.__metadata__, *metadata])
    if origin is Union or origin is UnionType:
        return st.one_of(
            *(st.none() if arg is NoneType else _values_of(name, arg, metadata) for arg in args)
        )
    if origin is Literal:
        return st.sampled_from(args)
    if annotation is bool:
        return st.booleans()
    # The bounds pydantic keeps as annotated-types constraints (Field(ge=..., gt=..., le=...)).
    bounds = {type(mark): mark for mark in metadata if isinstance(mark, at.BaseMetadata)}
    ge, gt, le, lt = (bounds.get(kind) for kind in (at.Ge, at.Gt, at.Le, at.Lt))
    low: Any = ge.ge if isinstance(ge, at.Ge) else gt.gt if isinstance(gt, at.Gt) else None
    high: Any = le.le if isinstance(le, at.Le) else lt.lt if isinstance(lt, at.Lt) else None
    if annotation is int:
        low = None if low is None else low + (gt is not None)
        high = None if high is None else high - (lt is not None)
        # Near the lower bound as often as anywhere (token counts and budgets of a prompt's size;
        # for floats, competition near 0): where a setting moves an order.
        near = st.integers(low, high if low is None or high is None else min(high, low + 1000))
        return st.one_of(near, st.integers(low, high))
    if annotation is float:
        values = partial(
            st.floats,
            exclude_min=gt is not None,
            exclude_max=lt is not None,
            allow_nan=False,
            allow_infinity=False,
        )
        close = values(low, high if low is None or high is None else min(high, low + 1.0))
        return st.one_of(close, values(low, high))
    raise TypeError(
        f"cannot draw PlacementConfig.{name} from its type {annotation!r}: name its values in "
        "NAMED_VALUES"
    )


def _setting(name: str) -> st.SearchStrategy[Any]:
    """A value of the setting ``name``; one the shortcuts place with only at its default
    (:attr:`Shortcuts.DEFAULT_ONLY`) is mostly the default, so that the shortcuts are drawn."""
    values = setting_values(name)
    if SHORTCUTS[name] is not Shortcuts.DEFAULT_ONLY:
        return values
    default = PlacementConfig.model_fields[name].default
    return st.one_of(st.just(default), st.just(default), values)


#: Every setting of :class:`~bookend_rag.PlacementConfig`, each given or left at its default: a
#: new setting is drawn without an edit here.
SETTINGS = st.fixed_dictionaries(
    {}, optional={name: _setting(name) for name in PlacementConfig.model_fields}
)


def both_paths(placer: Bookend[Any], items: list[Any], scores: Any) -> tuple[Any, Any]:
    """The placement (or the error) of the call as it comes, and with the shortcuts (the small-K
    path, and placing by rank above it: :mod:`bookend_rag.place.shortcut`) off."""
    results: list[Placement[Any] | str] = []
    off = mock.patch.object(Shortcut, "place", return_value=None)
    for switch in (nullcontext(), off):
        with switch:
            try:
                results.append(placer.place(items, scores))
            except ValueError as error:
                results.append(str(error))
    return results[0], results[1]


@settings(deadline=None, max_examples=400)
@given(
    rows=st.lists(st.tuples(st.text(max_size=300), st.floats(0, 1)), min_size=0, max_size=14),
    scores=st.one_of(st.none(), st.just("from rows"), st.lists(SCORE, max_size=14)),
    chosen=SETTINGS,
    source=st.booleans(),
    as_records=st.booleans(),
)
def test_both_paths_give_the_same_placement(
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


@settings(deadline=None, max_examples=60)
@given(
    k=st.integers(65, 160),
    seed=st.integers(0, 2**32 - 1),
    scores=st.sampled_from(["floats", "ties", "none", "one missing", "bad"]),
    chosen=SETTINGS,
)
def test_above_the_small_k_path_both_paths_agree_too(
    k: int, seed: int, scores: str, chosen: dict[str, Any]
) -> None:
    """Above :data:`SMALL_K_MAX`, placing by rank (slots front to back) against the array path."""
    rng = np.random.default_rng(seed)
    texts = ["w " * int(n) for n in rng.integers(0, 400, size=k)]
    values: list[Any] | None = {
        "floats": rng.random(k).tolist(),
        "ties": rng.integers(0, 3, size=k).astype(float).tolist(),
        "none": None,
        "one missing": [*rng.random(k - 1).tolist(), None],
        "bad": [*rng.random(k - 1).tolist(), float("nan")],
    }[scores]
    placer: Bookend[str] = Bookend(**chosen)
    small, array = both_paths(placer, texts, values)
    assert small == array


def test_a_long_default_call_places_by_rank() -> None:
    """Above the small-K path, the theory's slots rank front to back under the default layout:
    the order is the relevance order, and the lengths are counted when read."""
    placer: Bookend[str] = Bookend("llama-3.1-8b")
    texts = [f"chunk {i} " * (i % 7 + 1) for i in range(1000)]
    scores = [((37 * i) % 1000) / 1000 for i in range(1000)]
    with mock.patch.object(shortcut, "place_by_rank", wraps=place_by_rank) as by_rank:
        placement = placer.place(texts, scores)
    assert by_rank.call_count == 1
    assert "lengths" not in vars(placement)
    assert list(placement.order) == sorted(range(1000), key=lambda i: -scores[i])
    assert placement.lengths.tolist() == [approx_token_count(text) for text in texts]


def test_the_default_call_takes_the_small_k_path() -> None:
    """The case the path is for: a few texts with float scores, the default settings."""
    placer: Bookend[str] = Bookend()
    texts = [f"chunk {i} " * (i + 1) for i in range(20)]
    scores = [1.0 - i / 40 for i in range(20)]
    with mock.patch.object(shortcut, "place_few", wraps=place_few) as few:
        placement = placer.place(texts, scores)
    assert few.call_count == 1
    assert (placement, placement) == both_paths(placer, texts, scores)


@pytest.mark.parametrize("policy", ["drop_scores", "rank"])
def test_a_call_with_a_score_missing_takes_the_small_k_path_without_reading_the_texts(
    policy: str,
) -> None:
    """A retriever that left one item unscored: ``missing_scores`` decides on the small-K path,
    with the array path's note, and the lengths stay uncounted until read (the array path would
    count every text, with the framework's tokenizer in an adapter)."""
    placer: Bookend[str] = Bookend("llama-3.1-8b", missing_scores=policy)
    texts = [f"chunk {i} " * (i + 1) for i in range(20)]
    scores: list[float | None] = [1.0 - i / 40 for i in range(20)]
    scores[3] = None
    with mock.patch.object(placer_module, "place_on_arrays") as arrays:
        placement = placer.place(texts, scores)
    assert arrays.call_count == 0
    assert "lengths" not in vars(placement)
    assert any("scores: 1 of 20 missing (scores[3] is None)" in note for note in placement.notes)
    assert (placement, placement) == both_paths(placer, texts, scores)


DEFAULT_ONLY = [name for name, declared in SHORTCUTS.items() if declared is Shortcuts.DEFAULT_ONLY]


@pytest.mark.parametrize("name", [name for name in SHORTCUTS if name not in DEFAULT_ONLY])
@settings(deadline=None, max_examples=40)
@given(
    data=st.data(),
    model=st.sampled_from(MODELS),
    k=st.integers(2, 80),
    seed=st.integers(0, 2**32 - 1),
)
def test_each_setting_the_shortcuts_may_place_with_gives_the_array_paths_placement(
    name: str, data: st.DataObject, model: Any, k: int, seed: int
) -> None:
    """A setting declared :attr:`Shortcuts.READ` or :attr:`Shortcuts.NO_EFFECT`, alone at any
    of its values, on chunks of unequal lengths with distinct scores (where an order can move):
    a declaration that lets the shortcuts ignore a setting that moves the order fails here."""
    value = data.draw(setting_values(name), label=name)
    placer: Bookend[str] = Bookend(**{"model": model, name: value})
    rng = np.random.default_rng(seed)
    texts = ["w " * int(n) for n in rng.integers(0, 400, size=k)]
    small, array = both_paths(placer, texts, rng.random(k).tolist())
    assert small == array


@pytest.mark.parametrize("name", DEFAULT_ONLY)
@settings(deadline=None, max_examples=20)
@given(data=st.data())
def test_a_setting_the_shortcuts_do_not_read_sends_every_call_to_the_array_path(
    name: str, data: st.DataObject
) -> None:
    """Any value but the default of a setting declared :attr:`Shortcuts.DEFAULT_ONLY`, at a K
    each shortcut would otherwise take."""
    default = PlacementConfig.model_fields[name].default
    value = data.draw(setting_values(name).filter(lambda v: v != default), label=name)
    placer: Bookend[str] = Bookend(**{name: value})
    assert placer.config.array_path_settings() == (name,)
    for k in (20, 100):
        texts = [f"chunk {i} " * (i % 5 + 1) for i in range(k)]
        # The array path may refuse the call (a budget below every chunk): not the shortcut.
        with (
            mock.patch.object(Shortcut, "place", wraps=Shortcut.place) as shortcut,
            suppress(ValueError),
        ):
            placer.place(texts, [i / k for i in range(k)])
        assert shortcut.call_count == 0
    assert Bookend(**{name: default}).config.array_path_settings() == ()


def test_a_setting_must_declare_how_the_shortcuts_treat_it() -> None:
    """A setting added without a :class:`Shortcuts` declaration fails at import, named."""

    class Settings(BaseModel):
        spread: bool = False

    with pytest.raises(TypeError, match=r"^Settings.spread must declare how the placement"):
        declared_shortcuts(Settings)
    assert set(SHORTCUTS) == set(PlacementConfig.model_fields)


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
    assert all_strings(texts)
    assert not all_strings([*texts, 3])


#: Scores a few ulps apart, the same, or far apart: where sorting the scores and sorting their
#: rounded relevance could disagree.
CLOSE_SCORES = st.lists(
    st.one_of(
        st.sampled_from([0.5, 0.5 + 1e-15, 0.5 - 1e-15, 0.5 + 2e-12, 0.0, -0.0, 1.0]),
        st.floats(-1, 1),
        st.floats(allow_nan=False, allow_infinity=False),
    ),
    min_size=2,
    max_size=20,
)


@settings(deadline=None, max_examples=1000)
@given(CLOSE_SCORES, st.booleans())
def test_the_relevance_order_is_the_order_of_the_relevance(
    scores: list[float], distance: bool
) -> None:
    """Sorting the scores stands for sorting the relevance only where no two different scores
    round to one relevance; the order and the (deferred) relevance are the array path's."""
    signed = [-s for s in scores] if distance else scores
    order, rel = relevance_order(signed)
    on_array = relevance(np.array(scores), len(scores), distance)
    assert order == rank_order(on_array).tolist()
    values = rel() if callable(rel) else rel
    assert np.array(values).tobytes() == on_array.tobytes()


def test_scores_that_round_to_one_relevance_keep_input_order() -> None:
    """The lower of two scores 1e-15 apart comes first in the input: as ties of the relevance,
    they keep that order, where sorting the scores alone would swap them."""
    order, rel = relevance_order([0.0, 0.5, 0.5 + 1e-15, 1.0])
    assert order == [3, 1, 2, 0]
    assert not callable(rel)
    assert rel[1] == rel[2]


def test_a_small_k_placement_counts_the_texts_as_they_were() -> None:
    """The token counts the order did not need are counted when read, from a copy of the texts:
    changing the caller's list afterwards changes nothing."""
    texts = [f"chunk {i} " * (i + 1) for i in range(6)]
    placer: Bookend[str] = Bookend()
    placement = placer.place(texts, [0.1 * i for i in range(6)])
    expected = [approx_token_count(text) for text in texts]
    texts[0] = "x" * 4000
    assert placement.lengths.tolist() == expected


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


class _Words:
    """A tokenizer object (``encode``) that counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def encode(self, text: str) -> list[str]:
        self.calls += 1
        return text.split()


@settings(deadline=None, max_examples=60)
@given(
    k=st.sampled_from([2, 5, 20, 64, 65, 200]),
    seed=st.integers(0, 2**32 - 1),
    chosen=SETTINGS,
)
def test_a_tokenizer_counts_when_the_order_needs_it_or_the_lengths_are_read(
    k: int, seed: int, chosen: dict[str, Any]
) -> None:
    """A tokenizer's counts (``len(encode(text))``) give the array path's placement on every
    path; where the slots rank front to back whatever the lengths, they are taken only when the
    placement's lengths are read."""
    rng = np.random.default_rng(seed)
    texts = ["w " * int(n) for n in rng.integers(0, 300, size=k)]
    words = _Words()
    placer: Bookend[str] = Bookend(token_counter=words, **chosen)
    scores = rng.random(k).tolist()
    small, array = both_paths(placer, texts, scores)
    assert small == array  # a placement, or the same one-line error
    if not isinstance(small, Placement):
        return
    words.calls = 0
    placement = placer.place(texts, scores)
    config = placer.config
    if config.equal_lengths:
        assert (words.calls, placement.lengths.tolist()) == (0, [1.0] * k)
        return
    # top_k below K leaves the choice to the array path, which counts.
    by_rank = (
        placer._shortcut is not None
        and placer._shortcut.slot_ranks is not None
        and (config.top_k is None or config.top_k >= k)
    )
    assert words.calls == (0 if by_rank else k)
    assert placement.lengths.tolist() == [max(len(t.split()), 1) for t in texts]


def test_a_callable_counter_is_called_on_every_placement() -> None:
    """A caller's own function is called at once, so its errors (and its bad counts) are seen
    when placing, whatever the order needed."""
    calls: list[str] = []

    def count(text: str) -> int:
        calls.append(text)
        return 1

    placer: Bookend[str] = Bookend(token_counter=count)
    placer.place(["a", "b", "c"], [0.1, 0.2, 0.3])
    assert calls == ["a", "b", "c"]
