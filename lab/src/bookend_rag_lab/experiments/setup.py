"""What an experiment that compares orders sets up before it scores, and how it records its
inputs: the template families of its items, the theory spec and the hash of the model (asked of
the scorer, never its class); the settings that name its items. ``evaluate`` and ``tune`` share
these steps.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import bookend_rag
from bookend_rag.profiles.measured import measured_file
from bookend_rag_lab.items.item import Item
from bookend_rag_lab.items.suites import SUITES
from bookend_rag_lab.items.template import BOOKEND_PROMPT, PromptTemplate
from bookend_rag_lab.models import Scorer
from bookend_rag_lab.models.backends import ScorerSpec
from bookend_rag_lab.models.scorer import own_spec, weights_path
from bookend_rag_lab.models.weights import weights_sha256

__all__ = [
    "DEFAULT_FAMILIES",
    "default_model",
    "describe",
    "device_settings",
    "model_sha256",
    "run_families",
    "source_settings",
    "templated",
    "theory_spec",
    "warn_on_other_models",
]

#: Template families of the generated suites in a run; ``product`` and ``pet_colour`` stay out so
#: a profile calibrated on these two can be evaluated on templates it never saw (a transfer check).
DEFAULT_FAMILIES = ("birthplace", "access_code")


def run_families(suite: str, families: Sequence[str] | None) -> Sequence[str] | None:
    """The template families of a run: as given, or :data:`DEFAULT_FAMILIES` for a generated
    suite (an unknown suite is reported when its items are built)."""
    if families is not None:
        return families
    templated = suite in SUITES and SUITES[suite].templated
    return DEFAULT_FAMILIES if templated else None


def theory_spec(theory: bookend_rag.ModelLike | None, scorer: Scorer) -> bookend_rag.ModelLike:
    """The model of the theory strategies: as given, else the local model's own spec.

    Raises:
        ValueError: for a scorer whose architecture is not known here and no ``theory``.
    """
    if theory is not None:
        return theory
    spec = own_spec(scorer)
    if spec is not None:
        return spec
    raise ValueError(
        f"theory must be given for scorer {scorer.model_id!r}, whose depth is not known here "
        "(a preset such as 'llama-3.1-8b', a spec or a profile)"
    )


def default_model(theory: bookend_rag.ModelLike | None, scorer: Scorer) -> bookend_rag.ModelLike:
    """What bookend's default places the model with: ``theory`` when given; for a local model
    whose weights name a model bookend has measured (``bookend_rag.measured_models()``, by the file
    or directory name), that name, so the shipped measured profile; else the theory spec."""
    weights = weights_path(scorer)
    if theory is None and weights is not None and measured_file(weights.name) is not None:
        return weights.name
    return theory_spec(theory, scorer)


def device_settings(scorer: Scorer | ScorerSpec | None) -> dict[str, str]:
    """The report's ``device`` and ``dtype``: the spec's; for a scorer given as it is, the default
    spec's, so that every report has them (a local scorer's model id names its dtype)."""
    spec = scorer if isinstance(scorer, ScorerSpec) else ScorerSpec()
    return {"device": spec.device, "dtype": spec.dtype}


def model_sha256(scorer: Scorer) -> str | None:
    """The SHA-256 of a local model's weights
    (:func:`~bookend_rag_lab.models.weights.weights_sha256`
    of the path it was loaded from); ``None`` for a scorer without local weights."""
    weights = weights_path(scorer)
    if weights is not None and weights.exists():
        return weights_sha256(weights)
    return None


def warn_on_other_models(
    configs: Iterable[object], scorer: Scorer, template: PromptTemplate = BOOKEND_PROMPT
) -> None:
    """A ``UserWarning`` for every tuned config among ``configs`` whose recorded weights hash
    (``provenance["model_sha256"]``) is not the hash of ``scorer``'s weights, or whose recorded
    template hash is not ``template``'s: its choice was measured on another model or in another
    prompt. The weights are hashed only when a config records a hash."""
    tuned = [c for c in configs if isinstance(c, bookend_rag.TunedConfig)]
    hashed = [c for c in tuned if c.model_sha256]
    digest = model_sha256(scorer) if hashed else None
    for config in hashed:
        config.warn_if_other_model(sha256=digest, in_use=scorer.model_id, stacklevel=3)
    for config in tuned:
        config.warn_if_other_template(
            template.sha256, template.name, recorded_default=BOOKEND_PROMPT.sha256, stacklevel=3
        )


def templated(items: Sequence[Item], template: PromptTemplate) -> list[Item]:
    """``items`` rendered into ``template`` (bookend's own prompt leaves them as they are, so the
    prompts, and so the call-cache keys, of earlier runs stay the same)."""
    if template.sha256 == BOOKEND_PROMPT.sha256:
        return list(items)
    return [item.with_template(template) for item in items]


def source_settings(
    items: str | Path | Sequence[Item] | None,
    suite: str,
    k: int,
    n_items: int | None,
    seed: int,
    families: Sequence[str] | None,
    split: str,
    *,
    retrievals: str | None = None,
) -> dict[str, Any]:
    """The settings that say which items were run (the suite's only for built-in items), and
    their ``source``, the kind of items that decides: ``{"kind": "labelled"}`` for items given
    (with ``unused_retrievals`` when ``retrievals`` were named too: items with real answers are
    preferred), ``{"kind": "probes", "retrievals": ...}`` for probes built from the named
    retrievals (completed once they are built), ``{"kind": "built-in"}`` for a suite."""
    built_in = items is None and retrievals is None
    source: dict[str, Any] = {"kind": "built-in"}
    if items is not None:
        source = {"kind": "labelled"}
        if retrievals is not None:
            source["unused_retrievals"] = retrievals
    elif retrievals is not None:
        source = {"kind": "probes", "retrievals": retrievals}
    return {
        "items": "probes" if source["kind"] == "probes" else describe(items),
        "suite": suite if built_in else None,
        "k": k if built_in else None,
        "n_items": n_items,
        "seed": seed,
        "families": list(families) if built_in and families is not None else None,
        "split": split if built_in else None,
        "source": source,
    }


def describe(source: Any) -> Any:
    """How an input appears in the report's settings (a placement config: its JSON form)."""
    if isinstance(source, bookend_rag.TunedConfig):
        source = source.config
    if isinstance(source, bookend_rag.PlacementConfig):
        try:
            return source.model_dump(mode="json")
        except ValueError:  # a profile object without a JSON form
            return repr(source)
    if source is None:
        return "built-in"
    if isinstance(source, (str, Path)):
        return str(source)
    if isinstance(source, Sequence):
        return "given"
    return str(getattr(source, "label", None) or type(source).__name__)
