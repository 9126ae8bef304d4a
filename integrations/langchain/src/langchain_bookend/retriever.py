"""``BookendRetriever``: a vector store's scored search placed by bookend, as a LangChain retriever.

A retriever in an LCEL chain receives the question, and a vector store's scored search returns
the scores a plain retriever drops; a reorderer after a retriever (``retriever | reorder``) gets
neither. This retriever does the search and the placement in one step, so the placement uses the
store's scores and the recorder gets the question with them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
    adispatch_custom_event,
    dispatch_custom_event,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.vectorstores import VectorStore
from pydantic import ConfigDict, Field, ValidationError

from bookend_rag.errors import one_line, shown
from langchain_bookend.reorder import NOTES_EVENT, BookendReorder

__all__ = ["RELEVANCE_SEARCH", "SCORE_SEARCH", "BookendRetriever", "ScoredSearch"]

#: The store's search returning relevance scores in [0, 1], higher is better (the default).
RELEVANCE_SEARCH: Final = "similarity_search_with_relevance_scores"
#: The store's search returning its raw scores: a similarity or a distance, as the store defines.
SCORE_SEARCH: Final = "similarity_search_with_score"
#: Which of the store's scored searches a :class:`BookendRetriever` calls.
ScoredSearch = Literal["similarity_search_with_relevance_scores", "similarity_search_with_score"]


class BookendRetriever(BaseRetriever):
    """Search a vector store with scores and return the documents in the order the model reads
    best, the question and the scores reaching the placement and its recorder.

    A LangChain retriever (``invoke``, ``ainvoke``, ``batch``, ``abatch``, callbacks and
    tracing), for the place a retriever takes in a chain:

    ```python
    retriever = BookendRetriever(
        vectorstore=store,
        reorder=BookendReorder(model="llama-3.1-8b", recorder="retrievals.jsonl"),
        search_kwargs={"k": 6},
    )
    chain = (
        {"context": retriever | format_docs, "question": RunnablePassthrough()}
        | prompt
        | llm
    )
    ```

    Each call runs the store's ``scored_search`` (sync or async) with the query and
    ``search_kwargs``, places the ``(Document, score)`` pairs with ``reorder`` (its settings, its
    notes and its ``recorder``: each call is recorded with the query as its question and the
    store's scores) and returns the documents in prompt order, unmodified (annotated with
    ``reorder``'s ``annotate=True``). The placement notes reach ``warnings``, the ``bookend_rag``
    logger and the run's callback handlers as the custom event :data:`NOTES_EVENT`.

    ``scored_search`` names the store's method: ``similarity_search_with_relevance_scores`` (the
    default: scores in [0, 1], higher is better, for every store that defines its relevance
    function) or ``similarity_search_with_score`` (the store's own scores: a similarity for
    ``InMemoryVectorStore``, a distance for many others, for which give ``reorder``
    ``distance=True``).

    Raises:
        ValueError: a bad field (one line naming it and its value), a store without relevance
            scores asked for them, ``distance=True`` with relevance scores, or a query that is
            not a string.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid", frozen=True)

    vectorstore: VectorStore = Field(description="The vector store searched.")
    reorder: BookendReorder = Field(
        default_factory=BookendReorder,
        description="The placement: its settings, notes and recorder.",
    )
    search_kwargs: dict[str, Any] = Field(
        default_factory=dict,
        description="Keyword arguments of the scored search: k, filter, score_threshold ...",
    )
    scored_search: ScoredSearch = Field(
        default=RELEVANCE_SEARCH, description="Which of the store's scored searches is called."
    )

    def __init__(self, **fields: Any) -> None:
        try:
            super().__init__(**fields)
        except ValidationError as exc:
            raise ValueError(one_line(exc, type(self).model_fields)) from None
        self._check_scores()

    def __setattr__(self, name: str, value: Any) -> None:
        if name in type(self).model_fields:
            raise ValueError(
                f"{type(self).__name__} is immutable: {name} cannot be set; "
                f".model_copy(update={{{name!r}: ...}}) returns a copy with it"
            )
        super().__setattr__(name, value)

    def _check_scores(self) -> None:
        """Relevance scores are higher-is-better, and only stores that define them have them."""
        if self.scored_search != RELEVANCE_SEARCH:
            return
        if self.reorder.distance:
            raise ValueError(
                "reorder=BookendReorder(distance=True) reads lower scores as better, but relevance "
                f"scores are higher-is-better: drop distance=True, or set scored_search="
                f"{SCORE_SEARCH!r} for a store whose scores are distances"
            )
        store = type(self.vectorstore)
        if all(
            getattr(store, method) is getattr(VectorStore, method)
            for method in (
                "_select_relevance_score_fn",
                "_similarity_search_with_relevance_scores",
                RELEVANCE_SEARCH,
            )
        ):
            raise ValueError(
                f"vectorstore={store.__name__} has no relevance scores (its {RELEVANCE_SEARCH} is "
                f"not implemented): set scored_search={SCORE_SEARCH!r} (and distance=True on the "
                "reorder if its scores are distances)"
            )

    def model_copy(
        self, *, update: Mapping[str, Any] | None = None, deep: bool = False
    ) -> BookendRetriever:
        """A copy with ``update`` applied, checked as the constructor checks fields (pydantic's
        own ``model_copy`` skips validation)."""
        copied = super().model_copy(deep=deep)
        fields = {name: getattr(copied, name) for name in type(self).model_fields}
        return type(self)(**(fields | dict(update or {})))

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        search = getattr(self.vectorstore, self.scored_search)
        pairs = search(_query(query), **self.search_kwargs)
        placed, notes = self.reorder._reorder(pairs, query)
        if notes:  # to this run's handlers: a custom event needs the run as its parent
            dispatch_custom_event(
                NOTES_EVENT, {"notes": list(notes)}, config={"callbacks": run_manager.get_child()}
            )
        return placed

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        search = getattr(self.vectorstore, f"a{self.scored_search}")
        pairs = await search(_query(query), **self.search_kwargs)
        placed, notes = self.reorder._reorder(pairs, query)  # inline: short CPU work
        if notes:
            await adispatch_custom_event(
                NOTES_EVENT, {"notes": list(notes)}, config={"callbacks": run_manager.get_child()}
            )
        return placed


def _query(query: Any) -> str:
    """The query, checked before the store embeds it."""
    if not isinstance(query, str):
        raise ValueError(f"query must be a string, got query={shown(query)}")
    return query
