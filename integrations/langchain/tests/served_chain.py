"""A WSGI app serving a LangChain chain that records every retrieval, as a team deploys one: the
app module is loaded once in gunicorn's master (``--preload``), which then forks its workers.

Started by ``test_served_chain.py`` (not a test module itself). At import, in the master: an
in-memory vector store with a deterministic fake embedding (no model, nothing fetched), a
``ContextualCompressionRetriever`` whose compressor is ``BookendReorder`` recording to the file
named by ``BOOKEND_SERVED_RECORDS`` (so the compressor's ``query`` is the recorded question),
an LCEL chain around it, and one call of that chain with the question ``BOOKEND_SERVED_STARTUP``:
a start-up check as apps make, so the master has recorded a retrieval before it forks. Each
request ``GET /?q=QUESTION`` runs the chain in a worker and answers JSON with the question, the
worker's pid and the prompt.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import parse_qs

from langchain_bookend import BookendReorder
from langchain_classic.retrievers import ContextualCompressionRetriever
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.runnables import RunnableLambda, RunnablePassthrough
from langchain_core.vectorstores import InMemoryVectorStore

#: How many documents the retriever returns per question.
K = 8


def _format_docs(docs: list[Document]) -> str:
    return "\n\n".join(d.page_content for d in docs)


def _prompt(inputs: dict[str, Any]) -> str:
    return f"Context:\n{inputs['context']}\n\nQuestion: {inputs['question']}"


store = InMemoryVectorStore(DeterministicFakeEmbedding(size=32))
store.add_documents(
    [
        Document(page_content=f"Station {i} opened in {1850 + 3 * i} on line {i % 7}.")
        for i in range(60)
    ]
)
retriever = ContextualCompressionRetriever(
    base_compressor=BookendReorder(
        recorder=os.environ["BOOKEND_SERVED_RECORDS"], model="llama-3.1-8b"
    ),
    base_retriever=store.as_retriever(search_kwargs={"k": K}),
)
chain = {"context": retriever | _format_docs, "question": RunnablePassthrough()} | RunnableLambda(
    _prompt
)
chain.invoke(os.environ["BOOKEND_SERVED_STARTUP"])


def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    """``GET /?q=QUESTION``: the chain's prompt for the question; ``GET /ready``: ``ok``."""
    if environ.get("PATH_INFO") == "/ready":
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"ok"]
    question = parse_qs(environ.get("QUERY_STRING", "")).get("q", [""])[0]
    if not question:
        start_response("400 Bad Request", [("Content-Type", "text/plain")])
        return [b"give the question as ?q=..."]
    body = json.dumps({"question": question, "pid": os.getpid(), "prompt": chain.invoke(question)})
    start_response("200 OK", [("Content-Type", "application/json")])
    return [body.encode("utf-8")]
