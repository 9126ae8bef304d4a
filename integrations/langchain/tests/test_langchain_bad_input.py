"""Bad input to BookendReorder: one table of cases per entry point (adding a case is one line),
and property tests feeding arbitrary JSON-like values to each entry point.

Every refusal is a ValueError or TypeError of one line naming the parameter and the value.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_bookend import BookendReorder
from langchain_core.documents import Document
from langchain_core.load import dumpd, loads

NAN = float("nan")


def _docs(*metadata: dict[str, Any]) -> list[Document]:
    return [
        Document(page_content=f"passage {i} " + "word " * i, metadata=m)
        for i, m in enumerate(metadata)
    ]


def _loads(kwargs: dict[str, Any]) -> BookendReorder:
    """``loads`` of a serialised reorderer whose settings ``kwargs`` replace."""
    data = dumpd(BookendReorder())
    data["kwargs"] = kwargs
    with warnings.catch_warnings():
        # LangChain's notice that loads is in beta: not a warning about the input.
        warnings.filterwarnings("ignore", message="The function `loads` is in beta")
        loaded = loads(
            json.dumps(data),
            valid_namespaces=["langchain_bookend"],
            allowed_objects=[BookendReorder],
        )
    assert isinstance(loaded, BookendReorder)
    return loaded


# Settings, as given to the constructor, to model_copy(update=...) and to loads.
BAD_SETTINGS = [
    pytest.param({"budget": 0}, "budget=0", id="budget-0"),
    pytest.param({"top_k": 0}, "top_k=0", id="top_k-0"),
    pytest.param({"top_k": True}, "top_k=True", id="top_k-bool"),
    # Issue 38, 3.6: top_n, the name LangChain's rerankers use, was reported as top_k.
    pytest.param({"top_n": 0}, "top_n=0", id="top_n-0"),
    pytest.param({"top_n": -1, "budget": 0}, "top_n=-1", id="top_n-and-budget"),
    pytest.param({"model": "lama-3.1-8b"}, "lama-3.1-8b", id="model-misspelt"),
    pytest.param({"strategy": "random"}, "strategy='random'", id="strategy"),
    pytest.param({"prefix_tokens": -1}, "prefix_tokens=-1", id="prefix_tokens"),
    pytest.param({"exact_max_k": 99}, "exact_max_k=99", id="exact_max_k"),
    pytest.param({"competition": NAN}, "competition=nan", id="competition-nan"),
    pytest.param({"score_key": ""}, "score_key=''", id="score_key-empty"),
    pytest.param({"score_key": 5}, "score_key=5", id="score_key-int"),
    pytest.param({"score_key": None}, "score_key=None", id="score_key-none"),
    pytest.param({"score_key": ["score", 3]}, "score_key=['score', 3]", id="score_key-mixed"),
    pytest.param({"source_key": 5}, "source_key=5", id="source_key"),
    pytest.param({"annotate": "maybe"}, "annotate='maybe'", id="annotate"),
    pytest.param({"token_counter": 3}, "token_counter=3", id="token_counter"),
    pytest.param({"modle": "gpt2"}, "modle='gpt2'", id="unknown-modle"),
    pytest.param({"bugdet": 10}, "bugdet=10", id="unknown-bugdet"),
    pytest.param({"top_kk": 2}, "top_kk=2", id="unknown-top_kk"),
]


def test_a_bad_config_is_refused(bad_input: Any) -> None:
    # config= at construction and where the serialised form is read back.
    for config, fragment in bad_input.configs:
        bad_input.refused(lambda c=config: BookendReorder(config=c), fragment)
        bad_input.refused(lambda c=config: _loads({"config": c}), fragment)


@pytest.mark.parametrize(("settings", "fragment"), BAD_SETTINGS)
def test_constructor_refuses(settings: dict[str, Any], fragment: str, bad_input: Any) -> None:
    bad_input.refused(lambda: BookendReorder(**settings), fragment)


@pytest.mark.parametrize(("settings", "fragment"), BAD_SETTINGS)
def test_model_copy_refuses(settings: dict[str, Any], fragment: str, bad_input: Any) -> None:
    # pydantic's model_copy skips validation: a typo was accepted and ignored.
    bad_input.refused(lambda: BookendReorder().model_copy(update=settings), fragment)


@pytest.mark.parametrize(
    ("settings", "fragment"),
    # token_counter is not serialised: loads never sees one.
    [case for case in BAD_SETTINGS if "token_counter" not in case.values[0]],  # type: ignore[operator]
)
def test_loads_refuses(settings: dict[str, Any], fragment: str, bad_input: Any) -> None:
    bad_input.refused(lambda: _loads(settings), fragment)


@pytest.mark.parametrize(
    ("update", "fragment"),
    [
        pytest.param([("top_k", 2)], "update=[('top_k', 2)]", id="not-a-mapping"),
        pytest.param("top_k", "update='top_k'", id="a-string"),
    ],
)
def test_model_copy_refuses_an_update_that_is_not_a_mapping(
    update: Any, fragment: str, bad_input: Any
) -> None:
    bad_input.refused(lambda: BookendReorder().model_copy(update=update), fragment)


def test_assignment_refuses_in_one_line(bad_input: Any) -> None:
    bad_input.refused(lambda: setattr(BookendReorder(), "top_k", 3), "top_k=3")
    bad_input.refused(lambda: setattr(BookendReorder(), "top_n", 3), "top_n=3 cannot be set")


# What invoke() receives.
BAD_INPUTS = [
    pytest.param(None, "documents=None", id="none"),
    pytest.param("some text", "documents='some text'", id="a-string"),
    pytest.param(5, "documents=5", id="an-int"),
    pytest.param(_docs({})[0], "documents=Document(", id="one-document"),
    pytest.param({"docs": []}, "needs 'documents'", id="mapping-without-documents"),
    pytest.param({1: 2, "a": 3}, "needs 'documents'", id="mapping-mixed-keys"),
    pytest.param({"documents": None}, "documents=None", id="mapping-none"),
    pytest.param({"documents": [], "question": 5}, "question=5", id="question-int"),
    pytest.param({"documents": [], "query": ["q"]}, "query=['q']", id="query-list"),
    # (Document, score) pairs are placed by their scores; a bad pair is named.
    pytest.param([(_docs({})[0], "high")], "documents[0][1]='high' is not a score", id="pair-str"),
    pytest.param([(_docs({})[0], NAN)], "documents[0][1]=nan is not a score", id="pair-nan"),
    pytest.param([(_docs({})[0],)], "is not a (Document, score) pair", id="pair-short"),
    pytest.param([*_docs({}), (_docs({})[0], 0.5)], "all of one kind", id="pair-mixed"),
    pytest.param([*_docs({}), None], "documents[1] of type NoneType", id="a-none"),
]


@pytest.mark.parametrize(("documents", "fragment"), BAD_INPUTS)
def test_invoke_refuses(documents: Any, fragment: str, bad_input: Any) -> None:
    bad_input.refused(lambda: BookendReorder().invoke(documents), fragment)


# Document metadata: a score that is not a real number is refused, never read as "no score".
BAD_SCORES = [
    pytest.param({"score": "0.9"}, "documents[0].metadata['score']='0.9'", id="numeric-string"),
    pytest.param({"score": "high"}, "documents[0].metadata['score']='high'", id="string"),
    pytest.param({"score": True}, "documents[0].metadata['score']=True", id="bool"),
    pytest.param({"score": [0.5]}, "documents[0].metadata['score']=[0.5]", id="list"),
    pytest.param(
        {"score": 10**400}, "documents[0].metadata['score']=10000000...(401 digits)", id="huge-int"
    ),
    # Named by document and key, as the other bad values are (not as the core's scores[0]).
    pytest.param({"score": NAN}, "documents[0].metadata['score']=nan", id="nan"),
    pytest.param({"score": float("inf")}, "documents[0].metadata['score']=inf", id="inf"),
    # The first key present decides; a bad one is not skipped for the next.
    pytest.param(
        {"relevance_score": "high", "score": 0.3},
        "documents[0].metadata['relevance_score']='high'",
        id="first-key-bad",
    ),
]


@pytest.mark.parametrize(("metadata", "fragment"), BAD_SCORES)
def test_scores_refuse(metadata: dict[str, Any], fragment: str, bad_input: Any) -> None:
    docs = _docs(metadata, {"score": 0.5})
    bad_input.refused(lambda: BookendReorder().invoke(docs), fragment)


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        pytest.param(lambda r, d: r.compress_documents(d, 5), "query=5", id="compress-int"),
        pytest.param(lambda r, d: r.compress_documents(d, None), None, id="compress-none-ok"),
        pytest.param(lambda r, d: r.place(d, ["q"]), "question=['q']", id="place-list"),
        pytest.param(lambda r, d: r.transform_documents(None), "documents=None", id="transform"),
    ],
)
def test_the_question_must_be_text(
    call: Callable[[BookendReorder, list[Document]], Any], fragment: str | None, bad_input: Any
) -> None:
    reorder, docs = BookendReorder(count_question=True), _docs({}, {})
    if fragment is None:
        assert len(call(reorder, docs)) == len(docs)
    else:
        bad_input.refused(lambda: call(reorder, docs), fragment)


def test_none_counts_as_an_absent_score() -> None:
    docs = _docs({"relevance_score": None, "score": 0.2}, {"score": 0.9})
    assert BookendReorder().scores(docs) == [0.2, 0.9]


# Property tests: whatever arrives, each call places every document once or refuses in one line.

DOCUMENT_NAMES = ("documents", "score", "question", "query", "input")


def _arbitrary_documents(json_like: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Documents whose metadata scores are arbitrary (some absent), arbitrary junk among them,
    or an arbitrary value in place of the list."""
    scored = st.builds(
        lambda text, score: Document(page_content=text, metadata=score),
        st.text(max_size=20),
        st.just({}) | st.builds(lambda v: {"score": v}, json_like),
    )
    return json_like | st.lists(scored | json_like, max_size=6) | st.lists(scored, max_size=6)


