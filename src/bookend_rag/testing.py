"""What the tests of the core, the lab and the three adapters share: a pytest plugin.

Test code only: it imports pytest and hypothesis, which no runtime path of bookend needs (the
core never imports it; an import contract holds that). Every test command loads it with
``-p bookend_rag.testing`` (the ``addopts`` of the root ``pyproject.toml`` and of each adapter's),
so an adapter's tests run from its own directory with the same settings and fixtures. It holds:

- the hypothesis profiles. ``bookend`` (loaded by default) is derandomised, with no examples
  database: every run of a test command draws the same examples, so its verdict changes only
  when a change (of the code, the tests, or the pinned hypothesis) does. ``explore`` (``make
  explore``: ``--hypothesis-profile=explore``) draws fresh examples on every run and keeps
  failing ones in ``.hypothesis/``; each counterexample it finds is pinned with ``@example`` on
  its test before it is fixed, so that the test command holds it from then on;
- ``OMP_WAIT_POLICY=PASSIVE`` (unless set): torch's idle threads sleep rather than spin, so the
  tests do not starve what shares the cores with them;
- the ``slow`` marker: a test that needs a compiled llama.cpp server or model weights
  (``make check`` runs every other test);
- the ``bad_input`` fixture: arbitrary JSON-like values, and the rule every call must follow
  (it places every item exactly once, or refuses in one line that names what was wrong; never
  another exception type, never a warning);
- the ``note_parity`` fixture: the adapters' notes property (no input makes an adapter change the
  order without the note that ``reorder`` would have given).
"""

from __future__ import annotations

import os
import tempfile
import warnings
from collections.abc import Callable, Collection, Sequence
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase

import bookend_rag
from bookend_rag import STRATEGIES, WEIGHT_RULES, Placement
from bookend_rag.outlet import PlacementNote

T = TypeVar("T")

# Idle OpenMP workers sleep instead of spinning, as in the CLI (lab/cli/common.py: set_threads):
# the lab's tests run torch on 2 threads while lint and mypy (make check) or other jobs share the
# 2 cores, and spinning workers starve them. Measured on tests/bench/test_label_free.py and
# lab/tests/items/test_squad.py (MiniLM ranking) with other jobs loading the 2 cores (load average
# about 8): 39 s wall, 26 s CPU passive; 183 s wall, 88 s CPU with libgomp's default. This plugin
# loads before any test module, hence before torch reads the variable.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

