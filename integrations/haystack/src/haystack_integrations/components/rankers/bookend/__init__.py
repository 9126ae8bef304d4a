"""Haystack integration for bookend: ``BookendRanker``, a model-aware ``LostInTheMiddleRanker``.

>>> from haystack_integrations.components.rankers.bookend import BookendRanker
>>> ranker = BookendRanker(model="llama-3.1-8b", top_k=10)
>>> ranker.run(documents=[])
{'documents': []}
"""

from haystack_integrations.components.rankers.bookend.ranker import (
    SLOT_KEY,
    WEIGHT_KEY,
    BookendRanker,
)

__all__ = ["SLOT_KEY", "WEIGHT_KEY", "BookendRanker"]
