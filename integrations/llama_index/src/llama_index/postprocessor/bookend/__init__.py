"""LlamaIndex integration for bookend: place retrieved nodes where the model reads best.

>>> from llama_index.postprocessor.bookend import BookendNodePostprocessor
>>> engine = index.as_query_engine(  # doctest: +SKIP
...     node_postprocessors=[BookendNodePostprocessor(model="llama-3.1-8b")]
... )
"""

from llama_index.postprocessor.bookend.base import (
    SLOT_KEY,
    WEIGHT_KEY,
    BookendNodePostprocessor,
    PlacementNotesEvent,
)

__all__ = ["SLOT_KEY", "WEIGHT_KEY", "BookendNodePostprocessor", "PlacementNotesEvent"]
