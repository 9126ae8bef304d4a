"""One loader for every form a placement config comes in, and the provenance of a tuned one.

What a caller passes as ``config=`` (:data:`ConfigSource`) to :func:`~bookend_rag.reorder`,
:meth:`Bookend.from_config <bookend_rag.Bookend.from_config>`, the framework adapters and ``bookend
reorder --config`` is one of

* a :class:`~bookend_rag.PlacementConfig`, or a :class:`TunedConfig` (a config with its provenance);
* the path of a JSON file (a string or a path object) holding a config's JSON object, or the
  ``tuned.json`` that ``bookend tune`` writes: ``{"config": {...}, "provenance": {...}}`` (the two
  keys no config has);
* the JSON text of either (a string starting with ``{``), or the mapping itself.

:func:`load_config` reads each into a :class:`TunedConfig`; its ``provenance`` is ``None`` for a
plain config. A tuned config records the model it was measured on (``provenance["model"]``, and
the SHA-256 of its weights, ``provenance["model_sha256"]``): :meth:`TunedConfig.warn_if_other_model`
warns when it is used with another one, since the choice was measured on that model only.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

from bookend_rag.config import PlacementConfig

__all__ = ["TUNED_KEYS", "ConfigSource", "TunedConfig", "load_config"]

#: The keys of a ``tuned.json`` document (a placement config has neither).
TUNED_KEYS = frozenset({"config", "provenance"})


def _short(value: object) -> str:
    """``repr(value)`` on one line, cut to 80 characters."""
    text = " ".join(repr(value).split())
    return text if len(text) <= 80 else text[:77] + "..."


@dataclass(frozen=True)
class TunedConfig:
    """A placement config and, for one that ``bookend tune`` wrote, where it comes from.

    Attributes:
        config: the placement settings.
        provenance: the ``provenance`` of a ``tuned.json`` (the model id and weights hash, the
            items' hash, the choice and its comparisons, the date, the bookend version; see
            :mod:`bookend_rag_lab.report.tuning`), or ``None`` for a plain config.
        source: the file it was read from, if any.
    """

    config: PlacementConfig
    provenance: Mapping[str, Any] | None = None
    source: str | None = None

    @property
    def model_id(self) -> str | None:
        """The id of the model the config was tuned on (``None`` without provenance)."""
        model = (self.provenance or {}).get("model")
        return model if isinstance(model, str) else None

    @property
    def model_sha256(self) -> str | None:
        """The SHA-256 of the weights it was tuned on (``None`` when not recorded)."""
        digest = (self.provenance or {}).get("model_sha256")
        return digest if isinstance(digest, str) else None

    def to_json(self) -> dict[str, Any]:
        """The document :func:`load_config` reads back: the config's JSON object, or a
        ``tuned.json`` ``{"config", "provenance"}`` when there is provenance.

        Raises:
            ValueError: the config's profile is an object without a JSON form.
        """
        config = self.config.model_dump(mode="json")
        if self.provenance is None:
            return config
        return {"config": config, "provenance": dict(self.provenance)}

    def warn_if_other_model(
        self,
        *,
        model: object = None,
        sha256: str | None = None,
        in_use: str | None = None,
        stacklevel: int = 2,
    ) -> str | None:
        """Warn (``UserWarning``, naming both models) when the config is used with a model other
        than the one it was tuned on, and return the warning's line (``None`` when it did not
        warn), which a placer adds to ``Placement.notes``.

        ``model`` is the model the caller names instead (a ``model=`` setting that overrides the
        config's profile): another model unless it is the config's own profile, the recorded id,
        or the name that id starts with (``"NAME"`` of ``"NAME:FILE|DTYPE"``). ``sha256`` is the
        hash of the weights in use (``in_use`` names them), compared with the recorded one. A
        config without provenance (or without the recorded field) never warns. ``stacklevel`` is
        ``warnings.warn``'s, counted from the caller of this method (2: the code that called it).
        """
        tuned_on = self.model_id
        problems = []
        if tuned_on is not None and model is not None and not self._same_model(model, tuned_on):
            problems.append(f"model={_short(model)} replaces its profile")
        recorded = self.model_sha256
        if recorded is not None and sha256 is not None and sha256 != recorded:
            weights = "the weights in use" if in_use is None else f"the weights in use ({in_use!r})"
            problems.append(f"{weights} have sha256 {sha256}")
        if not problems:
            return None
        where = "" if self.source is None else f"config={self.source!r}: "
        line = (
            f"{where}tuned on model {tuned_on!r} (sha256 {recorded}), but "
            f"{' and '.join(problems)}: the tuned choice was measured on {tuned_on!r} only"
        )
        warnings.warn(line, UserWarning, stacklevel=stacklevel + 1)
        return line

    @property
    def template_sha256(self) -> str | None:
        """The hash of the prompt template it was tuned in (``None`` when not recorded: configs
        tuned before templates existed were tuned in bookend's own prompt)."""
        digest = (self.provenance or {}).get("template_sha256")
        return digest if isinstance(digest, str) else None

    def warn_if_other_template(
        self, sha256: str, name: str, *, recorded_default: str, stacklevel: int = 2
    ) -> bool:
        """Warn (``UserWarning``, naming both prompts) when the config is used to judge prompts
        rendered by another template than the one it was tuned in, and say whether it did: the
        prompt decides which end a model reads best, so a choice made in one prompt is a fact
        about that prompt. ``sha256`` and ``name`` describe the template in use;
        ``recorded_default`` is the hash assumed for a tuned config that records none (bookend's
        own prompt). A config without provenance never warns."""
        if self.provenance is None:
            return False
        recorded = self.template_sha256 or recorded_default
        if recorded == sha256:
            return False
        tuned_in = (self.provenance or {}).get("template") or "bookend's own prompt"
        where = "" if self.source is None else f"config={self.source!r}: "
        warnings.warn(
            f"{where}tuned in the prompt {tuned_in!r} (sha256 {recorded}), but the prompts now "
            f"come from {name!r} (sha256 {sha256}): the tuned choice was measured in another "
            "prompt, and the prompt can move which end the model reads best",
            UserWarning,
            stacklevel=stacklevel + 1,
        )
        return True

    def _same_model(self, model: object, tuned_on: str) -> bool:
        if isinstance(model, os.PathLike):
            model = os.fspath(model)
        if model == self.config.model:
            return True
        if not isinstance(model, str):
            return False
        return tuned_on == model or tuned_on.startswith((f"{model}:", f"{model}|"))


#: What a caller may pass as ``config=``.
ConfigSource: TypeAlias = PlacementConfig | TunedConfig | str | os.PathLike[str] | Mapping[str, Any]


def load_config(config: ConfigSource, *, param: str = "config") -> TunedConfig:
    """The :class:`TunedConfig` of any form of the module docstring; ``param`` names the input
    in error messages (``config``, or a command-line option).

    Raises:
        ValueError: one line naming ``param`` and the value: a missing file, a file or text that
            is not JSON, a document that is not a placement config (the bad settings named), or
            a value of another type.
    """
    if isinstance(config, TunedConfig):
        return config
    if isinstance(config, PlacementConfig):
        return TunedConfig(config)
    named = f"{param}={_short(config)}"
    source = None
    if isinstance(config, str) and config.lstrip().startswith("{"):
        document: Any = _parse(config, named)
    elif isinstance(config, str | os.PathLike):
        source = os.fspath(config)
        document = _parse(_read(Path(source), named), named)
    elif isinstance(config, Mapping):
        document = config
    else:
        raise ValueError(
            f"{param} must be a PlacementConfig, a config or tuned.json path, its JSON text or "
            f"a mapping, got {named}"
        )
    return _from_document(document, named, source)


def _read(path: Path, named: str) -> str:
    if not path.is_file():
        problem = "is a directory" if path.is_dir() else "file not found"
        raise ValueError(f"{named}: {problem}")
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{named}: cannot be read as UTF-8 text ({exc})") from None


def _parse(text: str, named: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{named}: not JSON ({exc})") from None


def _from_document(document: Any, named: str, source: str | None) -> TunedConfig:
    provenance = None
    if isinstance(document, Mapping) and set(document) == TUNED_KEYS:
        provenance = document["provenance"]
        if not isinstance(provenance, Mapping):
            raise ValueError(
                f"{named}: a tuned config's provenance must be an object, got {_short(provenance)}"
            )
        document = document["config"]
    if not isinstance(document, Mapping) or not all(isinstance(k, str) for k in document):
        raise ValueError(
            f"{named}: not a placement config (a JSON object of settings, or a tuned.json "
            f"with config and provenance), got {_short(document)}"
        )
    try:
        config = PlacementConfig(**document)
    except ValueError as exc:
        raise ValueError(f"{named}: not a placement config: {exc}") from None
    return TunedConfig(config, None if provenance is None else dict(provenance), source)
