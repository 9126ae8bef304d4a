"""BookendRanker as a Haystack component and inside real Haystack pipelines."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import inspect
import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from haystack import Document, Pipeline, component
from haystack.components.builders import PromptBuilder
from haystack.components.rankers import LostInTheMiddleRanker
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.document_stores.in_memory import InMemoryDocumentStore
from haystack_integrations.components.rankers.bookend import SLOT_KEY, WEIGHT_KEY, BookendRanker
from hypothesis import given, settings
from hypothesis import strategies as st

import bookend_rag

QUERY = "how does the sunshield keep the telescope cold"
TEXTS = [
    "The sunshield has five layers that keep the telescope cold.",
    "The primary mirror is made of eighteen gold coated segments.",
    "A cryocooler keeps the mid infrared instrument colder still.",
    "The telescope orbits the second Lagrange point.",
    "Heat from the sun is reflected by the sunshield layers.",
    "Launch took place on an Ariane 5 rocket.",
    "The cold side of the sunshield stays near forty kelvin.",
    "Engineers folded the sunshield for launch.",
]
TEMPLATE = "{% for d in documents %}{{ d.content }}\n{% endfor %}Question: {{ query }}"


@component
class RecordingGenerator:
    """A stand-in LLM: keeps every prompt and answers with it."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    @component.output_types(replies=list[str])
    def run(self, prompt: str) -> dict[str, list[str]]:
        self.prompts.append(prompt)
        return {"replies": [prompt]}


def _pipeline(ranker: Any) -> tuple[Pipeline, RecordingGenerator]:
    store = InMemoryDocumentStore()
    store.write_documents([Document(content=t, meta={"i": i}) for i, t in enumerate(TEXTS)])
    llm = RecordingGenerator()
    pipe = Pipeline()
    pipe.add_component("retriever", InMemoryBM25Retriever(store, top_k=6))
    pipe.add_component("ranker", ranker)
    pipe.add_component("prompt", PromptBuilder(TEMPLATE, required_variables=["query"]))
    pipe.add_component("llm", llm)
    pipe.connect("retriever.documents", "ranker.documents")
    pipe.connect("ranker.documents", "prompt.documents")
    pipe.connect("prompt.prompt", "llm.prompt")
    return pipe, llm


def _inputs() -> dict[str, Any]:
    return {"retriever": {"query": QUERY}, "prompt": {"query": QUERY}}


def test_pipeline_llm_sees_the_bookend_order() -> None:
    # The bookend view (no suffix): theory weights form a U, so the reorder is visible.
    pipe, llm = _pipeline(BookendRanker(suffix_tokens=0))
    result = pipe.run(_inputs(), include_outputs_from={"retriever", "ranker"})
    retrieved = result["retriever"]["documents"]
    texts, scores = [d.content for d in retrieved], [d.score for d in retrieved]
    expected = bookend_rag.reorder(texts, scores, suffix_tokens=0).items
    assert llm.prompts[0].splitlines()[: len(expected)] == expected
    assert expected != [d.content for d in retrieved]
    assert [d.content for d in result["ranker"]["documents"]] == expected


def test_sync_and_async_pipelines_agree() -> None:
    pipe, llm = _pipeline(BookendRanker())
    pipe.run(_inputs())
    asyncio.run(pipe.run_async(_inputs()))
    assert len(llm.prompts) == 2
    assert llm.prompts[0] == llm.prompts[1]


def test_pipeline_serialises_with_the_ranker() -> None:
    pipe, _ = _pipeline(BookendRanker(model="qwen2.5-7b", top_k=4, budget=900, repeat_top=True))
    data = pipe.to_dict()["components"]["ranker"]
    assert data["type"] == "haystack_integrations.components.rankers.bookend.ranker.BookendRanker"
    again = BookendRanker.from_dict(data)
    assert again.to_dict() == data
    docs = [Document(content=t, score=len(t)) for t in TEXTS]
    assert again.run(docs) == BookendRanker(
        model="qwen2.5-7b", top_k=4, budget=900, repeat_top=True
    ).run(docs)
    alone = Pipeline()
    alone.add_component("ranker", again)
    loaded = Pipeline.loads(alone.dumps())  # YAML round trip
    assert loaded.run({"ranker": {"documents": docs}}) == {"ranker": again.run(docs)}


