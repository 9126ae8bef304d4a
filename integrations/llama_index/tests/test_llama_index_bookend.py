"""BookendNodePostprocessor in real LlamaIndex query and chat engines."""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import math
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import llama_index.core
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from llama_index.core import Settings, VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.callbacks import CallbackManager, CBEventType, EventPayload, LlamaDebugHandler
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.llms import MockLLM
from llama_index.core.schema import MetadataMode, NodeWithScore, TextNode
from llama_index.postprocessor.bookend import SLOT_KEY, WEIGHT_KEY, BookendNodePostprocessor

import bookend_rag

QUERY = "how does the sunshield keep the telescope cold"
WORDS = [
    "sunshield",
    "telescope",
    "cold",
    "mirror",
    "orbit",
    "heat",
    "layers",
    "cryocooler",
    "instrument",
    "light",
]
TEXTS = [
    f"Passage {i} about " + " ".join(WORDS[(i * j) % len(WORDS)] for j in range(2 + i % 5))
    for i in range(10)
]
TOP_K = 7


def _count_words(text: str) -> int:
    return len(text.split())


@pytest.fixture(autouse=True)
def word_tokenizer() -> Iterator[None]:
    """Settings.tokenizer counts words here (LlamaIndex's default would load tiktoken)."""
    previous = llama_index.core.global_tokenizer
    Settings.tokenizer = str.split
    yield
    llama_index.core.global_tokenizer = previous


def _reorder(texts: list[str], scores: Any = None, **options: Any) -> bookend_rag.Placement[str]:
    """The core's placement, counting tokens as Settings.tokenizer does in these tests."""
    return bookend_rag.reorder(texts, scores, token_counter=_count_words, **options)


