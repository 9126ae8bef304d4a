"""Items: one type for every source, one prompt renderer, and the suites by name.

- :mod:`~bookend_rag_lab.items.item`: :class:`Item`, the prompt renderer and the JSONL format.
- :mod:`~bookend_rag_lab.items.families`: template families, word pools and splits of the generated
  items.
- :mod:`~bookend_rag_lab.items.lookup`: plain generated lookups (one fact per document).
- :mod:`~bookend_rag_lab.items.hard`: generated hard lookups (near-duplicates, distractors, unequal
  lengths), each document's role recorded.
- :mod:`~bookend_rag_lab.items.nq`: real NaturalQuestions passages among retrieved hard negatives.
- :mod:`~bookend_rag_lab.items.records`: real ISO 3166-2 records, K look-alikes per item.
- :mod:`~bookend_rag_lab.items.squad`: real SQuAD 2.0 questions, their paragraph among retrieved
  hard negatives.
- :mod:`~bookend_rag_lab.items.pool`: what the real-text suites share (splits by hash, retrieval
  from a pool, hard negatives).
- :mod:`~bookend_rag_lab.items.suites`: the suites by name and :func:`load_items`.
"""

from bookend_rag_lab.items.item import Item, load_jsonl
from bookend_rag_lab.items.suites import SUITES, load_items, suite_items

__all__ = ["SUITES", "Item", "load_items", "load_jsonl", "suite_items"]
