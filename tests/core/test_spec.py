"""ModelSpec: validation, presets and reading local configs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from bookend_rag import ModelSpec, available_presets
from bookend_rag.spec import preset_key

FAMILIES = ("gpt2", "llama-2", "llama-3-", "llama-3.1", "mistral", "mixtral", "qwen2-", "qwen2.5",
            "gemma-2", "phi-3", "smollm2")  # fmt: skip


def test_attn_share_defaults_to_inverse_depth() -> None:
    spec = ModelSpec(depth=32)
    assert spec.attn_share == pytest.approx(1 / 32)
    assert spec.recency_delta == pytest.approx((1 - 1 / 32) ** 32)
    assert ModelSpec(depth=32, attn_share=0.2).attn_share == 0.2


def test_spec_is_immutable_and_hashable() -> None:
    spec = ModelSpec(depth=12, name="x")
    with pytest.raises(ValidationError):  # assignment: pydantic's own error
        spec.depth = 3  # type: ignore[misc]
    assert hash(spec) == hash(ModelSpec(depth=12, name="x"))


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"depth": 0}, "depth"),
        ({"depth": float("inf")}, "depth"),
        ({"depth": 4, "attn_share": 0}, "attn_share"),
        ({"depth": 4, "attn_share": 1.01}, "attn_share"),
        ({"depth": 4, "context_length": 0}, "context_length"),
    ],
)
def test_invalid_specs_raise_value_errors_naming_the_field(
    kwargs: dict[str, float], field: str
) -> None:
    with pytest.raises(ValueError, match=field):
        ModelSpec(**kwargs)  # type: ignore[arg-type]


def test_presets_cover_the_required_families() -> None:
    names = available_presets()
    assert len(names) >= 15
    for family in FAMILIES:
        assert any(n.startswith(family) for n in names), family
    for name in names:
        spec = ModelSpec.preset(name)
        assert spec.depth >= 12
        assert spec.context_length is not None
        assert spec.name == name


def test_preset_values_and_aliases() -> None:
    spec = ModelSpec.preset("Llama-3.1-8B")
    assert (spec.depth, spec.context_length) == (32, 131072)
    assert ModelSpec.preset("meta-llama/Llama-3.1-8B") == spec
    assert ModelSpec.preset("gpt2").depth == 12
    assert ModelSpec.preset("smollm2_135m").depth == 30
    assert ModelSpec.preset("qwen2-0.5b", attn_share=0.2).attn_share == 0.2


def test_unknown_preset_lists_close_matches() -> None:
    with pytest.raises(ValueError, match=r"unknown preset name='lama-3\.1-8b'.*'llama-3\.1-8b'"):
        ModelSpec.preset("lama-3.1-8b")


def test_from_hf_config_file_directory_and_dict(tmp_path: Path) -> None:
    config = {"model_type": "llama", "num_hidden_layers": 30, "max_position_embeddings": 8192}
    (tmp_path / "config.json").write_text(json.dumps(config))
    for source in (tmp_path, tmp_path / "config.json", str(tmp_path), config):
        spec = ModelSpec.from_hf_config(source)
        assert (spec.depth, spec.context_length) == (30, 8192)
        assert spec.attn_share == pytest.approx(1 / 30)
    gpt2 = ModelSpec.from_hf_config({"model_type": "gpt2", "n_layer": 12, "n_positions": 1024})
    assert (gpt2.depth, gpt2.context_length) == (12, 1024)
    nested = ModelSpec.from_hf_config(
        {"model_type": "llava", "text_config": {"num_hidden_layers": 40}}
    )
    assert nested.depth == 40
    assert nested.context_length is None


def test_from_hf_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"no config\.json"):
        ModelSpec.from_hf_config(tmp_path)
    with pytest.raises(ValueError, match="num_hidden_layers"):
        ModelSpec.from_hf_config({"model_type": "x"})
    with pytest.raises(ValueError, match="depth"):
        ModelSpec.from_hf_config({"num_hidden_layers": "12"})


@pytest.mark.parametrize(
    ("hf_id", "preset"),
    [
        ("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b"),
        ("Qwen/Qwen2.5-7B-Instruct", "qwen2.5-7b"),
        ("mistralai/Mistral-7B-Instruct-v0.3", "mistral-7b"),
        ("HuggingFaceTB/SmolLM2-135M-Instruct", "smollm2-135m"),
        ("google/gemma-2-9b-it", "gemma-2-9b"),
    ],
)
def test_instruct_ids_map_to_their_base_preset(hf_id: str, preset: str) -> None:
    assert ModelSpec.preset(hf_id) == ModelSpec.preset(preset)


@pytest.mark.parametrize(
    ("file", "preset"),
    [
        ("SmolLM2-135M-Instruct.Q4_1.gguf", "smollm2-135m"),
        ("/models/gemma-3-270m-q4_k_m.gguf", "gemma-3-270m"),
        ("Llama-3.1-8B-Instruct-Q8_0.gguf", "llama-3.1-8b"),
        ("qwen2.5-0.5b-instruct-f16.gguf", "qwen2.5-0.5b"),
        ("Mistral-7B-Instruct-v0.3.IQ4_XS.gguf", "mistral-7b"),
    ],
)
def test_gguf_file_names_map_to_their_preset(file: str, preset: str) -> None:
    assert preset_key(file) == preset


def test_names_of_no_preset_have_no_key() -> None:
    assert preset_key("mystery-model.gguf") is None
    assert preset_key("q4.gguf") is None


def test_preset_of_none_names_the_parameter() -> None:
    with pytest.raises(ValueError, match="name=None"):
        ModelSpec.preset(None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"{not json", "is not a JSON config.json"),
        (b"[1, 2, 3]", "must hold a JSON object, got a list"),
        (b"\x89PNG\r\n\x1a\n\x00\xff", "is not a JSON config.json"),
    ],
)
def test_from_hf_config_names_a_bad_file(content: bytes, message: str, tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=re.escape(message)):
        ModelSpec.from_hf_config(path)