class HashEmbedding(BaseEmbedding):
    """A deterministic bag-of-words embedding (offline, no model)."""

    def _embed(self, text: str) -> list[float]:
        vec = [0.0] * 32
        for word in text.lower().split():
            vec[int(hashlib.md5(word.encode()).hexdigest(), 16) % 32] += 1.0
        norm = math.sqrt(sum(v * v for v in vec)) or 1.0
        return [v / norm for v in vec]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._embed(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._embed(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._embed(text)


@pytest.fixture(scope="module")
def index() -> VectorStoreIndex:
    nodes = [TextNode(text=t, id_=f"n{i}", metadata={"i": i}) for i, t in enumerate(TEXTS)]
    return VectorStoreIndex(nodes, embed_model=HashEmbedding())


def _expected_texts(index: VectorStoreIndex, **settings: Any) -> list[str]:
    """The order bookend gives the nodes the retriever returns, computed with the core alone."""
    retrieved = index.as_retriever(similarity_top_k=TOP_K).retrieve(QUERY)
    llm_texts = [n.node.get_content(metadata_mode=MetadataMode.LLM) for n in retrieved]
    order = _reorder(llm_texts, [n.score for n in retrieved], **settings).order
    return [retrieved[i].node.get_content() for i in order]


def _assert_in_order(prompt: str, texts: list[str]) -> None:
    positions = [prompt.index(t) for t in texts]
    assert positions == sorted(positions)


def test_query_engine_llm_sees_the_bookend_order(index: VectorStoreIndex) -> None:
    engine = index.as_query_engine(
        llm=MockLLM(),  # with no max_tokens, MockLLM answers with the prompt it received
        similarity_top_k=TOP_K,
        # The bookend view (no suffix): theory weights form a U, so the reorder is visible.
        node_postprocessors=[BookendNodePostprocessor(suffix_tokens=0)],
    )
    expected = _expected_texts(index, suffix_tokens=0)
    response = engine.query(QUERY)
    _assert_in_order(str(response), expected)
    assert [n.node.get_content() for n in response.source_nodes] == expected
    async_response = asyncio.run(engine.aquery(QUERY))
    assert str(async_response) == str(response)
    retrieved = [
        n.node.get_content() for n in index.as_retriever(similarity_top_k=TOP_K).retrieve(QUERY)
    ]
    assert expected != retrieved  # the reorder did something the LLM can see


def test_chat_engine_llm_sees_the_bookend_order(index: VectorStoreIndex) -> None:
    engine = index.as_chat_engine(
        chat_mode="context",
        llm=MockLLM(),
        similarity_top_k=TOP_K,
        node_postprocessors=[BookendNodePostprocessor()],
    )
    expected = _expected_texts(index)
    _assert_in_order(str(engine.chat(QUERY)), expected)
    engine.reset()
    _assert_in_order(str(asyncio.run(engine.achat(QUERY))), expected)


def _nodes(scores: list[float | None]) -> list[NodeWithScore]:
    return [
        NodeWithScore(node=TextNode(text=TEXTS[i], metadata={"i": i}), score=s)
        for i, s in enumerate(scores)
    ]


SCORES: list[float | None] = [0.2, 0.9, 0.4, 0.3, 0.8, 0.1, 0.7]


def _llm_texts(nodes: list[NodeWithScore]) -> list[str]:
    return [n.node.get_content(metadata_mode=MetadataMode.LLM) for n in nodes]


def test_sync_and_async_agree_and_return_the_same_objects() -> None:
    nodes = _nodes(SCORES)
    before = copy.deepcopy([n.node.metadata for n in nodes])
    post = BookendNodePostprocessor()
    out = post.postprocess_nodes(nodes)
    assert asyncio.run(post.apostprocess_nodes(nodes)) == out
    assert sorted(map(id, out)) == sorted(map(id, nodes))
    assert [n.node.metadata for n in nodes] == before


def test_scores_and_distance_scores() -> None:
    nodes = _nodes(SCORES)
    texts = _llm_texts(nodes)
    out = BookendNodePostprocessor().postprocess_nodes(nodes)
    assert _llm_texts(out) == _reorder(texts, SCORES).items
    out = BookendNodePostprocessor(distance=True).postprocess_nodes(nodes)
    assert _llm_texts(out) == _reorder(texts, SCORES, distance=True).items


def test_missing_score_means_rank_order_not_the_middle() -> None:
    nodes = _nodes([None] * len(SCORES))
    out = BookendNodePostprocessor().postprocess_nodes(nodes)
    assert _llm_texts(out) == _reorder(_llm_texts(nodes)).items
    assert nodes[0] in (out[0], out[-1])  # the retriever's best node sits at an end
    partial = _nodes([*SCORES[:-1], None])
    out = BookendNodePostprocessor().postprocess_nodes(partial)
    assert _llm_texts(out) == _reorder(_llm_texts(partial)).items


def test_lengths_are_measured_on_the_llm_text() -> None:
    nodes = _nodes(SCORES)
    nodes[0].node.metadata["note"] = "x" * 400  # long metadata the LLM sees
    placement = BookendNodePostprocessor().place(nodes)
    assert placement.lengths[0] == _count_words(_llm_texts(nodes)[0])
    nodes[0].node.excluded_llm_metadata_keys.append("note")
    assert BookendNodePostprocessor().place(nodes).lengths[0] < placement.lengths[0]


def test_annotate_is_opt_in_and_hidden_from_the_llm() -> None:
    nodes = _nodes(SCORES)
    texts = _llm_texts(nodes)
    out = BookendNodePostprocessor(annotate=True).postprocess_nodes(nodes)
    assert [n.node.metadata[SLOT_KEY] for n in out] == list(range(len(out)))
    assert all(n.node.metadata[WEIGHT_KEY] > 0 for n in out)
    assert _llm_texts(nodes) == texts
    plain = BookendNodePostprocessor().postprocess_nodes(_nodes(SCORES))
    assert SLOT_KEY not in plain[0].node.metadata


def test_empty_retrieval_passes_through() -> None:
    post = BookendNodePostprocessor()
    assert post.postprocess_nodes([]) == []
    assert asyncio.run(post.apostprocess_nodes([])) == []


def test_serialises_like_a_llama_index_component() -> None:
    post = BookendNodePostprocessor(model="qwen2.5-7b", repeat_top=True, budget=500)
    data = post.to_dict()
    assert data["class_name"] == "BookendNodePostprocessor"
    again = BookendNodePostprocessor.from_dict(data)
    nodes = _nodes(SCORES)
    assert again.postprocess_nodes(nodes) == post.postprocess_nodes(nodes)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.text(min_size=1, max_size=60), st.none() | st.floats(-1, 1)),
        max_size=9,
    ),
    st.booleans(),
)
def test_every_node_survives_in_bookend_order(
    rows: list[tuple[str, float | None]], distance: bool
) -> None:
    nodes = [NodeWithScore(node=TextNode(text=t), score=s) for t, s in rows]
    out = BookendNodePostprocessor(distance=distance).postprocess_nodes(nodes)
    assert sorted(map(id, out)) == sorted(map(id, nodes))
    scores = [s for _, s in rows]
    expected = _reorder(
        _llm_texts(nodes),
        None if None in scores else scores,
        distance=distance,
    )
    assert [id(n) for n in out] == [id(nodes[i]) for i in expected.order]


