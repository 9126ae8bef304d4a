"""The placing API (``reorder``, ``Bookend``): behaviour, options and bad input."""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bookend_rag
from bookend_rag import Bookend, ModelSpec, TabulatedProfile, reorder
from bookend_rag.place.items import StringText
from bookend_rag.weighing import chunk_weights

texts = st.lists(st.text(min_size=1, max_size=300), min_size=0, max_size=16)


@st.composite
def scored_items(draw: st.DrawFn) -> tuple[list[str], list[float]]:
    items = draw(texts)
    # Integer-valued scores: distinct ones stay distinct and ties stay tied under scaling, so
    # the property is exact rather than at the mercy of rounding.
    scores = draw(st.lists(st.integers(-1000, 1000), min_size=len(items), max_size=len(items)))
    return items, [float(s) for s in scores]


@given(scored_items(), st.booleans())
def test_every_placement_is_a_permutation_and_deterministic(
    data: tuple[list[str], list[float]], repeat_top: bool
) -> None:
    items, scores = data
    first = reorder(items, scores, repeat_top=repeat_top)
    second = reorder(items, scores, repeat_top=repeat_top)
    assert first.order == second.order
    order = list(first.order)
    if repeat_top and len(items) >= 2:
        assert order[0] == order[-1]
        order = order[:-1]
    assert sorted(order) == list(range(len(items)))
    assert first.items == [items[i] for i in first.order]
    assert first.dropped == ()


@given(scored_items(), st.floats(1e-3, 1e3), st.floats(-1e3, 1e3))
def test_positive_scaling_and_shifting_of_scores_change_nothing(
    data: tuple[list[str], list[float]], scale: float, shift: float
) -> None:
    items, scores = data
    base = reorder(items, scores).order
    assert reorder(items, [scale * s for s in scores]).order == base
    assert reorder(items, [s + shift for s in scores]).order == base


def test_five_equal_chunks_put_best_and_second_best_at_the_ends() -> None:
    items = [f"chunk {i}" for i in range(5)]
    for model in ("llama-3.1-8b", "gpt2", "qwen2.5-7b"):
        # The bookend view: the chunks fill the analysed sequence (no suffix).
        placement = reorder(
            items, [0.9, 0.8, 0.5, 0.3, 0.1], model=model, lengths=[100] * 5, suffix_tokens=0
        )
        assert {placement.order[0], placement.order[-1]} == {0, 1}
        explanation = placement.explain()
        assert "most relevant chunk (0)" in explanation
        assert "the heaviest of 5" in explanation
        assert "vs relevance order" in explanation
        assert placement.objective > placement.baselines["relevance"]


def test_without_scores_input_order_is_relevance_order() -> None:
    placement = reorder(["first", "second", "third", "fourth"], lengths=[10] * 4)
    assert placement.order == (0, 1, 2, 3)  # the default layout: weights fall front to back
    assert placement.relevance.tolist() == [1.0, 0.5, 1 / 3, 0.25]
    view = reorder(["first", "second", "third", "fourth"], lengths=[10] * 4, suffix_tokens=0)
    assert {view.order[0], view.order[-1]} == {0, 1}


def test_distance_scores_invert_the_ranking() -> None:
    sim = reorder(list("abcd"), [0.1, 0.2, 0.3, 0.9], lengths=[5] * 4)
    dist = reorder(list("abcd"), [0.9, 0.8, 0.7, 0.1], lengths=[5] * 4, distance=True)
    assert sim.order == dist.order
    assert sim.order[0] == 3


def test_empty_and_single_inputs() -> None:
    empty = reorder([])
    assert empty.order == ()
    assert empty.items == []
    assert empty.objective == 0.0
    assert "objective" in empty.explain()
    single = reorder(["only"], [3.0])
    assert single.order == (0,)
    assert single.items == ["only"]


def test_duplicates_are_kept() -> None:
    placement = reorder(["same", "same", "other"], [0.5, 0.5, 0.1])
    assert sorted(placement.items) == ["other", "same", "same"]


