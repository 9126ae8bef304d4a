"""Drop-in parity: Haystack's own unit tests for ``LostInTheMiddleRanker``, run against
``BookendRanker(strategy="alternate")`` and, beside it, against ``LostInTheMiddleRanker`` itself.

Source: deepset-ai/haystack, ``test/components/rankers/test_lost_in_the_middle.py`` (Apache-2.0),
read at commits 1df41123 (the current cases) and 069ae166 (an earlier version, which also checked
a negative ``top_k`` and a BM25 retrieval pipeline). The cases are restated here as tables of
inputs and expected orders; the upstream assertions are kept, with two adaptations:

* the invalid ``word_count_threshold`` message: upstream matches "Invalid value for
  word_count_threshold"; bookend's one-line errors name the parameter and the value instead;
* a negative ``top_k``: the earlier upstream tests expected ``documents[:top_k]`` slicing. The
  installed haystack-ai refuses a ``top_k`` <= 0 with a ``ValueError``, and so does bookend (see the
  README, "Differences from LostInTheMiddleRanker"): both are checked to refuse it.
"""

from __future__ import annotations

from typing import Any

import pytest
from haystack import Document, Pipeline
from haystack.components.rankers import LostInTheMiddleRanker
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.document_stores.in_memory import InMemoryDocumentStore
from haystack_integrations.components.rankers.bookend import BookendRanker

RANKERS = [
    pytest.param(LostInTheMiddleRanker, id="LostInTheMiddleRanker"),
    pytest.param(lambda **kw: BookendRanker(strategy="alternate", **kw), id="BookendRanker"),
]


def _numbered(n: int, prefix: str = "") -> list[Document]:
    return [Document(content=f"{prefix}{i}") for i in range(1, n + 1)]


# (documents, constructor arguments, expected contents in order), from the upstream order tests.
ORDERS = [
    pytest.param(_numbered(9), {}, "1 3 5 7 9 8 6 4 2", id="order_odd"),
    pytest.param(_numbered(10), {}, "1 3 5 7 9 10 8 6 4 2", id="order_even"),
    pytest.param(_numbered(2), {}, "1 2", id="order_two_docs"),
    pytest.param(
        _numbered(9, "word"),
        {"word_count_threshold": 6},
        "word1 word3 word5 word6 word4 word2",
        id="with_word_count_threshold-6",
    ),
    pytest.param(
        _numbered(9, "word"),
        {"word_count_threshold": 9},
        "word1 word3 word5 word7 word9 word8 word6 word4 word2",
        id="with_word_count_threshold-9",
    ),
    pytest.param(
        _numbered(9, "word"),
        {"word_count_threshold": 100},
        "word1 word3 word5 word7 word9 word8 word6 word4 word2",
        id="word_count_threshold_greater_than_total_number_of_words_returns_all_documents",
    ),
    pytest.param([], {}, "", id="empty_documents_returns_empty_list"),
]


@pytest.mark.parametrize("make", RANKERS)
@pytest.mark.parametrize(("documents", "init", "expected"), ORDERS)
def test_order(make: Any, documents: list[Document], init: dict[str, Any], expected: str) -> None:
    result = make(**init).run(documents=documents)
    assert [doc.content for doc in result["documents"]] == expected.split()


@pytest.mark.parametrize("make", RANKERS)
def test_list_of_one_document_returns_same_document(make: Any) -> None:
    doc = Document(content="test")
    assert make().run(documents=[doc]) == {"documents": [doc]}


@pytest.mark.parametrize("make", RANKERS)
def test_init(make: Any) -> None:
    assert make().word_count_threshold is None
    assert make(word_count_threshold=10).word_count_threshold == 10


@pytest.mark.parametrize("make", RANKERS)
@pytest.mark.parametrize("words", [0, -5])
def test_init_invalid_word_count_threshold(make: Any, words: int) -> None:
    with pytest.raises(ValueError, match="word_count_threshold"):
        make(word_count_threshold=words)


@pytest.mark.parametrize("make", RANKERS)
@pytest.mark.parametrize("top_k", [1, 2, 3, 4, 5, 6, 7, 8, 12, 20])
def test_order_with_top_k(make: Any, top_k: int) -> None:
    ranker = make()
    docs = _numbered(9)
    result = ranker.run(documents=docs, top_k=top_k)
    if top_k < len(docs):
        assert len(result["documents"]) == top_k
        assert result == ranker.run(documents=_numbered(top_k))
    else:
        assert len(result["documents"]) == len(docs)
        assert result == ranker.run(documents=docs)


@pytest.mark.parametrize("make", RANKERS)
@pytest.mark.parametrize("top_k", [-20, -10, -5, -1])
def test_order_with_negative_top_k_is_refused(make: Any, top_k: int) -> None:
    with pytest.raises(ValueError, match="top_k"):
        make().run(documents=_numbered(9), top_k=top_k)


@pytest.mark.parametrize("make", RANKERS)
def test_ranker_retrieval_pipeline(make: Any) -> None:
    store = InMemoryDocumentStore()
    store.write_documents(
        [
            Document(content="Paris is in France"),
            Document(content="Berlin is in Germany"),
            Document(content="Lyon is in France"),
        ]
    )
    pipeline = Pipeline()
    pipeline.add_component(instance=InMemoryBM25Retriever(document_store=store), name="retriever")
    pipeline.add_component(instance=make(), name="ranker")
    pipeline.connect("retriever.documents", "ranker.documents")
    # Upstream passed query= to the ranker too; the installed LostInTheMiddleRanker takes none.
    ranker_inputs: dict[str, Any] = {"top_k": 2}
    result = pipeline.run(
        data={"retriever": {"query": "Cities in France", "top_k": 3}, "ranker": ranker_inputs}
    )
    assert len(result) == 1
    assert len(result["ranker"]["documents"]) == 2


def test_both_rankers_agree_on_every_case() -> None:
    """The tables above, compared output for output (not only with the expected orders)."""
    for documents, init, _ in (case.values for case in ORDERS):
        theirs = LostInTheMiddleRanker(**init).run(documents=documents)
        assert BookendRanker(strategy="alternate", **init).run(documents=documents) == theirs
