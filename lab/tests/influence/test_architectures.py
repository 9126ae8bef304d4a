"""Configurations from presets, config.json files and objects; width shrink; offline only."""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from bookend_rag import available_presets
from bookend_rag_lab.influence.architectures import build_config, nominal_spec, shrink_width


def test_presets_carry_published_dimensions() -> None:
    qwen = build_config("qwen2-0.5b")
    assert (qwen.hidden_size, qwen.num_hidden_layers, qwen.num_key_value_heads) == (896, 24, 2)
    gpt2 = build_config("gpt2")
    assert (gpt2.n_embd, gpt2.n_layer, gpt2.n_head) == (768, 12, 12)
    assert nominal_spec(gpt2).depth == 12


# The presets whose published dimensions are bundled; the others have a depth only.
BUILDABLE = sorted(
    json.loads(
        resources.files("bookend_rag").joinpath("data/architectures.json").read_text("utf-8")
    )["presets"]
)


def test_buildable_presets_are_presets() -> None:
    assert set(BUILDABLE) <= set(available_presets())
    assert len(BUILDABLE) >= 38


@pytest.mark.parametrize("name", BUILDABLE)
def test_every_buildable_preset_builds_a_shrunk_config(name: str) -> None:
    config = build_config(name, width=128, n_tokens=512)
    assert config.num_hidden_layers >= 12
    assert 64 <= config.hidden_size <= 128
    kv = getattr(config, "num_key_value_heads", None)
    assert kv is None or config.num_attention_heads % kv == 0


def test_shrink_width_keeps_head_dim_and_scales_heads() -> None:
    small = shrink_width(build_config("qwen2-0.5b"), 256)
    assert small.hidden_size == 256
    assert small.num_attention_heads == 4  # 14 heads of 64 scaled by 256/896
    assert small.num_key_value_heads == 1
    assert small.intermediate_size == round(4864 * 256 / 896)
    with pytest.raises(ValueError, match="width"):
        shrink_width(build_config("gpt2"), 4)


def test_config_json_path_and_object(tmp_path: Path, qwen2_config: Callable[..., Any]) -> None:
    config = qwen2_config()
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config.to_dict()))
    for source in (path, tmp_path, config):
        built = build_config(source)
        assert built.hidden_size == 64
        assert built.num_hidden_layers == 2
    assert config.vocab_size == 300  # the object passed in is not modified


def test_errors_name_the_problem(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="n_tokens"):
        build_config("gpt2", n_tokens=4096)  # learned positions stop at 1024
    with pytest.raises(ValueError, match="preset"):
        build_config("no-such-model")
    with pytest.raises(ValueError, match=r"no published dimensions.*config\.json"):
        build_config("qwen3-8b")  # a depth, no dimensions bundled
    with pytest.raises(ValueError, match=r"config\.json"):
        build_config(tmp_path / "missing.json")
