"""Switch rotary position embeddings off: every rotation becomes the identity.

RoPE rotates query and key vectors by ``q' = q cos(theta p) + rot(q) sin(theta p)``. Forcing the
rotary module to return ``cos = 1`` and ``sin = 0`` makes ``q' = q`` and ``k' = k`` at every
position, so attention sees no position at all except through the causal mask. This tests the
paper's claim that the profile's shape comes from causal averaging, not from the position code.
"""

from __future__ import annotations

from typing import Any

import torch

from bookend_rag_lab.influence.hooks import HookScope

__all__ = ["RopeOff", "rotary_modules"]


def rotary_modules(model: torch.nn.Module) -> list[torch.nn.Module]:
    """Every rotary-embedding module of ``model`` (class names ending in ``RotaryEmbedding``)."""
    return [m for m in model.modules() if type(m).__name__.endswith("RotaryEmbedding")]


def _identity_rotation(_module: torch.nn.Module, _args: Any, output: Any) -> Any:
    cos, sin = output[0], output[1]
    return (torch.ones_like(cos), torch.zeros_like(sin), *output[2:])


class RopeOff(HookScope):
    """Context manager making every rotary embedding of ``model`` the identity rotation.

    Raises:
        ValueError: when the model has no rotary embeddings (e.g. GPT-2's learned positions).
    """

    def __init__(self, model: torch.nn.Module) -> None:
        self._modules = rotary_modules(model)
        if not self._modules:
            raise ValueError(
                f"model={type(model).__name__} has no rotary position embeddings to switch off"
            )
        super().__init__()

    def __enter__(self) -> RopeOff:
        self._handles = [m.register_forward_hook(_identity_rotation) for m in self._modules]
        return self
