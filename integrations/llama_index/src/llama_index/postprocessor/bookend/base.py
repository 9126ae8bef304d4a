"""``BookendNodePostprocessor``: bookend as a LlamaIndex node postprocessor."""

from __future__ import annotations

import inspect
import json
import math
import operator
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

import llama_index.core
from llama_index.core import Settings
from llama_index.core.bridge.pydantic import ConfigDict, field_validator
from llama_index.core.callbacks import CallbackManager, CBEventType, EventPayload
from llama_index.core.instrumentation import get_dispatcher  # type: ignore[attr-defined]
from llama_index.core.instrumentation.event_handlers import NullEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.rerank import ReRankEndEvent, ReRankStartEvent
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle

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
)

if TYPE_CHECKING:  # the package llama-index-core's instrumentation comes from
    from llama_index_instrumentation.dispatcher import Dispatcher

__all__ = ["SLOT_KEY", "WEIGHT_KEY", "BookendNodePostprocessor", "PlacementNotesEvent"]

dispatcher = get_dispatcher(__name__)

# A warning raised while a postprocessor is built or called (a model bookend knows no
# architecture for, a placement note) names the user's line, not this package's or LlamaIndex's
# (its instrumentation, which wraps every postprocessing call, is a package of its own).
not_the_callers(__file__, llama_index.core.__file__, inspect.getfile(type(dispatcher)))


class PlacementNotesEvent(BaseEvent):
    """The placement notes of one :class:`BookendNodePostprocessor` call (``Placement.notes``),
    emitted through LlamaIndex's instrumentation between ``ReRankStartEvent`` and
    ``ReRankEndEvent``, in the postprocessor's span; only when there are notes."""

    notes: list[str]

    @classmethod
    def class_name(cls) -> str:
        """The name LlamaIndex's event handlers see."""
        return "PlacementNotesEvent"