def test_ties_keep_input_order_for_the_better_slot() -> None:
    placement = reorder(list("abc"), [1.0, 1.0, 1.0], lengths=[10] * 3)
    weights = dict(zip(placement.order, placement.weights, strict=True))
    assert weights[0] >= weights[1] >= weights[2]


def test_budget_keeps_most_relevant_that_fit_and_reports_drops() -> None:
    items = ["a", "b", "c", "d"]
    placement = reorder(items, [0.9, 0.1, 0.8, 0.5], lengths=[50, 10, 60, 40], budget=100)
    # Greedy by relevance: 0 (50), 2 does not fit, 3 (40), then 1 (10) fills the budget.
    assert sorted(placement.order) == [0, 1, 3]
    assert placement.dropped == (2,)
    assert "dropped by the token budget: [2]" in placement.explain()
    with pytest.raises(ValueError, match="budget=5 is smaller than every chunk"):
        reorder(items, lengths=[50, 10, 60, 40], budget=5)
    # top_k keeps chunk 0 alone; the 10-token chunk it left out is not offered to the budget.
    with pytest.raises(
        ValueError, match=r"budget=45 is smaller than every chunk top_k=1 keeps \(shortest is 50"
    ):
        reorder(items, [0.9, 0.1, 0.8, 0.5], lengths=[50, 10, 60, 40], top_k=1, budget=45)


def test_repeat_top_places_the_best_chunk_at_both_ends() -> None:
    placement = reorder(list("abcde"), [0.2, 0.9, 0.5, 0.4, 0.1], repeat_top=True)
    assert placement.order[0] == placement.order[-1] == 1
    assert sorted(placement.order[1:-1]) == [0, 2, 3, 4]
    assert len(placement.weights) == 6


def test_source_groups_keep_their_original_order() -> None:
    @dataclass
    class Chunk:
        text: str
        doc: str

    chunks = [Chunk("x" * (40 * (i + 1)), "A" if i % 2 else "B") for i in range(8)]
    scores = [0.1, 0.9, 0.3, 0.8, 0.5, 0.7, 0.2, 0.6]
    placement = reorder(chunks, scores, text="text", source="doc")
    for doc in "AB":
        seen = [i for i in placement.order if chunks[i].doc == doc]
        assert seen == sorted(seen)
    free = reorder(chunks, scores, text="text")
    assert free.objective >= placement.objective - 1e-12


def test_lengths_come_from_the_token_counter() -> None:
    class WordTokenizer:
        def encode(self, text: str) -> list[str]:
            return text.split()

    items = ["one two three", "four", "five six"]
    assert reorder(items).lengths.tolist() == [4, 1, 2]  # ceil(chars / 4)
    assert reorder(items, token_counter=WordTokenizer()).lengths.tolist() == [3, 1, 2]
    assert reorder(items, token_counter=len).lengths.tolist() == [13, 4, 8]
    records = reorder([{"body": "abcdefgh"}], text="body").to_records()
    assert records[0]["end"] - records[0]["start"] == 2


def test_model_forms_and_layout() -> None:
    spec = ModelSpec(depth=16, attn_share=0.1)
    assert reorder(["a", "b"], model=spec).profile.name == spec.label()
    suffix = reorder(list("abcde"), [5, 4, 3, 2, 1], lengths=[20] * 5, suffix_tokens=400)
    assert suffix.order[0] == 0  # delta on the question: the front is strongest
    assert "the Recency Delta falls after the chunks" in suffix.explain()
    view = reorder(list("abcde"), [5, 4, 3, 2, 1], lengths=[20] * 5, suffix_tokens=0)
    assert "the final chunk holds the Recency Delta" in view.explain()


@dataclass
class _Chunk:
    """A chunk type of the caller's own, with its text where most hold it."""

    text: str
    page: int = 0


