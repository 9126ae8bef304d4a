"""What a new user met on first use (issue 31): each surprise now raises one line, leaves a note
in ``Placement.notes``, or behaves as documented."""

from __future__ import annotations

import io
import sys

import numpy as np
import pytest

import bookend_rag
from bookend_rag import lookalikes
from bookend_rag.cli import build_parser, main
from bookend_rag.placement import local_search
from bookend_rag.weighing import ChunkWeigher


def test_a_missing_score_is_noted_not_silent() -> None:
    placement = bookend_rag.reorder(["a", "b", "c"], [0.1, None, 0.9], model="smollm2-135m")
    # The input order stands for relevance (documented), and the placement says so.
    assert placement.scores is None
    assert any("1 of 3 missing (scores[1] is None)" in note for note in placement.notes)
    assert any("note: scores: 1 of 3 missing" in line for line in placement.explain().splitlines())
    every = bookend_rag.reorder(["a", "b"], [None, None])
    assert every.notes == (
        "scores: every score is None, so the input order is the relevance order",
    )
    assert bookend_rag.reorder(["a", "b"], [0.2, 0.1]).notes == ()
    assert bookend_rag.reorder(["a", "b"]).notes == ()


def test_the_cli_refuses_a_null_score_among_numbers_when_told(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # One policy for the library and the CLI (missing_scores): the default places, with a note
    # on stderr (tests/core/test_missing_scores.py); --missing-scores error refuses.
    monkeypatch.setattr(sys, "stdin", io.StringIO('{"chunks": ["a", "b"], "scores": [0.9, null]}'))
    assert main(["reorder", "--missing-scores", "error"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "scores[1] is None" in err
    # As a missing "score" field is.
    monkeypatch.setattr(sys, "stdin", io.StringIO('[{"text": "a", "score": 1}, {"text": "b"}]'))
    assert main(["reorder", "--missing-scores", "error"]) == 2
    assert "scores[1] is None" in capsys.readouterr().err


def test_lookalikes_at_a_huge_k_are_refused_before_the_product() -> None:
    # Every chunk shares its first words: K^2 pairs to compare (main allocated the dense K x K).
    texts = [f"the same opening words of every chunk, then chunk {i}" for i in range(5_000)]
    with pytest.raises(ValueError, match=r"^drop_lookalikes at K=5000: comparing"):
        bookend_rag.reorder(texts, drop_lookalikes=True, equal_lengths=True)


def test_lookalike_groups_compare_only_chunks_that_share_a_shingle() -> None:
    rng = np.random.default_rng(3)
    words = np.array([f"w{i}" for i in range(40)])
    texts = [" ".join(words[rng.integers(0, 40, 6)]) for _ in range(60)]
    texts += [t + " tail" for t in texts[:10]]  # near duplicates
    groups = lookalikes.lookalike_groups(texts)
    # The same groups as the dense table gives.
    dense = lookalikes.jaccard_matrix(texts) >= lookalikes.DEFAULT_LOOKALIKE_THRESHOLD
    for a in range(len(texts)):
        for b in np.flatnonzero(dense[a]):
            assert groups[a] == groups[int(b)]
    assert len(set(groups)) < len(texts)


def test_the_dense_jaccard_table_refuses_a_huge_k(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lookalikes, "MAX_DENSE_CHUNKS", 10)
    with pytest.raises(ValueError, match="K=11 is over 10"):
        lookalikes.jaccard_matrix(["x"] * 11)


def test_density_local_search_is_bounded_at_a_large_k(monkeypatch: pytest.MonkeyPatch) -> None:
    k = 20_000
    rng = np.random.default_rng(0)
    calls = 0
    span_weights = ChunkWeigher.span_weights

    def counted(self: ChunkWeigher, *args: object) -> object:
        nonlocal calls
        calls += 1
        return span_weights(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(ChunkWeigher, "span_weights", counted)
    placement = bookend_rag.reorder(
        list(range(k)),
        rng.random(k).tolist(),
        lengths=rng.integers(20, 400, k).tolist(),
        weight_rule="density",
    )
    assert sorted(placement.order) == list(range(k))
    # One span_weights call per odd-even pass: at most sweep_limit(K), not 2K + 2.
    assert calls <= local_search.sweep_limit(k) <= 2 * local_search.MAX_SWEEP_PAIRS // k
    assert local_search.sweep_limit(10) == 22  # small K: as many passes as before


def test_reorder_help_says_what_the_lookalike_threshold_does() -> None:
    reorder = build_parser()._subparsers._group_actions[0].choices["reorder"]  # type: ignore[union-attr]
    text = reorder.format_help()
    assert "relevance order" not in text.split("--lookalike-threshold", 1)[1].split("--drop", 1)[0]
    assert "for --drop-lookalikes" in " ".join(text.split())


def test_a_huge_count_is_named_by_its_first_digits() -> None:
    with pytest.raises(ValueError, match=r"^budget=10000000\.\.\.\(401 digits\): ") as raised:
        bookend_rag.reorder(["a", "b"], budget=10**400)
    assert len(str(raised.value)) < 120
