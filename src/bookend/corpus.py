"""A small bundled corpus and query for the demo, examples and tests (no download needed)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

__all__ = ["DemoCorpus", "load_demo_corpus"]


@dataclass(frozen=True)
class DemoCorpus:
    """A query and documents (dicts with ``id``, ``title``, ``source`` and ``text``)."""

    query: str
    documents: list[dict[str, str]]

    @property
    def texts(self) -> list[str]:
        """The documents' texts, in corpus order."""
        return [d["text"] for d in self.documents]


@lru_cache(maxsize=1)
def _load() -> tuple[str, tuple[tuple[tuple[str, str], ...], ...]]:
    raw = resources.files("bookend").joinpath("data/demo_corpus.json").read_text(encoding="utf-8")
    data = json.loads(raw)
    return data["query"], tuple(tuple(sorted(d.items())) for d in data["documents"])


def load_demo_corpus() -> DemoCorpus:
    """The bundled demo corpus: 16 short passages about how the JWST keeps cold, and a query.

    Returns a fresh copy each call, so callers may modify it.
    """
    query, docs = _load()
    return DemoCorpus(query=query, documents=[dict(d) for d in docs])
