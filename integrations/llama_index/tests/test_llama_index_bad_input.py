"""Bad input to BookendNodePostprocessor: one table of cases per entry point (adding a case is one
line), and property tests feeding arbitrary JSON-like values to each entry point.

Every refusal is a ValueError or TypeError of one line naming the parameter and the value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import llama_index.core
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from llama_index.postprocessor.bookend import BookendNodePostprocessor

NAN = float("nan")


@pytest.fixture(autouse=True)
def no_global_tokenizer() -> Iterator[None]:
    """Start with no tokenizer set: the postprocessor loads LlamaIndex's default (offline)."""
    previous = llama_index.core.global_tokenizer
    llama_index.core.global_tokenizer = None
    yield
    llama_index.core.global_tokenizer = previous


def _nodes(*scores: Any) -> list[NodeWithScore]:
    """Nodes with these scores, set after construction (which LlamaIndex does not check)."""
    nodes = [
        NodeWithScore(node=TextNode(text=f"passage {i} " + "word " * i)) for i in range(len(scores))
    ]
    for node, score in zip(nodes, scores, strict=True):
        node.score = score
    return nodes


def _assigned(settings: dict[str, Any]) -> BookendNodePostprocessor:
    post = BookendNodePostprocessor()
    for name, value in settings.items():
        setattr(post, name, value)
    return post


def _from_dict(settings: dict[str, Any]) -> BookendNodePostprocessor:
    return BookendNodePostprocessor.from_dict({**BookendNodePostprocessor().to_dict(), **settings})


# Settings, as given to the constructor, by assignment, to from_dict and to model_copy.
BAD_SETTINGS = [
    pytest.param({"top_k": 0}, "top_k=0", id="top_k-0"),
    pytest.param({"top_k": 2.5}, "top_k=2.5", id="top_k-float"),
    # Issue 38, 3.6: top_n, the name LlamaIndex's rerankers use, was reported as top_k.
    pytest.param({"top_n": -1}, "top_n=-1", id="top_n-negative"),
    pytest.param({"top_n": 0, "budget": 0}, "top_n=0", id="top_n-and-budget"),
    pytest.param({"budget": 0}, "budget=0", id="budget-0"),
    pytest.param({"budget": True}, "budget=True", id="budget-bool"),
    pytest.param({"model": "lama-3.1-8b"}, "lama-3.1-8b", id="model-misspelt"),
    pytest.param({"model": 5}, "model=5", id="model-int"),
    pytest.param({"strategy": "random"}, "strategy='random'", id="strategy"),
    pytest.param({"suffix_tokens": -3}, "suffix_tokens=-3", id="suffix_tokens"),
    pytest.param({"exact_max_k": -1}, "exact_max_k=-1", id="exact_max_k"),
    pytest.param({"competition": -1}, "competition=-1", id="competition"),
    pytest.param({"lengths": "chars"}, "lengths='chars'", id="lengths"),
    pytest.param({"source_key": ["a"]}, "source_key=['a']", id="source_key"),
    pytest.param({"callback_manager": 5}, "callback_manager=5", id="callback_manager"),
    pytest.param({"bugdet": 10}, "bugdet=10", id="unknown-bugdet"),
    pytest.param({"modle": "gpt2"}, "modle='gpt2'", id="unknown-modle"),
]
# Settings checked when a placer is built: at construction, and by the next call after assignment.
BAD_PLACER_SETTINGS = [
    pytest.param({"token_counter": 3}, "token_counter=3", id="token_counter"),
    pytest.param({"tokenizer": "no-such-encoding"}, "tokenizer='no-such-encoding'", id="tokenizer"),
]
BUILDERS = [
    pytest.param(lambda s: BookendNodePostprocessor(**s), id="constructor"),
    pytest.param(_assigned, id="assignment"),
    pytest.param(_from_dict, id="from_dict"),
    pytest.param(lambda s: BookendNodePostprocessor().model_copy(update=s), id="model_copy"),
]


def test_a_bad_config_is_refused(bad_input: Any) -> None:
    # config= at construction and where the serialised form is read back.
    for config, fragment in bad_input.configs:
        bad_input.refused(lambda c=config: BookendNodePostprocessor(config=c), fragment)
        bad_input.refused(lambda c=config: _from_dict({"config": c}), fragment)


@pytest.mark.parametrize("build", BUILDERS)
@pytest.mark.parametrize(("settings", "fragment"), BAD_SETTINGS)
def test_settings_are_refused(
    build: Callable[[dict[str, Any]], Any], settings: dict[str, Any], fragment: str, bad_input: Any
) -> None:
    bad_input.refused(lambda: build(settings), fragment)