def test_drop_in_for_lost_in_the_middle() -> None:
    docs = [Document(content=t) for t in TEXTS]
    for top_k in (None, 5):
        theirs = LostInTheMiddleRanker(top_k=top_k).run(documents=docs)
        ours = BookendRanker(strategy="alternate", top_k=top_k).run(documents=docs)
        assert ours == theirs
    with pytest.raises(ValueError, match="not textual"):
        BookendRanker().run(documents=[Document(content=None, meta={"blob": 1})])


def test_same_objects_metadata_intact_and_top_k_by_score() -> None:
    scores = [0.2, 0.9, 0.4, 0.3, 0.8, 0.1, 0.7, 0.5]
    docs = [
        Document(content=t, score=s, meta={"i": i})
        for i, (t, s) in enumerate(zip(TEXTS, scores, strict=True))
    ]
    before = copy.deepcopy([d.meta for d in docs])
    out = BookendRanker().run(docs)["documents"]
    assert sorted(map(id, out)) == sorted(map(id, docs))
    assert [d.meta for d in docs] == before
    top = BookendRanker(top_k=3).run(docs)["documents"]
    assert {d.meta["i"] for d in top} == {1, 4, 6}
    nearest = BookendRanker(top_k=3, distance=True).run(docs)["documents"]
    assert {d.meta["i"] for d in nearest} == {5, 0, 3}
    assert BookendRanker().run(docs, top_k=2)["documents"][0].meta["i"] in (1, 4)


def test_missing_and_distance_scores() -> None:
    scores = [0.2, 0.9, 0.4, 0.3, 0.8, 0.1, 0.7, 0.5]
    docs = [Document(content=t, score=s) for t, s in zip(TEXTS, scores, strict=True)]
    out = BookendRanker(distance=True).run(docs)["documents"]
    assert [d.content for d in out] == bookend_rag.reorder(TEXTS, scores, distance=True).items
    docs[2] = dataclasses.replace(docs[2], score=None)
    out = BookendRanker().run(docs)["documents"]
    assert [d.content for d in out] == bookend_rag.reorder(TEXTS).items


def test_duplicates_keep_the_best_scored_copy() -> None:
    low = Document(id="a", content="same text", score=0.1)
    high = Document(id="a", content="same text", score=0.9)
    other = Document(id="b", content="other text", score=0.5)
    out = BookendRanker().run([low, other, high])["documents"]
    assert len(out) == 2
    assert any(d is high for d in out)
    out = BookendRanker(distance=True).run([low, other, high])["documents"]
    assert any(d is low for d in out)


def test_token_budget_and_annotation() -> None:
    docs = [Document(content=t) for t in TEXTS]
    kept = BookendRanker(budget=40).run(docs)["documents"]
    assert sum(bookend_rag.tokens.approx_token_count(d.content or "") for d in kept) <= 40
    assert 0 < len(kept) < len(docs)
    assert len(BookendRanker().run(docs, budget=40)["documents"]) == len(kept)
    out = BookendRanker(annotate=True, repeat_top=True).run(docs)["documents"]
    assert [d.meta[SLOT_KEY] for d in out] == list(range(len(out)))
    assert all(d.meta[WEIGHT_KEY] > 0 for d in out)
    assert out[0].content == out[-1].content
    assert not any(SLOT_KEY in d.meta for d in docs)  # annotated copies, inputs untouched
    assert SLOT_KEY not in BookendRanker().run([Document(content="x")])["documents"][0].meta


