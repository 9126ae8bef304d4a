"""`bench/label_free.py`: the retrievals it builds hide the answers and keep the retriever's
order, stay off the evaluation split, and the MDE it states scales with the retrievals."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from label_free import (
    CALIBRATION_ITEMS,
    DRY_RUN,
    RETRIEVAL_COUNTS,
    Cell,
    K,
    cells,
    retrieval_records,
    retrievals_needed,
)

from bookend_rag.lab.items.suites import suite_items
from bookend_rag.lab.stats import minimum_detectable_difference


# The records suite only: NQ's passages take minutes to rank on a shared core.
def test_records_are_the_calibration_items_in_the_retrievers_order_without_answers() -> None:
    suite = "records"
    records = retrieval_records(suite)
    items = suite_items(suite, CALIBRATION_ITEMS, K, split="calibration")
    assert len(records) == len(items) == CALIBRATION_ITEMS
    for record, item in zip(records, items, strict=True):
        assert record.question == item.question
        assert sorted(d.text for d in record.documents) == sorted(item.documents)
        scores = [d.score for d in record.documents]
        assert all(s is not None for s in scores)
        assert scores == sorted(scores, reverse=True)  # the retriever's order, best first
        # Nothing of the label travels: no field names the answer, the candidates or the gold.
        line = json.loads(record.to_json_line())
        assert set(line) == {"schema", "question", "documents", "model", "order", "source", "time"}
        assert line["order"] is None
        assert line["model"] is None


def test_records_never_hold_an_evaluation_question() -> None:
    items = suite_items("records", CALIBRATION_ITEMS, K, split="evaluation")
    evaluation = {i.question for i in items}
    assert not evaluation & {r.question for r in retrieval_records("records")}


def test_cells_name_the_labelled_runs_they_are_judged_against() -> None:
    names = [c.name for c in cells("smollm2")]
    assert len(names) == len(set(names)) == 6
    hard = Cell("hard", "bookend", "smollm2")
    assert hard.eval_report.parent.name == "smollm2-k10"
    assert Cell("records", "chat", "smollm2").eval_report.parts[-3] == "eval-chat"
    assert "--template" in Cell("nq", "chat", "smollm2").model_args("float32")
    assert Cell("nq", "bookend", "smollm2").tune_dtype() == "bfloat16"


def test_the_dry_run_figures_are_read_from_what_tune_prints() -> None:
    printed = (
        "## bookend tune --dry-run\n\n840 distinct prompts; at most 840 model calls (the rest "
        "are in the call cache) and at most 397,880 prompt tokens (counted by m's tokenizer)."
    )
    found = DRY_RUN.search(printed)
    assert found is not None
    assert found.groups() == ("840", "397,880")


def _tune(diffs: np.ndarray, best: str | None = "reversed") -> dict[str, object]:
    items = [
        {"results": {"default": {"candidate_prob": 0.5}, "reversed": {"candidate_prob": 0.5 + d}}}
        for d in diffs
    ]
    return {"decision": {"best": best}, "items": items}


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-0.5, 0.5), min_size=3, max_size=80).filter(lambda v: np.std(v) > 1e-6))
def test_the_mde_at_n_retrievals_is_the_probe_differences_mde_rescaled(diffs: list[float]) -> None:
    d = np.asarray(diffs)
    needed = retrievals_needed(_tune(d))
    assert needed["pair"] == ["reversed", "default"]
    assert needed["n"] == d.size
    mde = needed["mde"]
    # At the probes' own count it is the paired comparison's MDE; it halves as n quadruples.
    at_own = minimum_detectable_difference(d) * np.sqrt(d.size)
    for n in RETRIEVAL_COUNTS:
        assert mde[str(n)] == pytest.approx(at_own / np.sqrt(n), rel=1e-4)
    assert mde["120"] == pytest.approx(mde["30"] / 2)


def test_no_mde_when_no_rival_was_scored() -> None:
    assert retrievals_needed(_tune(np.zeros(5), best=None)) == {"pair": None, "mde": {}}
