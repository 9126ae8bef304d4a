"""Each order against the retriever's own, read back from a report's per-item values, and the
figures the documentation site draws from it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bookend_rag_lab.report.evidence import SHOWN, against_current, strongest
from bookend_rag_lab.report.figures import order_effects, position_influence

COLUMNS = ("retrieval", "bookend-theory", "bookend-view", "langchain", "llamaindex", "haystack")


def _report(
    values: dict[str, list[float]], model: str = "x/unmeasured-model.gguf"
) -> dict[str, Any]:
    n = len(next(iter(values.values())))
    items = [
        {"id": f"i{i}", "results": {c: {"candidate_prob": v[i]} for c, v in values.items()}}
        for i in range(n)
    ]
    return {"model": model, "primary_metric": "candidate_prob", "items": items}


def _values(seed: int, n: int = 40) -> dict[str, list[float]]:
    rng = np.random.default_rng(seed)
    out = {c: rng.uniform(0, 1, n).tolist() for c in COLUMNS}
    out["random"] = rng.uniform(0, 1, n).tolist()
    return out


@given(st.integers(0, 10_000), st.integers(3, 60))
def test_each_order_is_its_mean_difference_from_the_retrievers_order(seed: int, n: int) -> None:
    values = _values(seed, n)
    cell = against_current(_report(values), tuned="alternate")
    current = np.asarray(values["retrieval"])
    assert cell["current"]["mean"] == pytest.approx(current.mean())
    assert cell["current"]["n"] == n
    # An unmeasured model's default is the theory's order; tune's "alternate" is Haystack's.
    columns = {"default": "bookend-theory", "tuned": "haystack", "langchain": "langchain",
               "llamaindex": "llamaindex", "haystack": "haystack", "random": "random"}  # fmt: skip
    assert set(cell) == {"current", *SHOWN}
    for order, column in columns.items():
        diff = np.asarray(values[column]) - current
        assert cell[order]["diff"] == pytest.approx(diff.mean())
        assert cell[order]["mean"] == pytest.approx(np.mean(values[column]))
        assert cell[order]["ci_low"] <= cell[order]["diff"] <= cell[order]["ci_high"]
        assert cell[order]["n"] == n


def test_tune_s_choice_may_be_a_report_column_and_is_left_out_without_one() -> None:
    values = _values(1)
    cell = against_current(_report(values), tuned="bookend-view")
    diff = np.asarray(values["bookend-view"]) - np.asarray(values["retrieval"])
    assert cell["tuned"]["diff"] == pytest.approx(diff.mean())
    assert "tuned" not in against_current(_report(values))


def test_a_report_without_the_column_says_which() -> None:
    values = _values(2)
    with pytest.raises(ValueError, match="'bookend-in-user-prompt' is no column"):
        against_current(_report(values), tuned="bookend-in-user-prompt")
    del values["retrieval"]
    with pytest.raises(ValueError, match="'retrieval' is no column"):
        against_current(_report(values))


def test_strongest_is_the_highest_mean_among_those_asked() -> None:
    cell = {"langchain": {"mean": 0.2}, "haystack": {"mean": 0.5}, "default": {"mean": 0.9}}
    assert strongest(cell, ("langchain", "llamaindex", "haystack")) == "haystack"
    with pytest.raises(ValueError, match="none of"):
        strongest(cell, ("llamaindex",))


def test_the_site_figures_are_drawn(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    cells = {
        "records": against_current(_report(_values(3))),
        "NQ": against_current(_report(_values(4))),
    }
    out = order_effects({"model A": cells, "model B": cells}, tmp_path / "orders.png")
    assert out.read_bytes()[:4] == b"\x89PNG"
    # A model measured on fewer cells keeps every row: the figure is as tall as with both.
    fewer = order_effects(
        {"model A": {"records": cells["records"]}, "model B": cells}, tmp_path / "fewer.png"
    )
    one_row = order_effects({"model A": {"records": cells["records"]}}, tmp_path / "one.png")
    assert _png_height(fewer) == _png_height(out) > _png_height(one_row)
    curve = [
        {"mean": 0.1 * s + 0.1, "ci_low": 0.1 * s, "ci_high": 0.1 * s + 0.2, "n": 20}
        for s in range(5)
    ]
    out = position_influence(
        {"model A": {"prompt": [*curve[:4], None]}},
        {"model A": [5.0, 4.0, 3.0, 2.0, 1.0]},
        {"bookend, model A": [1, 2, 3, 4, 5], "LangChain": [2, 4, 5, 3, 1]},
        tmp_path / "influence.png",
    )
    assert out.read_bytes()[:4] == b"\x89PNG"


def _png_height(path: Path) -> int:
    """A PNG's height in pixels, from its header (bytes 20 to 24 of the IHDR chunk)."""
    return int.from_bytes(path.read_bytes()[20:24], "big")
