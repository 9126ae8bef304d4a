"""The RoPE switch really removes the rotation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

from bookend_rag_lab.influence.architectures import random_model
from bookend_rag_lab.influence.rope import RopeOff, rotary_modules


def _final_state(model: torch.nn.Module, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return model(inputs_embeds=x, position_ids=positions).last_hidden_state


def test_rope_off_returns_identity_rotation_and_restores_it(
    qwen2_config: Callable[..., Any],
) -> None:
    model = random_model(qwen2_config(), seed=0)
    (rotary,) = rotary_modules(model)
    x = torch.randn(1, 8, 64)
    pos = torch.arange(8)[None]
    with RopeOff(model):
        cos, sin = rotary(x, pos)
    assert torch.equal(cos, torch.ones_like(cos))
    assert torch.equal(sin, torch.zeros_like(sin))
    cos, sin = rotary(x, pos)
    assert not torch.equal(sin, torch.zeros_like(sin))


def test_rope_off_makes_outputs_blind_to_position_ids(qwen2_config: Callable[..., Any]) -> None:
    model = random_model(qwen2_config(), seed=0)
    x = torch.randn(1, 12, 64)
    natural = torch.arange(12)[None]
    scrambled = torch.tensor([[5, 90, 3, 41, 7, 200, 11, 0, 63, 17, 120, 2]])
    with RopeOff(model):
        assert torch.allclose(
            _final_state(model, x, natural), _final_state(model, x, scrambled), atol=1e-5
        )
    # with the rotation on, the same change of positions changes the output
    assert not torch.allclose(
        _final_state(model, x, natural), _final_state(model, x, scrambled), atol=1e-3
    )


def test_rope_off_refuses_learned_positions(gpt2_config: Callable[..., Any]) -> None:
    with pytest.raises(ValueError, match="no rotary"):
        RopeOff(random_model(gpt2_config(), seed=0))
