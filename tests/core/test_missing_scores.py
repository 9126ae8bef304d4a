"""One policy for missing scores (``missing_scores``), the same in ``reorder``, ``Bookend`` and
``bookend reorder``, and the notes that leave the core (warnings and the ``bookend_rag`` logger)."""

from __future__ import annotations

import io
import logging
import sys
import warnings

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bookend_rag
from bookend_rag import Bookend, reorder
from bookend_rag.cli import main
from bookend_rag.outlet import PlacementNote, would_show

MIXED = [0.1, None, 0.9, 0.5]
TEXTS = ["a", "b", "c", "d"]

#: Settings that send a placement down each of its paths: the small-K shortcut, the by-rank
#: shortcut (K > 64 is made below), and the array path (a budget).
PATHS = [{}, {"budget": 10_000}, {"strategy": "relevance"}]


@pytest.mark.parametrize("settings", PATHS)
@pytest.mark.parametrize("k", [4, 80])
def test_error_refuses_a_none_among_numbers_in_one_line(
    settings: dict[str, object], k: int
) -> None:
    scores = (MIXED * k)[:k]
    with pytest.raises(
        ValueError, match=r"^scores: \d+ of \d+ missing \(scores\[1\] is None\)"
    ) as e:
        reorder([f"t{i}" for i in range(k)], scores, missing_scores="error", **settings)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("settings", PATHS)
def test_drop_scores_is_the_default_and_the_input_order_decides(
    settings: dict[str, object],
) -> None:
    with pytest.warns(PlacementNote, match="1 of 4 missing"):
        placement = reorder(TEXTS, MIXED, **settings)
    assert placement.order == reorder(TEXTS, **settings).order
    assert placement.scores is None


def test_every_score_none_is_noted_under_every_policy() -> None:
    for policy in ("error", "rank", "drop_scores"):
        with pytest.warns(PlacementNote, match="every score is None"):
            assert reorder(TEXTS, [None] * 4, missing_scores=policy).order == reorder(TEXTS).order


# Scores a tenth apart at least: relevance is rounded after the min-max normalisation, so scores
# that differ in their last bits tie, which is the normalisation's business, not this policy's.
scores_with_gaps = st.lists(
    st.one_of(st.none(), st.integers(-10_000, 10_000).map(lambda x: x / 10)),
    min_size=2,
    max_size=90,
).filter(lambda s: any(x is None for x in s) and any(x is not None for x in s))


@given(scores=scores_with_gaps, distance=st.booleans())
def test_rank_puts_every_missing_score_below_every_given_one(
    scores: list[float | None], distance: bool
) -> None:
    texts = [f"t{i}" for i in range(len(scores))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PlacementNote)
        placement = reorder(
            texts, scores, missing_scores="rank", strategy="relevance", distance=distance
        )
    given_ones = [i for i, s in enumerate(scores) if s is not None]
    missing = [i for i, s in enumerate(scores) if s is None]
    # The oracle: the given scores best first (ties in input order), then the missing ones in
    # input order.
    sign = 1 if distance else -1
    expected = sorted(given_ones, key=lambda i: (sign * scores[i], i)) + missing  # type: ignore[operator]
    assert list(placement.order) == expected
    assert any("missing_scores='rank'" in note for note in placement.notes)


def test_rank_refuses_scores_whose_spread_leaves_float_range() -> None:
    with pytest.raises(ValueError, match="beyond float range"):
        reorder(["a", "b", "c"], [-1.7e308, 1.7e308, None], missing_scores="rank")


