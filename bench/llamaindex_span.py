"""Where the LlamaIndex adapter's unexplained cost at K = 20 goes: LlamaIndex's span and bookend's
own code, each alone and together.

LlamaIndex wraps every ``_postprocess_nodes`` in an instrumentation span (``dispatcher.span``:
``inspect.signature(func).bind(...)``, a ``uuid4`` id, a copied context, the span handlers). A
postprocessor that returns its nodes pays the span alone; bookend's adapter pays the span and its
own code. If the two simply added up, the adapter's call would be the span plus its unwrapped
code; this bench times the span's steps one at a time around the unwrapped adapter and around a
function that does nothing, and prints how much more the pair costs than its parts (``extra``).

Per-call CPU time of this thread, as ``bench/adapters.py`` times it (:func:`adapters.per_call`:
the best of five autoranged batches), the nodes of :func:`adapters.corpus` (64 lists in turn)::

    OMP_NUM_THREADS=1 .venv/bin/python bench/llamaindex_span.py
"""

from __future__ import annotations

import inspect
import uuid
from collections.abc import Callable
from contextvars import copy_context
from functools import partial
from typing import Any

from adapters import DRAWS, corpus, per_call, rotating
from llama_index.core.instrumentation import get_dispatcher  # type: ignore[attr-defined]
from llama_index.core.schema import NodeWithScore, TextNode
from llama_index.postprocessor.bookend import BookendNodePostprocessor
from llama_index_instrumentation.span import active_span_id

Body = Callable[..., Any]


def micros(
    call: Callable[[list[NodeWithScore]], object], lists: list[list[NodeWithScore]]
) -> float:
    """Microseconds per call of ``call`` on the lists in turn (:func:`adapters.per_call`)."""
    return per_call(rotating([partial(call, nodes) for nodes in lists])) * 1e6


def main() -> None:
    lists = []
    for draw in range(DRAWS):
        texts, scores = corpus(20, draw)
        lists.append(
            [
                NodeWithScore(node=TextNode(text=t), score=s)
                for t, s in zip(texts, scores, strict=True)
            ]
        )
    adapter = BookendNodePostprocessor()
    unwrapped: Body = type(adapter)._postprocess_nodes.__wrapped__  # type: ignore[attr-defined]

    def nothing(self: object, nodes: list[NodeWithScore], query_bundle: object = None) -> object:
        return nodes

    def signature(body: Body) -> Callable[[list[NodeWithScore]], object]:
        def call(nodes: list[NodeWithScore]) -> object:
            inspect.signature(body).bind(adapter, nodes)
            return body(adapter, nodes)

        return call

    def span_id(body: Body) -> Callable[[list[NodeWithScore]], object]:
        def call(nodes: list[NodeWithScore]) -> object:
            str(uuid.uuid4())
            return body(adapter, nodes)

        return call

    def context(body: Body) -> Callable[[list[NodeWithScore]], object]:
        def call(nodes: list[NodeWithScore]) -> object:
            copy_context()
            token = active_span_id.set("span")
            try:
                return body(adapter, nodes)
            finally:
                active_span_id.reset(token)

        return call

    def whole_span(body: Body) -> Callable[[list[NodeWithScore]], object]:
        # A new function: the span decorator leaves one it has already wrapped as it is.
        def fresh(self: object, nodes: list[NodeWithScore], query_bundle: object = None) -> object:
            return body(self, nodes, query_bundle)

        wrapped = get_dispatcher(BookendNodePostprocessor.__module__).span(fresh)
        return lambda nodes: wrapped(adapter, nodes)

    alone = micros(lambda nodes: unwrapped(adapter, nodes), lists)
    print(f"K = 20, the adapter's _postprocess_nodes unwrapped: {alone:.1f} us per call")
    print(f"{'step':32s} {'around it':>10s} {'around nothing':>15s} {'extra':>8s}")
    steps = [
        ("inspect.signature(...).bind", signature),
        ("uuid4 id", span_id),
        ("copied context, active span", context),
        ("the whole span", whole_span),
    ]
    for name, step in steps:
        around = micros(step(unwrapped), lists)
        empty = micros(step(nothing), lists)
        print(f"{name:32s} {around:8.1f}us {empty:13.1f}us {around - empty - alone:+7.1f}us")


if __name__ == "__main__":
    main()
