"""PlacementConfig: one validated, serialisable set of placement settings."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

import bookend_rag
from bookend_rag import (
    Bookend,
    ModelSpec,
    PlacementConfig,
    TabulatedProfile,
    TheoryProfile,
    resolve_profile,
)
from bookend_rag.adapters import PLACEMENT_OPTIONS
from bookend_rag.profiles.io import profile_ref
from bookend_rag.weighing import slot_weights

SLOTS = TabulatedProfile(weights=(3.0, 1.0, 1.0, 2.0), kind="slot", label="measured")
FITTED = bookend_rag.load_profile(
    Path(__file__).resolve().parents[2] / "bench/validator/smollm2-135m-fitted-profile.json"
)


@pytest.mark.parametrize(
    "model",
    [
        "gpt2",
        "liu2023:claude-1.3",
        {"depth": 30, "attn_share": 0.05},
        ModelSpec(depth=30, attn_share=0.05),
        TheoryProfile(ModelSpec(depth=30, attn_share=0.05)),
        SLOTS,
        FITTED,
    ],
)
def test_config_round_trips_through_json(model: Any) -> None:
    config = PlacementConfig(model=model, strategy="relevance", top_k=5, equal_lengths=True)
    text = config.model_dump_json()
    again = PlacementConfig.model_validate(json.loads(text))
    assert again == config
    assert resolve_profile(again.model) == resolve_profile(config.model)
    if not isinstance(model, str):
        assert isinstance(config.model, dict)  # stored in its serialisable form


def test_a_path_is_stored_not_read(tmp_path: Path) -> None:
    path = tmp_path / "later.json"
    config = PlacementConfig(model=path)
    assert config.model == str(path)
    with pytest.raises(ValueError, match="not found"):
        resolve_profile(config.model)
    SLOTS.save(path)
    assert resolve_profile(config.model) == SLOTS
    TabulatedProfile(weights=(1.0, 2.0), kind="slot").save(path)
    assert slot_weights(resolve_profile(config.model), 2)[1] > 1  # a rewritten file is read again


def test_every_field_is_described() -> None:
    for name, field in PlacementConfig.model_fields.items():
        assert field.description, name
    assert set(PLACEMENT_OPTIONS) == set(PlacementConfig.model_fields)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"bugdet": 10}, "unknown setting bugdet=10"),
        ({"modle": "gpt2"}, "unknown setting modle='gpt2'"),
        ({"budget": math.nan}, "budget=nan"),
        ({"budget": math.inf}, "budget=inf"),
        ({"budget": True}, "budget=True"),
        ({"top_k": 0}, "top_k=0"),
        ({"lengths": "chars"}, "lengths='chars'"),
        ({"equal_lengths": "sometimes"}, "equal_lengths='sometimes'"),
        ({"model": 12}, "model=12"),
        ({"model": {"layers": 3}}, "an inline model must be"),
        (
            {"model": {"depth": 0}},
            "model={'depth': 0}: depth=0: Input should be greater than or equal to 1",
        ),
        ({"model": {"depth": 3, "layers": 2}}, "unknown field layers=2"),
        ({"model": "lama-3.1-8b"}, "did you mean 'llama-3.1-8b'"),
    ],
)
def test_bad_settings_raise_one_line_naming_them(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)) as info:
        Bookend(**settings)
    assert "\n" not in str(info.value)


def test_from_config_is_the_keyword_form() -> None:
    config = PlacementConfig(model="gpt2", strategy="alternate", budget=30, top_k=3)
    chunks = ["a " * 20, "b " * 5, "c " * 5, "d " * 5, "e " * 5]
    scores = [0.9, 0.1, 0.5, 0.7, 0.3]
    by_config: Bookend[str] = Bookend.from_config(config)
    by_keywords: Bookend[str] = Bookend("gpt2", strategy="alternate", budget=30, top_k=3)
    assert by_config.place(chunks, scores).order == by_keywords.place(chunks, scores).order
    assert by_config.config == by_keywords.config == config
    assert Bookend.from_config(config.model_dump()).config == config  # the mapping form
    with pytest.raises(ValueError, match="config must be a PlacementConfig"):
        Bookend.from_config(5)  # type: ignore[arg-type]


def test_top_k_keeps_the_most_relevant_before_the_budget() -> None:
    placement = bookend_rag.reorder(list("abcde"), [0.1, 0.9, 0.5, 0.7, 0.3], top_k=3)
    assert sorted(placement.items) == ["b", "c", "d"]
    assert placement.dropped == (0, 4)


def test_equal_lengths_setting_ignores_token_lengths() -> None:
    chunks = ["a " * 400, "b", "c " * 50, "d"]
    scores = [0.9, 0.8, 0.3, 0.1]
    rank_only = bookend_rag.reorder(chunks, scores, lengths=[1, 1, 1, 1])
    assert bookend_rag.reorder(chunks, scores, equal_lengths=True).order == rank_only.order
    assert Bookend(equal_lengths=True).place(chunks, scores).order == rank_only.order


@pytest.mark.parametrize(
    ("counter", "message"),
    [
        (
            lambda text: [1, 2],
            "token_counter must return a finite, non-negative number, got [1, 2]",
        ),
        (lambda text: math.nan, "got nan"),
        (lambda text: -3, "got -3"),
    ],
)
def test_a_bad_token_counter_is_named(counter: Any, message: str) -> None:
    with pytest.raises(ValueError, match="token_counter") as info:
        bookend_rag.reorder(["a", "b"], token_counter=counter)
    assert message in str(info.value)


def test_tokenizer_names_a_local_hugging_face_tokenizer(tmp_path: Path) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    vocab = {"[UNK]": 0, "alpha": 1, "beta": 2}
    model = tokenizers.models.WordLevel(vocab, unk_token="[UNK]")
    tok = tokenizers.Tokenizer(model)
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tok.save(str(tmp_path / "tokenizer.json"))
    config = PlacementConfig(tokenizer=str(tmp_path))
    placement = Bookend.from_config(config).place(["alpha beta alpha", "beta"], [0.2, 0.9])
    assert placement.lengths.tolist() == [3.0, 1.0]
    with pytest.raises(ValueError, match="tokenizer='no-such-encoding'"):
        Bookend(tokenizer="no-such-encoding")


def test_profile_ref_rejects_a_profile_dict_without_weights() -> None:
    with pytest.raises(ValueError, match="needs 'weights'"):
        profile_ref({"format": "bookend-profile", "version": 1})


def test_a_text_getter_returning_none_is_named() -> None:
    with pytest.raises(ValueError, match=r"text= must return a string, got None for items\[0\]"):
        bookend_rag.reorder([{"t": None}, {"t": "x"}], text="t")