@pytest.mark.parametrize("small", [True, False], ids=["small-k", "array-path"])
def test_items_with_a_text_string_need_no_text_setting(small: bool) -> None:
    """Issue 38, 3.10: README said reorder takes "objects with text=", and an object with a
    ``.text`` string was refused unless ``text="text"`` was passed; it is read as that reads it,
    on every path (the small-K shortcut, the arrays, look-alikes)."""
    texts = [f"passage {i} " + "word " * (7 * i % 11) for i in range(5 if small else 80)]
    scores = [float((3 * i) % 7) for i in range(len(texts))]
    objects = [_Chunk(text) for text in texts]
    mappings = [{"text": text, "id": i} for i, text in enumerate(texts)]
    as_strings = reorder(texts, scores, model="smollm2-135m")
    for items in (objects, mappings):
        placement = reorder(items, scores, model="smollm2-135m")
        assert placement.order == as_strings.order
        assert placement.lengths.tolist() == as_strings.lengths.tolist()
        assert placement.items == [items[i] for i in as_strings.order]  # the caller's objects
        assert placement.order == reorder(items, scores, model="smollm2-135m", text="text").order
    twins = [_Chunk("the same text"), _Chunk("the same text")]
    assert reorder(twins, [0.2, 0.9], drop_lookalikes=True).dropped_as_lookalikes == (0,)
    with pytest.raises(ValueError, match=r"items\[0\] of type _Chunk: it is not a string"):
        reorder([_Chunk(None), _Chunk("b")], [0.2, 0.9])  # type: ignore[arg-type]


def test_strategies_compare_with_the_framework_patterns() -> None:
    items, scores = list("abcdef"), [0.6, 0.5, 0.4, 0.3, 0.2, 0.1]
    assert reorder(items, scores, strategy="alternate").order == (0, 2, 4, 5, 3, 1)
    assert reorder(items, scores, strategy="relevance").order == (0, 1, 2, 3, 4, 5)
    assert Bookend(strategy="alternate").place(items, scores).strategy == "alternate"


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: reorder(["a", "b"], [1.0]), "scores must have one value per item"),
        (lambda: reorder(["a", "b"], [1.0, float("nan")]), r"scores\[1\]=nan"),
        (lambda: reorder(["a", "b"], [float("inf"), 1.0]), r"scores\[0\]=inf"),
        (lambda: reorder(["a", "b"], lengths=[3]), "lengths must have one value per item"),
        (lambda: reorder(["a", "b"], lengths=[3, 0]), r"lengths\[1\]=0"),
        (lambda: reorder(["a", "b"], lengths=[-2, 3]), r"lengths\[0\]=-2"),
        (lambda: reorder([1, 2]), "cannot count tokens of items"),
        (
            lambda: reorder(["a"], model="gtp2-xl"),
            "unknown preset name='gtp2-xl'; did you mean 'gpt2-xl'",
        ),
        (lambda: reorder(["a"], budget=0), "budget=0"),
        (lambda: reorder(["a"], strategy="shuffle"), "strategy='shuffle'"),
        (lambda: reorder(["a"], prefix_tokens=-3), "prefix_tokens=-3"),
        (lambda: reorder(["a"], exact_max_k=40), "exact_max_k=40"),
        (lambda: reorder(["a"], token_counter=3), "token_counter=3"),
        (lambda: reorder(["a"], text=3), "text=3"),
    ],
)
def test_bad_input_names_parameter_and_value(call: object, match: str) -> None:
    with pytest.raises((ValueError, TypeError), match=match):
        call()  # type: ignore[operator]


def test_placement_record_and_dict_views() -> None:
    placement = reorder(["aaaa", "bb", "cccccccc"], [0.2, 0.9, 0.4])
    as_dict = placement.to_dict()
    assert as_dict["order"] == list(placement.order)
    spans = [(r["start"], r["end"]) for r in as_dict["slots"]]
    assert spans[0][0] == 0
    assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))
    assert set(as_dict["baselines"]) == {"input", "relevance", "alternate"}
    assert list(placement) == placement.items
    assert placement[0] == placement.items[0]
    assert len(placement) == 3
    assert "Placement(order=" in repr(placement)


