"""What eval and tune call "the default": bookend's own default for the model, so a model bookend
has measured is judged with its shipped measured profile."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import bookend_rag
from bookend_rag_lab.experiments.setup import default_model
from bookend_rag_lab.models import load_scorer
from bookend_rag_lab.reorderers import DEFAULT, THEORY, eval_strategies


def test_weights_named_for_a_measured_model_default_to_its_measured_profile(
    saved_model: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    named = tmp_path_factory.mktemp("named")  # saved_model is a tmp_path: copy out of it
    measured = shutil.copytree(saved_model, named / "SmolLM2-135M-Instruct")
    other = shutil.copytree(saved_model, named / "tiny-llama")
    default = default_model(None, load_scorer(measured))
    assert default == "SmolLM2-135M-Instruct"
    assert "measured" in bookend_rag.resolve_profile(default).name
    assert isinstance(default_model(None, load_scorer(other)), bookend_rag.ModelSpec)
    assert default_model("gpt2", load_scorer(measured)) == "gpt2"  # a given theory wins


def test_eval_compares_the_default_only_where_it_is_not_the_theory() -> None:
    spec = bookend_rag.ModelSpec(depth=30)
    measured = eval_strategies(spec, {}, default="smollm2-135m")
    assert {THEORY, DEFAULT} <= set(measured)
    scores, lengths = [0.9, 0.5, 0.1], [40.0, 40.0, 40.0]
    assert measured[DEFAULT](scores, lengths) == [1, 2, 0]  # SmolLM2 reads its last slot best
    assert measured[THEORY](scores, lengths) == [0, 1, 2]
    assert DEFAULT not in eval_strategies(spec, {}, default=spec)
