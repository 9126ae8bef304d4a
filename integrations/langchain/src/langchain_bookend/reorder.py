"""``BookendReorder``: bookend as a LangChain Runnable, document compressor and transformer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import repeat
from typing import Any, cast

import langchain_core
from langchain_core.callbacks import (
    AsyncCallbackManagerForChainRun,
    CallbackManagerForChainRun,
    Callbacks,
    adispatch_custom_event,
    dispatch_custom_event,
)
from langchain_core.documents import BaseDocumentCompressor, BaseDocumentTransformer, Document
from langchain_core.runnables import RunnableConfig, RunnableSerializable
from langchain_core.runnables.config import get_callback_manager_for_config
from pydantic import ConfigDict, Field, field_validator

from bookend_rag import Placement
from bookend_rag.adapters import (
    SLOT_KEY,
    WEIGHT_KEY,
    CheckedSettings,
    FrameworkAdapter,
    finite_floats,
    first_slot_annotations,
    given_scores,
    not_the_callers,
    read_score,
    shown,
)

__all__ = ["NOTES_EVENT", "SLOT_KEY", "WEIGHT_KEY", "BookendReorder"]

#: The name of the LangChain custom event that carries a call's placement notes
#: (``{"notes": [...]}``), to the callback handlers' ``on_custom_event`` and in ``astream_events``.
NOTES_EVENT = "bookend_notes"

# A warning raised while a reorderer is built or called (a model bookend knows no architecture
# for) names the user's line, not this package's or LangChain's.
not_the_callers(__file__, langchain_core.__file__)

#: What :meth:`BookendReorder.invoke` takes: the documents (or ``(Document, score)`` pairs), or a
#: mapping with them and the question.
ReorderInput = Sequence[Document] | Sequence[tuple[Document, float]] | Mapping[str, Any]


class BookendReorder(
    CheckedSettings,
    RunnableSerializable[ReorderInput, list[Document]],
    BaseDocumentCompressor,
    BaseDocumentTransformer,
    FrameworkAdapter,
):
    """Put retrieved documents in the order the model reads best.

    In a chain that retrieves from a vector store, give it to a
    :class:`~langchain_bookend.BookendRetriever`, which places the store's scored search with the
    chain's question (a reorderer after a plain retriever receives neither the store's scores
    nor the question). One object, three ways in, for documents another step retrieved:

    * LCEL: ``BookendReorder(model="llama-3.1-8b")`` on a list of documents, or on
      ``{"documents": [...], "question": "..."}`` to pass the question too (``invoke``,
      ``ainvoke``, ``batch``, ``abatch``, callbacks and tracing);
    * document compressor: ``ContextualCompressionRetriever(base_compressor=BookendReorder(),
      base_retriever=...)`` or a step of ``DocumentCompressorPipeline`` (it receives the query);
    * document transformer: ``transform_documents`` / ``atransform_documents``.

    ``top_n`` (the name of LangChain's rerankers, such as ``CohereRerank``) is ``top_k``. The
    reorderer is immutable, like LangChain's runnables: setting an attribute raises and points
    to ``model_copy(update=...)``.

    The placement settings are the fields of :class:`bookend_rag.PlacementConfig` (each described
    there), checked at construction, by ``loads`` and by ``model_copy(update=...)`` (pydantic's own
    skips validation; this one does not); unknown settings raise. Each call places with the settings
    as they are then, so ``model_copy(update=...)`` takes effect; with ``count_question=True`` the
    question the call receives is counted after the documents. A ``ModelSpec`` or profile object
    given as ``model`` is stored in its JSON form, so the reorderer round-trips through ``dumpd`` /
    ``loads`` (``valid_namespaces=["langchain_bookend"], allowed_objects=[BookendReorder]``); a
    callable ``token_counter`` is not serialised (``tokenizer``, a tiktoken encoding name or a local
    Hugging Face tokenizer path, is). ``source_key``, ``token_counter`` and ``annotate`` are those
    of :class:`bookend_rag.adapters.FrameworkAdapter`.

    ``config=`` gives every placement setting at once: a :class:`bookend_rag.PlacementConfig`, the
    path of a config JSON file or of the ``tuned.json`` that ``bookend tune`` writes, its JSON
    text or a mapping (``BookendReorder(config="tuned.json")``); settings given beside it
    override the config's, and a ``model`` other than the one a tuned config was measured on
    warns. The settings are stored and serialised, not the file.

    Scores from a vector store: a LangChain retriever drops them, so place the ``(Document,
    score)`` pairs the store returns instead (what :class:`~langchain_bookend.BookendRetriever`
    does). Each pair's score decides (higher is better; ``similarity_search_with_score``
    returns distances for many stores: set ``distance=True`` with it) and the documents come
    back without their scores, unmodified.

    Relevance: each document's score is the first of ``score_key`` found in its metadata (a key
    holding ``None`` counts as absent). If every document has one, the scores decide
    (``distance=True`` when lower is better); if none has one, the input order is the
    relevance order (retrievers return best first); if only some have one, ``missing_scores``
    decides (by default the same, with a note; ``"rank"`` ranks them last, ``"error"`` raises).
    A score must be a real number: a string (even ``"0.9"``), a bool or a number beyond float
    range raises, naming the document and the key, rather than silently switching to the input
    order. Token lengths are counted on ``page_content``. The same ``Document`` objects come
    back and they are not modified, unless ``annotate=True``, which writes ``bookend_slot`` and
    ``bookend_weight`` into their metadata. Nothing is dropped unless ``top_k`` or ``budget`` is
    set.

    Notes: each placement note (``Placement.notes``: some documents without a score, handled by
    ``missing_scores``; a ``repeat_top`` that did not fit ...) is sent to ``warnings``
    (``PlacementNote``, at the caller's line), to the ``bookend_rag`` logger and, in a run
    (``invoke``, ``ainvoke``, ``batch``, or ``compress_documents`` called with ``callbacks``), to
    the run's callback handlers as the custom event :data:`NOTES_EVENT` (``on_custom_event``,
    ``astream_events``). ``recorder`` (a file path or an object with ``record(call)``; off by
    default) appends each call: the question (from the compressor's ``query`` or the mapping's
    ``question``), the documents with their scores in the retriever's order, the model and the
    order placed (:mod:`bookend_rag.recorder`); a call without a question (``retriever |
    reorder``, ``transform_documents``) is recorded without one, which ``bookend tune
    --retrievals`` cannot build a probe from.

    Raises:
        ValueError: a bad setting, input or score: one line naming the parameter and the value.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True, extra="forbid")
    record_source = "langchain"

    score_key: tuple[str, ...] = Field(
        default=("relevance_score", "score"),
        description="Metadata key(s) holding a document's score; the first present wins.",
    )

    @field_validator("score_key", mode="before")
    @classmethod
    def _one_or_more_keys(cls, value: Any) -> Any:
        """Accept a single key as well as a sequence of keys."""
        keys = (value,) if isinstance(value, str) else value
        if (
            not isinstance(keys, list | tuple)
            or not keys
            or not all(isinstance(k, str) and k for k in keys)
        ):
            raise ValueError("must be a non-empty metadata key or a list of keys")
        return tuple(keys)

    @staticmethod
    def item_text(item: Document) -> str:
        """A document's ``page_content``."""
        return item.page_content

    @staticmethod
    def item_source(item: Document, key: str) -> Any:
        """A document's ``metadata[key]``."""
        return item.metadata.get(key)

    @staticmethod
    def item_metadata(item: Document) -> dict[str, Any]:
        """A document's ``metadata``."""
        return item.metadata

    @classmethod
    def is_lc_serializable(cls) -> bool:
        """``dumpd`` / ``loads`` round-trip the reorderer (the token counter aside)."""
        return True

    @classmethod
    def get_lc_namespace(cls) -> list[str]:
        """``["langchain_bookend"]``: pass it to ``loads(..., valid_namespaces=...)``."""
        return ["langchain_bookend"]

    def scores(self, documents: Sequence[Document]) -> list[float | None]:
        """Each document's score from its metadata (``None`` where it has none).

        Raises:
            ValueError: a score that is not a real number within float range.
        """
        keys = self.score_key
        # The common case, checked at C speed: the keys before one absent from every document,
        # and that one holding a finite float in each. Each key read by dict.get mapped over the
        # metadata (a comprehension took an eighth longer, a map of operator.methodcaller twice
        # as long), an absent key found by counting its Nones before any check of the values.
        n = len(documents)
        metadatas = [doc.metadata for doc in documents]
        for key in keys:
            try:
                values = list(map(dict.get, metadatas, repeat(key)))
            except TypeError:  # a metadata that is no dict: read one by one, below
                break
            if values.count(None) == n:
                continue
            plain = finite_floats(values, n)
            if plain is not None:
                return cast("list[float | None]", plain)
            break
        rule = (
            f"a score must be a finite real number (score_key={keys!r}); convert it, or point "
            "score_key at the key that holds the score"
        )
        scores: list[float | None] = []
        for i, doc in enumerate(documents):
            metadata = doc.metadata
            for key in keys:  # the first key present; one holding None counts as absent
                value = metadata.get(key)
                if value is not None:
                    break
            scores.append(read_score(value, "documents[{}].metadata[{!r}]", i, key, rule=rule))
        return scores

    def place(
        self,
        documents: Sequence[Document] | Sequence[tuple[Document, float]],
        question: str | None = None,
    ) -> Placement[Document]:
        """The full :class:`bookend_rag.Placement` (order, weights, ``explain()``) for
        ``documents``:
        ``Document`` objects, or the ``(Document, score)`` pairs a vector store's
        ``similarity_search_with_relevance_scores`` returns (placed by those scores). Its notes
        are returned, not sent (the Runnable, compressor and transformer paths send them)."""
        docs, scores = self._read(documents)
        return self.placer(_question(question, "question")).place(docs, scores)

    def _read(
        self, documents: Sequence[Document] | Sequence[tuple[Document, float]]
    ) -> tuple[list[Document], list[float | None] | None]:
        """The documents and their scores (from ``(Document, score)`` pairs or metadata;
        ``None`` when none has one)."""
        docs, pair_scores = _documents(documents)
        return docs, given_scores(self.scores(docs) if pair_scores is None else pair_scores)

    def _reorder(
        self,
        documents: Sequence[Document] | Sequence[tuple[Document, float]],
        question: str | None,
    ) -> tuple[list[Document], tuple[str, ...]]:
        """The documents in prompt order, and the notes (sent to warnings and the logger, and
        the call to the recorder, already: the caller sends them to its run)."""
        docs, scores = self._read(documents)
        question = _question(question, "question")
        placer = self.placer(question)
        placement = placer.place(docs, scores)
        if self.annotate:
            for doc, annotation in first_slot_annotations(placement):
                doc.metadata.update(annotation)
        return placement.items, self.deliver(placement, placer, docs, scores, question)

    def transform_documents(self, documents: Sequence[Document], **kwargs: Any) -> list[Document]:
        """Reorder ``documents``; the same objects come back (extra keyword arguments ignored)."""
        return self._reorder(documents, None)[0]

    async def atransform_documents(
        self, documents: Sequence[Document], **kwargs: Any
    ) -> list[Document]:
        """Async :meth:`transform_documents`: runs inline, the placement is short CPU work."""
        return self._reorder(documents, None)[0]

    def compress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> list[Document]:
        """Reorder ``documents`` (``query`` is counted after them with ``count_question``); the
        notes go to the run of ``callbacks`` too, when it is one."""
        placed, notes = self._reorder(documents, _question(query, "query"))
        if notes and _in_run(callbacks):
            dispatch_custom_event(
                NOTES_EVENT, {"notes": list(notes)}, config={"callbacks": callbacks}
            )
        return placed

    async def acompress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> list[Document]:
        """Async :meth:`compress_documents`."""
        placed, notes = self._reorder(documents, _question(query, "query"))
        if notes and _in_run(callbacks):
            await adispatch_custom_event(
                NOTES_EVENT, {"notes": list(notes)}, config={"callbacks": callbacks}
            )
        return placed

    def _placed(self, input: ReorderInput) -> tuple[list[Document], tuple[str, ...]]:
        if isinstance(input, Mapping):
            if "documents" not in input:
                raise ValueError(
                    "a mapping input needs 'documents' (and optionally 'question' or 'query'), "
                    f"got keys {list(input)}"
                )
            name = "question" if "question" in input else "query"
            return self._reorder(input["documents"], _question(input.get(name), name))
        return self._reorder(input, None)

    def _invoke(
        self, input: ReorderInput, run_manager: CallbackManagerForChainRun, config: RunnableConfig
    ) -> list[Document]:
        placed, notes = self._placed(input)
        if notes:  # config holds the run's child callbacks: the event belongs to this run
            dispatch_custom_event(NOTES_EVENT, {"notes": list(notes)}, config=config)
        return placed

    def invoke(
        self, input: ReorderInput, config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[Document]:
        """Reorder the documents a retriever returned, with LangChain callbacks and tracing.

        ``input`` is the documents, or ``{"documents": [...], "question": "..."}``.
        """
        return self._call_with_config(self._invoke, input, config)

    async def ainvoke(
        self, input: ReorderInput, config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[Document]:
        """Async :meth:`invoke` (runs inline: the placement is short CPU work)."""
        return await self._acall_with_config(self._ainvoke, input, config)

    async def _ainvoke(
        self,
        input: ReorderInput,
        run_manager: AsyncCallbackManagerForChainRun,
        config: RunnableConfig,
    ) -> list[Document]:
        placed, notes = self._placed(input)
        if notes:
            await adispatch_custom_event(NOTES_EVENT, {"notes": list(notes)}, config=config)
        return placed


def _in_run(callbacks: Callbacks | None) -> bool:
    """Whether ``callbacks`` belong to a run (a custom event needs one to attach to)."""
    if callbacks is None:
        return False
    return get_callback_manager_for_config({"callbacks": callbacks}).parent_run_id is not None


def _documents(
    documents: Sequence[Document] | Sequence[tuple[Document, float]],
) -> tuple[list[Document], list[float | None] | None]:
    """The documents, and the scores of ``(Document, score)`` pairs (``None``: documents)."""
    if not isinstance(documents, list | tuple):
        raise ValueError(
            "documents must be a list of LangChain Document objects or (Document, score) pairs "
            f"(or a mapping with 'documents' and 'question'), got documents={documents!r}"
        )
    docs = list(documents)
    # The common case, without the ABC check: counted at C speed (a list's count compares by
    # identity first, a third faster than a set of the types).
    if list(map(type, docs)).count(Document) == len(docs):
        return docs, None
    if docs and all(type(doc) is tuple for doc in docs):
        return _pairs(docs)
    for i, doc in enumerate(docs):
        if not isinstance(doc, Document):
            raise ValueError(
                "documents must be LangChain Document objects or (Document, score) pairs, all of "
                f"one kind; got documents[{i}] of type {type(doc).__name__}"
            )
    return docs, None


#: What the score of a ``(Document, score)`` pair must be, as the error for a bad one says it.
_PAIR_RULE = "the score of a (Document, score) pair must be a finite real number"


def _pairs(pairs: list[Any]) -> tuple[list[Document], list[float | None]]:
    """The documents and scores of ``(Document, score)`` pairs, as a vector store's
    ``similarity_search_with_relevance_scores`` (or ``_with_score``) returns them."""
    docs: list[Document] = []
    scores: list[float | None] = []
    for i, pair in enumerate(pairs):
        if len(pair) != 2 or not isinstance(pair[0], Document):
            raise ValueError(f"documents[{i}]={shown(pair)} is not a (Document, score) pair")
        docs.append(pair[0])
        scores.append(read_score(pair[1], "documents[{}][1]", i, rule=_PAIR_RULE))
    return docs, scores


def _question(question: Any, name: str) -> str | None:
    if question is not None and not isinstance(question, str):
        raise ValueError(f"{name} must be a string or None, got {name}={question!r}")
    return question