def test_large_k_with_unequal_lengths_completes_and_beats_baselines() -> None:
    rng = np.random.default_rng(7)
    k = 300
    placement = reorder(
        [f"c{i}" for i in range(k)], rng.random(k).tolist(), lengths=rng.integers(20, 400, k)
    )
    assert sorted(placement.order) == list(range(k))
    assert placement.objective >= max(placement.baselines.values()) - 1e-9


def test_package_exports() -> None:
    for name in bookend_rag.__all__:
        assert hasattr(bookend_rag, name)


def test_a_missing_score_means_input_order_for_all() -> None:
    with_gap = reorder(list("abcd"), [0.1, None, 0.9, 0.5], lengths=[10] * 4)
    no_scores = reorder(list("abcd"), lengths=[10] * 4)
    assert with_gap.order == no_scores.order
    assert with_gap.scores is None
    assert with_gap.order == (0, 1, 2, 3)
    with pytest.raises(ValueError, match="one value per item"):
        reorder(list("abc"), [None, 0.3])


def test_token_counts_below_one_count_as_one() -> None:
    placement = reorder(["", "some text", ""], [0.5, 0.9, 0.1], token_counter=lambda _: 0)
    assert placement.lengths.tolist() == [1.0, 1.0, 1.0]
    assert sorted(placement.order) == [0, 1, 2]


def test_weights_are_computed_on_first_read() -> None:
    placement = reorder(["aa", "bbbbbbbb", "c"], [0.2, 0.9, 0.5])
    assert "weights" not in vars(placement)
    lengths = placement.lengths[list(placement.order)]
    expected = chunk_weights(placement.profile, lengths, placement.layout)
    np.testing.assert_allclose(placement.weights, expected)


def test_a_placer_is_immutable_and_with_settings_returns_another() -> None:
    placer: Bookend[str] = Bookend()
    items, scores = list("abcde"), [0.5, 0.4, 0.3, 0.2, 0.1]
    for name, value in (("model", "liu2023:gpt-3.5-turbo"), ("top_k", 0), ("config", None)):
        with pytest.raises(AttributeError, match=rf"with_settings\({name}=") as info:
            setattr(placer, name, value)
        assert "\n" not in str(info.value)
    assert placer.place(items, scores).order == (0, 1, 2, 3, 4)
    measured = placer.with_settings(model="liu2023:mpt-30b-instruct", top_k=3)
    assert measured.config.model == "liu2023:mpt-30b-instruct"
    assert measured.profile.name == "liu2023:mpt-30b-instruct"
    assert measured.place(items, scores).dropped == (3, 4)
    assert placer.config.top_k is None  # the original is unchanged
    with pytest.raises(ValueError, match="top_k=0"):
        placer.with_settings(top_k=0)
    with pytest.raises(ValueError, match="unknown setting topk=3"):
        placer.with_settings(topk=3)


def test_with_settings_keeps_how_items_are_read() -> None:
    items = [{"t": "x" * 400, "doc": "A"}, {"t": "y" * 4, "doc": "B"}, {"t": "z" * 40, "doc": "A"}]
    placer: Bookend[dict[str, str]] = Bookend(text="t", source="doc")
    again = placer.with_settings(strategy="relevance")
    placement = again.place(items, [0.1, 0.9, 0.5])
    assert placement.lengths.tolist() == [100.0, 1.0, 10.0]
    assert placement.order.index(0) < placement.order.index(2)  # source A keeps its order


