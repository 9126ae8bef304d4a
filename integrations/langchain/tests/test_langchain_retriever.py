"""BookendRetriever in real LCEL chains: the chain's question and the vector store's scores reach
the placement and its recorder (issue 48, 1: ``retriever | reorder`` recorded ``question: null``
and placed without the store's scores)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_bookend import NOTES_EVENT, BookendReorder, BookendRetriever
from langchain_classic.retrievers import ContextualCompressionRetriever
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models import ParrotFakeChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable, RunnablePassthrough
from langchain_core.vectorstores import InMemoryVectorStore

from bookend_rag.outlet import PlacementNote
from bookend_rag.recorder import RetrievalRecorder
from bookend_rag.retrievals import RetrievalRecord, read_retrievals
from bookend_rag.tokens import approx_token_count

QUESTIONS = [
    "How does the telescope stay cold?",
    "Which mirror segment was aligned last?",
    "When did the sunshield unfold?",
]
K = 5
SCORED = "similarity_search_with_score"


def _store() -> InMemoryVectorStore:
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
    store.add_documents(
        [Document(page_content=f"passage {i}: " + "fact " * (2 + 5 * i % 7)) for i in range(10)]
    )
    return store


class RelevanceStore(InMemoryVectorStore):
    """An in-memory store that defines relevance scores (its cosine similarity mapped to
    [0, 1]), as Chroma, FAISS or PGVector do."""

    def _select_relevance_score_fn(self) -> Callable[[float], float]:
        return lambda similarity: (similarity + 1) / 2


def _format(docs: list[Document]) -> str:
    return "\n".join(d.page_content for d in docs)


def _chain(retriever: BookendRetriever) -> Runnable[str, str]:
    """The README's chain: the retriever's documents as the context, the question passed on."""
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Answer from the context."), ("human", "{context}\n\nQuestion: {question}")]
    )
    return (
        {"context": retriever | _format, "question": RunnablePassthrough()}
        | prompt
        | ParrotFakeChatModel()  # answers with the prompt's last message: what the model read
        | StrOutputParser()
    )


def _records(recorder: RetrievalRecorder) -> dict[str | None, RetrievalRecord]:
    recorder.flush()
    return {record.question: record for record in read_retrievals(recorder.path)}


def test_a_chain_records_each_question_with_the_stores_scores(tmp_path: Path) -> None:
    store = _store()
    recorder = RetrievalRecorder(tmp_path / "retrievals.jsonl")
    reorder = BookendReorder(model="llama-3.1-8b", recorder=recorder)
    retriever = BookendRetriever(
        vectorstore=store, reorder=reorder, search_kwargs={"k": K}, scored_search=SCORED
    )
    chain = _chain(retriever)
    first, *rest = QUESTIONS
    answers = {first: chain.invoke(first)}
    answers |= dict(zip(rest[:1], chain.batch(rest[:1]), strict=True))
    answers[rest[1]] = asyncio.run(chain.ainvoke(rest[1]))
    records = _records(recorder)
    assert set(records) == set(QUESTIONS)  # no question: null
    for question, answer in answers.items():
        pairs = store.similarity_search_with_score(question, k=K)
        record = records[question]
        assert [(d.text, d.score) for d in record.documents] == [
            (doc.page_content, score) for doc, score in pairs
        ]
        placed = reorder.invoke({"documents": pairs, "question": question})
        assert record.order is not None
        assert [record.documents[i].text for i in record.order] == [d.page_content for d in placed]
        # The model read the placed order, and the question after it.
        assert answer == f"{_format(placed)}\n\nQuestion: {question}"


def test_relevance_scores_are_the_default(tmp_path: Path) -> None:
    store = RelevanceStore(DeterministicFakeEmbedding(size=16))
    store.add_documents([Document(page_content=f"passage {i}") for i in range(6)])
    recorder = RetrievalRecorder(tmp_path / "retrievals.jsonl")
    retriever = BookendRetriever(vectorstore=store, reorder=BookendReorder(recorder=recorder))
    placed = _chain(retriever).invoke(QUESTIONS[0])
    record = _records(recorder)[QUESTIONS[0]]
    pairs = store.similarity_search_with_relevance_scores(QUESTIONS[0])
    assert [d.score for d in record.documents] == [score for _, score in pairs]
    assert all(0 <= (d.score or 0) <= 1 for d in record.documents)
    assert _format(BookendReorder().invoke(pairs)) in placed


def test_distances_are_placed_lower_first() -> None:
    store = _store()
    retriever = BookendRetriever(
        vectorstore=store,
        reorder=BookendReorder(distance=True, top_k=3),
        search_kwargs={"k": K},
        scored_search=SCORED,
    )
    pairs = store.similarity_search_with_score(QUESTIONS[0], k=K)
    expected = BookendReorder(distance=True, top_k=3).invoke(pairs)
    assert retriever.invoke(QUESTIONS[0]) == expected
    assert asyncio.run(retriever.ainvoke(QUESTIONS[0])) == expected
    # top_k kept the lowest scores: distances, as asked.
    lowest = sorted(pairs, key=lambda pair: pair[1])[:3]
    assert {d.page_content for d in expected} == {d.page_content for d, _ in lowest}


def test_the_compressor_records_the_query_too(tmp_path: Path) -> None:
    """The other wiring LangChain users know: the compressor receives the query (the retriever
    drops the scores, so the input order stands for relevance)."""
    recorder = RetrievalRecorder(tmp_path / "retrievals.jsonl")
    compressed = ContextualCompressionRetriever(
        base_compressor=BookendReorder(recorder=recorder),
        base_retriever=_store().as_retriever(search_kwargs={"k": K}),
    )
    compressed.invoke(QUESTIONS[0])
    asyncio.run(compressed.ainvoke(QUESTIONS[1]))
    records = _records(recorder)
    assert set(records) == set(QUESTIONS[:2])
    assert all(len(r.documents) == K for r in records.values())


class Events(BaseCallbackHandler):
    """Keeps the notes a run's custom events carry."""

    def __init__(self) -> None:
        self.notes: list[list[str]] = []

    def on_custom_event(self, name: str, data: Any, **kwargs: Any) -> None:
        if name == NOTES_EVENT:
            self.notes.append(data["notes"])


