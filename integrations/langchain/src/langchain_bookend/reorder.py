"""``BookendReorder``: bookend as a LangChain Runnable, document compressor and transformer."""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Real
from pathlib import Path
from typing import Any

from langchain_core.callbacks import Callbacks
from langchain_core.documents import BaseDocumentCompressor, BaseDocumentTransformer, Document
from langchain_core.runnables import RunnableConfig, RunnableSerializable
from pydantic import ConfigDict, Field, PrivateAttr, field_validator

from bookend import (
    DEFAULT_MODEL,
    PLACEMENT_OPTIONS,
    Bookend,
    InfluenceProfile,
    ModelSpec,
    Placement,
    Strategy,
)
from bookend.weighing import DEFAULT_WEIGHT_RULE, WeightRule

__all__ = ["SLOT_KEY", "WEIGHT_KEY", "BookendReorder"]

#: Metadata key for the prompt slot (0 first), written only with ``annotate=True``.
SLOT_KEY = "bookend_slot"
#: Metadata key for the slot's influence weight (1.0 = uniform share), with ``annotate=True``.
WEIGHT_KEY = "bookend_weight"


class BookendReorder(
    RunnableSerializable[Sequence[Document], list[Document]],
    BaseDocumentCompressor,
    BaseDocumentTransformer,
):
    """Put retrieved documents in the order the model reads best.

    One object, three ways in:

    * LCEL: ``retriever | BookendReorder(model="llama-3.1-8b") | format_docs``
      (``invoke``, ``ainvoke``, ``batch``, ``abatch``, callbacks and tracing);
    * document compressor: ``ContextualCompressionRetriever(base_compressor=BookendReorder(),
      base_retriever=...)`` or a step of ``DocumentCompressorPipeline`` (the query is not needed);
    * document transformer: ``transform_documents`` / ``atransform_documents``.

    Relevance: each document's score is the first of ``score_key`` found in its metadata. If every
    document has one, the scores decide (``distance=True`` when lower is better); if any document
    lacks one, the input order is the relevance order (retrievers return best first). The same
    ``Document`` objects come back, metadata untouched unless ``annotate=True``, which writes
    ``bookend_slot`` and ``bookend_weight``. Nothing is dropped unless ``budget`` is set.

    The placement settings (``model``, ``strategy``, ``weight_rule``, ``distance``, ``budget``,
    ``repeat_top``, ``prefix_tokens``, ``suffix_tokens``, ``token_counter``, ``exact_max_k``) are
    those of
    :class:`bookend.Bookend` and are checked at construction: bad values raise ``ValueError``.
    Token lengths are counted on ``page_content``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    model: str | Path | ModelSpec | InfluenceProfile = DEFAULT_MODEL
    """A preset name, published curve, profile path, ``ModelSpec`` or influence profile."""
    strategy: Strategy = "bookend"
    """``"bookend"`` (optimal for the model), ``"alternate"`` or ``"relevance"``."""
    weight_rule: WeightRule = DEFAULT_WEIGHT_RULE
    """How span influence becomes a document's weight (``bookend.weighing``); ``"slot"`` is
    rank-only placement."""
    score_key: tuple[str, ...] = ("relevance_score", "score")
    """Metadata key(s) holding a document's score; the first present wins."""
    distance: bool = False
    """Scores are distances: lower is better."""
    budget: int | None = None
    """Keep only the most relevant documents whose tokens fit; the rest are dropped."""
    repeat_top: bool = False
    """Put the most relevant document at both ends (the same object appears twice)."""
    prefix_tokens: int = 0
    """Tokens of prompt before the documents (see ``bookend.Layout``)."""
    suffix_tokens: int = 0
    """Tokens of prompt after the documents (see ``bookend.Layout``)."""
    token_counter: Any = Field(default=None, exclude=True)
    """``None`` (about four characters a token), a callable ``str -> int`` or a tokenizer."""
    source_key: str | None = None
    """Metadata key of a source: documents sharing a value keep their input order."""
    exact_max_k: int = 12
    """Largest number of documents placed by the exact dynamic programme."""
    annotate: bool = False
    """Write ``bookend_slot`` and ``bookend_weight`` into each returned document's metadata."""

    _placer: Bookend[Document] = PrivateAttr()

    @field_validator("score_key", mode="before")
    @classmethod
    def _one_or_more_keys(cls, value: Any) -> Any:
        """Accept a single key as well as a sequence of keys."""
        keys = (value,) if isinstance(value, str) else tuple(value)
        if not keys or not all(isinstance(k, str) and k for k in keys):
            raise ValueError(f"score_key must be a non-empty key or keys, got score_key={value!r}")
        return keys

    def model_post_init(self, context: Any, /) -> None:
        """Build (and so validate) the placer once."""
        source_key = self.source_key
        self._placer = Bookend(
            self.model,
            **{name: getattr(self, name) for name in PLACEMENT_OPTIONS},
            text=_page_content,
            source=None if source_key is None else lambda d: d.metadata.get(source_key),
        )

    def scores(self, documents: Sequence[Document]) -> list[float | None]:
        """Each document's score from its metadata (``None`` where it has none)."""
        return [_first_score(doc.metadata, self.score_key) for doc in documents]

    def place(self, documents: Sequence[Document]) -> Placement[Document]:
        """The full :class:`bookend.Placement` (order, weights, ``explain()``) for ``documents``."""
        docs = list(documents)
        return self._placer.place(docs, self.scores(docs))

    def transform_documents(self, documents: Sequence[Document], **kwargs: Any) -> list[Document]:
        """Reorder ``documents``; the same objects come back (extra keyword arguments ignored)."""
        placement = self.place(documents)
        if self.annotate:
            _annotate(placement)
        return placement.items

    async def atransform_documents(
        self, documents: Sequence[Document], **kwargs: Any
    ) -> list[Document]:
        """Async :meth:`transform_documents`: runs inline, the placement is short CPU work."""
        return self.transform_documents(documents, **kwargs)

    def compress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> list[Document]:
        """Reorder ``documents`` (the query is not needed: the retriever scored them)."""
        return self.transform_documents(documents)

    async def acompress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> list[Document]:
        """Async :meth:`compress_documents`."""
        return self.transform_documents(documents)

    def invoke(
        self, input: Sequence[Document], config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[Document]:
        """Reorder the documents a retriever returned, with LangChain callbacks and tracing."""
        return self._call_with_config(self.transform_documents, input, config)

    async def ainvoke(
        self, input: Sequence[Document], config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[Document]:
        """Async :meth:`invoke`."""
        return await self._acall_with_config(self.atransform_documents, input, config)


def _page_content(document: Document) -> str:
    return document.page_content


def _first_score(metadata: dict[str, Any], keys: tuple[str, ...]) -> float | None:
    for key in keys:
        value = metadata.get(key)
        # bool is a Real; a flag is not a score.
        if isinstance(value, Real) and not isinstance(value, bool):
            return float(value)
    return None


def _annotate(placement: Placement[Document]) -> None:
    # reversed: a document repeated by repeat_top keeps the values of its first slot.
    for slot, doc in zip(reversed(placement.slots), reversed(placement.items), strict=True):
        doc.metadata[SLOT_KEY] = slot.slot
        doc.metadata[WEIGHT_KEY] = slot.weight