class BookendNodePostprocessor(CheckedSettings, BaseNodePostprocessor, FrameworkAdapter):
    """Put retrieved nodes in the order the model reads best.

    Use it last among the postprocessors, after any reranker:
    ``index.as_query_engine(node_postprocessors=[BookendNodePostprocessor()])``; chat engines take
    ``node_postprocessors`` the same way. Sync and async calls run the same code (the async path
    does not hop to a thread: the placement is short CPU work). Each call emits LlamaIndex's
    ``ReRankStartEvent`` / ``ReRankEndEvent`` (when an instrumentation handler listens) and a
    ``RERANKING`` callback event (when its callback manager has a handler).

    ``top_n`` (the name of LlamaIndex's rerankers, such as ``SentenceTransformerRerank``) is
    ``top_k``, at construction and as an attribute.

    The placement settings are the fields of :class:`bookend_rag.PlacementConfig` (each described
    there), checked at construction, on assignment, by ``from_dict`` / ``from_json`` and by
    ``model_copy(update=...)`` (pydantic's own skips validation; this one does not); unknown
    settings raise. Each call places with the settings as they are then; with
    ``count_question=True`` the query it receives is counted after the nodes. A ``ModelSpec`` or
    profile object given as ``model`` is stored in its JSON form, so ``to_dict`` / ``from_dict`` /
    ``to_json`` round-trip (a callable ``token_counter`` is not serialised; ``tokenizer`` is).
    ``source_key``, ``token_counter`` and ``annotate`` are those of
    :class:`bookend_rag.adapters.FrameworkAdapter`.

    ``config=`` gives every placement setting at once: a :class:`bookend_rag.PlacementConfig`, the
    path of a config JSON file or of the ``tuned.json`` that ``bookend tune`` writes, its JSON
    text or a mapping (``BookendNodePostprocessor(config="tuned.json")``); settings given beside
    it override the config's, and a ``model`` other than the one a tuned config was measured on
    warns. The settings are stored and serialised, not the file.

    Relevance comes from ``NodeWithScore.score``: higher is better, or lower with
    ``distance=True`` (vector stores that return distances). If every node's score is ``None``, the
    input order is the relevance order (retrievers return best first); if only some are,
    ``missing_scores`` decides (by default the same, with a note; ``"rank"`` ranks them last,
    ``"error"`` raises). A score set on a node after construction (which
    LlamaIndex does not check) must still be a real number: a string, a bool or a number beyond
    float range raises, naming the node. Lengths are token counts of
    ``node.get_content(metadata_mode=MetadataMode.LLM)``, the text the LLM sees, counted with
    ``token_counter``, else ``tokenizer``, else LlamaIndex's tokenizer (``Settings.tokenizer``:
    the one set, else LlamaIndex's default, loaded on the first call from the copy LlamaIndex
    ships), so the same nodes get the same lengths before and after a query engine is built.

    The same ``NodeWithScore`` objects come back, unmodified; nothing is dropped unless ``top_k``
    or ``budget`` is set. ``annotate=True`` writes ``bookend_slot`` and ``bookend_weight`` into
    each node's metadata (modifying the caller's nodes) and hides them from the LLM and the
    embedder.

    Notes: each placement note (``Placement.notes``: nodes without a score, handled by
    ``missing_scores``; a ``repeat_top`` that did not fit ...) is sent to ``warnings``
    (``PlacementNote``, at the caller's line), to the ``bookend_rag`` logger and to LlamaIndex's
    instrumentation as a :class:`PlacementNotesEvent`. ``recorder`` (a file path or an object with
    ``record(call)``; off by default) appends each call: the ``query_bundle``'s query, the nodes
    with their scores in the retriever's order, the model and the order placed
    (:mod:`bookend_rag.recorder`).

    Raises:
        ValueError: a bad setting, node, score or query: one line naming the parameter and the
            value.
    """

    model_config = ConfigDict(
        arbitrary_types_allowed=True, frozen=False, extra="forbid", validate_assignment=True
    )
    record_source = "llama_index"

    @classmethod
    def from_dict(cls, data: dict[str, Any], **kwargs: Any) -> BookendNodePostprocessor:
        """Rebuild the postprocessor from :meth:`to_dict` output (``kwargs`` override it).

        Raises:
            ValueError: ``data`` is not a mapping, or holds an unknown or bad setting.
        """
        if not isinstance(data, Mapping):
            raise ValueError(f"data must be a mapping of settings, got data={data!r}")
        return super().from_dict(dict(data), **kwargs)

    @classmethod
    def from_json(cls, data_str: str, **kwargs: Any) -> BookendNodePostprocessor:
        """Rebuild the postprocessor from :meth:`to_json` output.

        Raises:
            ValueError: ``data_str`` is not JSON, or holds an unknown or bad setting.
        """
        try:
            data = json.loads(data_str)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"data_str must be the JSON of a settings object ({exc}), got data_str={data_str!r}"
            ) from None
        return cls.from_dict(data, **kwargs)

    @field_validator("callback_manager", mode="before")
    @classmethod
    def _callback_manager(cls, value: Any) -> Any:
        """``None`` means a fresh manager, as elsewhere in LlamaIndex; anything else must be one
        (LlamaIndex's own field lets any value through, and the next call would fail on it)."""
        if value is None:
            return CallbackManager()
        if not isinstance(value, CallbackManager):
            raise ValueError("must be a CallbackManager or None")
        return value

    @staticmethod
    def item_text(item: NodeWithScore) -> str:
        """The node's content with the metadata the LLM sees."""
        return item.node.get_content(metadata_mode=MetadataMode.LLM)

    @staticmethod
    def item_source(item: NodeWithScore, key: str) -> Any:
        """The node's ``metadata[key]``."""
        return item.node.metadata.get(key)

    @staticmethod
    def item_metadata(item: NodeWithScore) -> dict[str, Any]:
        """The node's ``metadata``."""
        return item.node.metadata

    @classmethod
    def class_name(cls) -> str:
        """The name LlamaIndex serialises the component under."""
        return "BookendNodePostprocessor"

    def current_token_counter(self) -> Any:
        """``token_counter``; without it and without ``tokenizer``, LlamaIndex's tokenizer
        (``Settings.tokenizer``: the one set, else LlamaIndex's default, which it loads from the
        copy it ships, offline), whether or not a query engine has loaded it yet."""
        if self.token_counter is not None or self.tokenizer is not None:
            return self.token_counter
        # Read through Settings, which loads LlamaIndex's default when none is set: counting with
        # the global only once something had loaded it gave other lengths (and another budget
        # cut) before the first query engine than after.
        tokenize: Callable[[str], list[Any]] = Settings.tokenizer
        return _Tokenizer(tokenize)

    def place(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> Placement[NodeWithScore]:
        """The full :class:`bookend_rag.Placement` (order, weights, ``explain()``) for ``nodes``;
        its notes are returned, not sent (a postprocessing call sends them)."""
        _check_nodes(nodes)
        return self.placer(_query(query_bundle)).place(nodes, _scores(nodes))

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        _check_nodes(nodes)  # before any event: a refused call has not started
        query = _query(query_bundle)
        listened = _listened()
        if listened:
            dispatcher.event(
                ReRankStartEvent(
                    query=query_bundle,
                    nodes=nodes,
                    top_n=self.top_k or len(nodes),
                    model_name="bookend",
                )
            )
        callbacks = self.callback_manager
        if callbacks.handlers:
            with callbacks.event(
                CBEventType.RERANKING,
                payload={
                    EventPayload.NODES: nodes,
                    EventPayload.MODEL_NAME: "bookend",
                    EventPayload.QUERY_STR: query,
                    EventPayload.TOP_K: self.top_k,
                },
            ) as event:
                placement = self._placed(nodes, query, listened)
                event.on_end(payload={EventPayload.NODES: placement.items})
        else:  # no handler would see the event: its id (a uuid4) and trace are not made
            placement = self._placed(nodes, query, listened)
        if listened:
            dispatcher.event(ReRankEndEvent(nodes=placement.items))
        return placement.items

    def _placed(
        self, nodes: list[NodeWithScore], query: str | None, listened: bool
    ) -> Placement[NodeWithScore]:
        """The placement of a postprocessing call, its notes sent (to the instrumentation too,
        when ``listened``) and the nodes annotated if asked."""
        scores = _scores(nodes)
        placer = self.placer(query)
        placement = placer.place(nodes, scores)
        if self.annotate:
            _annotate(placement)
        notes = self.deliver(placement, placer, nodes, scores, query)
        if notes and listened:
            dispatcher.event(PlacementNotesEvent(notes=list(notes)))
        return placement

    async def _apostprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        return self._postprocess_nodes(nodes, query_bundle)


class _Tokenizer:
    """A LlamaIndex tokenizer as a tokenizer object (``encode``), which bookend counts by
    ``len(encode(text))`` (:class:`bookend_rag.tokens.TokenizerCount`); compared by the
    tokenizer, so a placer is rebuilt only when ``Settings.tokenizer`` changes."""

    def __init__(self, tokenize: Callable[[str], list[Any]]) -> None:
        self.tokenize = tokenize

    def encode(self, text: str) -> list[Any]:
        return self.tokenize(text)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Tokenizer) and other.tokenize is self.tokenize

    def __hash__(self) -> int:
        return id(self.tokenize)