#: The test command's profile: the same examples on every run (derandomised, no database), a fixed
#: number per test so the suite stays within minutes, no deadline (timing on a shared machine
#: must not decide a verdict).
settings.register_profile(
    "bookend",
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
#: ``make explore``: fresh randomness, more examples, failing examples kept and replayed first.
settings.register_profile(
    "explore",
    parent=settings.get_profile("bookend"),
    max_examples=300,
    derandomize=False,
    database=DirectoryBasedExampleDatabase(".hypothesis/examples"),
)
settings.load_profile("bookend")


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``slow`` marker (the test commands run with ``--strict-markers``)."""
    config.addinivalue_line(
        "markers",
        "slow: needs a compiled llama.cpp server or model weights (make check leaves it out)",
    )


#: Numbers beyond float range, which an int may hold and a float conversion refuses.
HUGE_INTS = (10**400, -(10**400), 2**1024)

#: None, bools, ints (huge ones too), floats (NaN and infinities too), strings, and lists and
#: dicts of them.
JSON_LIKE: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.sampled_from(HUGE_INTS)
    | st.floats()
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=6,
)

#: Where the drawn ``recorder`` paths write: a directory of the test process, removed at its end.
_RECORDS_DIR = tempfile.TemporaryDirectory(prefix="bookend-test-records-")
_RECORDS = Path(_RECORDS_DIR.name)

#: Settings whose string value is a path they write to: they draw no JSON-like string (a drawn
#: string would be a file written into the working directory).
WRITES_FILES = frozenset({"recorder"})

#: Valid values of each placement setting and adapter setting: drawn as often as JSON-like
#: ones, so that the accepted path is exercised too.
VALID_SETTINGS: dict[str, st.SearchStrategy[Any]] = {
    "model": st.sampled_from(
        ["llama-3.1-8b", "liu2023:claude-1.3", {"depth": 4, "attn_share": 0.2}]
    ),
    "strategy": st.sampled_from(STRATEGIES),
    "weight_rule": st.sampled_from(WEIGHT_RULES),
    "competition": st.none() | st.floats(0, 10),
    "distance": st.booleans(),
    "top_k": st.none() | st.integers(1, 6),
    "budget": st.none() | st.integers(1, 200),
    "repeat_top": st.booleans(),
    "prefix_tokens": st.integers(0, 500),
    "suffix_tokens": st.integers(0, 500),
    "count_question": st.booleans(),
    "lengths": st.sampled_from(["tokens", "equal"]),
    "tokenizer": st.none(),
    "exact_max_k": st.integers(0, 20),
    "source_key": st.none() | st.sampled_from(["source", "i"]),
    "token_counter": st.none() | st.just(len),
    "annotate": st.booleans(),
    "recorder": st.none()
    | st.sampled_from(["a.jsonl", "b.jsonl"]).map(lambda n: str(_RECORDS / n)),
}


#: ``config=`` values every entry point refuses, with what its one-line message must hold.
BAD_CONFIGS: list[tuple[Any, str]] = [
    ("no-such-tuned.json", "config='no-such-tuned.json': file not found"),
    ("{not json", "config='{not json': not JSON"),
    (__file__, "not JSON"),  # a file that is not JSON
    ({"top_k": 0}, "config={'top_k': 0}: not a placement config"),
    ({"topk": 3}, "unknown setting topk=3"),
    ({"config": [], "provenance": {}}, "not a placement config"),
    (5, "config=5"),
]


#: How the notice for a model name without a known architecture begins.
MODEL_NOTICE = "bookend has not measured and knows no architecture for"


class BadInput:
    """The shared strategies and checks (see the module docstring)."""

    json_like = JSON_LIKE
    configs = BAD_CONFIGS

    @staticmethod
    def settings(
        names: Sequence[str], valid: dict[str, st.SearchStrategy[Any]] | None = None
    ) -> st.SearchStrategy[dict[str, Any]]:
        """Settings dicts over ``names`` and two misspelt ones, each value JSON-like or valid
        (``valid`` adds the adapter's own settings to :data:`VALID_SETTINGS`)."""
        choices = {**VALID_SETTINGS, **(valid or {})}
        keys = st.lists(st.sampled_from([*names, "bugdet", "top_kk"]), unique=True, max_size=3)

        def value(name: str) -> st.SearchStrategy[Any]:
            other = (
                JSON_LIKE.filter(lambda v: not isinstance(v, str))
                if name in WRITES_FILES
                else JSON_LIKE
            )
            return choices[name] | other if name in choices else other

        return keys.flatmap(lambda ks: st.fixed_dictionaries({k: value(k) for k in ks}))

    @staticmethod
    def attempt(call: Callable[[], T], names: Collection[str]) -> T | None:
        """``call()``'s result, or ``None`` when it refused as allowed: a ``ValueError`` or
        ``TypeError`` of one line naming one of ``names``. Any warning fails the call, but the
        documented notice for a model name bookend knows no architecture for (it places with the
        default order and says so once per process) and the placement notes
        (:class:`~bookend_rag.outlet.PlacementNote`, each one of ``Placement.notes``)."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                result: T | None = call()
            except (ValueError, TypeError) as exc:
                BadInput.check_refusal(exc, names)
                result = None
        unexpected = [
            w
            for w in caught
            if not (str(w.message).startswith(MODEL_NOTICE) or w.category is PlacementNote)
        ]
        assert not unexpected, f"warned: {[str(w.message) for w in unexpected]}"
        return result

    @staticmethod
    def check_refusal(exc: BaseException, names: Collection[str]) -> None:
        """A refusal is one line that names one of ``names``."""
        message = str(exc)
        assert "\n" not in message, f"not one line: {message!r}"
        assert any(name in message for name in names), f"names none of {names}: {message!r}"

    @staticmethod
    def refused(call: Callable[[], Any], fragment: str) -> None:
        """``call()`` raises a ``ValueError`` or ``TypeError`` of one line holding ``fragment``
        (for the tables: the parameter and its value)."""
        with pytest.raises((ValueError, TypeError)) as info:
            call()
        BadInput.check_refusal(info.value, [fragment])

    @staticmethod
    def each_once(placement: Placement[Any], n_items: int) -> None:
        """Every input index is placed once (the top twice with ``repeat_top``) or dropped."""
        placed = placement.order[:-1] if placement.repeated else placement.order
        assert sorted([*placed, *placement.dropped]) == list(range(n_items))

    @staticmethod
    def settings_are_honoured(
        settings: dict[str, Any],
        builds: Sequence[Callable[[], T]],
        place: Callable[[T], Placement[Any]],
        run: Callable[[T], Sequence[Any]],
        names: Collection[str],
        key: Callable[[Any], Any] = id,
    ) -> None:
        """Each way of building a component from ``settings`` refuses them (naming one of the
        settings or ``names``), or gives a component whose placement accounts for every item
        once and whose ``run`` returns the placement's items (compared by ``key``)."""
        allowed = [*settings, *names]
        for build in builds:
            component = BadInput.attempt(build, allowed)
            if component is None:
                continue
            placement = BadInput.attempt(partial(place, component), allowed)
            if placement is not None:
                BadInput.each_once(placement, len(placement.relevance))
                assert list(map(key, run(component))) == list(map(key, placement.items))


@pytest.fixture(scope="session")
def bad_input() -> type[BadInput]:
    """The shared strategies and checks of the bad-input tests."""
    return BadInput


class NoteParity:
    """The adapters' notes property (issue 38): no input makes an adapter change the order
    without the note that ``reorder`` would have given."""

    @staticmethod
    def cases(strategies: Sequence[str] = STRATEGIES) -> st.SearchStrategy[dict[str, Any]]:
        """Scores with and without gaps (``None``), and the settings that act on them."""
        return st.fixed_dictionaries(
            {
                "scores": st.lists(st.one_of(st.none(), st.floats(0, 1)), min_size=1, max_size=12),
                "options": st.fixed_dictionaries(
                    {
                        "missing_scores": st.sampled_from(["rank", "drop_scores"]),
                        "strategy": st.sampled_from(strategies),
                        "repeat_top": st.booleans(),
                    }
                ),
            }
        )

    @staticmethod
    def expected(
        texts: list[str], scores: list[float | None], options: dict[str, Any], **reading: Any
    ) -> Placement[str]:
        """The core's placement of the texts an adapter read (a retriever without any score
        gives none: no note)."""
        no_scores = all(score is None for score in scores)
        bookend: bookend_rag.Bookend[str] = bookend_rag.Bookend(**options, **reading)
        return bookend.place(texts, None if no_scores else scores)

    @staticmethod
    def check(
        case: dict[str, Any],
        run: Callable[[], tuple[list[int], list[list[str]]]],
        texts: list[str],
        **reading: Any,
    ) -> None:
        """``run()`` (an adapter's call: the input indices in the order it returned, and the
        notes its framework's channel received) gives the core's order, and its notes, on that
        channel and as warnings, once each."""
        (order, sent), warned = NoteParity.warned(run)
        core = NoteParity.expected(texts, case["scores"], case["options"], **reading)
        assert order == list(core.order)
        assert sent == ([list(core.notes)] if core.notes else [])
        assert warned == list(core.notes)

    @staticmethod
    def warned(call: Callable[[], T]) -> tuple[T, list[str]]:
        """``call()``'s result and the placement notes it warned of."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = call()
        return result, [str(w.message) for w in caught if w.category is PlacementNote]


@pytest.fixture(scope="session")
def note_parity() -> type[NoteParity]:
    """The adapters' notes property (:class:`NoteParity`)."""
    return NoteParity
