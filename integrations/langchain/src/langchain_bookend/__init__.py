"""LangChain integration for bookend: place retrieved documents where the model reads best.

>>> from langchain_bookend import BookendReorder
>>> chain = retriever | BookendReorder(model="llama-3.1-8b")  # doctest: +SKIP
"""

from langchain_bookend.reorder import NOTES_EVENT, SLOT_KEY, WEIGHT_KEY, BookendReorder

__all__ = ["NOTES_EVENT", "SLOT_KEY", "WEIGHT_KEY", "BookendReorder"]
