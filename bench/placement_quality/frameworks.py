"""The orders chosen by the frameworks' own reorderers, obtained by calling the real classes.

Each function takes the retrieved list in retrieval order (most relevant first, as a retriever
returns it) with its scores, builds the framework's document objects, runs the framework's
reorderer and reads back the prompt order as input indices. Nothing here re-implements a pattern:
a change in a framework release shows up in the benchmark.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from haystack import Document as HaystackDocument
from haystack.components.rankers import LostInTheMiddleRanker
from langchain_community.document_transformers import (
    LongContextReorder as LangChainReorder,
)
from langchain_core.documents import Document as LangChainDocument
from llama_index.core.postprocessor import LongContextReorder as LlamaIndexReorder
from llama_index.core.schema import NodeWithScore, TextNode

FrameworkOrder = Callable[[Sequence[float]], list[int]]

_LANGCHAIN = LangChainReorder()
_LLAMA_INDEX = LlamaIndexReorder()
_HAYSTACK = LostInTheMiddleRanker()


def langchain_order(scores: Sequence[float]) -> list[int]:
    """LangChain ``LongContextReorder`` (langchain-community): ignores scores, uses list order."""
    docs = [LangChainDocument(page_content=f"doc {i}", id=str(i)) for i in range(len(scores))]
    return [int(str(d.id)) for d in _LANGCHAIN.transform_documents(docs)]


def llama_index_order(scores: Sequence[float]) -> list[int]:
    """LlamaIndex ``LongContextReorder`` (llama-index-core): sorts by score, then alternates."""
    nodes = [
        NodeWithScore(node=TextNode(text=f"doc {i}", id_=str(i)), score=float(s))
        for i, s in enumerate(scores)
    ]
    return [int(n.node.node_id) for n in _LLAMA_INDEX.postprocess_nodes(nodes)]


def haystack_order(scores: Sequence[float]) -> list[int]:
    """Haystack ``LostInTheMiddleRanker`` (haystack-ai): uses list order, best first.

    Documents get distinct ids, because the ranker deduplicates by id before reordering.
    """
    docs = [
        HaystackDocument(id=str(i), content=f"doc {i}", score=float(s))
        for i, s in enumerate(scores)
    ]
    return [int(d.id) for d in _HAYSTACK.run(documents=docs)["documents"]]


#: Strategy name -> the framework's order of a retrieved list.
FRAMEWORKS: dict[str, FrameworkOrder] = {
    "langchain": langchain_order,
    "llamaindex": llama_index_order,
    "haystack": haystack_order,
}