def test_empty_retrieval_passes_through() -> None:
    assert BookendRanker().run([]) == {"documents": []}
    assert asyncio.run(BookendRanker().run_async([])) == {"documents": []}


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.text(min_size=1, max_size=60), st.floats(-1, 1)), min_size=1, max_size=9),
    st.booleans(),
)
def test_every_document_survives_in_bookend_order(
    rows: list[tuple[str, float]], distance: bool
) -> None:
    docs = [Document(id=str(i), content=t, score=s) for i, (t, s) in enumerate(rows)]
    out = BookendRanker(distance=distance).run(docs)["documents"]
    assert sorted(map(id, out)) == sorted(map(id, docs))
    expected = bookend_rag.reorder([t for t, _ in rows], [s for _, s in rows], distance=distance)
    assert [id(d) for d in out] == [id(docs[i]) for i in expected.order]


def _scored() -> list[Document]:
    scores = [0.2, 0.9, 0.4, 0.3, 0.8, 0.1, 0.7, 0.5]
    return [Document(content=t, score=s) for t, s in zip(TEXTS, scores, strict=True)]


def _core(docs: list[Document], **settings: Any) -> list[Document]:
    return bookend_rag.reorder(
        docs, [d.score for d in docs], text=lambda d: d.content, **settings
    ).items


def test_changed_attributes_are_used_and_serialised() -> None:
    docs = _scored()
    ranker = BookendRanker()
    assert ranker.run(docs)["documents"] == _core(docs)
    ranker.strategy = "relevance"
    assert ranker.run(docs)["documents"] == _core(docs, strategy="relevance")
    assert BookendRanker.from_dict(ranker.to_dict()).strategy == "relevance"
    # A bad value fails at the assignment (it used to wait for the next run) and is not kept.
    with pytest.raises(ValueError, match="budget=0"):
        ranker.budget = 0
    with pytest.raises(ValueError, match="annotate='yes'"):
        ranker.annotate = "yes"  # type: ignore[assignment]
    assert ranker.budget is None
    assert ranker.annotate is False
    assert ranker.run(docs)["documents"] == _core(docs, strategy="relevance")


def test_the_keyword_parameters_are_the_config_fields_with_their_defaults() -> None:
    # The one copy of the settings left (Haystack reads a component's keyword parameters), kept
    # in step with the config: a default here that differs would read as a changed setting.
    parameters = inspect.signature(BookendRanker.__init__).parameters
    own = {"self", "word_count_threshold", "source_key", "annotate", "recorder", "config"}
    placement = {name: p.default for name, p in parameters.items() if name not in own}
    assert placement == {
        name: field.default for name, field in bookend_rag.PlacementConfig.model_fields.items()
    }


