"""``BookendRanker``: a drop-in for Haystack's ``LostInTheMiddleRanker`` that knows the model."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from haystack import Document, component, default_from_dict, default_to_dict

from bookend import DEFAULT_MODEL, Bookend, Placement, Strategy, relevance_from_scores
from bookend.placement import rank_order
from bookend.weighing import DEFAULT_WEIGHT_RULE, WeightRule

__all__ = ["SLOT_KEY", "WEIGHT_KEY", "BookendRanker"]

#: ``Document.meta`` key for the prompt slot (0 first), written only with ``annotate=True``.
SLOT_KEY = "bookend_slot"
#: ``Document.meta`` key for the slot's influence weight (1.0 = uniform share), with ``annotate``.
WEIGHT_KEY = "bookend_weight"


@component
class BookendRanker:
    """Lay documents out in the prompt so the model reads the most relevant ones best.

    A drop-in for ``LostInTheMiddleRanker``: the same ``run(documents, top_k=...)`` contract and
    output, the same deduplication by document id (keeping the best score) and the same error for
    documents without text. It differs where that ranker is blind: the order comes from the
    model's influence profile (``model``), relevance from ``Document.score`` when every document
    has one (else the input order, as ``LostInTheMiddleRanker`` assumes), and the budget counts
    tokens, not words.

    Usage:
        ```python
        pipeline.add_component("ranker", BookendRanker(model="llama-3.1-8b", top_k=10))
        pipeline.connect("retriever.documents", "ranker.documents")
        pipeline.connect("ranker.documents", "prompt_builder.documents")
        ```

    Args:
        top_k: keep at most this many documents, the most relevant first (``None`` keeps all).
        budget: keep only the most relevant documents whose tokens fit (the token-aware
            counterpart of ``word_count_threshold``); ``None`` keeps all.
        model: a preset name (``"llama-3.1-8b"``), a published curve (``"liu2023:gpt-3.5-turbo"``)
            or the path of a profile JSON file.
        strategy: ``"bookend"`` (optimal for the model), ``"alternate"`` (what
            ``LostInTheMiddleRanker`` does) or ``"relevance"``.
        weight_rule: how span influence becomes a document's weight (``bookend.weighing``);
            ``"slot"`` is rank-only placement.
        distance: scores are distances (lower is better).
        repeat_top: put the most relevant document at both ends (the same object twice).
        prefix_tokens: prompt tokens before the documents (see ``bookend.Layout``).
        suffix_tokens: prompt tokens after the documents (see ``bookend.Layout``).
        source_key: ``meta`` key of a source; documents sharing a value keep their input order.
        exact_max_k: largest number of documents placed by the exact dynamic programme.
        annotate: return copies of the documents with ``bookend_slot`` and ``bookend_weight``
            added to ``meta`` (Haystack components do not mutate their inputs).

    Raises:
        ValueError: a bad parameter, named in the message.
    """

    def __init__(
        self,
        *,
        top_k: int | None = None,
        budget: int | None = None,
        model: str | Path = DEFAULT_MODEL,
        strategy: Strategy = "bookend",
        weight_rule: WeightRule = DEFAULT_WEIGHT_RULE,
        distance: bool = False,
        repeat_top: bool = False,
        prefix_tokens: int = 0,
        suffix_tokens: int = 0,
        source_key: str | None = None,
        exact_max_k: int = 12,
        annotate: bool = False,
    ) -> None:
        _check_top_k(top_k)
        self.top_k = top_k
        self.budget = budget
        self.model = str(model)
        self.strategy: Strategy = strategy
        self.weight_rule: WeightRule = weight_rule
        self.distance = distance
        self.repeat_top = repeat_top
        self.prefix_tokens = prefix_tokens
        self.suffix_tokens = suffix_tokens
        self.source_key = source_key
        self.exact_max_k = exact_max_k
        self.annotate = annotate
        self._placer = self._make_placer(budget)

    def _make_placer(self, budget: int | None) -> Bookend[Document]:
        source_key = self.source_key
        return Bookend(
            self.model,
            strategy=self.strategy,
            weight_rule=self.weight_rule,
            distance=self.distance,
            budget=budget,
            repeat_top=self.repeat_top,
            prefix_tokens=self.prefix_tokens,
            suffix_tokens=self.suffix_tokens,
            text=_content,
            source=None if source_key is None else lambda d: d.meta.get(source_key),
            exact_max_k=self.exact_max_k,
        )

    def to_dict(self) -> dict[str, Any]:
        """Serialise the component (for ``Pipeline.dumps`` / ``to_dict``)."""
        return default_to_dict(
            self,
            top_k=self.top_k,
            budget=self.budget,
            model=self.model,
            strategy=self.strategy,
            weight_rule=self.weight_rule,
            distance=self.distance,
            repeat_top=self.repeat_top,
            prefix_tokens=self.prefix_tokens,
            suffix_tokens=self.suffix_tokens,
            source_key=self.source_key,
            exact_max_k=self.exact_max_k,
            annotate=self.annotate,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BookendRanker:
        """Rebuild the component from :meth:`to_dict` output."""
        return default_from_dict(cls, data)

    def place(
        self, documents: list[Document], top_k: int | None = None, budget: int | None = None
    ) -> Placement[Document]:
        """The full :class:`bookend.Placement` (order, weights, ``explain()``) that :meth:`run`
        uses, over the deduplicated and ``top_k``-cut documents (``Placement.items``)."""
        _check_top_k(top_k)
        if any(doc.content is None for doc in documents):
            raise ValueError("Some provided documents are not textual; BookendRanker needs text.")
        docs = self._deduplicate(documents)
        scores = [doc.score for doc in docs]  # a None score means input order for all
        top_k = top_k or self.top_k
        if top_k is not None and top_k < len(docs):
            relevance = relevance_from_scores(scores, len(docs), distance=self.distance)
            keep = sorted(rank_order(relevance)[:top_k].tolist())
            docs = [docs[i] for i in keep]
            scores = [scores[i] for i in keep]
        placer = self._placer if budget is None else self._make_placer(budget)
        return placer.place(docs, scores)

    @component.output_types(documents=list[Document])
    def run(
        self, documents: list[Document], top_k: int | None = None, budget: int | None = None
    ) -> dict[str, list[Document]]:
        """Reorder ``documents`` for the prompt.

        Args:
            documents: the retrieved documents (textual).
            top_k: overrides the constructor's ``top_k`` for this call.
            budget: overrides the constructor's token ``budget`` for this call.

        Returns:
            ``{"documents": [...]}``: the same ``Document`` objects in prompt order (annotated
            copies with ``annotate=True``).

        Raises:
            ValueError: a document without text, or a bad ``top_k`` or ``budget``.
        """
        if not documents:
            return {"documents": []}
        placement = self.place(documents, top_k=top_k, budget=budget)
        if self.annotate:
            return {"documents": _annotated(placement)}
        return {"documents": placement.items}

    @component.output_types(documents=list[Document])
    async def run_async(
        self, documents: list[Document], top_k: int | None = None, budget: int | None = None
    ) -> dict[str, list[Document]]:
        """Async :meth:`run` (used by ``Pipeline.run_async``); runs inline, it is short CPU work."""
        return self.run(documents, top_k=top_k, budget=budget)

    def _deduplicate(self, documents: list[Document]) -> list[Document]:
        """One document per id, the most relevant one, at the first position of that id."""
        best: dict[str, Document] = {}
        for doc in documents:
            kept = best.get(doc.id)
            if kept is None or self._better(doc.score, kept.score):
                best[doc.id] = doc
        return list(best.values())

    def _better(self, score: float | None, than: float | None) -> bool:
        if score is None:
            return False
        if than is None:
            return True
        return score < than if self.distance else score > than


def _check_top_k(top_k: int | None) -> None:
    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1):
        raise ValueError(f"top_k must be a positive integer or None, got top_k={top_k!r}")


def _content(document: Document) -> str:
    return document.content or ""


def _annotated(placement: Placement[Document]) -> list[Document]:
    # Copies, as Haystack asks components not to mutate the documents they receive.
    return [
        replace(doc, meta={**doc.meta, SLOT_KEY: slot.slot, WEIGHT_KEY: slot.weight})
        for slot, doc in zip(placement.slots, placement.items, strict=True)
    ]
