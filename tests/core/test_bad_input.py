"""Bad input to the core's entry points: one table of cases per entry point (the Python API, the
command line), and properties over arbitrary JSON-like values (the shared ``bad_input`` fixture
of :mod:`bookend_rag.testing`): every call places each item once or refuses in one line naming
the parameter, never another exception, never a warning.
"""

from __future__ import annotations

import io
import json
import math
import re
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bookend_rag
from bookend_rag.adapters import PLACEMENT_OPTIONS
from bookend_rag.cli import main
from bookend_rag.inputs import read_score


@contextmanager
def _strict() -> Iterator[None]:
    """Any warning inside is an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


HUGE = 10**400
NAN = math.nan
ITEMS = ["alpha", "beta", "gamma"]
MANY = [f"chunk {i}" for i in range(151)]  # longer than a type scan of every score is cheap

#: The Python API: (case, call, what the one-line message must hold: the parameter and value).
API_CASES: list[tuple[str, Callable[[], Any], str]] = [
    ("items None", lambda: bookend_rag.reorder(None), "items=None"),  # type: ignore[arg-type]
    ("items a string", lambda: bookend_rag.reorder("abc", [1, 2, 3]), "items='abc'"),
    ("items a mapping", lambda: bookend_rag.reorder({"a": 1}), "items={'a': 1}"),  # type: ignore[arg-type]
    ("items a number", lambda: bookend_rag.reorder(5), "items=5"),  # type: ignore[arg-type]
    ("huge length", lambda: bookend_rag.reorder(ITEMS, lengths=[HUGE, 1, 1]), "lengths[0]"),
    ("length too large", lambda: bookend_rag.reorder(ITEMS, lengths=[2**41, 1, 1]), "lengths[0]"),
    ("NaN length", lambda: bookend_rag.reorder(ITEMS[:1], lengths=[NAN]), "lengths[0]=nan"),
    ("bool length", lambda: bookend_rag.reorder(ITEMS, lengths=[1, True, 1]), "lengths[1]=True"),
    ("huge score", lambda: bookend_rag.reorder(ITEMS, [HUGE, 1, 1]), "scores[0]"),
    ("bool score", lambda: bookend_rag.reorder(ITEMS, [True, 1, 1]), "scores[0]=True"),
    (
        "bool among many scores",
        lambda: bookend_rag.reorder(MANY, [0.5] * 150 + [True]),
        "scores[150]",
    ),
    ("bool among many ints", lambda: bookend_rag.reorder(MANY, [2] * 150 + [False]), "scores[150]"),
    (
        "text key missing",
        lambda: bookend_rag.Bookend(text="text").place([{"t": 1}], [1]),
        "text='text'",
    ),
    (
        "source key missing",
        lambda: bookend_rag.Bookend(source="missing").place(ITEMS, [1, 2, 3]),
        "source='missing'",
    ),
    (
        "source unhashable",
        lambda: bookend_rag.Bookend(source=lambda item: [item]).place(ITEMS, [1, 2, 3]),
        "source must give a hashable key",
    ),
    (
        "competition huge",
        lambda: bookend_rag.reorder(ITEMS, competition=1e300),
        "competition=1e+300",
    ),
    (
        "competition a bool",
        lambda: bookend_rag.reorder(ITEMS, competition=True),
        "competition=True",
    ),
    (
        "lookalike_threshold zero",
        lambda: bookend_rag.reorder(ITEMS, lookalike_threshold=0),
        "lookalike_threshold=0",
    ),
    (
        "lookalike_threshold None",
        lambda: bookend_rag.reorder(ITEMS, lookalike_threshold=None),
        "lookalike_threshold=None",
    ),
    (
        "lookalike_threshold a bool",
        lambda: bookend_rag.reorder(ITEMS, lookalike_threshold=True),
        "lookalike_threshold=True",
    ),
    ("budget huge", lambda: bookend_rag.reorder(ITEMS, budget=2**41), "budget=2199023255552"),
    ("prefix huge", lambda: bookend_rag.reorder(ITEMS, prefix_tokens=10**20), "prefix_tokens=10"),
    ("suffix huge", lambda: bookend_rag.reorder(ITEMS, suffix_tokens=10**20), "suffix_tokens=10"),
    ("misspelt setting", lambda: bookend_rag.PlacementConfig(topk=3), "topk=3"),
    ("bad setting value", lambda: bookend_rag.PlacementConfig(top_k=0), "top_k=0"),
    (
        "validated setting",
        lambda: bookend_rag.PlacementConfig.model_validate({"budget": 0}),
        "budget=0",
    ),
    ("depth below one", lambda: bookend_rag.ModelSpec(depth=0.5), "depth=0.5"),
    ("depth a bool", lambda: bookend_rag.ModelSpec(depth=True), "depth=True"),
    ("depth unbounded", lambda: bookend_rag.ModelSpec(depth=1e9), "less than or equal to 100000"),
    (
        "depth unbounded inline",
        lambda: bookend_rag.reorder(ITEMS, model={"depth": 1e9}),
        "depth=1000000000.0",
    ),
    (
        "context unbounded",
        lambda: bookend_rag.ModelSpec(depth=4, context_length=10**20),
        "context_length=100000000000000000000",
    ),
    ("layout prefix huge", lambda: bookend_rag.Layout(prefix_tokens=10**20), "prefix_tokens=10"),
    (
        "config file missing",
        lambda: bookend_rag.reorder(ITEMS, config="no-such-tuned.json"),
        "config='no-such-tuned.json': file not found",
    ),
    (
        "config a directory",
        lambda: bookend_rag.reorder(ITEMS, config="."),
        "config='.': is a directory",
    ),
    ("config file not JSON", lambda: bookend_rag.reorder(ITEMS, config=__file__), "not JSON"),
    ("config text not JSON", lambda: bookend_rag.reorder(ITEMS, config="{top_k: 3}"), "not JSON"),
    (
        "config invalid",
        lambda: bookend_rag.Bookend.from_config({"top_k": 0}),
        "config={'top_k': 0}: not a placement config: top_k=0",
    ),
    (
        "config unknown setting",
        lambda: bookend_rag.reorder(ITEMS, config='{"topk": 3}'),
        "unknown setting topk=3",
    ),
    (
        "tuned config not an object",
        lambda: bookend_rag.reorder(ITEMS, config={"config": [], "provenance": {}}),
        "not a placement config",
    ),
    (
        "tuned provenance not an object",
        lambda: bookend_rag.load_config({"config": {}, "provenance": 3}),
        "provenance must be an object",
    ),
    ("config a number", lambda: bookend_rag.reorder(ITEMS, config=5), "config=5"),  # type: ignore[arg-type]
    (
        "config with a bad override",
        lambda: bookend_rag.reorder(ITEMS, config={"strategy": "relevance"}, top_k=0),
        "top_k=0",
    ),
]


@pytest.mark.parametrize(("case", "call", "fragment"), API_CASES, ids=[c[0] for c in API_CASES])
def test_python_api_refuses_in_one_line(
    case: str, call: Callable[[], Any], fragment: str, bad_input: Any
) -> None:
    with _strict():
        bad_input.refused(call, fragment)


@pytest.mark.parametrize(
    ("value", "score"),
    [(None, None), (0.5, 0.5), (3, 3.0), (Fraction(1, 4), 0.25), (np.float32(0.5), 0.5)],
)
def test_the_adapters_score_reader_takes_any_finite_real(value: object, score: object) -> None:
    class Unnamed:
        def __format__(self, spec: str) -> str:
            raise AssertionError("the name is built only for a value that is not a score")

    read = read_score(value, "documents[{}].score", Unnamed())
    assert read == score
    assert read is None or type(read) is float


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (True, "True"),
        ("0.9", "'0.9'"),
        (NAN, "nan"),
        (-math.inf, "-inf"),
        (HUGE, "10000000...(401 digits)"),
        ([0.5], "[0.5]"),
    ],
)
def test_the_adapters_score_reader_names_a_bad_score_where_it_was_found(
    value: object, shown: str
) -> None:
    message = f"documents[2].metadata['score']={shown} is not a score: it must be a number"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        read_score(value, "documents[{}].metadata[{!r}]", 2, "score", rule="it must be a number")


def test_tiktoken_encoding_offline_says_how_to_provide_one(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, bad_input: Any
) -> None:
    # An empty cache and a proxy that refuses every connection: the download fails as offline.
    # tiktoken also keeps loaded encodings in-process (llama-index ships cl100k_base and points
    # TIKTOKEN_CACHE_DIR at it on import), so an earlier test must not answer this one.
    import tiktoken.registry

    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    for proxy in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"):
        monkeypatch.setenv(proxy, "http://127.0.0.1:9")
    bad_input.refused(lambda: bookend_rag.Bookend(tokenizer="cl100k_base"), "TIKTOKEN_CACHE_DIR")


def _cli(argv: list[str], stdin: str, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    return main(argv)


TWO = '["alpha", "beta"]'
DIGITS = "1" + "0" * 400

#: The command line: (case, arguments, stdin, what the one error line must hold).
CLI_CASES: list[tuple[str, list[str], str, str]] = [
    ("depth unbounded", ["reorder", "--model", '{"depth": 1e9}'], TWO, "depth=1000000000.0"),
    ("depth below one", ["reorder", "--model", '{"depth": 0.5}'], TWO, "depth=0.5"),
    (
        "400-digit length",
        ["reorder"],
        f'[{{"text": "a", "length": {DIGITS}}}, {{"text": "b", "length": 2}}]',
        "lengths[0]",
    ),
    (
        "400-digit score",
        ["reorder"],
        f'{{"chunks": ["a", "b"], "scores": [{DIGITS}, 1]}}',
        "scores[0]",
    ),
    ("huge budget", ["reorder", "--budget", DIGITS], TWO, "budget=1000"),
    ("huge competition", ["reorder", "--competition", "1e300"], TWO, "competition=1e+300"),
    (
        "look-alike threshold above 1",
        ["reorder", "--lookalike-threshold", "2"],
        TWO,
        "lookalike_threshold=2.0",
    ),
    ("huge prefix", ["profile", "--prefix-tokens", "100000000000000000000"], "", "prefix_tokens="),
    ("huge suffix", ["reorder", "--suffix-tokens", "100000000000000000000"], TWO, "suffix_tokens="),
    ("input not a list", ["reorder"], "null", "input must be a list"),
    (
        "config file missing",
        ["reorder", "--config", "no-such-tuned.json"],
        TWO,
        "--config='no-such-tuned.json': file not found",
    ),
    ("config file not JSON", ["reorder", "--config", __file__], TWO, "not JSON"),
    (
        "config invalid",
        ["reorder", "--config", '{"top_k": 0}'],
        TWO,
        "not a placement config: top_k=0",
    ),
    (
        "config with a bad option",
        ["reorder", "--config", '{"strategy": "relevance"}', "--top-k", "0"],
        TWO,
        "top_k=0",
    ),
]


@pytest.mark.parametrize(
    ("case", "argv", "stdin", "fragment"), CLI_CASES, ids=[c[0] for c in CLI_CASES]
)
def test_command_line_refuses_in_one_line(
    case: str,
    argv: list[str],
    stdin: str,
    fragment: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with _strict():
        assert _cli(argv, stdin, monkeypatch) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith(f"bookend {argv[0]}: error: "), err
    assert fragment in err, err


# The properties. Hypothesis draws from the shared strategies inside each example (the fixture is
# not available when the test is decorated).
PROPERTY = settings(max_examples=150)
SETTING_NAMES = [name for name in PLACEMENT_OPTIONS if name != "tokenizer"]


def _items(data: st.DataObject, bad_input: Any) -> Any:
    """A list of strings (with some JSON-like entries), or any JSON-like value."""
    strings = st.lists(st.text(max_size=12) | bad_input.json_like, max_size=6)
    return data.draw(strings | bad_input.json_like, label="items")


def _numbers(data: st.DataObject, bad_input: Any, label: str) -> Any:
    """None, a list of numbers or JSON-like entries, or any JSON-like value."""
    entries = st.floats() | st.integers(1, 10**6) | bad_input.json_like
    return data.draw(st.none() | st.lists(entries, max_size=6) | bad_input.json_like, label=label)


def _placed(placement: bookend_rag.Placement[Any], items: Any, bad_input: Any) -> None:
    bad_input.each_once(placement, len(items))
    assert placement.items == [items[i] for i in placement.order]


@PROPERTY
@given(data=st.data())
def test_reorder_places_each_item_once_or_refuses(data: st.DataObject, bad_input: Any) -> None:
    items = _items(data, bad_input)
    scores = _numbers(data, bad_input, "scores")
    lengths = _numbers(data, bad_input, "lengths")
    config = data.draw(bad_input.settings(SETTING_NAMES), label="settings")
    placement = bad_input.attempt(
        lambda: bookend_rag.reorder(items, scores, lengths=lengths, **config),
        ["items", "scores", "lengths", *config],
    )
    if placement is not None:
        _placed(placement, items, bad_input)


@PROPERTY
@given(data=st.data())
def test_bookend_place_places_each_item_once_or_refuses(
    data: st.DataObject, bad_input: Any
) -> None:
    config = data.draw(bad_input.settings(SETTING_NAMES), label="settings")
    getters = st.none() | st.sampled_from(["text", "source", "missing"]) | bad_input.json_like
    text, source = data.draw(getters, label="text"), data.draw(getters, label="source")
    placer = bad_input.attempt(
        lambda: bookend_rag.Bookend(text=text, source=source, **config), ["text", "source", *config]
    )
    if placer is None:
        return
    items = _items(data, bad_input)
    scores = _numbers(data, bad_input, "scores")
    placement = bad_input.attempt(
        lambda: placer.place(items, scores), ["items", "scores", "text", "source"]
    )
    if placement is not None:
        _placed(placement, items, bad_input)


@PROPERTY
@given(data=st.data())
def test_placement_config_validates_or_refuses(data: st.DataObject, bad_input: Any) -> None:
    config = data.draw(bad_input.settings(SETTING_NAMES), label="settings")
    made = bad_input.attempt(lambda: bookend_rag.PlacementConfig(**config), list(config) or ["-"])
    if made is not None:
        assert bookend_rag.PlacementConfig.model_validate(made.model_dump()) == made


def _chunks(bad_input: Any) -> st.SearchStrategy[Any]:
    """Chunk objects with JSON-like fields, or any JSON-like value."""
    field = bad_input.json_like
    chunk = st.fixed_dictionaries(
        {"text": st.text(max_size=8) | field},
        optional={"score": field, "length": field, "source": field},
    )
    return st.lists(chunk | st.text(max_size=8), max_size=5) | field


@PROPERTY
@given(data=st.data())
def test_cli_reorder_places_each_chunk_once_or_refuses(data: st.DataObject, bad_input: Any) -> None:
    value = data.draw(_chunks(bad_input), label="stdin")
    out, err = io.StringIO(), io.StringIO()
    stdin, sys.stdin = sys.stdin, io.StringIO(json.dumps(value))
    try:
        with _strict(), redirect_stdout(out), redirect_stderr(err):
            code = main(["reorder", "--model", "gpt2"])
    finally:
        sys.stdin = stdin
    if code == 0:
        result = json.loads(out.getvalue())
        assert sorted(result["order"] + result["dropped_indices"]) == list(range(len(value)))
    else:
        assert code == 2
        message = err.getvalue()
        assert message.count("\n") == 1, message
        assert message.startswith("bookend reorder: error: "), message


#: The inputs that needed the most memory or time: each must stay under 1 GiB of address space.
WORST = """
import resource, bookend_rag
resource.setrlimit(resource.RLIMIT_AS, (2**30, 2**30))
from bookend_rag.theory import MAX_DEPTH
from bookend_rag.inputs import MAX_TOKENS
items = [str(i) for i in range(40)]
for rule in bookend_rag.WEIGHT_RULES:
    bookend_rag.reorder(items, list(range(40)), model={"depth": MAX_DEPTH}, weight_rule=rule,
                    lengths=[MAX_TOKENS] * 40, prefix_tokens=MAX_TOKENS, suffix_tokens=MAX_TOKENS)
for refused in ({"depth": 1e9}, {"depth": 1e300}, {"depth": MAX_DEPTH + 1}):
    try:
        bookend_rag.reorder(items, model=refused)
    except ValueError:
        pass
    else:
        raise AssertionError(refused)
print("ok")
"""


def test_worst_inputs_stay_under_one_gibibyte() -> None:
    env = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "PYTHONPATH": ":".join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(WORST)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == "ok\n"
