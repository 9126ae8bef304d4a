"""`bench/default_matrix.py`: per-cell losses, the default's MDE column, the minimax ranking."""

import numpy as np
from default_matrix import cell_losses, default_power, minimax

N = 60


def planted_cell(default_gap: float, *, default_is: str | None = None) -> dict[str, np.ndarray]:
    """Three orders on the same items: ``reversed`` best, ``default`` ``default_gap`` behind it
    (or the same values as ``default_is``), ``random`` far behind. Seeded per call, so a test's
    cell does not depend on which tests ran before it."""
    rng = np.random.default_rng(0)
    base = rng.uniform(0.2, 0.8, N)
    values = {
        "reversed": base,
        "relevance": base - 0.05 + rng.normal(0, 0.02, N),
        "random": base - 0.3 + rng.normal(0, 0.02, N),
    }
    if default_is is None:
        values["default"] = base - default_gap + rng.normal(0, 0.02, N)
    else:
        values["default"] = values[default_is].copy()
    return values


def test_default_power_is_the_defaults_difference_with_the_best() -> None:
    per = cell_losses(planted_cell(0.1))
    n, mde = default_power(per)
    assert n == N
    assert mde == per["default"]["vs_best"]["mde"] > 0


def test_default_power_skips_the_best_order_under_another_name() -> None:
    # The default is the best order itself: its MDE is the runner-up's, not the 0 of an alias.
    per = cell_losses(planted_cell(0.0, default_is="reversed"))
    _, mde = default_power(per)
    assert mde == per["relevance"]["vs_best"]["mde"] > 0


def test_minimax_ranks_by_the_largest_loss_over_cells() -> None:
    cells = {"a": cell_losses(planted_cell(0.02)), "b": cell_losses(planted_cell(0.2))}
    ranked = minimax(cells)
    worst = {r["candidate"]: r["worst_loss"] for r in ranked}
    assert ranked[0]["candidate"] == "reversed"
    assert worst["reversed"] == 0.0
    assert 0.15 < worst["default"] < 0.25
    assert worst["random"] > worst["default"]
    assert next(r for r in ranked if r["candidate"] == "default")["worst_cell"] == "b"
