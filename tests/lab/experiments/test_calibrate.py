"""The behavioural probe end to end on a tiny random model, and its statistics."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import bookend
from bookend.lab import deps as _deps
from bookend.lab.fitting.slots import (
    calibrate,
    score_candidates,
    slot_profile,
    summarise,
    wilson_interval,
)
from bookend.lab.items.lookup import generate_items
from bookend.profile import TabulatedProfile


@pytest.fixture
def tiny_lm(llama_config: Any) -> Any:
    torch.manual_seed(0)
    lm = _deps.transformers().AutoModelForCausalLM.from_config(llama_config)
    return lm.eval()


def test_cached_scores_match_full_sequence_scores(tiny_lm: Any, byte_tokenizer: Any) -> None:
    prompt = "The code is"
    candidates = ["4821", "77", "x"]
    cached = score_candidates(tiny_lm, byte_tokenizer, prompt, candidates)
    base = byte_tokenizer.encode(prompt)
    for k, cand in enumerate(candidates):
        ids = base + byte_tokenizer.encode(" " + cand, add_special_tokens=False)
        with torch.no_grad():
            logp = torch.log_softmax(tiny_lm(input_ids=torch.tensor([ids])).logits[0], dim=-1)
        full = sum(float(logp[t - 1, ids[t]]) for t in range(len(base), len(ids)))
        assert cached[k] == pytest.approx(full, abs=1e-3)


def test_probe_runs_end_to_end_and_writes_a_loadable_profile(
    tiny_lm: Any, byte_tokenizer: Any, tmp_path: Path
) -> None:
    items = generate_items(2, 3, seed=0, families=["access_code"])
    result = calibrate(tiny_lm, byte_tokenizer, items)
    assert result.accuracy.shape == (3,)
    np.testing.assert_allclose(result.accuracy, result.correct / result.n_items)
    expected_ci = [wilson_interval(int(c), result.n_items) for c in result.correct]
    np.testing.assert_allclose(result.accuracy_ci, expected_ci)
    profile = slot_profile(result, metric="candidate_prob", label="tiny", metadata={})
    path = profile.save(tmp_path / "slots.json")
    loaded = TabulatedProfile.load(path)
    assert loaded.kind == "slot"
    assert len(loaded.weights) == 3
    np.testing.assert_allclose(
        np.asarray(loaded.weights) / sum(loaded.weights),
        result.candidate_prob / result.candidate_prob.sum(),
    )
    placement = bookend.reorder(["a", "b", "c"], [0.2, 0.9, 0.5], model=str(path))
    assert placement.profile == loaded
    # The best chunk goes to the slot the probe measured best.
    assert placement.order[int(np.argmax(loaded.weights))] == 1


def test_wilson_interval_known_values() -> None:
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-4)
    assert high == pytest.approx(0.9433, abs=1e-4)
    assert wilson_interval(0, 5)[0] == 0.0
    with pytest.raises(ValueError, match="trials"):
        wilson_interval(0, 0)


def test_outcomes_carry_the_gold_span_in_tokens(tiny_lm: Any, byte_tokenizer: Any) -> None:
    items = generate_items(2, 3, seed=1, families=["access_code"], filler=(0, 1))
    result = calibrate(tiny_lm, byte_tokenizer, items)
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
    other_k = calibrate(tiny_lm, byte_tokenizer, generate_items(1, 2, seed=1)).outcomes
    with pytest.raises(ValueError, match="mix K"):
        summarise([*result.outcomes, *other_k])