def _core(nodes: list[NodeWithScore], **settings: Any) -> list[str]:
    return _reorder(_llm_texts(nodes), [n.score for n in nodes], **settings).items


def test_assigned_settings_are_used_and_checked() -> None:
    nodes = _nodes(SCORES)
    post = BookendNodePostprocessor()
    assert _llm_texts(post.postprocess_nodes(nodes)) == _core(nodes)
    post.strategy = "relevance"
    assert _llm_texts(post.postprocess_nodes(nodes)) == _core(nodes, strategy="relevance")
    with pytest.raises(ValueError, match="strategy"):
        post.strategy = "random"  # type: ignore[assignment]


@pytest.mark.parametrize(
    "model",
    [
        bookend_rag.ModelSpec(depth=30, attn_share=0.05),
        bookend_rag.TabulatedProfile(weights=(3.0, 1.0, 1.0, 2.0), kind="slot", label="measured"),
    ],
)
def test_to_dict_from_dict_to_json_with_a_profile_object(model: Any) -> None:
    post = BookendNodePostprocessor(model=model, top_k=5, equal_lengths=True)
    data = post.to_dict()
    again = BookendNodePostprocessor.from_dict(data)
    assert again.to_dict() == data
    assert json.loads(post.to_json()) == data
    assert BookendNodePostprocessor.from_json(post.to_json()).to_dict() == data
    nodes = _nodes(SCORES)
    assert _llm_texts(again.postprocess_nodes(nodes)) == _llm_texts(post.postprocess_nodes(nodes))


