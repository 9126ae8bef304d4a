"""The operation counts of a model call against torch's own count of the same forward pass, and the
key counts against brute force."""

from __future__ import annotations

from typing import Any

import pytest
import torch
import transformers
from hypothesis import given
from hypothesis import strategies as st
from torch.utils.flop_counter import FlopCounterMode

from bookend_rag_lab.models import flops
from bookend_rag_lab.models.flops import ModelShape, call_flops


@given(
    start=st.integers(0, 300),
    new=st.integers(0, 300),
    window=st.none() | st.integers(1, 200),
)
def test_the_keys_read_are_the_sum_over_positions(start: int, new: int, window: int | None) -> None:
    brute = sum(p + 1 if window is None else min(p + 1, window) for p in range(start, start + new))
    assert flops._keys(start, start + new, window) == brute


def _eager(config: Any) -> Any:
    """The model with eager attention: its attention is two matrix products that torch counts
    (it does not count the CPU's fused attention kernel)."""
    return transformers.AutoModelForCausalLM.from_config(config, attn_implementation="eager").eval()


def _counted(lm: Any, ids: torch.Tensor, **kwargs: Any) -> dict[str, int]:
    """torch's count of the forward pass, by operator name (``aten.mm``: the projections and the
    head; ``aten.bmm``: the attention)."""
    with FlopCounterMode(display=False) as counter, torch.inference_mode():
        lm(input_ids=ids, **kwargs)
    return {str(op): n for op, n in counter.get_flop_counts()["Global"].items()}


def test_a_decode_step_counts_what_torch_counts(llama_config: Any) -> None:
    # One new token after a cache: every product is real (no causal mask wasted), so torch's count
    # of the matrix products and of the attention is the whole exact figure.
    lm = _eager(llama_config)
    shape = ModelShape.from_config(lm.config.to_dict())
    past = 37
    with torch.inference_mode():
        cache = lm(input_ids=torch.randint(0, 256, (1, past)), use_cache=True).cache
    counted = _counted(lm, torch.randint(0, 256, (1, 1)), cache=cache, logits_to_keep=1)
    expected = shape.forward(1, past=past, logits=1)
    assert counted == {"aten.mm": expected.linear + expected.head, "aten.bmm": expected.attention}


def test_a_prompt_pass_counts_the_products_torch_counts(llama_config: Any) -> None:
    # A whole prompt: eager attention computes the full square (the causal mask's zeros
    # included), twice the keys a causal model reads, less the diagonal.
    lm = _eager(llama_config)
    shape = ModelShape.from_config(lm.config.to_dict())
    counted = _counted(lm, torch.randint(0, 256, (1, 50)), logits_to_keep=1)
    expected = shape.forward(50, logits=1)
    assert counted["aten.mm"] == expected.linear + expected.head
    per_key = 2 * 2 * shape.heads * shape.head_dim * shape.layers
    assert counted["aten.bmm"] == per_key * 50 * 50
    assert expected.attention == per_key * 50 * 51 // 2


def test_sliding_layers_read_at_most_the_window(gemma3_config: Any) -> None:
    shape = ModelShape.from_config(gemma3_config.to_dict())
    assert shape.sliding == (True, False, True)
    assert shape.window == 8
    per_key = 2 * 2 * 4 * 16
    keys = 2 * (sum(range(1, 9)) + 12 * 8) + sum(range(1, 21))  # 20 tokens
    assert shape.forward(20).attention == per_key * keys


def test_a_call_is_the_prompt_then_each_candidate_after_it(llama_config: Any) -> None:
    shape = ModelShape.from_config(llama_config.to_dict())
    call = call_flops(shape, 100, [1, 3])
    assert call.prompt == shape.forward(100)
    # The one-token candidate is read off the prompt's last position: nothing more to run.
    assert call.candidates == shape.forward(2, past=100, logits=2)
    assert call.total == call.prompt.total + call.candidates.total


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda s: s.forward(2, logits=3), r"logits=3 is more than the new tokens, new=2"),
        (lambda s: s.forward(-1), r"new must be a non-negative integer, got new=-1"),
        (lambda s: call_flops(s, 0, [1]), r"got prompt_tokens=0, continuations=\[1\]"),
        (lambda s: ModelShape.from_config({"hidden_size": 8}), r"config has no num_attention"),
    ],
)
def test_bad_counts_are_refused_with_one_line(llama_config: Any, call: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call(ModelShape.from_config(llama_config.to_dict()))
