"""Loading local weights: names, devices, dtypes and paths, and the scorer of saved weights."""

from pathlib import Path

import pytest

from bookend_rag_lab.models import LocalScorer, load_scorer, local, weights


def test_bad_device_dtype_and_path_name_the_parameter(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="dtype="):
        local.load_trained(tmp_path, dtype="int8")
    with pytest.raises(ValueError, match="device="):
        local.load_trained(tmp_path, device="tpu")
    with pytest.raises(ValueError, match="gemma3-270m"):
        weights.resolve_weights(tmp_path / "nowhere")


def test_gemma3_is_assembled_once_into_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BOOKEND_CACHE", str(tmp_path))
    target = tmp_path / "models" / weights.GEMMA3_FILE
    target.parent.mkdir(parents=True)
    target.write_bytes(b"GGUF")  # already assembled: returned as is, the package is not asked
    assert weights.resolve_weights("gemma3-270m") == target
    assert weights.resolve_weights("GEMMA3-270M") == target


def test_load_rejects_missing_and_non_gguf_files(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="does not exist"):
        local.load_trained(tmp_path / "nothing")
    other = tmp_path / "weights.bin"
    other.write_bytes(b"")
    with pytest.raises(ValueError, match="gguf"):
        local.load_trained(other)


def test_load_scorer_reads_saved_weights_with_its_cache(saved_model: Path, tmp_path: Path) -> None:
    cache = tmp_path / "calls.jsonl"
    scorer = load_scorer(saved_model, cache=cache)
    assert isinstance(scorer, LocalScorer)
    assert scorer.model_id == f"{saved_model}|float32"
    assert scorer.spec.depth == 2  # the saved config's layers
    assert scorer.spec.name == saved_model.name  # named after the weights, not the config
    first = scorer.score("The code is", ["12", "7"])
    assert scorer.calls == 1
    again = load_scorer(saved_model, cache=cache)
    assert again.is_cached("The code is", ["12", "7"])
    assert again.score("The code is", ["12", "7"]) == first
    assert again.calls == 0