@settings(max_examples=150)
@given(data=st.data())
def test_any_documents(data: st.DataObject, bad_input: Any) -> None:
    documents = data.draw(_arbitrary_documents(bad_input.json_like))
    out = bad_input.attempt(lambda: BookendReorder().invoke(documents), DOCUMENT_NAMES)
    if out is not None:
        assert sorted(map(id, out)) == sorted(map(id, documents))


@settings(max_examples=60)
@given(data=st.data())
def test_any_question(data: st.DataObject, bad_input: Any) -> None:
    question = data.draw(bad_input.json_like)
    docs = _docs({"score": 0.1}, {"score": 0.7})
    reorder = BookendReorder(count_question=True)
    for call in (
        lambda: reorder.invoke({"documents": docs, "question": question}),
        lambda: reorder.compress_documents(docs, question),
    ):
        out = bad_input.attempt(call, DOCUMENT_NAMES)
        if out is not None:
            assert sorted(map(id, out)) == sorted(map(id, docs))


SETTING_NAMES = tuple(BookendReorder.model_fields)


@settings(max_examples=200)
@given(data=st.data())
def test_any_settings(data: st.DataObject, bad_input: Any) -> None:
    given_settings = data.draw(bad_input.settings(SETTING_NAMES))
    docs = _docs({"score": 0.3}, {"score": 0.9}, {"score": 0.1}, {})
    builds: list[Callable[[], BookendReorder]] = [
        lambda: BookendReorder(**given_settings),
        lambda: BookendReorder().model_copy(update=given_settings),
    ]
    if "token_counter" not in given_settings:  # not serialised: loads never sees one
        builds.append(lambda: _loads(given_settings))
    bad_input.settings_are_honoured(
        given_settings,
        builds,
        place=lambda reorder: reorder.place(docs),
        run=lambda reorder: reorder.invoke(docs),
        names=["documents"],
    )