def test_a_placer_resolves_its_model_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The config checks ``model``; the placer resolves the checked reference once (a profile
    object, stored in its JSON form, is read back once), and a placer derived with the same model
    keeps that profile."""
    from bookend_rag.place import placer as placer_module
    from bookend_rag.profiles import io

    read: list[object] = []
    from_json = io.profile_from_json
    monkeypatch.setattr(
        io, "profile_from_json", lambda data, **kw: read.append(data) or from_json(data, **kw)
    )
    resolved: list[object] = []
    resolve = placer_module.resolve_reference
    monkeypatch.setattr(
        placer_module, "resolve_reference", lambda ref: resolved.append(ref) or resolve(ref)
    )
    table = TabulatedProfile(weights=(3.0, 1.0, 2.0), kind="slot")
    placer: Bookend[str] = Bookend(table, count_question=True)
    assert read == resolved == [table.to_json()]
    derived = placer.with_settings(top_k=2).with_question("which one?")
    assert resolved == [table.to_json()]
    assert derived.profile is placer.profile == table
    other = placer.with_settings(model="gpt2")
    assert resolved == [table.to_json(), "gpt2"]
    assert other.profile.name.startswith("gpt2")


def test_reorder_reuses_a_placer_only_while_the_settings_and_profile_file_stay_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bookend_rag.place import cached

    items, scores = list("abcd"), [0.9, 0.5, 0.4, 0.1]
    assert reorder(items, scores, top_k=1).order == (0,)
    with pytest.raises(ValueError, match="top_k=True"):  # equal to 1 as a key, but no count
        reorder(items, scores, top_k=True)
    fresh: Bookend[str] = Bookend(weight_rule="mass", suffix_tokens=0)
    assert reorder(items, scores, weight_rule="mass", suffix_tokens=0) == fresh.place(items, scores)

    # A profile file rewritten in place (same size, a later modification time) is read again.
    monkeypatch.chdir(tmp_path)
    front, back = (9.0, 1.0, 1.0, 1.0), (1.0, 1.0, 1.0, 9.0)
    TabulatedProfile(weights=front, kind="slot").save("p.json")
    assert reorder(items, scores, model="p.json").order[0] == 0
    TabulatedProfile(weights=back, kind="slot").save("p.json")
    later = os.stat("p.json").st_mtime_ns + 10**9
    os.utime("p.json", ns=(later, later))
    assert reorder(items, scores, model="p.json").order[-1] == 0
    # The same relative path in another directory, same size and time: another file.
    (tmp_path / "other").mkdir()
    TabulatedProfile(weights=front, kind="slot").save("other/p.json")
    os.utime("other/p.json", ns=(later, later))
    monkeypatch.chdir(tmp_path / "other")
    assert reorder(items, scores, model="p.json").order[0] == 0
    # A name that becomes a file names the file from then on, as it does without the cache.
    assert reorder(items, scores, model="llama-3.1-8b").order[0] == 0
    TabulatedProfile(weights=back, kind="slot").save("llama-3.1-8b")
    assert reorder(items, scores, model="llama-3.1-8b").order[-1] == 0

    for top_k in range(1, 200):
        reorder(items, scores, top_k=top_k)
    info = cached._kept_placer.cache_info()
    assert info.maxsize is not None
    assert info.currsize <= info.maxsize


def _no_source(item: str, key: str) -> None:
    return None


def test_one_cache_of_placers_serves_reorder_and_the_adapters() -> None:
    from bookend_rag import adapters, place
    from bookend_rag.place import cached

    cached._kept_placer.cache_clear()
    settings = dict(bookend_rag.PlacementConfig(model=ModelSpec(depth=12), top_k=3))
    placer = adapters.PlacerCache(str, _no_source).placer(settings)
    # Another adapter with equal settings (the spec, a dict, compared by value): the same placer.
    assert adapters.PlacerCache(str, _no_source).placer(dict(settings)) is placer
    # An adapter reads the text through a StringText (read only when the lengths are).
    reading = {"token_counter": None, "text": StringText(str), "source": None}
    assert place.cached_placer({**settings, **reading}) is placer
    assert adapters.PlacerCache(str, _no_source).placer(settings, source_key="doc") is not placer
    assert reorder(list("abc"), [0.1, 0.9, 0.5], model={"depth": 12}).order[0] == 1
    assert cached._kept_placer.cache_info().currsize == 3  # two adapter placers, one of reorder


def test_a_rewritten_tokenizer_file_gives_a_new_placer(tmp_path: Path) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    from bookend_rag.place import cached

    def save(split: object) -> None:
        words = tokenizers.Tokenizer(tokenizers.models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
        words.pre_tokenizer = split
        words.save(str(tmp_path / "tokenizer.json"))

    items = ["a,b,c d", "e f"]
    save(tokenizers.pre_tokenizers.WhitespaceSplit())
    assert reorder(items, tokenizer=str(tmp_path)).lengths.tolist() == [2, 2]
    hits = cached._kept_placer.cache_info().hits
    assert reorder(items, tokenizer=str(tmp_path)).lengths.tolist() == [2, 2]
    assert cached._kept_placer.cache_info().hits == hits + 1  # loaded once
    save(tokenizers.pre_tokenizers.Whitespace())  # punctuation apart: "a , b , c d"
    later = os.stat(tmp_path / "tokenizer.json").st_mtime_ns + 10**9
    os.utime(tmp_path / "tokenizer.json", ns=(later, later))
    assert reorder(items, tokenizer=str(tmp_path)).lengths.tolist() == [6, 2]


def test_a_placement_sets_every_field() -> None:
    """``Placement.__init__`` names its fields one by one: a new field must be set there too (the
    arrays are built when first read, so every field is read, and one never set raises)."""
    import dataclasses

    placement = bookend_rag.reorder(["a b c", "d e f", "a b c"], [0.2, 0.9, 0.5], suffix_tokens=0)
    for field in dataclasses.fields(bookend_rag.Placement):
        getattr(placement, field.name)
    assert set(vars(placement)) >= {f.name for f in dataclasses.fields(bookend_rag.Placement)}


@pytest.mark.parametrize("k", [12, 90])  # the small-K path and the by-rank path
def test_a_framework_text_is_read_only_when_the_lengths_are(k: int) -> None:
    """Issue 39 §2: where the lengths cannot move the order, a placer reads no text through an
    adapter's getter (:class:`StringText`) until the lengths are read, then each once; where
    they can move it, each once in the placement. The order is the one any getter gives."""
    reads: list[int] = []

    def text(item: dict[str, object]) -> str:
        reads.append(id(item))
        return str(item["t"])

    items = [{"t": "word " * (1 + (7 * i) % 13)} for i in range(k)]
    scores = [((31 * i) % k) / k for i in range(k)]
    placement = Bookend(text=StringText(text)).place(items, scores)
    assert reads == []
    eager = Bookend(text=lambda item: item["t"]).place(items, scores)
    assert placement.order == eager.order
    assert placement.lengths.tolist() == eager.lengths.tolist()
    assert placement.weights.tolist() == eager.weights.tolist()
    assert sorted(reads) == sorted(map(id, items))
    reads.clear()
    by_mass = Bookend(text=StringText(text), weight_rule="mass").place(items, scores)
    assert sorted(reads) == sorted(map(id, items))
    assert (
        by_mass.order
        == Bookend(text=lambda item: item["t"], weight_rule="mass").place(items, scores).order
    )


def test_a_framework_text_that_is_no_string_is_named_when_the_lengths_are_read() -> None:
    placement = Bookend(text=StringText(lambda item: item["t"])).place(
        [{"t": "a b"}, {"t": None}], [0.9, 0.1]
    )
    with pytest.raises(ValueError, match=r"text= must return a string, got None for items\[1\]"):
        placement.lengths  # noqa: B018 - reading them is the test


def test_a_placement_built_by_keyword_equals_the_one_a_path_built() -> None:
    placed = reorder(["a", "b", "c"], [0.3, 0.9, 0.1], repeat_top=True, suffix_tokens=0)
    fields = ("order", "items", "relevance", "lengths", "scores", "dropped", "dropped_by_top_k")
    fields += ("dropped_as_lookalikes", "strategy", "profile", "layout", "weight_rule")
    fields += ("competition", "repeated", "notes")
    rebuilt = bookend_rag.Placement(**{name: getattr(placed, name) for name in fields})
    assert rebuilt == placed
    assert rebuilt.repeated
    assert rebuilt.weights.tolist() == placed.weights.tolist()
