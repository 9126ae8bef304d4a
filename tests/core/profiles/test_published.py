"""The published curves of Liu et al. 2023 as slot profiles."""

from __future__ import annotations

import numpy as np
import pytest

from bookend_rag import available_profile_presets, resolve_profile
from bookend_rag.weighing import slot_weights


def test_published_curves_are_presets() -> None:
    names = available_profile_presets()
    assert "liu2023:gpt-3.5-turbo" in names
    assert "liu2023:mpt-30b-instruct" in names
    gpt = resolve_profile("liu2023:gpt-3.5-turbo")
    slots = slot_weights(gpt, 20)
    assert int(np.argmax(slots)) == 0  # primacy-dominant
    mpt = resolve_profile("liu2023:mpt-30b-instruct")
    assert int(np.argmax(slot_weights(mpt, 20))) == 19  # recency-leaning
    # The measured positions are reproduced exactly at K = 20 (relative to each other).
    ratio = slots[[0, 4, 9, 14, 19]] / slots[0]
    np.testing.assert_allclose(ratio, np.array([75.8, 57.2, 53.8, 55.4, 63.2]) / 75.8)
    with pytest.raises(ValueError, match="unknown published curve"):
        resolve_profile("liu2023:gpt-5")
