"""A small bundled corpus and query for the demo, examples and tests (no download needed)."""

from __future__ import annotations

from dataclasses import dataclass

from bookend_rag.datafiles import load_data_json

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


def load_demo_corpus() -> DemoCorpus:
    """The bundled demo corpus: 16 short passages about how the JWST keeps cold, and a query.

    Returns a fresh copy each call, so callers may modify it.
    """
    data = load_data_json("demo_corpus.json")
    return DemoCorpus(query=data["query"], documents=[dict(d) for d in data["documents"]])
