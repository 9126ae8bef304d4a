"""The eval position curve is a line only where every slot is measured often enough."""

from __future__ import annotations

from pathlib import Path

import pytest

from bookend_rag_lab.report.figures import MIN_CURVE_N, curve_is_measured, position_curve


@pytest.mark.parametrize(
    ("counts", "k", "line"),
    [
        ([MIN_CURVE_N] * 6, 6, True),
        ([8, 3, MIN_CURVE_N, 9, 12, 7], 6, False),  # --quick on SmolLM2: a handful per slot
        ([MIN_CURVE_N] * 5, 6, False),  # a slot without any draw
        ([], 6, False),
    ],
)
def test_curve_is_measured(counts: list[int], k: int, line: bool) -> None:
    assert curve_is_measured(counts, k) is line


def test_sparse_curve_is_drawn_as_labelled_points(tmp_path: Path) -> None:
    point = {"mean": 0.3, "ci_low": 0.1, "ci_high": 0.5, "n": 3}
    report = {
        "primary_metric": "candidate_prob",
        "model": "tiny",
        "position_curve": {"3": {"candidate_prob": [point, None, point]}},
    }
    out = position_curve(report, tmp_path / "curve.png")
    assert out.is_file()
    assert out.stat().st_size > 0
