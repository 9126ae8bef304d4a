"""One :class:`PlacementConfig`: every placement setting, and a serialisable profile reference.

:class:`~bookend.Bookend` and the framework adapters are built on it, so a setting means the same
everywhere, unknown settings are rejected, and a configuration round-trips through JSON, YAML and
each framework's own serialisation.

The profile reference (``model``) is stored in its serialisable form:

* a preset name (``"llama-3.1-8b"``, or a Hugging Face id such as
  ``"meta-llama/Llama-3.1-8B-Instruct"``), or a published curve (``"liu2023:gpt-3.5-turbo"``);
* the path of a profile JSON file (a string; read when a placer is built, never at validation);
* an inline theory spec ``{"depth": 32, "attn_share": 0.03}`` (a :class:`~bookend.ModelSpec`
  passed as ``model`` is stored so);
* an inline profile, as the JSON object its ``to_json()`` writes (a profile object passed as
  ``model`` is stored so).

An :class:`~bookend.InfluenceProfile` without a JSON form is kept as the object: it places, but the
config then does not serialise.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from functools import lru_cache
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator

from bookend.layout import Layout
from bookend.placement import Strategy
from bookend.profile import InfluenceProfile, TheoryProfile, load_profile, profile_from_json
from bookend.published import PUBLISHED_PREFIX, published_profile
from bookend.spec import ModelSpec, available_presets
from bookend.weighing import DEFAULT_WEIGHT_RULE, WeightRule

__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_SUFFIX_TOKENS",
    "PLACEMENT_OPTIONS",
    "LengthsMode",
    "ModelLike",
    "PlacementConfig",
    "ProfileRef",
    "is_profile_path",
    "profile_ref",
    "resolve_profile",
    "validation_message",
]

#: The spec used when the caller names no model: a 32-layer decoder (Llama 3.1 8B).
DEFAULT_MODEL = "llama-3.1-8b"

#: Prompt tokens after the chunks when the caller says nothing: the model answers after the
#: chunks, so the final token, which holds the theory's Recency Delta, is never a chunk's. With
#: this default a theory profile weighs chunks front to back (most relevant first), the order
#: measured best (``bench/RESULTS.md``, "Placement quality"); ``0`` is the bookend view.
DEFAULT_SUFFIX_TOKENS = 1

#: What a caller may pass as ``model=``.
ModelLike: TypeAlias = "str | os.PathLike[str] | ModelSpec | InfluenceProfile | Mapping[str, Any]"
#: The stored, serialisable form of a profile reference (see the module docstring).
ProfileRef: TypeAlias = "str | dict[str, Any] | InfluenceProfile"
LengthsMode: TypeAlias = Literal["tokens", "equal"]


def _no_bool(value: Any) -> Any:
    # pydantic reads True as 1; a flag given for a count is a mistake worth naming.
    if isinstance(value, bool):
        raise ValueError(f"must be an integer, not a bool (got {value!r})")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"must be a finite integer (got {value!r})")
    return value


Count = Annotated[int, BeforeValidator(_no_bool)]


def is_profile_path(name: str) -> bool:
    """Whether a ``model`` string names a profile file (a ``.json`` path) rather than a preset
    or a published curve (Hugging Face ids contain ``/`` too)."""
    return name.lower().endswith(".json")


def profile_ref(model: Any) -> ProfileRef:
    """The serialisable reference for what a caller passes as ``model=`` (checked, not read).

    Raises:
        ValueError: an unknown preset or curve name, a bad inline spec or profile, or a type that
            names no profile.
    """
    if isinstance(model, os.PathLike):
        return str(os.fspath(model))
    if isinstance(model, str):
        if not is_profile_path(model):
            _named_profile(model)  # checks the name now, with the closest names on a typo
        return model
    if isinstance(model, ModelSpec):
        return model.model_dump(exclude_none=True)
    if isinstance(model, TheoryProfile):
        return model.spec.model_dump(exclude_none=True)
    if isinstance(model, InfluenceProfile):
        to_json = getattr(model, "to_json", None)
        if not callable(to_json):
            return model
        data: dict[str, Any] = dict(to_json())
        return data
    if isinstance(model, Mapping):
        data = dict(model)
        if "format" in data:
            profile_from_json(data, where="model")
            return data
        if "depth" in data:
            return ModelSpec(**data).model_dump(exclude_none=True)
        raise ValueError(
            "an inline model must be a theory spec {'depth': ..., 'attn_share': ...} or a profile "
            f"JSON object with 'format', got model={model!r}"
        )
    raise ValueError(
        "model must be a preset name, a published curve (liu2023:<model>), a profile JSON path, "
        "a ModelSpec or {'depth', 'attn_share'} spec, or an influence profile, "
        f"got model={model!r} (presets: {', '.join(available_presets()[:5])}, ...)"
    )


@lru_cache(maxsize=64)
def _named_profile(name: str) -> InfluenceProfile:
    if name.lower().startswith(PUBLISHED_PREFIX):
        return published_profile(name)
    return TheoryProfile(ModelSpec.preset(name))


def resolve_profile(model: ModelLike) -> InfluenceProfile:
    """Turn what a caller passes as ``model=`` into a profile.

    Accepts an :class:`InfluenceProfile`, a :class:`ModelSpec` or an inline ``{"depth", ...}``
    spec, a profile JSON object, a preset name (``"llama-3.1-8b"``), a published curve
    (``"liu2023:gpt-3.5-turbo"``) or the path of a profile JSON file (read again whenever the file
    changes).
    """
    if isinstance(model, InfluenceProfile):
        return model
    if isinstance(model, ModelSpec):
        return TheoryProfile(model)
    ref = profile_ref(model)
    if isinstance(ref, InfluenceProfile):
        return ref
    if isinstance(ref, dict):
        if "format" in ref:
            return profile_from_json(ref, where="model")
        return TheoryProfile(ModelSpec(**ref))
    if is_profile_path(ref):
        return _file_profile(ref)
    return _named_profile(ref)


def _file_profile(path: str) -> InfluenceProfile:
    """The profile in a file, read again whenever the file changes (its mtime or size)."""
    try:
        stat = os.stat(path)
    except OSError:
        return load_profile(path)  # the loader raises its clear error
    return _cached_file_profile(os.path.realpath(path), (stat.st_mtime_ns, stat.st_size))


@lru_cache(maxsize=64)
def _cached_file_profile(path: str, file_state: tuple[int, int]) -> InfluenceProfile:
    return load_profile(path)


class PlacementConfig(BaseModel):
    """Every placement setting of :class:`~bookend.Bookend` and the adapters, validated.

    Immutable and JSON-serialisable (``model_dump(mode="json")``, ``model_validate``) unless
    ``model`` is a profile object without a JSON form. Unknown settings raise.

    Example:
        >>> config = PlacementConfig(model="qwen2.5-7b", budget=2000, top_k=8)
        >>> PlacementConfig.model_validate(config.model_dump()) == config
        True
    """

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    model: ProfileRef = Field(
        default=DEFAULT_MODEL,
        description="The profile: a preset name or Hugging Face id, a published curve "
        "('liu2023:<model>'), a profile JSON path, an inline {'depth', 'attn_share'} spec or an "
        "inline profile JSON object. ModelSpec and profile objects are stored in that form.",
    )
    strategy: Strategy = Field(
        default="bookend",
        description="'bookend' (optimal under the profile), 'alternate' (best first, second best "
        "last, inwards) or 'relevance' (most relevant first).",
    )
    weight_rule: WeightRule = Field(
        default=DEFAULT_WEIGHT_RULE,
        description="How the influence on a chunk's span becomes its weight: 'slot' (the default: "
        "the weight of its document slot, every chunk at the mean length, so no chunk gains or "
        "loses weight by its length), 'mass' (total influence per mean chunk length), 'anchored' "
        "or 'density'; see bookend.weighing.",
    )
    competition: float | None = Field(
        default=None,
        ge=0,
        allow_inf_nan=False,
        description="None: maximise relevance times weight. A number c >= 0: chunks compete for "
        "the answer (each pulls by its share of relevance plus c), and placement maximises the "
        "expected share drawn from the right chunk, which keeps plausible runners-up "
        "(near-duplicates, distractors) out of the heavy slots; see bookend.placement.",
    )
    distance: bool = Field(default=False, description="Scores are distances: lower is better.")
    top_k: Count | None = Field(
        default=None,
        ge=1,
        description="Keep at most this many chunks, the most relevant (applied before budget).",
    )
    budget: Count | None = Field(
        default=None,
        ge=1,
        description="Token budget: keep the most relevant chunks whose tokens fit (a repeated "
        "top chunk counts twice); the result lists what was dropped.",
    )
    repeat_top: bool = Field(
        default=False, description="Put the most relevant chunk at both ends of the prompt."
    )
    prefix_tokens: Count = Field(
        default=0, ge=0, description="Prompt tokens before the chunks (system prompt)."
    )
    suffix_tokens: Count = Field(
        default=DEFAULT_SUFFIX_TOKENS,
        ge=0,
        description="Prompt tokens after the chunks (with count_question, besides the question "
        "each call receives). The default 1 stands for the answer, which always follows the "
        "chunks: the theory's Recency Delta falls after them and chunk weights decrease front to "
        "back (the measured best); 0 makes the chunks fill the analysed sequence, so the final "
        "chunk holds the delta (the bookend view).",
    )
    count_question: bool = Field(
        default=False,
        description="Add the tokens of the question each call receives (LangChain's input, "
        "LlamaIndex's query, Haystack's run(query=...)) to suffix_tokens, so the layout "
        "describes the whole prompt on every call; False keeps the layout the other settings "
        "give.",
    )
    lengths: LengthsMode = Field(
        default="tokens",
        description="'tokens': weigh chunks by their token lengths; 'equal': treat every chunk "
        "as the same length (rank-only placement, no counting).",
    )
    tokenizer: str | None = Field(
        default=None,
        description="A serialisable token counter: a tiktoken encoding name or a local Hugging "
        "Face tokenizer path; None counts about four characters a token.",
    )
    exact_max_k: Count = Field(
        default=12,
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

    def profile(self) -> InfluenceProfile:
        """The profile ``model`` refers to (a file path is read now)."""
        return resolve_profile(self.model)

    @classmethod
    def from_settings(cls, **settings: Any) -> PlacementConfig:
        """Validate keyword settings, raising a one-line ``ValueError`` that names each bad
        setting and its value (pydantic's own error spans several lines)."""
        try:
            return cls(**settings)
        except ValidationError as exc:
            raise ValueError(validation_message(exc)) from None


def validation_message(exc: ValidationError) -> str:
    """One line per pydantic error, joined: ``name=value: what is wrong``; unknown settings are
    listed with the known ones."""
    parts = []
    for err in exc.errors():
        name = ".".join(str(p) for p in err["loc"]) or "settings"
        value = err.get("input")
        if err["type"] == "extra_forbidden" and len(err["loc"]) > 1:
            parts.append(f"unknown field {name}={value!r}")
        elif err["type"] == "extra_forbidden":
            known = ", ".join(PlacementConfig.model_fields)
            parts.append(f"unknown setting {name}={value!r} (settings: {known})")
        else:
            message = str(err["msg"]).removeprefix("Value error, ")
            parts.append(f"{name}={value!r}: {message}")
    return "; ".join(parts)


#: The settings of :class:`PlacementConfig`: the fields adapters mirror (with ``model``).
PLACEMENT_OPTIONS: tuple[str, ...] = tuple(PlacementConfig.model_fields)
