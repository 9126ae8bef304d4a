"""LangChain integration for bookend: place retrieved documents where the model reads best.

``BookendRetriever`` searches a vector store with scores and places the documents, so the
chain's question and the store's scores reach the placement (and its recorder);
``BookendReorder`` places documents another step retrieved.

>>> from langchain_bookend import BookendReorder, BookendRetriever
>>> retriever = BookendRetriever(vectorstore=store, reorder=BookendReorder())  # doctest: +SKIP
>>> chain = retriever | format_docs  # doctest: +SKIP
"""

from langchain_bookend.reorder import NOTES_EVENT, SLOT_KEY, WEIGHT_KEY, BookendReorder
from langchain_bookend.retriever import BookendRetriever

__all__ = ["NOTES_EVENT", "SLOT_KEY", "WEIGHT_KEY", "BookendReorder", "BookendRetriever"]