def _listened() -> bool:
    """Whether an instrumentation event of this package reaches a handler that does something
    (LlamaIndex's root has a ``NullEventHandler``): a rerank event, with its id and the nodes
    validated, took a tenth of a call that nothing listened to. Asked on each call, so a handler
    added later gets every event."""
    node: Dispatcher | None = dispatcher
    while node is not None:
        if any(type(handler) is not NullEventHandler for handler in node.event_handlers):
            return True
        node = node.parent if node.propagate else None
    return False


#: The type of every node in the common case.
_NODE_ONLY = {NodeWithScore}
#: A node's score.
_SCORE = operator.attrgetter("score")


def _check_nodes(nodes: list[NodeWithScore]) -> None:
    if not isinstance(nodes, list | tuple):
        raise ValueError(f"nodes must be a list of NodeWithScore objects, got nodes={nodes!r}")
    if set(map(type, nodes)) <= _NODE_ONLY:  # the common case, at C speed
        return
    for i, node in enumerate(nodes):
        if not isinstance(node, NodeWithScore):
            raise ValueError(
                f"nodes must be NodeWithScore objects, got nodes[{i}] of type "
                f"{type(node).__name__}: wrap it as NodeWithScore(node=..., score=...)"
            )


#: The types of the scores LlamaIndex's own validation leaves on a node.
_PLAIN_SCORES = {float, type(None)}


def _scores(nodes: list[NodeWithScore]) -> list[float | None] | None:
    """Each node's score (``None`` where it has none: ``missing_scores`` decides), or ``None``
    when no node has one."""
    scores = list(map(_SCORE, nodes))
    plain = finite_floats(scores, len(scores))  # the common case, at C speed
    if plain is not None:
        return cast("list[float | None]", plain)
    # A value assigned after construction, or NaN or infinite: named by its node.
    if {type(s) for s in scores} - _PLAIN_SCORES or not all(
        s is None or math.isfinite(s) for s in scores
    ):
        scores = [read_score(s, "nodes[{}].score", i) for i, s in enumerate(scores)]
    return given_scores(scores)


def _query(query_bundle: QueryBundle | None) -> str | None:
    """The query text of a call (``None`` without a query)."""
    if query_bundle is None:
        return None
    if not isinstance(query_bundle, QueryBundle) or not isinstance(query_bundle.query_str, str):
        raise ValueError(
            "query_bundle must be a QueryBundle with a string query_str (or pass query_str=), "
            f"got query_bundle={query_bundle!r}"
        )
    return query_bundle.query_str


def _annotate(placement: Placement[NodeWithScore]) -> None:
    for scored, annotation in first_slot_annotations(placement):
        node = scored.node
        node.metadata.update(annotation)
        for excluded in (node.excluded_llm_metadata_keys, node.excluded_embed_metadata_keys):
            excluded.extend(k for k in annotation if k not in excluded)
