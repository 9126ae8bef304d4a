"""Bad input to BookendRanker: one table of cases per entry point (adding a case is one line), and
property tests feeding arbitrary JSON-like values to each entry point.

Every refusal is a ValueError or TypeError of one line naming the parameter and the value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from haystack import Document
from haystack_integrations.components.rankers.bookend import BookendRanker
from hypothesis import given, settings
from hypothesis import strategies as st

NAN = float("nan")
TEXTS = ["alpha beta", "gamma delta epsilon", "zeta", "eta theta iota kappa"]


def _docs(*scores: Any) -> list[Document]:
    return [Document(id=str(i), content=TEXTS[i], score=s) for i, s in enumerate(scores)]


def _warm(ranker: BookendRanker) -> BookendRanker:
    ranker.warm_up()
    return ranker


def _assigned(settings: dict[str, Any]) -> BookendRanker:
    ranker = BookendRanker()
    for name, value in settings.items():
        setattr(ranker, name, value)
    ranker.run(_docs(0.1, 0.2))  # an assigned setting is checked by the next call
    return ranker


def _from_dict(settings: dict[str, Any]) -> BookendRanker:
    data = BookendRanker().to_dict()
    return BookendRanker.from_dict(
        {**data, "init_parameters": {**data["init_parameters"], **settings}}
    )


# Settings, as given to the constructor and to from_dict (then warmed up: a tokenizer is loaded
# there), and assigned before a run.
BAD_SETTINGS = [
    pytest.param({"top_k": 0}, "top_k=0", id="top_k-0"),
    pytest.param({"top_k": -1}, "top_k=-1", id="top_k-negative"),
    pytest.param({"budget": -5}, "budget=-5", id="budget"),
    pytest.param({"model": "lama-3.1-8b"}, "lama-3.1-8b", id="model-misspelt"),
    pytest.param({"strategy": "random"}, "strategy='random'", id="strategy"),
    pytest.param({"prefix_tokens": -1}, "prefix_tokens=-1", id="prefix_tokens"),
    pytest.param({"exact_max_k": 50}, "exact_max_k=50", id="exact_max_k"),
    pytest.param({"competition": float("inf")}, "competition=inf", id="competition"),
    pytest.param({"tokenizer": "no-such-encoding"}, "tokenizer='no-such-encoding'", id="tokenizer"),
    pytest.param({"word_count_threshold": 0}, "word_count_threshold=0", id="words-0"),
    pytest.param({"word_count_threshold": 2.5}, "word_count_threshold=2.5", id="words-float"),
    pytest.param({"source_key": 5}, "source_key=5", id="source_key"),
    pytest.param({"annotate": "yes"}, "annotate='yes'", id="annotate"),
]
BUILDERS = [
    pytest.param(lambda s: _warm(BookendRanker(**s)), id="constructor"),
    pytest.param(lambda s: _warm(_from_dict(s)), id="from_dict"),
    pytest.param(_assigned, id="assignment"),
]


def test_a_bad_config_is_refused(bad_input: Any) -> None:
    # config= at construction and where the serialised form is read back.
    for config, fragment in bad_input.configs:
        bad_input.refused(lambda c=config: BookendRanker(config=c), fragment)
        bad_input.refused(lambda c=config: _from_dict({"config": c}), fragment)


@pytest.mark.parametrize("build", BUILDERS)
@pytest.mark.parametrize(("settings", "fragment"), BAD_SETTINGS)
def test_settings_are_refused(
    build: Callable[[dict[str, Any]], Any], settings: dict[str, Any], fragment: str, bad_input: Any
) -> None:
    bad_input.refused(lambda: build(settings), fragment)


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        pytest.param(lambda: BookendRanker(bugdet=10), "bugdet", id="unknown-setting"),
        pytest.param(lambda: _from_dict({"top_kk": 2}), "top_kk", id="unknown-in-from_dict"),
        pytest.param(lambda: BookendRanker.from_dict(None), "data=None", id="from_dict-none"),
    ],
)
def test_unknown_settings_are_refused(
    call: Callable[[], Any], fragment: str, bad_input: Any
) -> None:
    bad_input.refused(call, fragment)


# What run() receives (run_async takes the same arguments).
BAD_RUNS = [
    pytest.param({"documents": None}, "documents=None", id="documents-none"),
    pytest.param({"documents": "text"}, "documents='text'", id="documents-string"),
    pytest.param({"documents": [None]}, "documents[0] of type NoneType", id="a-none"),
    pytest.param({"documents": [{"content": "a"}]}, "documents[0] of type dict", id="a-dict"),
    pytest.param({"documents": [Document(content=None)]}, "not textual", id="no-text"),
    pytest.param({"documents": _docs("0.9", 0.5)}, "documents[0].score='0.9'", id="score-string"),
    pytest.param({"documents": _docs(True, 0.5)}, "documents[0].score=True", id="score-bool"),
    pytest.param(
        {"documents": _docs(10**400, 1)},
        "documents[0].score=10000000...(401 digits)",
        id="score-huge-int",
    ),
    pytest.param({"documents": _docs(0.5, NAN)}, "documents[1].score=nan", id="score-nan"),
    pytest.param(
        {"documents": [Document(id=["a"], content="a")]}, "documents[0].id=['a']", id="id"
    ),
    pytest.param({"top_k": 0}, "top_k=0", id="top_k-0"),
    pytest.param({"top_k": -1}, "top_k=-1", id="top_k-negative"),
    pytest.param({"top_k": "three"}, "top_k='three'", id="top_k-string"),
    pytest.param({"budget": 0}, "budget=0", id="budget-0"),
    pytest.param(
        {"documents": _docs(0.5, 0.2), "budget": 2}, "budget=2", id="budget-below-every-document"
    ),
    pytest.param({"word_count_threshold": -2}, "word_count_threshold=-2", id="words"),
    pytest.param({"query": 5}, "query=5", id="query-int"),
    pytest.param({"documents": [], "top_k": 0}, "top_k=0", id="no-documents-bad-top_k"),
]


@pytest.mark.parametrize(("arguments", "fragment"), BAD_RUNS)
def test_run_refuses(arguments: dict[str, Any], fragment: str, bad_input: Any) -> None:
    arguments = {"documents": _docs(0.1, 0.7, 0.3), **arguments}
    bad_input.refused(lambda: BookendRanker(count_question=True).run(**arguments), fragment)


# Property tests: whatever arrives, each call places every document once or refuses in one line.

RUN_NAMES = ("documents", "score", "query", "top_k", "budget", "word_count_threshold")


def _document(content: str, score: Any, doc_id: Any) -> Document:
    return Document(content=content, score=score, id=doc_id)


@settings(max_examples=150)
@given(data=st.data())
def test_any_run(data: st.DataObject, bad_input: Any) -> None:
    json_like = bad_input.json_like
    # Distinct ids unless drawn: deduplication by id is tested with the parity cases.
    documents = st.builds(_document, st.text(max_size=20), json_like, st.uuids().map(str))
    arguments = {
        "documents": data.draw(json_like | st.lists(documents | json_like) | st.lists(documents)),
        **data.draw(
            st.fixed_dictionaries(
                {},
                optional={
                    name: json_like for name in RUN_NAMES if name not in ("documents", "score")
                },
            )
        ),
    }
    ranker = BookendRanker(count_question=True)
    out = bad_input.attempt(lambda: ranker.run(**arguments), RUN_NAMES)
    if out is not None:
        given_ids, out_ids = set(map(id, arguments["documents"])), list(map(id, out["documents"]))
        assert len(set(out_ids)) == len(out_ids)
        if set(arguments) & {"top_k", "budget", "word_count_threshold"}:
            assert set(out_ids) <= given_ids
        else:
            assert set(out_ids) == given_ids


SETTING_NAMES = tuple(BookendRanker().to_dict()["init_parameters"])


@settings(max_examples=200)
@given(data=st.data())
def test_any_settings(data: st.DataObject, bad_input: Any) -> None:
    own = {"word_count_threshold": st.none() | st.integers(1, 30)}
    given_settings = data.draw(bad_input.settings(SETTING_NAMES, own))
    docs = _docs(0.3, 0.9, 0.1, None)
    bad_input.settings_are_honoured(
        given_settings,
        [lambda: _warm(BookendRanker(**given_settings)), lambda: _warm(_from_dict(given_settings))],
        place=lambda ranker: ranker.place(docs),
        run=lambda ranker: ranker.run(docs)["documents"],
        names=["documents", "data"],
        key=lambda doc: doc.id,  # annotate=True returns annotated copies
    )
