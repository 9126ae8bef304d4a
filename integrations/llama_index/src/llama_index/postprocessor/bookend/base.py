"""``BookendNodePostprocessor``: bookend as a LlamaIndex node postprocessor."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle

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

__all__ = ["SLOT_KEY", "WEIGHT_KEY", "BookendNodePostprocessor"]

#: Metadata key for the prompt slot (0 first), written only with ``annotate=True``.
SLOT_KEY = "bookend_slot"
#: Metadata key for the slot's influence weight (1.0 = uniform share), with ``annotate=True``.
WEIGHT_KEY = "bookend_weight"


class BookendNodePostprocessor(BaseNodePostprocessor):
    """Put retrieved nodes in the order the model reads best.

    Use it last among the postprocessors, after any reranker:
    ``index.as_query_engine(node_postprocessors=[BookendNodePostprocessor()])``; chat engines take
    ``node_postprocessors`` the same way. Sync and async calls run the same code (the async path
    does not hop to a thread: the placement is short CPU work).

    Relevance comes from ``NodeWithScore.score``: higher is better, or lower with
    ``distance=True`` (vector stores that return distances). If any node's score is ``None``, the
    input order is the relevance order for all nodes (retrievers return best first), so a missing
    score never puts the best node in the middle. Lengths are token counts of
    ``node.get_content(metadata_mode=MetadataMode.LLM)``, the text the LLM sees.

    The same ``NodeWithScore`` objects come back; nothing is dropped unless ``budget`` is set.
    ``annotate=True`` writes ``bookend_slot`` and ``bookend_weight`` into each node's metadata and
    hides them from the LLM and the embedder. The placement settings are those of
    :class:`bookend.Bookend` and are checked at construction: bad values raise ``ValueError``.
    """

    model: str | Path | ModelSpec | InfluenceProfile = Field(
        default=DEFAULT_MODEL,
        description="Preset name, published curve, profile path, ModelSpec or influence profile.",
    )
    strategy: Strategy = Field(
        default="bookend", description="'bookend' (optimal), 'alternate' or 'relevance'."
    )
    weight_rule: WeightRule = Field(
        default=DEFAULT_WEIGHT_RULE,
        description="How span influence becomes a node's weight; 'slot' is rank-only.",
    )
    distance: bool = Field(default=False, description="Scores are distances: lower is better.")
    budget: int | None = Field(
        default=None, description="Keep only the most relevant nodes whose tokens fit."
    )
    repeat_top: bool = Field(default=False, description="Put the top node at both ends.")
    prefix_tokens: int = Field(default=0, description="Prompt tokens before the nodes.")
    suffix_tokens: int = Field(default=0, description="Prompt tokens after the nodes.")
    token_counter: Any = Field(
        default=None,
        exclude=True,
        description="None (about four characters a token), a callable str -> int or a tokenizer.",
    )
    source_key: str | None = Field(
        default=None, description="Metadata key of a source: nodes sharing it keep input order."
    )
    exact_max_k: int = Field(default=12, description="Largest K placed by the exact programme.")
    annotate: bool = Field(
        default=False, description="Write bookend_slot and bookend_weight into node metadata."
    )

    _placer: Bookend[NodeWithScore] = PrivateAttr()

    def model_post_init(self, context: Any, /) -> None:
        """Build (and so validate) the placer once."""
        source_key = self.source_key
        self._placer = Bookend(
            self.model,
            **{name: getattr(self, name) for name in PLACEMENT_OPTIONS},
            text=_llm_text,
            source=None if source_key is None else lambda n: n.node.metadata.get(source_key),
        )

    @classmethod
    def class_name(cls) -> str:
        """The name LlamaIndex serialises the component under."""
        return "BookendNodePostprocessor"

    def place(self, nodes: list[NodeWithScore]) -> Placement[NodeWithScore]:
        """The full :class:`bookend.Placement` (order, weights, ``explain()``) for ``nodes``."""
        # A None score makes bookend fall back to input order for all nodes.
        return self._placer.place(nodes, [n.score for n in nodes])

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        placement = self.place(nodes)
        if self.annotate:
            _annotate(placement)
        return placement.items

    async def _apostprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        return self._postprocess_nodes(nodes, query_bundle)


def _llm_text(node: NodeWithScore) -> str:
    return node.node.get_content(metadata_mode=MetadataMode.LLM)


def _annotate(placement: Placement[NodeWithScore]) -> None:
    # reversed: a node repeated by repeat_top keeps the values of its first slot.
    for slot, scored in zip(reversed(placement.slots), reversed(placement.items), strict=True):
        node = scored.node
        node.metadata[SLOT_KEY] = slot.slot
        node.metadata[WEIGHT_KEY] = slot.weight
        for excluded in (node.excluded_llm_metadata_keys, node.excluded_embed_metadata_keys):
            excluded.extend(k for k in (SLOT_KEY, WEIGHT_KEY) if k not in excluded)
