"""One :class:`PlacementConfig`: every placement setting, and a serialisable profile reference.

:class:`~bookend_rag.Bookend` and the framework adapters are built on it, so a setting means the
same everywhere, unknown settings are rejected, and a configuration round-trips through JSON, YAML
and each framework's own serialisation.

The profile reference (``model``) is stored in its serialisable form
(:func:`bookend_rag.profiles.io.profile_ref`): a preset or published-curve name, a profile file path
(read when a placer is built, never at validation), an inline theory spec, or an inline profile
JSON object. A profile object without a JSON form is kept as the object: it places, but the config
then does not serialise.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from enum import Enum
from types import MappingProxyType
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator

from bookend_rag.errors import OneLineModel, no_bool, one_line
from bookend_rag.inputs import MAX_TOKENS, MissingScores
from bookend_rag.layout import DEFAULT_SUFFIX_TOKENS, Layout
from bookend_rag.lookalikes import DEFAULT_LOOKALIKE_THRESHOLD
from bookend_rag.placement.problem import EXACT_MAX_K
from bookend_rag.placement.strategies import DEFAULT_STRATEGY, StrategyName
from bookend_rag.profiles.io import ProfileRef, profile_ref
from bookend_rag.spec import DEFAULT_PRESET
from bookend_rag.weighing import DEFAULT_WEIGHT_RULE, WeightRuleName

__all__ = [
    "DEFAULT_MODEL",
    "MAX_COMPETITION",
    "SHORTCUTS",
    "PlacementConfig",
    "Shortcuts",
    "declared_shortcuts",
    "validation_message",
]

#: The spec used when the caller names no model, and for a model name bookend knows no
#: architecture for (:func:`bookend_rag.spec.resolve_model_name`): a 32-layer decoder (Llama 3.1
#: 8B).
DEFAULT_MODEL = DEFAULT_PRESET

#: Largest ``competition``: the Dinkelbach step rounds ``(pi + c)(pi - J)`` to 12 decimals, so
#: ``c`` times 1e12 must stay far inside float range; beyond about 1e6 every chunk pulls nearly
#: alike and the order is the linear objective's anyway.
MAX_COMPETITION = 1e6


def _count(value: Any) -> Any:
    no_bool(value)
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"must be a finite integer (got {value!r})")
    return value


Count = Annotated[int, BeforeValidator(_count)]


class Shortcuts(Enum):
    """How the shortcuts of :class:`~bookend_rag.Bookend` (the small-K path, and placing by rank
    above it: :mod:`bookend_rag.place.shortcut`) treat a setting, which every field of
    :class:`PlacementConfig` declares in its annotation (``Annotated[bool,
    Shortcuts.DEFAULT_ONLY]``). The shortcuts' condition reads the declarations, and
    ``tests/core/test_small_k.py`` draws every field and checks that the shortcuts give the array
    path's placement, so a declaration that is wrong fails there.
    """

    #: The shortcuts read it and place as the array path does, whatever its value (or hand the
    #: call to the array path themselves, as ``top_k`` below the number of chunks does).
    READ = "read"
    #: It cannot move the order where the shortcuts place (say why beside the field).
    NO_EFFECT = "no effect"
    #: It can move the order and only the array path reads it: with any value but its default,
    #: every call takes the array path. The safe declaration for a new setting.
    DEFAULT_ONLY = "default only"


class PlacementConfig(OneLineModel):
    """Every placement setting of :class:`~bookend_rag.Bookend` and the adapters, validated.

    Immutable and JSON-serialisable (``model_dump(mode="json")``, ``model_validate``) unless
    ``model`` is a profile object without a JSON form. Unknown settings and bad values raise a
    one-line ``ValueError`` naming each and its value.

    Example:
        >>> config = PlacementConfig(model="qwen2.5-7b", budget=2000, top_k=8)
        >>> PlacementConfig.model_validate(config.model_dump()) == config
        True
    """

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)
    field_noun: ClassVar[str] = "setting"

    model: Annotated[ProfileRef, Shortcuts.READ] = Field(
        default=DEFAULT_MODEL,
        description="The profile: a preset name (`bookend presets` lists them) or Hugging Face "
        "id, a published curve ('liu2023:<model>'), a profile JSON path, an inline {'depth', "
        "'attn_share'} spec or an inline profile JSON object. ModelSpec and profile objects are "
        "stored in that form.",
    )
    strategy: Annotated[StrategyName, Shortcuts.READ] = Field(
        default=DEFAULT_STRATEGY,
        description="'bookend' (optimal under the profile), 'alternate' (best first, second best "
        "last, inwards), 'relevance' (most relevant first) or a strategy registered with "
        "bookend_rag.placement.strategies.register_strategy.",
    )
    weight_rule: Annotated[WeightRuleName, Shortcuts.READ] = Field(
        default=DEFAULT_WEIGHT_RULE,
        description="How the influence on a chunk's span becomes its weight: 'slot' (the default: "
        "the weight of its document slot, every chunk at the mean length, so no chunk gains or "
        "loses weight by its length), 'mass' (total influence per mean chunk length), 'anchored' "
        "or 'density'; see bookend_rag.weighing.",
    )
    competition: Annotated[float | None, BeforeValidator(no_bool), Shortcuts.DEFAULT_ONLY] = Field(
        default=None,
        ge=0,
        le=MAX_COMPETITION,
        allow_inf_nan=False,
        description="None: maximise relevance times weight. A number c >= 0: chunks compete for "
        "the answer (each pulls by its share of relevance plus c), and placement maximises the "
        "expected share drawn from the right chunk, which keeps plausible runners-up "
        "(near-duplicates, distractors) out of the heavy slots; see "
        "bookend_rag.placement.competing.",
    )
    # Read only with drop_lookalikes, which the shortcuts place without.
    lookalike_threshold: Annotated[float, BeforeValidator(no_bool), Shortcuts.NO_EFFECT] = Field(
        default=DEFAULT_LOOKALIKE_THRESHOLD,
        gt=0,
        le=1,
        allow_inf_nan=False,
        description="The word-shingle Jaccard similarity at which two chunks are look-alikes "
        "(bookend_rag.lookalikes), for drop_lookalikes.",
    )
    drop_lookalikes: Annotated[bool, Shortcuts.DEFAULT_ONLY] = Field(
        default=False,
        description="Drop every chunk that is a look-alike of a more relevant one (exact and near "
        "duplicates, at lookalike_threshold) before top_k and the budget apply; the placement "
        "lists them (Placement.dropped_as_lookalikes).",
    )
    distance: Annotated[bool, Shortcuts.READ] = Field(
        default=False, description="Scores are distances: lower is better."
    )
    # The small-K path hands scores with one missing to the array path; placing by rank applies
    # the policy as it does.
    missing_scores: Annotated[MissingScores, Shortcuts.READ] = Field(
        default="drop_scores",
        description="When some scores are None and others are not: 'drop_scores' (the default: "
        "the input order is the relevance order, as retrievers return best first), 'rank' (the "
        "items without a score rank below every item with one, in input order) or 'error' "
        "(raise). The first two say so in Placement.notes, which reorder and the adapters also "
        "send to warnings and the bookend_rag logger.",
    )
    top_k: Annotated[Count | None, Shortcuts.READ] = Field(
        default=None,
        ge=1,
        description="Keep at most this many chunks, the most relevant (applied before budget).",
    )
    budget: Annotated[Count | None, Shortcuts.DEFAULT_ONLY] = Field(
        default=None,
        ge=1,
        le=MAX_TOKENS,
        description="Token budget: keep the most relevant chunks whose tokens fit (a repeated "
        "top chunk counts twice); the result lists what was dropped.",
    )
    repeat_top: Annotated[bool, Shortcuts.DEFAULT_ONLY] = Field(
        default=False, description="Put the most relevant chunk at both ends of the prompt."
    )
    prefix_tokens: Annotated[Count, Shortcuts.READ] = Field(
        default=0,
        ge=0,
        le=MAX_TOKENS,
        description="Prompt tokens before the chunks (system prompt).",
    )
    suffix_tokens: Annotated[Count, Shortcuts.READ] = Field(
        default=DEFAULT_SUFFIX_TOKENS,
        ge=0,
        le=MAX_TOKENS,
        description="Prompt tokens after the chunks (with count_question, besides the question "
        "each call receives). The default 1 stands for the answer, which always follows the "
        "chunks: the theory's Recency Delta falls after them and chunk weights decrease front to "
        "back (the measured best); 0 makes the chunks fill the analysed sequence, so the final "
        "chunk holds the delta (the bookend view).",
    )
    # Applied before placing, to suffix_tokens (Bookend.with_question), which the shortcuts read.
    count_question: Annotated[bool, Shortcuts.NO_EFFECT] = Field(
        default=False,
        description="Add the tokens of the question each call receives (LangChain's input, "
        "LlamaIndex's query, Haystack's run(query=...)) to suffix_tokens, so the layout "
        "describes the whole prompt on every call; False keeps the layout the other settings "
        "give.",
    )
    equal_lengths: Annotated[bool, Shortcuts.READ] = Field(
        default=False,
        description="Treat every chunk as one token long (rank-only placement: nothing is "
        "counted); False weighs chunks by their token lengths.",
    )
    tokenizer: Annotated[str | None, Shortcuts.READ] = Field(
        default=None,
        description="A serialisable token counter: a tiktoken encoding name or a local Hugging "
        "Face tokenizer path; None counts about four characters a token.",
    )
    # The shortcuts place only where the slots are ranked and the chunks sorted into them, which
    # linear.optimiser_for chooses before the exact programme.
    exact_max_k: Annotated[Count, Shortcuts.NO_EFFECT] = Field(
        default=EXACT_MAX_K,
        ge=0,
        le=20,
        description="Largest number of chunks placed by the exact dynamic programme.",
    )

    @field_validator("model", mode="before")
    @classmethod
    def _reference(cls, value: Any) -> ProfileRef:
        return profile_ref(value)

    @property
    def layout(self) -> Layout:
        """The prompt around the chunks, as configured (before any per-call question)."""
        return Layout(prefix_tokens=self.prefix_tokens, suffix_tokens=self.suffix_tokens)

    def array_path_settings(self) -> tuple[str, ...]:
        """The settings declared :attr:`Shortcuts.DEFAULT_ONLY` whose values here are not their
        defaults: with any of them, every call takes the array path."""
        return tuple(name for name, default in _DEFAULT_ONLY if getattr(self, name) != default)


def declared_shortcuts(model: type[BaseModel]) -> Mapping[str, Shortcuts]:
    """Each field of ``model`` and how the shortcuts treat it: the one :class:`Shortcuts` member
    in its annotation.

    Raises:
        TypeError: a field that declares none, or more than one, named.
    """
    declared: dict[str, Shortcuts] = {}
    for name, field in model.model_fields.items():
        marks = [mark for mark in field.metadata if isinstance(mark, Shortcuts)]
        if len(marks) != 1:
            raise TypeError(
                f"{model.__name__}.{name} must declare how the placement shortcuts treat it: "
                f"one of {', '.join(f'Shortcuts.{mark.name}' for mark in Shortcuts)} in its "
                f"annotation (found {len(marks)})"
            )
        declared[name] = marks[0]
    return MappingProxyType(declared)


#: How the shortcuts treat each setting of :class:`PlacementConfig` (its declaration); a setting
#: that declares none fails here, at import.
SHORTCUTS: Mapping[str, Shortcuts] = declared_shortcuts(PlacementConfig)

#: The settings declared :attr:`Shortcuts.DEFAULT_ONLY`, each with its default.
_DEFAULT_ONLY: tuple[tuple[str, Any], ...] = tuple(
    (name, PlacementConfig.model_fields[name].default)
    for name, declared in SHORTCUTS.items()
    if declared is Shortcuts.DEFAULT_ONLY
)


def validation_message(exc: ValidationError) -> str:
    """One line per pydantic error of the settings, joined: ``name=value: what is wrong``;
    unknown settings are listed with the known ones (:func:`bookend_rag.errors.one_line`)."""
    return one_line(exc, PlacementConfig.model_fields, PlacementConfig.field_noun)
