"""The placing API: :func:`reorder`, and :class:`Bookend`, its configured, reusable form.

One placer (:mod:`~bookend_rag.place.placer`) and the pieces it places with, each a module:

- :mod:`~bookend_rag.place.array_path`: any call, on arrays, every setting applied: the scores
  become relevance, the items get token lengths, ``top_k`` and the budget choose the chunks to
  keep (:mod:`bookend_rag.placement.selection`), the strategy orders them
  (:mod:`bookend_rag.placement.strategies`) and a :class:`~bookend_rag.Placement` holds the result;
- :mod:`~bookend_rag.place.shortcut`: when a call can skip it, and by which path:
  :mod:`~bookend_rag.place.small_k_path` (a few chunks on Python numbers) or
  :mod:`~bookend_rag.place.rank_path` (chunks whose lengths cannot move the order), each giving
  the array path's placement;
- :mod:`~bookend_rag.place.setup`: what every path places with, and the notes and result they all
  give; :mod:`~bookend_rag.place.items`: how the caller's items are read;
- :mod:`~bookend_rag.place.cached`: :func:`reorder` and the one cache of placers
  (:func:`cached_placer`) that it and the adapters share.
"""

from bookend_rag.place.cached import cached_placer, reorder
from bookend_rag.place.placer import Bookend

__all__ = ["Bookend", "cached_placer", "reorder"]
