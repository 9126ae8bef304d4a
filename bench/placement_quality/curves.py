"""Position curves: a model's accuracy as a function of where the gold document sits.

A curve is known at a few normalised positions (slot centres in ``[0, 1]``) and interpolated
linearly between them, flat beyond the outermost points, so that one curve gives a per-slot
accuracy for any number of documents K. Interpolation is delegated to
:meth:`bookend_rag.TabulatedProfile.from_points`, the same rule the bundled ``liu2023:*`` presets
use.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bookend_rag import TabulatedProfile
from bookend_rag.arrays import FloatArray
from bookend_rag.datafiles import load_data_json

#: Liu et al. 2023 (arXiv 2307.03172), Table 5: multi-document QA accuracy (%) with 10 documents,
#: gold at position 1 / 5 / 10. Transcribed in DESIGN.md section 7; the 20-document curves
#: (Table 6) come from the presets bundled with bookend.
LIU2023_10_DOCS: dict[str, tuple[float, float, float]] = {
    "gpt-3.5-turbo": (76.8, 61.2, 62.4),
    "gpt-3.5-turbo-16k": (76.9, 61.0, 62.5),
    "claude-1.3": (62.9, 58.3, 59.7),
    "claude-1.3-100k": (63.1, 58.3, 59.7),
    "mpt-30b-instruct": (60.2, 56.2, 59.7),
    "longchat-13b-16k": (72.1, 58.9, 58.5),
}
LIU2023_10_POSITIONS = (1, 5, 10)


@dataclass(frozen=True)
class PositionCurve:
    """Accuracy (a fraction in ``[0, 1]``) known at normalised positions.

    Attributes:
        name: label used in tables and the JSON (``"liu2023:gpt-3.5-turbo@20"``).
        positions: slot centres in ``[0, 1]``, increasing.
        accuracy: accuracy at each position.
        source: where the numbers come from.
    """

    name: str
    positions: tuple[float, ...]
    accuracy: tuple[float, ...]
    source: str

    @classmethod
    def from_slots(cls, name: str, accuracy: Sequence[float], source: str) -> PositionCurve:
        """A curve measured at every slot of K documents (slot ``k`` centred at ``(k+0.5)/K``)."""
        k = len(accuracy)
        return cls(name, tuple((np.arange(k) + 0.5) / k), tuple(map(float, accuracy)), source)

    @classmethod
    def from_gold_positions(
        cls, name: str, gold: Sequence[int], n_documents: int, percent: Sequence[float], source: str
    ) -> PositionCurve:
        """A published curve: accuracy in percent at 1-based gold positions of ``n_documents``."""
        centres = (np.asarray(gold, dtype=np.float64) - 0.5) / n_documents
        values = np.asarray(percent, dtype=np.float64) / 100.0
        return cls(name, tuple(centres.tolist()), tuple(values.tolist()), source)

    def profile(self, k: int) -> TabulatedProfile:
        """The curve on K equal slots, as the slot profile bookend places with."""
        return TabulatedProfile.from_points(
            self.positions, self.accuracy, k, label=f"{self.name} (K={k})"
        )

    def slot_accuracy(self, k: int) -> FloatArray:
        """Accuracy of each of K equal slots (interpolated at the slot centres)."""
        return np.asarray(self.profile(k).weights, dtype=np.float64)


def liu2023_curves() -> list[PositionCurve]:
    """The published curves: Table 6 (20 documents, bundled presets) and Table 5 (10 documents)."""
    curves = []
    for model, entry in load_data_json("liu2023.json")["curves"].items():
        curves.append(
            PositionCurve.from_gold_positions(
                f"liu2023:{model}@20",
                entry["gold_positions"],
                int(entry["n_documents"]),
                entry["accuracy"],
                entry["source"],
            )
        )
    for model, percent in LIU2023_10_DOCS.items():
        curves.append(
            PositionCurve.from_gold_positions(
                f"liu2023:{model}@10",
                LIU2023_10_POSITIONS,
                10,
                percent,
                "arXiv 2307.03172, Table 5",
            )
        )
    return curves
