"""Named weights, devices and dtypes of ``load_trained`` (no model is loaded)."""

from pathlib import Path

import pytest

from bookend.lab.models import local, weights


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
