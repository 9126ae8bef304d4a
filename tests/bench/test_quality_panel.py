"""The model-free curve panel: bookend with the model's own curve is the oracle."""

from itertools import permutations

import pytest
from placement_quality.curves import PositionCurve, liu2023_curves
from placement_quality.expected import expected_accuracy, geometric_ranks
from placement_quality.panel import (
    BOOKEND_OWN,
    ORACLE,
    PanelModel,
    max_regret,
    panel_cell,
    regret,
    run_panel,
)

import bookend_rag


def test_curves_interpolate_over_normalised_position() -> None:
    curve = PositionCurve.from_gold_positions("c", [1, 5, 10], 10, [80.0, 60.0, 70.0], "test")
    acc = curve.slot_accuracy(10)
    assert acc[0] == pytest.approx(0.8)
    assert acc[4] == pytest.approx(0.6)
    assert acc[-1] == pytest.approx(0.7)
    # K = 3 centres 1/6, 1/2, 5/6 between the points at 0.05, 0.45 and 0.95.
    expected = [
        0.8 - 0.2 * (1 / 6 - 0.05) / 0.4,
        0.6 + 0.1 * 0.05 / 0.5,
        0.6 + 0.1 * (5 / 6 - 0.45) / 0.5,
    ]
    assert curve.slot_accuracy(3).tolist() == pytest.approx(expected)


def test_liu_curves_cover_both_tables() -> None:
    names = [c.name for c in liu2023_curves()]
    assert "liu2023:gpt-3.5-turbo@20" in names
    assert "liu2023:mpt-30b-instruct@10" in names
    assert len(names) == 12


@pytest.mark.parametrize("k", [3, 4, 5, 6])
def test_own_curve_matches_a_brute_force_over_every_order(k: int) -> None:
    """bookend with the model's own curve against every permutation, computed independently of
    the panel's oracle (which sorts, as bookend does)."""
    rank_probs = geometric_ranks(k, 0.6)
    for curve in liu2023_curves()[:4]:
        cell = panel_cell(PanelModel(curve, bookend_rag.DEFAULT_MODEL), k, rank_probs)
        acc = curve.slot_accuracy(k)
        best = max(expected_accuracy(order, rank_probs, acc) for order in permutations(range(k)))
        assert cell[BOOKEND_OWN] == pytest.approx(best, abs=1e-12)
        assert cell[ORACLE] == pytest.approx(best, abs=1e-12)


def test_fixed_patterns_regret_and_the_table_covers_every_model() -> None:
    models = [PanelModel(c, bookend_rag.DEFAULT_MODEL) for c in liu2023_curves()[:3]]
    panel = run_panel(models, k_values=[3, 4, 9, 10])
    assert max_regret(panel, BOOKEND_OWN)[0] == pytest.approx(0.0, abs=1e-12)
    assert max_regret(panel, "langchain")[0] > 0.0
    table = regret(panel, "reversed")
    assert set(table) == {m.curve.name for m in models}


def test_panel_cell_reports_every_strategy() -> None:
    curve = liu2023_curves()[0]
    cell = panel_cell(PanelModel(curve, "smollm2-135m"), 5, [0.5, 0.2, 0.15, 0.1, 0.05])
    assert cell[ORACLE] >= max(cell.values()) - 1e-12
    assert {"langchain", "llamaindex", "haystack", "retrieval", "reversed"} <= set(cell)
