"""bookend: place retrieved chunks where the model reads best.

>>> import bookend_rag
>>> bookend_rag.reorder(["best", "second", "third"], [0.9, 0.5, 0.1]).items  # theory: front first
['best', 'second', 'third']
>>> measured = bookend_rag.TabulatedProfile(weights=(0.6, 0.2, 0.9), kind="slot")  # reads last best
>>> bookend_rag.reorder(["best", "second", "third"], [0.9, 0.5, 0.1], model=measured).items
['second', 'third', 'best']

What a user calls is here; the framework adapters' shared plumbing is in
:mod:`bookend_rag.adapters`.
"""

from functools import cache
from typing import TYPE_CHECKING, Any

from bookend_rag.config import DEFAULT_MODEL, PlacementConfig
from bookend_rag.layout import DEFAULT_SUFFIX_TOKENS, Layout
from bookend_rag.lookalikes import DEFAULT_LOOKALIKE_THRESHOLD
from bookend_rag.place import Bookend, reorder
from bookend_rag.placement.problem import EXACT_MAX_K
from bookend_rag.placement.result import ChunkSlot, Placement
from bookend_rag.placement.strategies import STRATEGIES, StrategyName
from bookend_rag.profiles.base import InfluenceProfile
from bookend_rag.profiles.fitted import FittedProfile
from bookend_rag.profiles.io import ModelLike, load_profile, resolve_profile
from bookend_rag.profiles.measured import measured_models
from bookend_rag.profiles.published import available_profile_presets
from bookend_rag.profiles.tabulated import TabulatedProfile
from bookend_rag.profiles.theoretical import TheoryProfile
from bookend_rag.relevance import relevance_from_scores
from bookend_rag.spec import ModelSpec, available_presets
from bookend_rag.tuned import ConfigSource, TunedConfig, load_config
from bookend_rag.version import __version__
from bookend_rag.weighing import DEFAULT_WEIGHT_RULE, WEIGHT_RULES, WeightRule

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

__all__ = [
    "DEFAULT_LOOKALIKE_THRESHOLD",
    "DEFAULT_MODEL",
    "DEFAULT_SUFFIX_TOKENS",
    "DEFAULT_WEIGHT_RULE",
    "EXACT_MAX_K",
    "STRATEGIES",
    "WEIGHT_RULES",
    "Bookend",
    "ChunkSlot",
    "ConfigSource",
    "FittedProfile",
    "InfluenceProfile",
    "Layout",
    "ModelLike",
    "ModelSpec",
    "Placement",
    "PlacementConfig",
    "StrategyName",
    "TabulatedProfile",
    "TheoryProfile",
    "TunedConfig",
    "WeightRule",
    "__version__",
    "available_presets",
    "available_profile_presets",
    "load_config",
    "load_profile",
    "measured_models",
    "relevance_from_scores",
    "reorder",
    "resolve_profile",
]


def __getattr__(name: str) -> Any:
    # Names that an installed package adds through the `bookend_rag.exports` entry-point group
    # (the lab, bookend-rag-lab: `bookend_rag.evaluate`, `bookend_rag.tune` and the specs they
    # take): each is loaded when first asked for, so that `import bookend_rag` stays light and the
    # core never imports them. They are not in __all__: the core does not provide them.
    exports = _exports()
    entry = exports.get(name)
    if entry is not None:
        return entry.load()
    missing = f"module {__name__!r} has no attribute {name!r}"
    if not exports and not name.startswith("_"):
        # Without the lab nothing is exported: a name asked for (the lab's evaluate, tune) says
        # what to install, in one line, as the lab's commands do without it.
        from bookend_rag.errors import LAB_HINT

        missing += f"; the lab adds bookend_rag.evaluate and bookend_rag.tune: {LAB_HINT}"
    raise AttributeError(missing)


@cache
def _exports() -> dict[str, "EntryPoint"]:
    # Read once: attribute lookups that miss (hasattr probes by tools) would otherwise scan every
    # installed distribution's metadata each time. Imported here: importlib.metadata (and the
    # email package it loads) is not needed by the default call.
    from importlib.metadata import entry_points

    return {entry.name: entry for entry in entry_points(group="bookend_rag.exports")}
