"""Profile references: every form of ``model=`` resolves to a profile."""

from __future__ import annotations

from pathlib import Path

import pytest

from bookend_rag import Layout, ModelSpec, TheoryProfile, resolve_profile
from bookend_rag.profiles.io import is_profile_path

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


def test_a_model_string_names_a_file_by_json_suffix_or_an_existing_regular_file(
    tmp_path: Path,
) -> None:
    plain = tmp_path / "profile"
    plain.write_text("{}", encoding="utf-8")
    assert is_profile_path(str(plain))
    assert is_profile_path("missing.JSON")  # by its suffix, whether or not it exists
    assert not is_profile_path(str(tmp_path))  # a directory
    assert not is_profile_path("llama-3.1-8b")
    assert not is_profile_path("meta-llama/Llama-3.1-8B")
    assert not is_profile_path("a\0b")  # a NUL, which no file name holds