def _word_tokenizer(folder: Path) -> str:
    """A local tokenizer that counts one token a word, saved in ``folder``."""
    tokenizers = pytest.importorskip("tokenizers")
    words = tokenizers.Tokenizer(tokenizers.models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    words.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    words.save(str(folder / "tokenizer.json"))
    return str(folder)


#: A value other than its default for each placement setting (but the tokenizer, made per test).
OTHER_SETTINGS: dict[str, Any] = {
    "model": "gpt2",
    "strategy": "relevance",
    "weight_rule": "mass",
    "competition": 0.5,
    "lookalike_threshold": 0.2,
    "drop_lookalikes": True,
    "distance": True,
    "missing_scores": "rank",
    "top_k": 5,
    "budget": 60,
    "repeat_top": True,
    "prefix_tokens": 40,
    "suffix_tokens": 0,
    "count_question": True,
    "equal_lengths": True,
    "exact_max_k": 3,
}


def test_every_setting_assigned_later_reaches_the_next_run_and_the_dict(tmp_path: Path) -> None:
    other = {**OTHER_SETTINGS, "tokenizer": _word_tokenizer(tmp_path)}
    assert set(other) == set(bookend_rag.PlacementConfig.model_fields)  # a new one needs a value
    docs = _scored()
    for name, value in other.items():
        ranker = BookendRanker()
        ranker.run(docs)  # a placer is built with the defaults first
        setattr(ranker, name, value)
        expected = bookend_rag.PlacementConfig(**{name: value})
        assert getattr(ranker, name) == getattr(expected, name), name
        assert ranker.placer().config == expected, name
        assert ranker.run(docs)["documents"] == _core(docs, **{name: value}), name
        again = BookendRanker.from_dict(ranker.to_dict())
        assert again.to_dict() == ranker.to_dict(), name
        assert again.run(docs) == ranker.run(docs), name


@pytest.mark.parametrize(
    "model",
    [
        bookend_rag.ModelSpec(depth=30, attn_share=0.05),
        bookend_rag.TabulatedProfile(weights=(3.0, 1.0, 1.0, 2.0), kind="slot", label="measured"),
    ],
)
def test_profile_objects_round_trip_through_dict_and_yaml(model: Any) -> None:
    ranker = BookendRanker(model=model, top_k=6, equal_lengths=True, word_count_threshold=60)
    data = ranker.to_dict()
    again = BookendRanker.from_dict(data)
    assert again.to_dict() == data
    docs = _scored()
    assert again.run(docs) == ranker.run(docs)
    alone = Pipeline()
    alone.add_component("ranker", again)
    loaded = Pipeline.loads(alone.dumps())  # YAML round trip
    assert loaded.run({"ranker": {"documents": docs}}) == {"ranker": ranker.run(docs)}


def test_profile_file_and_tokenizer_load_in_warm_up(tmp_path: Path) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    words = tokenizers.Tokenizer(tokenizers.models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    words.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    words.save(str(tmp_path / "tokenizer.json"))
    path = tmp_path / "slots.json"
    ranker = BookendRanker(model=path, tokenizer=str(tmp_path))  # nothing read yet
    with pytest.raises(ValueError, match="profile file not found"):
        ranker.warm_up()
    profile = bookend_rag.TabulatedProfile(
        weights=(1.0, 3.0, 2.0, 1.0, 1.0, 1.0, 1.0, 4.0), kind="slot"
    )
    profile.save(path)
    again = BookendRanker.from_dict(ranker.to_dict())
    again.warm_up()
    placement = again.place(_scored())
    assert placement.lengths.tolist() == [len(t.split()) for t in TEXTS]
    assert placement.profile == profile


def test_the_query_is_counted_per_call() -> None:
    docs = _scored()
    query = "which layer of the sunshield is the coldest " * 8
    suffix = bookend_rag.tokens.approx_token_count(query)
    # From the bookend view (no suffix), where counting the query changes the order.
    expected = _core(docs, suffix_tokens=suffix)
    assert expected != _core(docs, suffix_tokens=0)
    ranker = BookendRanker(count_question=True, suffix_tokens=0)
    assert ranker.run(docs, query=query)["documents"] == expected
    plain = BookendRanker(suffix_tokens=0)
    assert plain.run(docs, query=query)["documents"] == _core(docs, suffix_tokens=0)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.text(" ab", min_size=1, max_size=30), st.none() | st.floats(-1, 1)),
        min_size=1,
        max_size=9,
    ),
    st.none() | st.integers(1, 9),
    st.none() | st.integers(1, 40),
)
def test_alternate_is_lost_in_the_middle_on_any_input(
    rows: list[tuple[str, float | None]], top_k: int | None, words: int | None
) -> None:
    docs = [Document(id=str(i), content=t, score=s) for i, (t, s) in enumerate(rows)]
    theirs = LostInTheMiddleRanker(top_k=top_k, word_count_threshold=words).run(documents=docs)
    ours = BookendRanker(strategy="alternate", top_k=top_k, word_count_threshold=words)
    assert ours.run(documents=docs) == theirs
    assert ours.run(documents=docs, word_count_threshold=words) == theirs


