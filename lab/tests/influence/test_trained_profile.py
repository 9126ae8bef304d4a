"""The validator on trained weights: a model saved with save_pretrained yields a usable profile;
the bundled text gives the windows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import bookend_rag
from bookend_rag_lab.influence.runner import measure_trained, measured_profile
from bookend_rag_lab.influence.text import bundled_text, hashed_word_ids, token_windows
from bookend_rag_lab.models.local import load_trained


def test_saved_model_loads_and_measures_a_usable_profile(saved_model: Path, tmp_path: Path) -> None:
    model = load_trained(saved_model)
    assert not model.lm.training
    measurement = measure_trained(model, n_tokens=48, n_inputs=2, n_probes=4)
    assert measurement.samples.shape == (2, 48)
    profile = measured_profile(measurement, label="tiny", metadata={"n": 48})
    path = profile.save(tmp_path / "profile.json")
    assert bookend_rag.load_profile(path).kind == "position"
    placement = bookend_rag.reorder(["a", "b", "c", "d"], [0.9, 0.1, 0.5, 0.3], model=str(path))
    assert sorted(placement.order) == [0, 1, 2, 3]


def test_bundled_text_windows() -> None:
    text = bundled_text()
    assert len(text.split()) > 1500
    ids = hashed_word_ids(text, 1000)
    windows = token_windows(ids, 4096, 3)  # longer than the text: wraps around
    assert windows.shape == (3, 4096)
    assert np.all((windows >= 0) & (windows < 1000))
    with pytest.raises(ValueError, match="n_tokens"):
        token_windows(ids, 1, 1)
