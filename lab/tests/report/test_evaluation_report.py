"""The strategies built per item (random, oracle) and the report from per-item results."""

from typing import Any

import pytest

from bookend_rag_lab.reorderers import best_slot_order, random_orders
from bookend_rag_lab.report.evaluation import REPORT_VERSION, build_report, markdown


def test_random_orders_are_seeded_permutations() -> None:
    draws = random_orders(6, 3, "0:item")
    assert all(sorted(d) == list(range(6)) for d in draws)
    assert draws == random_orders(6, 3, "0:item")
    assert draws != random_orders(6, 3, "1:item")


def test_oracle_puts_the_gold_rank_in_the_best_slot() -> None:
    assert best_slot_order(2, 4, {0: 0.3, 1: 0.1, 2: 0.2, 3: 0.9}) == [0, 1, 3, 2]
    assert best_slot_order(0, 3, {0: 0.5, 1: 0.1, 2: 0.5}) == [0, 1, 2]  # ties: earlier slot


def _row(i: int, bookend: float, base: float, oracle: bool) -> dict[str, Any]:
    results: dict[str, Any] = {
        "bookend-theory": {"gold_logprob": bookend, "accuracy": 1.0},
        "retrieval": {"gold_logprob": base, "accuracy": 0.0},
    }
    if oracle:
        results["oracle"] = {"gold_logprob": bookend + 1.0, "accuracy": 1.0}
    return {"id": str(i), "k": 3, "retriever": "bm25" if i % 2 else "file", "results": results}


def test_report_pairs_on_shared_items_and_states_verdicts() -> None:
    rows = [_row(i, -1.0 + 0.01 * i, -2.0 - 0.01 * i, oracle=i < 6) for i in range(10)]
    report = build_report(
        model_id="/models/tiny.gguf",
        settings={"suite": "nq", "source": {"kind": "built-in"}},
        metrics=["gold_logprob", "accuracy"],
        primary="gold_logprob",
        item_rows=rows,
        rankings={"bm25": [0, 1, 1, 2, 0]},
        position_curve={},
        timing={"seconds": 1.0, "model_calls": 3, "distinct_prompts": 3, "requests": 5},
    )
    assert report["report_version"] == REPORT_VERSION
    assert list(report["strategies"]) == ["bookend-theory", "retrieval", "oracle"]
    assert report["strategies"]["oracle"]["gold_logprob"]["n"] == 6
    assert report["strategies"]["retrieval"]["gold_logprob"]["n"] == 10
    versus = report["paired"]["bookend-theory vs retrieval"]["gold_logprob"]
    assert versus["diff"] == pytest.approx(1.09)
    assert versus["verdict"] == "better"
    assert report["paired"]["bookend-theory vs oracle"]["gold_logprob"]["verdict"] == "worse"
    assert report["gold_rank"]["bm25"]["counts"] == [2, 2, 1]
    assert report["gold_rank"]["bm25"]["first"] == pytest.approx(0.4)
    assert set(report["by_retriever"]) == {"file", "bm25"}
    text = markdown(report)
    assert "significantly ahead of retrieval; behind oracle" in text
    assert "## bookend eval: tiny.gguf, n = 10 items" in text
    assert "**Source.** the built-in suite `nq` (real answers)." in text


def test_generated_answers_get_mcnemar_and_the_items_they_need() -> None:
    # 60 items: bookend alone right on 15, retrieval alone right on 3, both right on 20.
    outcomes = [(1.0, 0.0)] * 15 + [(0.0, 1.0)] * 3 + [(1.0, 1.0)] * 20 + [(0.0, 0.0)] * 22
    rows = [
        {
            "id": str(i),
            "k": 3,
            "retriever": "file",
            "results": {
                "bookend-theory": {"exact_match": a, "accuracy": a},
                "retrieval": {"exact_match": b, "accuracy": b},
            },
        }
        for i, (a, b) in enumerate(outcomes)
    ]
    report = build_report(
        model_id="http://127.0.0.1:4000/v1/claude",
        settings={"current": "retrieval", "items": "given", "source": {"kind": "labelled"}},
        metrics=["exact_match", "accuracy"],
        primary="accuracy",
        item_rows=rows,
        rankings={},
        position_curve={},
        timing={"seconds": 1.0, "model_calls": 3, "distinct_prompts": 3, "requests": 5},
    )
    cell = report["paired"]["bookend-theory vs retrieval"]["accuracy"]
    assert (cell["n_ab"], cell["n_ba"]) == (15, 3)
    assert cell["p_mcnemar"] == pytest.approx(2 * 988 / 2**18)
    assert cell["diff"] == pytest.approx(0.2)
    assert cell["items_needed"] == 57
    text = markdown(report)
    assert "**Accuracy only**" in text
    assert "McNemar p = 0.00754 (15 items only bookend-theory answers, 3 only retrieval)" in text
