"""bookend: place retrieved chunks where the model reads best.

>>> import bookend
>>> placement = bookend.reorder(["best", "second", "third"], [0.9, 0.5, 0.1])
>>> placement.items[0], placement.items[-1]
('second', 'best')
"""

from bookend.evaluation import EvalResult, evaluate
from bookend.fitted import FittedProfile
from bookend.placement import STRATEGIES, Strategy
from bookend.profile import (
    InfluenceProfile,
    Layout,
    ModelLike,
    TabulatedProfile,
    TheoryProfile,
    available_profile_presets,
    load_profile,
    resolve_profile,
)
from bookend.reorder import (
    DEFAULT_MODEL,
    PLACEMENT_OPTIONS,
    Bookend,
    relevance_from_scores,
    reorder,
)
from bookend.result import ChunkSlot, Placement
from bookend.spec import ModelSpec, available_presets

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_MODEL",
    "PLACEMENT_OPTIONS",
    "STRATEGIES",
    "Bookend",
    "ChunkSlot",
    "EvalResult",
    "FittedProfile",
    "InfluenceProfile",
    "Layout",
    "ModelLike",
    "ModelSpec",
    "Placement",
    "Strategy",
    "TabulatedProfile",
    "TheoryProfile",
    "__version__",
    "available_presets",
    "available_profile_presets",
    "evaluate",
    "load_profile",
    "relevance_from_scores",
    "reorder",
    "resolve_profile",
]
