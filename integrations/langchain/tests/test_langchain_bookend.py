"""BookendReorder with real LangChain classes: LCEL chains, compressors, transformers."""

from __future__ import annotations

import asyncio
import copy
import json
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_bookend import SLOT_KEY, WEIGHT_KEY, BookendReorder
from langchain_classic.retrievers import ContextualCompressionRetriever
from langchain_classic.retrievers.document_compressors import DocumentCompressorPipeline
from langchain_core.callbacks import BaseCallbackHandler, Callbacks
from langchain_core.documents import BaseDocumentCompressor, Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models import FakeListLLM
from langchain_core.load import dumpd, loads
from langchain_core.prompts import PromptTemplate
from langchain_core.runnables import RunnableLambda, RunnablePassthrough
from langchain_core.vectorstores import InMemoryVectorStore

import bookend_rag

QUERY = "How does the telescope stay cold?"
TEXTS = [f"passage {i}: " + "fact " * (3 + 7 * i % 11) for i in range(8)]


class PromptRecorder(BaseCallbackHandler):
    """Keeps every prompt an LLM is called with."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def on_llm_start(self, serialized: dict[str, Any], prompts: list[str], **kwargs: Any) -> None:
        self.prompts.extend(prompts)


def _docs(scores: list[float] | None = None, key: str = "score") -> list[Document]:
    return [
        Document(
            page_content=text,
            id=str(i),
            metadata={"i": i} if scores is None else {"i": i, key: scores[i]},
        )
        for i, text in enumerate(TEXTS)
    ]


@pytest.fixture
def retriever() -> Any:
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
    store.add_documents(_docs())
    return store.as_retriever(search_kwargs={"k": 6})


def _format(docs: list[Document]) -> str:
    return "\n\n".join(d.page_content for d in docs)


def test_lcel_chain_llm_sees_the_bookend_order(retriever: Any) -> None:
    recorder = PromptRecorder()
    llm = FakeListLLM(responses=["fine"], callbacks=[recorder])
    prompt = PromptTemplate.from_template("Context:\n{context}\n\nQuestion: {question}")
    chain = (
        {
            # The bookend view (no suffix): theory weights form a U, so the reorder is visible.
            "context": retriever | BookendReorder(suffix_tokens=0) | _format,
            "question": RunnablePassthrough(),
        }
        | prompt
        | llm
    )

    assert chain.invoke(QUERY) == "fine"

    retrieved = [d.page_content for d in retriever.invoke(QUERY)]
    # No scores: the retriever order is the relevance order.
    expected = bookend_rag.reorder(retrieved, suffix_tokens=0).items
    seen = recorder.prompts[0]
    positions = [seen.index(text) for text in expected]
    assert positions == sorted(positions)
    assert expected != retrieved  # the reorder did something the LLM can see


def test_runnable_modes_agree(retriever: Any) -> None:
    reorder = BookendReorder()
    docs = retriever.invoke(QUERY)
    sync = reorder.invoke(docs)
    assert asyncio.run(reorder.ainvoke(docs)) == sync
    assert reorder.batch([docs, docs[:2]]) == [sync, reorder.invoke(docs[:2])]
    assert asyncio.run(reorder.abatch([docs])) == [sync]
    assert reorder.transform_documents(docs) == sync
    assert asyncio.run(reorder.atransform_documents(docs)) == sync
    assert reorder.compress_documents(docs, QUERY) == sync
    assert asyncio.run(reorder.acompress_documents(docs, QUERY)) == sync


def test_same_objects_and_metadata_intact() -> None:
    docs = _docs([0.1, 0.9, 0.4, 0.3, 0.8, 0.2, 0.7, 0.5])
    before = copy.deepcopy([d.metadata for d in docs])
    out = BookendReorder().invoke(docs)
    assert sorted(map(id, out)) == sorted(map(id, docs))
    assert [d.metadata for d in docs] == before


def test_scores_from_metadata_and_distance() -> None:
    scores = [0.1, 0.9, 0.4, 0.3, 0.8, 0.2, 0.7, 0.5]
    for key in ("relevance_score", "score"):
        out = BookendReorder().invoke(_docs(scores, key))
        assert [d.page_content for d in out] == bookend_rag.reorder(TEXTS, scores).items
    out = BookendReorder(distance=True).invoke(_docs(scores))
    assert [d.page_content for d in out] == bookend_rag.reorder(TEXTS, scores, distance=True).items
    custom = BookendReorder(score_key="rerank").invoke(_docs(scores, "rerank"))
    assert [d.page_content for d in custom] == bookend_rag.reorder(TEXTS, scores).items


def test_a_missing_score_means_input_order() -> None:
    docs = _docs([0.1, 0.9, 0.4, 0.3, 0.8, 0.2, 0.7, 0.5])
    del docs[3].metadata["score"]
    out = BookendReorder().invoke(docs)
    assert [d.page_content for d in out] == bookend_rag.reorder(TEXTS).items


def test_empty_retrieval_passes_through() -> None:
    reorder = BookendReorder()
    assert reorder.invoke([]) == []
    assert asyncio.run(reorder.ainvoke([])) == []


def test_annotate_is_opt_in() -> None:
    docs = _docs()
    out = BookendReorder(annotate=True, repeat_top=True).invoke(docs)
    assert out[0] is out[-1]  # the top document at both ends
    placement = BookendReorder(repeat_top=True).place(_docs())
    for doc, slot in zip(out, placement.slots, strict=True):
        if doc is not out[-1] or slot.slot == 0:
            assert (doc.metadata[SLOT_KEY], doc.metadata[WEIGHT_KEY]) == (slot.slot, slot.weight)
    assert SLOT_KEY not in BookendReorder().invoke(_docs())[0].metadata


def test_budget_drops_least_relevant() -> None:
    docs = _docs()
    placement = BookendReorder(budget=20).place(docs)
    assert placement.dropped
    assert BookendReorder(budget=20).invoke(docs) == placement.items


def test_contextual_compression_retriever(retriever: Any) -> None:
    compressed = ContextualCompressionRetriever(
        base_compressor=BookendReorder(), base_retriever=retriever
    )
    expected = BookendReorder().invoke(retriever.invoke(QUERY))
    assert compressed.invoke(QUERY) == expected
    assert asyncio.run(compressed.ainvoke(QUERY)) == expected


class LengthScorer(BaseDocumentCompressor):
    """A stand-in reranker: writes ``relevance_score`` (here, the text length)."""

    def compress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> list[Document]:
        for doc in documents:
            doc.metadata["relevance_score"] = len(doc.page_content)
        return list(documents)


def test_document_compressor_pipeline_after_a_reranker(retriever: Any) -> None:
    pipeline = DocumentCompressorPipeline(transformers=[LengthScorer(), BookendReorder()])
    compressed = ContextualCompressionRetriever(base_compressor=pipeline, base_retriever=retriever)
    texts = [d.page_content for d in retriever.invoke(QUERY)]
    expected = bookend_rag.reorder(texts, [len(t) for t in texts]).items
    assert expected != bookend_rag.reorder(texts).items  # the reranker's scores matter
    assert [d.page_content for d in compressed.invoke(QUERY)] == expected
    assert [d.page_content for d in asyncio.run(compressed.ainvoke(QUERY))] == expected


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.text(min_size=1, max_size=60), st.floats(-5, 5)), min_size=0, max_size=9),
    st.booleans(),
)
def test_every_document_survives_in_bookend_order(
    rows: list[tuple[str, float]], distance: bool
) -> None:
    docs = [Document(page_content=t, metadata={"score": s}) for t, s in rows]
    out = BookendReorder(distance=distance).invoke(docs)
    assert sorted(map(id, out)) == sorted(map(id, docs))
    expected = bookend_rag.reorder(
        list(range(len(docs))),
        [s for _, s in rows],
        distance=distance,
        lengths=[bookend_rag.tokens.approx_token_count(t) for t, _ in rows],
    )
    assert [id(d) for d in out] == [id(docs[i]) for i in expected.items]


def _scored(n: int = 6) -> list[Document]:
    # Distinct words per document: no two are look-alikes, so the profile decides the order.
    return [
        Document(
            page_content="".join(f"w{i}{j:02d} " for j in range(5 + 9 * i % 13)),
            metadata={"score": (7 * i % 5) / 5},
        )
        for i in range(n)
    ]


def _core(docs: list[Document], **settings: Any) -> list[Document]:
    """What the core places for ``docs`` with ``settings``."""
    return bookend_rag.reorder(
        docs,
        [d.metadata["score"] for d in docs],
        text=lambda d: d.page_content,
        **settings,
    ).items


def test_model_copy_places_with_the_new_settings() -> None:
    docs = _scored()
    reorder = BookendReorder()
    assert reorder.invoke(docs) == _core(docs)
    alternate = reorder.model_copy(update={"strategy": "alternate"})
    assert alternate.invoke(docs) == _core(docs, strategy="alternate")
    assert alternate.invoke(docs) != reorder.invoke(docs)
    assert reorder.invoke(docs) == _core(docs)  # the original is unchanged


@pytest.mark.parametrize(
    "model",
    [
        bookend_rag.ModelSpec(depth=30, attn_share=0.05),
        bookend_rag.TabulatedProfile(weights=(3.0, 1.0, 1.0, 2.0), kind="slot", label="measured"),
        "liu2023:claude-1.3",
    ],
)
def test_dumpd_loads_round_trip_with_a_profile(model: Any) -> None:
    reorder = BookendReorder(model=model, budget=60, top_k=5, equal_lengths=True)
    assert BookendReorder.is_lc_serializable()
    text = json.dumps(dumpd(reorder))
    again = loads(text, valid_namespaces=["langchain_bookend"], allowed_objects=[BookendReorder])
    assert isinstance(again, BookendReorder)
    assert dumpd(again) == dumpd(reorder)
    docs = _scored()
    assert again.invoke(docs) == reorder.invoke(docs)


def test_dumpd_loads_round_trip_with_a_profile_path(tmp_path: Path) -> None:
    path = tmp_path / "slots.json"
    bookend_rag.TabulatedProfile(weights=(1.0, 3.0, 2.0), kind="slot").save(path)
    reorder = BookendReorder(model=path)
    again = loads(
        json.dumps(dumpd(reorder)),
        valid_namespaces=["langchain_bookend"],
        allowed_objects=[BookendReorder],
    )
    assert again.model == str(path)
    docs = _scored(3)
    assert again.invoke(docs) == _core(docs, model=path)


def test_the_question_is_counted_per_call() -> None:
    docs = _scored()
    question = "which layer of the sunshield is the coldest " * 8
    suffix = bookend_rag.tokens.approx_token_count(question)
    # From the bookend view (no suffix), where counting the question changes the order.
    counting = BookendReorder(count_question=True, suffix_tokens=0)
    expected = _core(docs, suffix_tokens=suffix)
    assert expected != _core(docs, suffix_tokens=0)  # the layout matters here
    assert counting.invoke({"documents": docs, "question": question}) == expected
    assert counting.compress_documents(docs, question) == expected
    assert counting.invoke(docs) == _core(docs, suffix_tokens=0)
    # Without count_question the question does not move anything.
    plain = BookendReorder(suffix_tokens=0)
    assert plain.compress_documents(docs, question) == _core(docs, suffix_tokens=0)


def test_equal_lengths_switch() -> None:
    docs = _scored()
    assert BookendReorder(equal_lengths=True).invoke(docs) == _core(docs, equal_lengths=True)


def test_vector_store_scores_are_carried_as_pairs() -> None:
    """Retrievers drop scores; the pairs a vector store returns carry them (issue 31)."""
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
    store.add_documents(_docs())
    pairs = store.similarity_search_with_score(QUERY, k=6)  # cosine similarity here
    chain = RunnableLambda(lambda q: store.similarity_search_with_score(q, k=6)) | BookendReorder()
    out = chain.invoke(QUERY)
    expected = bookend_rag.reorder(
        [doc for doc, _ in pairs], [score for _, score in pairs], text=lambda d: d.page_content
    )
    assert [d.id for d in out] == [d.id for d in expected.items]
    assert all(isinstance(d, Document) and "score" not in d.metadata for d in out)
    # The scores decide, not the input order: the reversed pairs give the same prompt.
    assert [d.id for d in BookendReorder().invoke(list(reversed(pairs)))] == [d.id for d in out]
    assert BookendReorder().invoke({"documents": pairs, "question": QUERY}) == out


def test_top_n_is_top_k_as_in_langchain_rerankers() -> None:
    docs = _docs([0.2, 0.9, 0.4, 0.3, 0.8, 0.1, 0.7, 0.5])
    reorder = BookendReorder(top_n=3)
    assert reorder.top_k == reorder.top_n == 3
    assert reorder.invoke(docs) == BookendReorder(top_k=3).invoke(docs)
    assert reorder.model_copy(update={"top_n": 2}).top_k == 2
    with pytest.raises(ValueError, match="top_n is another name for top_k"):
        BookendReorder(top_n=3, top_k=4)


def test_assignment_points_to_model_copy() -> None:
    reorder = BookendReorder()
    with pytest.raises(ValueError, match=r"immutable: top_k=3 cannot be set; \.model_copy\("):
        reorder.top_k = 3
    with pytest.raises(ValueError, match=r"top_n=3 cannot be set; \.model_copy\(update=\{'top_n'"):
        reorder.top_n = 3  # named as typed (issue 38, 3.6)
    assert reorder.top_k is None


def test_the_unknown_model_warning_names_the_users_line() -> None:
    """Issue 38, 3.7: it named pydantic's ``_model_construction.py``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        BookendReorder(model="acme-langchain-chat-v7")  # a name bookend knows no architecture for
    [warning] = caught
    assert "'acme-langchain-chat-v7'" in str(warning.message)
    assert warning.filename == __file__
