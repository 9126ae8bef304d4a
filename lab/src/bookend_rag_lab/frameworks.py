"""The orders chosen by the frameworks' own reorderers, obtained by calling the real classes.

Each function takes the retrieved list's scores in retrieval order (most relevant first, as a
retriever returns it), builds the framework's document objects, runs the framework's reorderer and
reads back the prompt order as indices into that list. Nothing here re-implements a pattern: a
change in a framework release shows up in the evaluation. A framework that is not installed is
left out (:func:`available_frameworks`).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

__all__ = ["FRAMEWORKS", "FrameworkOrder", "available_frameworks"]

#: Scores of the retrieved list (retrieval order) -> prompt order as indices into it.
FrameworkOrder = Callable[[Sequence[float]], list[int]]


@cache
def _reorderer(name: str) -> Any:
    if name == "langchain":
        from langchain_community.document_transformers import LongContextReorder

        return LongContextReorder()
    if name == "llamaindex":
        from llama_index.core.postprocessor import LongContextReorder as LlamaIndexReorder

        return LlamaIndexReorder()
    from haystack.components.rankers import LostInTheMiddleRanker

    return LostInTheMiddleRanker()


def langchain_order(scores: Sequence[float]) -> list[int]:
    """LangChain ``LongContextReorder`` (langchain-community): ignores scores, uses list order."""
    from langchain_core.documents import Document

    docs = [Document(page_content=f"doc {i}", id=str(i)) for i in range(len(scores))]
    return [int(str(d.id)) for d in _reorderer("langchain").transform_documents(docs)]


def llama_index_order(scores: Sequence[float]) -> list[int]:
    """LlamaIndex ``LongContextReorder`` (llama-index-core): sorts by score, then alternates."""
    from llama_index.core.schema import NodeWithScore, TextNode

    nodes = [
        NodeWithScore(node=TextNode(text=f"doc {i}", id_=str(i)), score=float(s))
        for i, s in enumerate(scores)
    ]
    return [int(n.node.node_id) for n in _reorderer("llamaindex").postprocess_nodes(nodes)]


def haystack_order(scores: Sequence[float]) -> list[int]:
    """Haystack ``LostInTheMiddleRanker`` (haystack-ai): uses list order, best first.

    Documents get distinct ids, because the ranker deduplicates by id before reordering.
    """
    from haystack import Document

    docs = [Document(id=str(i), content=f"doc {i}", score=float(s)) for i, s in enumerate(scores)]
    return [int(d.id) for d in _reorderer("haystack").run(documents=docs)["documents"]]


#: Strategy name -> (the module it needs, the framework's order of a retrieved list).
FRAMEWORKS: dict[str, tuple[str, FrameworkOrder]] = {
    "langchain": ("langchain_community", langchain_order),
    "llamaindex": ("llama_index.core", llama_index_order),
    "haystack": ("haystack", haystack_order),
}


def available_frameworks() -> dict[str, FrameworkOrder]:
    """The framework reorderers whose packages are installed, by strategy name."""
    out = {}
    for name, (module, order) in FRAMEWORKS.items():
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:  # a missing parent package of a dotted name
            found = False
        if found:
            out[name] = order
    return out
