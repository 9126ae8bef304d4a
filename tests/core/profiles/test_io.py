"""Profile references: every form of ``model=`` resolves to a profile."""

from __future__ import annotations

import pytest

from bookend_rag import Layout, ModelSpec, TheoryProfile, resolve_profile

LLAMA = TheoryProfile(ModelSpec.preset("llama-3.1-8b"))


def test_resolve_profile_accepts_every_model_form() -> None:
    spec = ModelSpec(depth=8)
    assert resolve_profile(spec) == TheoryProfile(spec)
    assert resolve_profile(LLAMA) is LLAMA
    assert resolve_profile("gpt2") == TheoryProfile(ModelSpec.preset("gpt2"))
    with pytest.raises(ValueError, match="model must be"):
        resolve_profile(12)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="prefix_tokens"):
        Layout(prefix_tokens=-1)