def test_a_path_and_a_tokenizer_name_round_trip(tmp_path: Path) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    words = tokenizers.Tokenizer(tokenizers.models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    words.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    words.save(str(tmp_path / "tokenizer.json"))
    path = tmp_path / "slots.json"
    bookend_rag.TabulatedProfile(weights=(1.0, 3.0, 2.0, 1.0, 1.0, 1.0, 4.0), kind="slot").save(
        path
    )
    post = BookendNodePostprocessor(model=path, tokenizer=str(tmp_path))
    again = BookendNodePostprocessor.from_dict(post.to_dict())
    assert (again.model, again.tokenizer) == (str(path), str(tmp_path))
    nodes = _nodes(SCORES)
    assert again.place(nodes).lengths.tolist() == [_count_words(t) for t in _llm_texts(nodes)]
    assert _llm_texts(again.postprocess_nodes(nodes)) == _core(nodes, model=path)


def test_the_query_is_counted_per_call() -> None:
    nodes = _nodes(SCORES)
    query = "which layer of the sunshield is the coldest " * 6
    # From the bookend view (no suffix), where counting the query changes the order.
    post = BookendNodePostprocessor(count_question=True, suffix_tokens=0)
    expected = _core(nodes, suffix_tokens=_count_words(query))
    assert expected != _core(nodes, suffix_tokens=0)
    assert _llm_texts(post.postprocess_nodes(nodes, query_str=query)) == expected
    assert _llm_texts(post.postprocess_nodes(nodes)) == _core(nodes, suffix_tokens=0)


def test_settings_tokenizer_counts_the_tokens() -> None:
    nodes = _nodes(SCORES)
    Settings.tokenizer = list  # one token per character
    placement = BookendNodePostprocessor().place(nodes)
    assert placement.lengths.tolist() == [len(t) for t in _llm_texts(nodes)]
    explicit = BookendNodePostprocessor(token_counter=_count_words).place(nodes)
    assert explicit.lengths.tolist() == [_count_words(t) for t in _llm_texts(nodes)]


def test_rerank_events_are_emitted() -> None:
    seen: list[str] = []

    class Recorder(BaseEventHandler):
        def handle(self, event: BaseEvent, **kwargs: Any) -> None:
            seen.append(event.class_name())

    recorder = Recorder()
    dispatcher = get_dispatcher()
    dispatcher.add_event_handler(recorder)
    try:
        BookendNodePostprocessor().postprocess_nodes(_nodes(SCORES), query_str=QUERY)
    finally:
        dispatcher.event_handlers.remove(recorder)
    assert seen.index("ReRankStartEvent") < seen.index("ReRankEndEvent")


def test_the_reranking_callback_event_reaches_a_handler_and_is_made_only_for_one() -> None:
    nodes = _nodes(SCORES)
    debug = LlamaDebugHandler()
    placed = BookendNodePostprocessor(callback_manager=CallbackManager([debug])).postprocess_nodes(
        nodes, query_str=QUERY
    )
    start, end = debug.get_event_pairs(CBEventType.RERANKING)[0]
    assert start.payload is not None
    assert start.payload[EventPayload.QUERY_STR] == QUERY
    assert end.payload is not None
    assert end.payload[EventPayload.NODES] == placed

    class Unheard(CallbackManager):
        def on_event_start(self, *args: Any, **kwargs: Any) -> str:
            raise AssertionError("an event made for no handler")

    quiet = BookendNodePostprocessor(callback_manager=Unheard())
    assert quiet.postprocess_nodes(nodes, query_str=QUERY) == placed


def test_lengths_do_not_depend_on_whether_a_query_engine_was_built() -> None:
    """Without a tokenizer set, the same nodes get the same lengths (and the same budget cut)
    before LlamaIndex has loaded its default tokenizer and after (issue 31)."""
    nodes = _nodes(SCORES)
    llama_index.core.global_tokenizer = None  # a fresh process: nothing loaded yet
    before = BookendNodePostprocessor(budget=60).place(nodes)
    llama_index.core.global_tokenizer = None
    Settings.tokenizer  # noqa: B018 what building a query engine does: load the default
    after = BookendNodePostprocessor(budget=60).place(nodes)
    assert before.lengths.tolist() == after.lengths.tolist()
    assert before.order == after.order
    default = Settings.tokenizer
    assert before.lengths.tolist() == [len(default(t)) for t in _llm_texts(nodes)]


def test_top_n_is_top_k_as_in_llama_index_rerankers() -> None:
    nodes = _nodes(SCORES)
    post = BookendNodePostprocessor(top_n=3)
    assert post.top_k == post.top_n == 3
    assert _llm_texts(post.postprocess_nodes(nodes)) == _core(nodes, top_k=3)
    post.top_n = 2  # validated on assignment, as LlamaIndex's settings are
    assert post.top_k == 2
    with pytest.raises(ValueError, match=r"^top_n=0: "):  # named as typed (issue 38, 3.6)
        post.top_n = 0


def test_the_unknown_model_warning_names_the_users_line() -> None:
    """Issue 38, 3.7: it named pydantic's ``_model_construction.py``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        BookendNodePostprocessor(model="acme-llama-index-chat-v7")
    [warning] = caught
    assert "'acme-llama-index-chat-v7'" in str(warning.message)
    assert warning.filename == __file__


@pytest.mark.parametrize("k", [7, 100])
def test_a_node_is_read_only_where_its_length_can_move_the_order(
    k: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 39 §2: ``get_content`` for every node was most of a call at K = 1000. Where the
    lengths cannot move the order (the default) no node is read; where they can, each once."""
    reads: list[str] = []
    get_content = TextNode.get_content

    def counted(self: TextNode, *args: Any, **kwargs: Any) -> str:
        reads.append(self.node_id)
        return get_content(self, *args, **kwargs)

    nodes = [
        NodeWithScore(node=TextNode(text=f"{TEXTS[i % len(TEXTS)]} {i}"), score=(31 * i % k) / k)
        for i in range(k)
    ]
    monkeypatch.setattr(TextNode, "get_content", counted)
    default = BookendNodePostprocessor().postprocess_nodes(nodes)
    assert reads == []
    by_mass = BookendNodePostprocessor(weight_rule="mass").postprocess_nodes(nodes)
    assert sorted(reads) == sorted(n.node.node_id for n in nodes)
    monkeypatch.undo()
    texts = _llm_texts(nodes)
    scores = [n.score for n in nodes]
    assert [nodes.index(n) for n in default] == list(_reorder(texts, scores).order)
    assert [nodes.index(n) for n in by_mass] == list(
        _reorder(texts, scores, weight_rule="mass").order
    )
