"""bookend: place retrieved chunks where the model reads best.

>>> import bookend
>>> bookend.reorder(["best", "second", "third"], [0.9, 0.5, 0.1]).items  # theory: front first
['best', 'second', 'third']
>>> measured = bookend.TabulatedProfile(weights=(0.6, 0.2, 0.9), kind="slot")  # reads last best
>>> bookend.reorder(["best", "second", "third"], [0.9, 0.5, 0.1], model=measured).items
['second', 'third', 'best']
"""

from typing import Any

from bookend.adapter import (
    SLOT_KEY,
    WEIGHT_KEY,
    AdapterConfig,
    PlacerCache,
    first_slot_annotations,
    slot_annotations,
)
from bookend.config import (
    DEFAULT_MODEL,
    DEFAULT_SUFFIX_TOKENS,
    PLACEMENT_OPTIONS,
    LengthsMode,
    ModelLike,
    PlacementConfig,
    resolve_profile,
)
from bookend.fitted import FittedProfile
from bookend.layout import Layout
from bookend.placement import STRATEGIES, Strategy
from bookend.profile import InfluenceProfile, TabulatedProfile, TheoryProfile, load_profile
from bookend.published import available_profile_presets
from bookend.reorder import Bookend, relevance_from_scores, reorder
from bookend.result import ChunkSlot, Placement
from bookend.spec import ModelSpec, available_presets
from bookend.weighing import DEFAULT_WEIGHT_RULE, WEIGHT_RULES, WeightRule

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_SUFFIX_TOKENS",
    "DEFAULT_WEIGHT_RULE",
    "PLACEMENT_OPTIONS",
    "SLOT_KEY",
    "STRATEGIES",
    "WEIGHT_KEY",
    "WEIGHT_RULES",
    "AdapterConfig",
    "Bookend",
    "ChunkSlot",
    "EvalResult",
    "FittedProfile",
    "InfluenceProfile",
    "Layout",
    "LengthsMode",
    "ModelLike",
    "ModelSpec",
    "Placement",
    "PlacementConfig",
    "PlacerCache",
    "Strategy",
    "TabulatedProfile",
    "TheoryProfile",
    "WeightRule",
    "__version__",
    "available_presets",
    "available_profile_presets",
    "evaluate",
    "first_slot_annotations",
    "load_profile",
    "relevance_from_scores",
    "reorder",
    "resolve_profile",
    "slot_annotations",
]


def __getattr__(name: str) -> Any:
    # `bookend.evaluate` lives in the lab (the validate extra): import it only when asked for, so
    # that `import bookend` stays light and the core never imports the lab at load time.
    if name in ("evaluate", "EvalResult"):
        from bookend import lab

        return getattr(lab, name)
    raise AttributeError(f"module 'bookend' has no attribute {name!r}")
