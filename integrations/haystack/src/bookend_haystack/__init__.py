"""Haystack integration for bookend: ``BookendRanker``, a model-aware ``LostInTheMiddleRanker``.

>>> from bookend_haystack import BookendRanker
>>> ranker = BookendRanker(model="llama-3.1-8b", top_k=10)
>>> ranker.run(documents=[])
{'documents': []}
"""

from bookend_haystack.ranker import SLOT_KEY, WEIGHT_KEY, BookendRanker

__all__ = ["SLOT_KEY", "WEIGHT_KEY", "BookendRanker"]
