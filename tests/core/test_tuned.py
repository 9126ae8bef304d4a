"""``config=`` everywhere in the core: one loader (:func:`bookend_rag.load_config`) of a config or a
``tuned.json`` in every form, settings that override it, the provenance kept, and the warning
when a tuned config meets another model."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

import bookend_rag
from bookend_rag.cli import main

CHUNKS = ["alpha " * 4, "beta " * 4, "gamma " * 4, "delta " * 4]
SCORES = [0.2, 0.9, 0.5, 0.7]
#: A tuned config as ``bookend tune`` writes it (provenance abridged to the fields read here).
PROVENANCE = {
    "model": "smollm2:SmolLM2-135M-Instruct.Q4_1.gguf|float32",
    "model_sha256": "ab" * 32,
    "chosen": "relevance",
}
SETTINGS = {"model": "gpt2", "strategy": "relevance", "suffix_tokens": 0}


def _tuned(path: Path) -> Path:
    document = {"config": bookend_rag.PlacementConfig(**SETTINGS).model_dump(mode="json")}
    path.write_text(json.dumps({**document, "provenance": PROVENANCE}), encoding="utf-8")
    return path


def test_every_form_loads_the_same_config_and_a_tuned_one_keeps_its_provenance(
    tmp_path: Path,
) -> None:
    expected = bookend_rag.PlacementConfig(**SETTINGS)
    tuned_file = _tuned(tmp_path / "tuned.json")
    plain_file = tmp_path / "config.json"
    plain_file.write_text(json.dumps(expected.model_dump(mode="json")), encoding="utf-8")
    tuned_text = tuned_file.read_text(encoding="utf-8")
    forms: list[Any] = [
        expected,
        bookend_rag.TunedConfig(expected),
        str(plain_file),
        plain_file,
        str(tuned_file),
        tuned_file,
        tuned_text,
        json.loads(tuned_text),
        expected.model_dump(),
    ]
    for form in forms:
        assert bookend_rag.load_config(form).config == expected, form
    tuned = bookend_rag.load_config(tuned_file)
    assert tuned.provenance == PROVENANCE
    assert tuned.model_id == PROVENANCE["model"]
    assert tuned.model_sha256 == PROVENANCE["model_sha256"]
    assert tuned.source == str(tuned_file)
    assert bookend_rag.load_config(plain_file).provenance is None
    # The document round-trips: a tuned config as tuned.json, a plain one as its settings.
    assert bookend_rag.load_config(tuned.to_json()) == bookend_rag.TunedConfig(expected, PROVENANCE)
    assert bookend_rag.load_config(plain_file).to_json() == expected.model_dump(mode="json")


def test_reorder_and_from_config_place_with_the_config_and_explicit_settings_override(
    tmp_path: Path,
) -> None:
    path = _tuned(tmp_path / "tuned.json")
    by_keywords = bookend_rag.reorder(
        CHUNKS, SCORES, model="gpt2", strategy="relevance", suffix_tokens=0
    )
    assert by_keywords.items == [CHUNKS[i] for i in (1, 3, 2, 0)]  # most relevant first
    assert bookend_rag.reorder(CHUNKS, SCORES, config=str(path)).items == by_keywords.items
    placer: bookend_rag.Bookend[str] = bookend_rag.Bookend.from_config(path)
    assert placer.config == bookend_rag.PlacementConfig(**SETTINGS)
    # An explicit setting wins over the config's; the rest stay the config's.
    alternate = bookend_rag.reorder(CHUNKS, SCORES, config=path, strategy="alternate")
    assert alternate.strategy == "alternate"
    assert alternate.layout.suffix_tokens == 0
    by_settings = bookend_rag.reorder(
        CHUNKS, SCORES, model="gpt2", strategy="alternate", suffix_tokens=0
    )
    assert alternate.items == by_settings.items
    trimmed: bookend_rag.Bookend[str] = bookend_rag.Bookend.from_config(
        path, top_k=2, text=str.strip
    )
    assert trimmed.config.top_k == 2
    assert trimmed.config.strategy == "relevance"
    assert trimmed.place(CHUNKS, SCORES).items == [CHUNKS[1], CHUNKS[3]]


def test_a_tuned_config_used_with_another_model_warns_naming_both(tmp_path: Path) -> None:
    path = _tuned(tmp_path / "tuned.json")
    with pytest.warns(UserWarning, match="tuned on model") as caught:
        placement = bookend_rag.reorder(CHUNKS, SCORES, config=path, model="qwen2.5-7b")
    message = str(caught[0].message)
    assert PROVENANCE["model"] in message
    assert "model='qwen2.5-7b'" in message
    assert str(path) in message
    assert placement.profile.name == bookend_rag.resolve_profile("qwen2.5-7b").name
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # Its own profile, the recorded id or its name, and any other setting: no warning.
        bookend_rag.reorder(CHUNKS, SCORES, config=path, model="gpt2", top_k=3)
        tuned = bookend_rag.load_config(path)
        assert not tuned.warn_if_other_model(model=PROVENANCE["model"])
        assert not tuned.warn_if_other_model(model="smollm2")
        assert not tuned.warn_if_other_model(sha256=PROVENANCE["model_sha256"])
        # A plain config has no model to compare with.
        bookend_rag.reorder(CHUNKS, SCORES, config=SETTINGS, model="qwen2.5-7b")
    with pytest.warns(UserWarning, match="have sha256 " + "cd" * 32):
        assert tuned.warn_if_other_model(sha256="cd" * 32, in_use="other")


def test_a_tuned_config_with_another_model_says_so_in_the_notes_and_explain(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 38, 3.8: only the warning said so; a placement kept, logged or explained later did
    not. Every placement of the placer carries the line, a placer derived with the same model
    too, and the CLI's JSON holds it."""
    path = _tuned(tmp_path / "tuned.json")
    with pytest.warns(UserWarning, match="tuned on model") as caught:
        placement = bookend_rag.reorder(CHUNKS, SCORES, config=path, model="qwen2.5-7b")
    line = str(caught[0].message)
    with pytest.warns(UserWarning, match="tuned on model"):
        placer = bookend_rag.Bookend.from_config(path, model="qwen2.5-7b")
    assert placement.notes == (line,)
    assert f"note: {line}" in placement.explain()
    assert placer.place(CHUNKS, SCORES).notes == (line,)
    assert placer.with_settings(top_k=2).place(CHUNKS, SCORES).notes == (line,)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert bookend_rag.reorder(CHUNKS, SCORES, config=path, model="gpt2").notes == ()
        chunks = tmp_path / "chunks.json"
        chunks.write_text(json.dumps(CHUNKS), encoding="utf-8")
        assert main(["reorder", str(chunks), "--config", str(path), "--model", "qwen2.5-7b"]) == 0
    assert json.loads(capsys.readouterr().out)["notes"] == [line]


def test_the_cli_reorders_with_a_config_file_and_its_options_override(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _tuned(tmp_path / "tuned.json")
    chunks = tmp_path / "chunks.json"
    chunks.write_text(
        json.dumps([{"text": t, "score": s} for t, s in zip(CHUNKS, SCORES, strict=True)]),
        encoding="utf-8",
    )
    assert main(["reorder", str(chunks), "--config", str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [c["text"] for c in out["chunks"]] == bookend_rag.reorder(
        CHUNKS, SCORES, config=path
    ).items
    assert main(["reorder", str(chunks), "--config", str(path), "--top-k", "2"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [c["text"] for c in out["chunks"]] == [CHUNKS[1], CHUNKS[3]]
    # Without --config the defaults are the library's.
    assert main(["reorder", str(chunks)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [c["text"] for c in out["chunks"]] == bookend_rag.reorder(CHUNKS, SCORES).items
