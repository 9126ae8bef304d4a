"""Calibration end to end on a tiny random model: outcomes, slot table and profile."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import torch

import bookend_rag
from bookend_rag_lab import deps
from bookend_rag_lab.experiments.calibrate import measure_outcomes
from bookend_rag_lab.fitting.slots import slot_profile, summarise
from bookend_rag_lab.items.lookup import lookup_items
from bookend_rag_lab.models import LocalScorer
from bookend_rag_lab.stats import wilson_interval


@pytest.fixture
def scorer(llama_config: Any, byte_tokenizer: Any) -> LocalScorer:
    torch.manual_seed(0)
    lm = deps.transformers().AutoModelForCausalLM.from_config(llama_config).eval()
    return LocalScorer(SimpleNamespace(lm=lm, tokenizer=byte_tokenizer, name="tiny"))


def slot_table(scorer: LocalScorer, items: list[Any]) -> Any:
    """The slot table of ``items`` (each in every slot): what a calibration cell measures."""
    return summarise(measure_outcomes(scorer, items, (0, 6)))


def test_calibration_runs_end_to_end_and_writes_a_loadable_profile(
    scorer: LocalScorer, tmp_path: Path
) -> None:
    items = lookup_items(2, 3, seed=0, families=["access_code"])
    result = slot_table(scorer, items)
    assert result.accuracy.shape == (3,)
    np.testing.assert_allclose(result.accuracy, result.correct / result.n_items)
    expected_ci = [wilson_interval(int(c), result.n_items) for c in result.correct]
    np.testing.assert_allclose(result.accuracy_ci, expected_ci)
    profile = slot_profile(result, metric="candidate_prob", label="tiny", metadata={})
    path = profile.save(tmp_path / "slots.json")
    loaded = bookend_rag.load_profile(path)
    assert loaded.kind == "slot"
    assert len(loaded.weights) == 3
    np.testing.assert_allclose(
        np.asarray(loaded.weights) / sum(loaded.weights),
        result.candidate_prob / result.candidate_prob.sum(),
    )
    placement = bookend_rag.reorder(["a", "b", "c"], [0.2, 0.9, 0.5], model=str(path))
    assert placement.profile == loaded
    # The best chunk goes to the slot the probe measured best.
    assert placement.order[int(np.argmax(loaded.weights))] == 1


def test_outcomes_carry_the_gold_span_in_tokens(scorer: LocalScorer) -> None:
    items = lookup_items(2, 3, seed=1, families=["access_code"], filler=(0, 1))
    result = summarise(measure_outcomes(scorer, items, (0, 1)))
    assert len(result.outcomes) == 6
    for o in result.outcomes:
        item = next(i for i in items if i.item_id == o.item_id)
        prompt, spans = item.rendered(item.order_with_gold_at(o.slot))
        # The byte tokenizer has one token per byte, so token offsets are byte offsets.
        assert o.gold_end - o.gold_start == len(prompt[spans[o.slot][0] : spans[o.slot][1]])
        assert o.gold_start == spans[o.slot][0] - spans[0][0]
        assert o.n_tokens == spans[-1][1] - spans[0][0]
        assert o.prompt_tokens == len(prompt)
        assert o.filler == (0, 1)
    again = summarise(result.outcomes)
    np.testing.assert_array_equal(again.accuracy, result.accuracy)
    other_k = slot_table(scorer, lookup_items(1, 2, seed=1)).outcomes
    with pytest.raises(ValueError, match="mix K"):
        summarise([*result.outcomes, *other_k])
