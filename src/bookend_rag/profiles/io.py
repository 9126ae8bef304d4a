"""Every profile reference, resolved in one place: names, files, specs and JSON objects.

What a caller passes as ``model=`` (:data:`ModelLike`) is one of

* a model name as users type it (a preset name ``"llama-3.1-8b"``, a Hugging Face id such as
  ``"meta-llama/Llama-3.1-8B-Instruct"``, an Ollama tag ``"llama3.1:8b"``, a served name, an API
  model ``"gpt-4o"``: :func:`bookend_rag.spec.resolve_model_name`) or a published curve
  (``"liu2023:gpt-3.5-turbo"``); a model bookend has measured
  (:func:`~bookend_rag.profiles.measured.measured_models`) resolves to its measured profile, any
  other known architecture to its theory profile, and a name bookend knows no architecture for
  (a closed API model, an unknown fine-tune) to the default model's profile (that of
  :data:`bookend_rag.spec.DEFAULT_PRESET`, as when no model is named) with a notice
  (:func:`model_notice`): a ``UserWarning`` once per process per name when it is resolved, and
  the same line in ``Placement.notes``. Only a clear misspelling of a preset name raises, naming
  the preset;
* the path of a profile JSON file (a string ending in ``.json``, or a path object);
* a :class:`~bookend_rag.ModelSpec` or an inline theory spec ``{"depth": 32, "attn_share": 0.03}``;
* a profile object, or the JSON object its ``to_json()`` writes.

:func:`profile_ref` turns it into its serialisable form (checked, files not read), and
:func:`resolve_reference` turns that form into the profile without checking it again (what a placer
does with ``PlacementConfig.model``, once); :func:`resolve_profile` does both. A file is read
through the one cache here, keyed on its path and its state (:func:`file_stamp`), so a rewritten
file is read again; :func:`load_profile` reads a file and :func:`profile_from_json` an object,
dispatching on ``kind``.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple, TypeAlias

from bookend_rag.datafiles import load_data_json
from bookend_rag.errors import caller_stacklevel
from bookend_rag.profiles.base import InfluenceProfile, StoredProfile
from bookend_rag.profiles.fitted import FITTED_KIND, FittedProfile
from bookend_rag.profiles.measured import measured_file
from bookend_rag.profiles.published import PUBLISHED_PREFIX, published_profile
from bookend_rag.profiles.tabulated import TabulatedProfile
from bookend_rag.profiles.theoretical import TheoryProfile
from bookend_rag.spec import DEFAULT_PRESET, ModelSpec, available_presets, resolve_model_name

__all__ = [
    "ModelLike",
    "ProfileRef",
    "ResolvedModel",
    "file_stamp",
    "is_profile_path",
    "load_profile",
    "model_notice",
    "profile_from_json",
    "profile_ref",
    "resolve_profile",
    "resolve_reference",
]

#: What a caller may pass as ``model=``.
ModelLike: TypeAlias = str | os.PathLike[str] | ModelSpec | InfluenceProfile | Mapping[str, Any]
#: The stored, serialisable form of a profile reference: a name or path, a spec or profile JSON
#: object, or a profile object that has no JSON form (placement works; serialisation does not).
ProfileRef: TypeAlias = str | dict[str, Any] | InfluenceProfile


class ResolvedModel(NamedTuple):
    """What a profile reference resolves to (:func:`resolve_reference`)."""

    #: The influence profile.
    profile: InfluenceProfile
    #: For a name bookend knows no architecture for, the line that says it is placed with the
    #: default order (:func:`model_notice`); else ``None``.
    notice: str | None = None


def profile_from_json(data: object, *, where: str = "profile") -> StoredProfile:
    """A profile from its JSON object (the ``to_json()`` form): ``"kind": "fitted"`` is a
    :class:`~bookend_rag.FittedProfile`, any other a :class:`~bookend_rag.TabulatedProfile`, each
    checking the header and its fields. ``where`` names the input in error messages.

    Raises:
        ValueError: not a profile object, or a bad header or field, named in the message.
    """
    if isinstance(data, Mapping) and data.get("kind") == FITTED_KIND:
        return FittedProfile.from_json(data, where=where)
    return TabulatedProfile.from_json(data, where=where)


def load_profile(path: str | os.PathLike[str]) -> StoredProfile:
    """Read a profile JSON file (as a profile's ``save()`` writes it).

    Raises:
        ValueError: a missing file, a directory, a file that is not JSON or not a profile.
    """
    source = Path(path)
    if not source.is_file():
        problem = "is a directory" if source.is_dir() else "not found"
        raise ValueError(f"profile file {problem}: path={str(path)!r}")
    where = f"profile file path={str(path)!r}"
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{where} is not JSON ({exc})") from None
    return profile_from_json(data, where=where)


def is_profile_path(name: str) -> bool:
    """Whether a ``model`` string names a profile file (a ``.json`` path, or any existing file)
    rather than a preset or a published curve (Hugging Face ids contain ``/`` too)."""
    if name.lower().endswith(".json"):
        return True
    # Asked on every reorder() and adapter call (the placer cache keys on a profile file's
    # state): for a name that is no path, os.access answers False where os.path.isfile's stat
    # raises and catches an OSError, which cost a tenth of a reorder() call at K = 20.
    try:
        exists = os.access(name, os.F_OK)
    except ValueError:  # a NUL in the name, which os.path.isfile also takes as no file
        return False
    return exists and os.path.isfile(name)


def file_stamp(ref: object) -> tuple[int, int] | None:
    """For a file reference, the file's state (modification time, size), ``None`` when it is
    missing; ``None`` for every other reference. A profile read from a file is current while
    this stays the same."""
    if not (isinstance(ref, str) and is_profile_path(ref)):
        return None
    try:
        stat = os.stat(ref)
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


def profile_ref(model: object) -> ProfileRef:
    """The serialisable reference for what a caller passes as ``model=`` (checked, not read).

    Raises:
        ValueError: a misspelt preset name (:func:`bookend_rag.spec.resolve_model_name`), an unknown
            curve name, a bad inline spec or profile, or a type that names no profile.
    """
    if isinstance(model, os.PathLike):
        return str(os.fspath(model))
    if isinstance(model, str):
        if not is_profile_path(model):
            _named(model)  # checks the name now, with the closest names on a typo
        return model
    if isinstance(model, ModelSpec):
        return model.model_dump(exclude_none=True)
    if isinstance(model, TheoryProfile):
        return model.spec.model_dump(exclude_none=True)
    if isinstance(model, StoredProfile):
        return model.to_json()
    if isinstance(model, InfluenceProfile):
        return model
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
        "model must be a model name, a published curve (liu2023:<model>), a profile JSON path, "
        "a ModelSpec or {'depth', 'attn_share'} spec, or an influence profile, "
        f"got model={model!r} (presets: {', '.join(available_presets()[:5])}, ...)"
    )


def resolve_profile(model: ModelLike) -> InfluenceProfile:
    """The profile that ``model`` (any form of the module docstring) refers to; a file is read
    again whenever it changes."""
    if isinstance(model, InfluenceProfile):
        return model
    if isinstance(model, ModelSpec):
        return TheoryProfile(model)
    return resolve_reference(profile_ref(model)).profile


def resolve_reference(ref: ProfileRef) -> ResolvedModel:
    """The profile of a reference already in its checked form (:func:`profile_ref`'s, as
    ``PlacementConfig.model`` holds it), which is not checked again, and the notice of a name
    bookend knows no architecture for: a ``UserWarning`` the first time in the process that the
    name is resolved. A file is read through the file cache, so again whenever it changes.

    Raises:
        ValueError: a profile file that is missing or not a profile.
    """
    if isinstance(ref, InfluenceProfile):
        return ResolvedModel(ref)
    if isinstance(ref, dict):
        if "format" in ref:
            return ResolvedModel(profile_from_json(ref, where="model"))
        return ResolvedModel(TheoryProfile(ModelSpec(**ref)))
    stamp = file_stamp(ref)
    if stamp is not None:
        return ResolvedModel(_file_profile(os.path.realpath(ref), stamp))
    if is_profile_path(ref):
        return ResolvedModel(load_profile(ref))  # missing: the loader raises its clear error
    resolved = _named(ref)
    if resolved.notice is not None and ref not in _NOTIFIED:
        _NOTIFIED.add(ref)
        warnings.warn(resolved.notice, UserWarning, stacklevel=caller_stacklevel())
    return resolved


#: The names whose notice was issued in this process (:func:`resolve_reference`).
_NOTIFIED: set[str] = set()


def _reset_notices() -> None:
    """Forget which names were noticed, so that the next resolution of each warns again: the
    hook for tests of the once-per-process warning."""
    _NOTIFIED.clear()


def model_notice(model: object) -> str | None:
    """The one-line notice of a ``model=`` reference that names a model bookend knows no
    architecture for (a closed API model such as ``"gpt-4o"``, an unknown name), which is placed
    with the default order; ``None`` for every other reference (a known or measured model, a
    published curve, a file, a spec or a profile). Never raises."""
    if not isinstance(model, str) or is_profile_path(model):
        return None
    try:
        return _named(model).notice
    except ValueError:
        return None


@lru_cache(maxsize=64)
def _named(name: str) -> ResolvedModel:
    """A published curve, the measured profile of a model bookend has measured, the theory
    profile of a known architecture, or the default model's profile for any other name, with
    its notice (a misspelt preset name raises)."""
    if name.lower().startswith(PUBLISHED_PREFIX):
        return ResolvedModel(published_profile(name))
    measured = measured_file(name)
    if measured is not None:
        where = f"measured profile {measured}"
        return ResolvedModel(profile_from_json(load_data_json(measured), where=where))
    model = resolve_model_name(name)
    if model.preset is None:
        return ResolvedModel(_named(DEFAULT_PRESET).profile, model.notice)
    return ResolvedModel(TheoryProfile(ModelSpec.preset(model.preset)), model.notice)


@lru_cache(maxsize=64)
def _file_profile(path: str, stamp: tuple[int, int]) -> InfluenceProfile:
    """The one file cache: an entry per path and file state."""
    return load_profile(path)