def test_word_count_threshold_loads_from_a_lost_in_the_middle_pipeline() -> None:
    pipe = Pipeline()
    pipe.add_component("ranker", LostInTheMiddleRanker(word_count_threshold=30))
    data = pipe.to_dict()
    data["components"]["ranker"]["type"] = (
        "haystack_integrations.components.rankers.bookend.ranker.BookendRanker"
    )
    loaded = Pipeline.from_dict(data).get_component("ranker")
    assert isinstance(loaded, BookendRanker)
    assert loaded.word_count_threshold == 30
    with pytest.raises(ValueError, match="word_count_threshold=0"):
        BookendRanker(word_count_threshold=0)


def test_uses_only_the_public_bookend_api() -> None:
    source = inspect.getsource(inspect.getmodule(BookendRanker))  # type: ignore[arg-type]
    assert "from bookend_rag." not in source
    assert "import bookend_rag." not in source


def test_config_is_serialised_as_its_path_or_inline_with_the_settings_that_differ(
    tmp_path: Path,
) -> None:
    tuned = tmp_path / "tuned.json"
    document = {"config": {"strategy": "relevance", "suffix_tokens": 0}, "provenance": {}}
    tuned.write_text(json.dumps(document), encoding="utf-8")
    ranker = BookendRanker(config=str(tuned), top_k=3)
    assert (ranker.strategy, ranker.suffix_tokens, ranker.top_k) == ("relevance", 0, 3)
    ranker.strategy = "bookend"  # back to the default: it still overrides the file's
    params = ranker.to_dict()["init_parameters"]
    assert params["config"] == str(tuned)
    assert {k: params[k] for k in ("strategy", "top_k")} == {"strategy": "bookend", "top_k": 3}
    assert "suffix_tokens" not in params  # the file's
    again = BookendRanker.from_dict(ranker.to_dict())
    assert (again.strategy, again.suffix_tokens, again.top_k) == ("bookend", 0, 3)
    # A path is read again: the file's new settings reach a rebuilt pipeline.
    pipeline = Pipeline()
    pipeline.add_component("ranker", BookendRanker(config=tuned))
    yaml = pipeline.dumps()
    document["config"]["suffix_tokens"] = 4
    tuned.write_text(json.dumps(document), encoding="utf-8")
    rebuilt = Pipeline.loads(yaml).get_component("ranker")
    assert (rebuilt.strategy, rebuilt.suffix_tokens) == ("relevance", 4)
    # Inline: the config's JSON object, provenance kept.
    inline = BookendRanker(config=document).to_dict()["init_parameters"]["config"]
    assert inline["provenance"] == {}
    assert inline["config"]["suffix_tokens"] == 4
    assert BookendRanker.from_dict(BookendRanker(config=document).to_dict()).suffix_tokens == 4


def test_the_default_model_is_reorders() -> None:
    """``BookendRanker()`` places for the same default model as ``bookend_rag.reorder`` (issue
    31)."""
    ranker = BookendRanker()
    assert ranker.model == bookend_rag.DEFAULT_MODEL
    docs = _scored()
    assert ranker.run(docs)["documents"] == _core(docs)
    assert "bookend_rag.DEFAULT_MODEL" in (BookendRanker.__doc__ or "")
    assert "profile" in ranker.place(docs).explain()


def test_the_unknown_model_warning_names_the_users_line() -> None:
    """Issue 38, 3.7: it named the ranker's own line; the model is resolved at the first run,
    called by the user or by a pipeline."""
    documents = [Document(content="a", score=0.2), Document(content="b", score=0.9)]
    pipeline = Pipeline()
    pipeline.add_component("ranker", BookendRanker(model="acme-haystack-pipeline-v7"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        BookendRanker(model="acme-haystack-chat-v7").run(documents=documents)
        pipeline.run({"ranker": {"documents": documents}})
    assert [str(w.message).split("'")[1] for w in caught] == [
        "acme-haystack-chat-v7",
        "acme-haystack-pipeline-v7",
    ]
    assert {w.filename for w in caught} == {__file__}