SCORE_VALUES = st.one_of(
    st.none(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-3, 3),
    st.sampled_from(["0.9", True, 10**400]),
)


@settings(deadline=None, max_examples=300)
@given(
    st.lists(
        st.fixed_dictionaries(
            {}, optional={"relevance_score": SCORE_VALUES, "score": SCORE_VALUES}
        ),
        max_size=12,
    ),
    st.sampled_from([("relevance_score", "score"), ("score",), ("score", "relevance_score")]),
)
def test_scores_are_read_by_the_documented_rule(
    metadata: list[dict[str, Any]], keys: tuple[str, ...]
) -> None:
    """Each document's score is the first key present (None counts as absent), a real number
    finite as a float, or the one-line error naming the document; the quick reading of plain
    float scores agrees with the rule on every mix of keys and values."""
    docs = [Document("text", metadata=m) for m in metadata]
    expected: list[float | None] | str = []
    for i, m in enumerate(metadata):
        key = next((k for k in keys if m.get(k) is not None), None)
        score = None if key is None else _as_score(m[key])
        if isinstance(score, str):  # "bad"
            expected = f"documents[{i}].metadata[{key!r}]"
            break
        assert isinstance(expected, list)
        expected.append(score)
    reorder = BookendReorder(score_key=keys)
    if isinstance(expected, str):
        with pytest.raises(ValueError, match=re.escape(expected)):
            reorder.scores(docs)
    else:
        assert reorder.scores(docs) == expected


def _as_score(value: object) -> float | str:
    """The score a value is, or "bad": a real number (no bool or string) finite as a float."""
    if isinstance(value, bool | str) or not isinstance(value, int | float):
        return "bad"
    try:
        number = float(value)
    except OverflowError:
        return "bad"
    return number if math.isfinite(number) else "bad"