@pytest.mark.parametrize(("settings", "fragment"), BAD_PLACER_SETTINGS)
def test_placer_settings_are_refused(
    settings: dict[str, Any], fragment: str, bad_input: Any
) -> None:
    bad_input.refused(lambda: BookendNodePostprocessor(**settings), fragment)
    assigned = _assigned(settings)
    bad_input.refused(lambda: assigned.postprocess_nodes(_nodes(0.1, 0.2)), fragment)


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        pytest.param(lambda: BookendNodePostprocessor.from_dict(None), "data=None", id="dict-none"),
        pytest.param(lambda: BookendNodePostprocessor.from_dict([1]), "data=[1]", id="dict-list"),
        pytest.param(lambda: BookendNodePostprocessor.from_json("{"), "data_str='{'", id="json"),
        pytest.param(lambda: BookendNodePostprocessor.from_json("[1]"), "data=[1]", id="json-list"),
        pytest.param(lambda: BookendNodePostprocessor.from_json(5), "data_str=5", id="json-int"),
        pytest.param(
            lambda: BookendNodePostprocessor().model_copy(update=[("top_k", 2)]),
            "update=[('top_k', 2)]",
            id="copy-update-list",
        ),
    ],
)
def test_serialised_forms_are_refused(
    call: Callable[[], Any], fragment: str, bad_input: Any
) -> None:
    bad_input.refused(call, fragment)


# What postprocess_nodes() receives.
BAD_NODES = [
    pytest.param(None, "nodes=None", id="none"),
    pytest.param("text", "nodes='text'", id="a-string"),
    pytest.param(5, "nodes=5", id="an-int"),
    pytest.param({"nodes": []}, "nodes={'nodes': []}", id="a-dict"),
    pytest.param(
        [TextNode(text="a")], "nodes[0] of type TextNode: wrap it as NodeWithScore", id="text-node"
    ),
    pytest.param([*_nodes(0.5), None], "nodes[1] of type NoneType", id="a-none"),
    pytest.param(_nodes("0.9", 0.5), "nodes[0].score='0.9'", id="score-string"),
    pytest.param(_nodes(True, 0.5), "nodes[0].score=True", id="score-bool"),
    pytest.param(
        _nodes(10**400, 0.5), "nodes[0].score=10000000...(401 digits)", id="score-huge-int"
    ),
    pytest.param(_nodes([0.5], 0.5), "nodes[0].score=[0.5]", id="score-list"),
    pytest.param(_nodes(NAN, 0.5), "nodes[0].score=nan", id="score-nan"),
    pytest.param(_nodes(0.5, float("-inf")), "nodes[1].score=-inf", id="score-inf"),
]


@pytest.mark.parametrize(("nodes", "fragment"), BAD_NODES)
def test_nodes_are_refused(nodes: Any, fragment: str, bad_input: Any) -> None:
    post = BookendNodePostprocessor()
    bad_input.refused(lambda: post.postprocess_nodes(nodes), fragment)
    bad_input.refused(lambda: post.place(nodes), fragment)


@pytest.mark.parametrize(
    ("query", "fragment"),
    [
        pytest.param({"query_str": 5}, "query_str=5", id="query_str-int"),
        pytest.param({"query_bundle": "text"}, "query_bundle='text'", id="bundle-string"),
        pytest.param({"query_bundle": QueryBundle(["q"])}, "query_str=['q']", id="bundle-list"),
    ],
)
def test_the_query_must_be_text(query: dict[str, Any], fragment: str, bad_input: Any) -> None:
    post = BookendNodePostprocessor(count_question=True)
    bad_input.refused(lambda: post.postprocess_nodes(_nodes(0.1, 0.2), **query), fragment)


# Property tests: whatever arrives, each call places every node once or refuses in one line.

NODE_NAMES = ("nodes", "score", "query")


@settings(max_examples=150)
@given(data=st.data())
def test_any_nodes(data: st.DataObject, bad_input: Any) -> None:
    json_like = bad_input.json_like
    scored = st.builds(lambda score: _nodes(score)[0], st.none() | json_like)
    nodes = data.draw(json_like | st.lists(scored | json_like, max_size=6) | st.lists(scored))
    query = data.draw(st.none() | json_like)
    post = BookendNodePostprocessor(count_question=True)
    out = bad_input.attempt(lambda: post.postprocess_nodes(nodes, query_str=query), NODE_NAMES)
    if out is not None:
        assert sorted(map(id, out)) == sorted(map(id, nodes))


SETTING_NAMES = tuple(BookendNodePostprocessor.model_fields)


@settings(max_examples=200)
@given(data=st.data())
def test_any_settings(data: st.DataObject, bad_input: Any) -> None:
    given_settings = data.draw(bad_input.settings(SETTING_NAMES))
    nodes = _nodes(0.3, 0.9, 0.1, None)
    bad_input.settings_are_honoured(
        given_settings,
        [
            lambda: BookendNodePostprocessor(**given_settings),
            lambda: _assigned(given_settings),
            lambda: _from_dict(given_settings),
            lambda: BookendNodePostprocessor().model_copy(update=given_settings),
        ],
        place=lambda post: post.place(nodes),
        run=lambda post: post.postprocess_nodes(nodes),
        names=["nodes", "data"],
    )