def test_bookend_place_returns_its_notes_without_sending_them(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        placement = Bookend().place(TEXTS, MIXED)
    assert placement.notes
    assert not caplog.records


def test_reorder_warns_at_the_callers_line_and_logs(caplog: pytest.LogCaptureFixture) -> None:
    with (
        caplog.at_level(logging.WARNING, logger="bookend_rag"),
        pytest.warns(PlacementNote) as caught,
    ):
        placement = reorder(TEXTS, MIXED)
    assert caught[0].filename == __file__
    assert [r.getMessage() for r in caplog.records] == [
        f"placement note: {note}" for note in placement.notes
    ]


def test_the_unknown_model_notice_is_not_repeated_on_every_call() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        placement = reorder(TEXTS, model="gpt-4o")
        reorder(TEXTS, model="gpt-4o")
    assert placement.notes  # the notice, in the placement
    assert not [w for w in caught if issubclass(w.category, PlacementNote)]


def test_the_cli_follows_the_same_policy(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    chunks = '[{"text": "a", "score": 0.1}, {"text": "b"}, {"text": "c", "score": 0.9}]'
    monkeypatch.setattr(sys, "stdin", io.StringIO(chunks))
    assert main(["reorder"]) == 0
    out = capsys.readouterr()
    assert out.err == (
        "bookend reorder: note: scores: 1 of 3 missing (scores[1] is None), so the input order "
        "is the relevance order and the other scores are not used (missing_scores="
        "'drop_scores'; 'rank' ranks them last, 'error' raises)\n"
    )
    assert '"order": [\n    0,\n    1,\n    2\n  ]' in out.out
    monkeypatch.setattr(sys, "stdin", io.StringIO(chunks))
    assert main(["reorder", "--missing-scores", "error"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "scores[1] is None" in err
    monkeypatch.setattr(sys, "stdin", io.StringIO(chunks))
    assert main(["reorder", "--missing-scores", "rank", "--strategy", "relevance"]) == 0
    assert '"order": [\n    2,\n    0,\n    1\n  ]' in capsys.readouterr().out


def test_the_policy_is_a_serialised_setting() -> None:
    config = bookend_rag.PlacementConfig(missing_scores="rank")
    assert bookend_rag.PlacementConfig.model_validate_json(config.model_dump_json()) == config
    with pytest.raises(ValueError, match="missing_scores"):
        bookend_rag.PlacementConfig(missing_scores="ignore")


def test_a_note_builds_a_log_record_only_where_a_handler_shows_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 39 §2: most of a note's cost was ``logging`` building a record that bookend's
    ``NullHandler`` dropped. No record is built when no handler would show it; one is, and
    reaches the handler, as soon as one is added (each call asks)."""
    made: list[logging.LogRecord] = []
    make_record = logging.Logger.makeRecord

    def counted(self: logging.Logger, *args: object, **kwargs: object) -> logging.LogRecord:
        record = make_record(self, *args, **kwargs)  # type: ignore[arg-type]
        made.append(record)
        return record

    monkeypatch.setattr(logging.Logger, "makeRecord", counted)
    monkeypatch.setattr(logging.getLogger(), "handlers", [])  # pytest's capture, off
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        placement = reorder(TEXTS, MIXED)
        assert placement.notes
        assert made == []
        stream = io.StringIO()
        monkeypatch.setattr(logging.getLogger(), "handlers", [logging.StreamHandler(stream)])
        reorder(TEXTS, MIXED)
    assert [r.getMessage() for r in made] == [f"placement note: {n}" for n in placement.notes]
    assert stream.getvalue().splitlines() == [r.getMessage() for r in made]


def test_would_show_follows_the_loggers_levels_handlers_and_filters() -> None:
    logger = logging.getLogger("bookend_rag_test.would_show")
    logger.propagate = False
    assert would_show(logger, logging.WARNING)  # no handler at all: Python's last resort shows it
    logger.addHandler(logging.NullHandler())
    assert not would_show(logger, logging.WARNING)
    shown = logging.StreamHandler(io.StringIO())
    shown.setLevel(logging.ERROR)
    logger.addHandler(shown)
    assert not would_show(logger, logging.WARNING)
    assert would_show(logger, logging.ERROR)
    shown.setLevel(logging.WARNING)
    assert would_show(logger, logging.WARNING)
    logger.setLevel(logging.ERROR)
    assert not would_show(logger, logging.WARNING)
    logger.setLevel(logging.NOTSET)
    logger.removeHandler(shown)
    logger.addFilter(lambda record: True)  # a filter may act on the record: it is built
    assert would_show(logger, logging.WARNING)
    child = logging.getLogger("bookend_rag_test.would_show.child")
    assert not would_show(child, logging.WARNING)  # propagates to the NullHandler only