def test_notes_reach_warnings_and_the_runs_handlers() -> None:
    store = _store()
    # A budget that holds the top document and another but not a second copy of the top one:
    # repeat_top cannot apply, a note.
    pairs = store.similarity_search_with_score(QUESTIONS[0], k=K)
    top, *others = [approx_token_count(d.page_content) for d, _ in pairs]
    budget = top + min(others)
    assert budget < 2 * top
    retriever = BookendRetriever(
        vectorstore=store,
        reorder=BookendReorder(repeat_top=True, budget=budget),
        search_kwargs={"k": K},
        scored_search=SCORED,
    )
    events = Events()
    with pytest.warns(PlacementNote) as caught:
        retriever.invoke(QUESTIONS[0], {"callbacks": [events]})
    assert caught[0].filename == __file__
    with pytest.warns(PlacementNote):
        asyncio.run(retriever.ainvoke(QUESTIONS[0], {"callbacks": [events]}))
    assert len(events.notes) == 2
    assert events.notes[0] == events.notes[1]
    assert events.notes[0] == [str(w.message) for w in caught]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {},
            r"^vectorstore=InMemoryVectorStore has no relevance scores .*: set "
            r"scored_search='similarity_search_with_score'",
        ),
        (
            {"scored_search": SCORED, "search_kwargs": 3},
            r"^search_kwargs=3: Input should be a valid dictionary$",
        ),
        ({"scored_search": "mmr"}, r"^scored_search='mmr': Input should be"),
        ({"scored_search": SCORED, "k": 4}, r"^unknown field k=4 \(fields: .*search_kwargs"),
    ],
)
def test_bad_fields_are_one_line(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        BookendRetriever(vectorstore=_store(), **fields)


def test_relevance_scores_and_distances_are_refused_together() -> None:
    store = RelevanceStore(DeterministicFakeEmbedding(size=16))
    with pytest.raises(ValueError, match=r"^reorder=BookendReorder\(distance=True\) reads lower"):
        BookendRetriever(vectorstore=store, reorder=BookendReorder(distance=True))


def test_a_query_must_be_text_and_settings_change_by_copy() -> None:
    retriever = BookendRetriever(vectorstore=_store(), scored_search=SCORED)
    with pytest.raises(ValueError, match=r"^query must be a string, got query=5$"):
        retriever.invoke(5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^BookendRetriever is immutable: search_kwargs"):
        retriever.search_kwargs = {"k": 2}  # type: ignore[misc]
    assert len(retriever.model_copy(update={"search_kwargs": {"k": 2}}).invoke("q")) == 2
    with pytest.raises(ValueError, match=r"^search_kwargs=2: Input should be"):
        retriever.model_copy(update={"search_kwargs": 2})
