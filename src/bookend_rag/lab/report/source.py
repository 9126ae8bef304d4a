"""The sentence every report (and dry run) of ``bookend eval`` and ``bookend tune`` gives its
items' source: which kind of items decided, labelled items, a built-in suite, or probes built from
recorded retrievals without labels (the report's ``settings["source"]``,
:func:`~bookend_rag.lab.experiments.setup.source_settings`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["source_sentence"]


def source_sentence(settings: Mapping[str, Any]) -> str:
    """``**Source.** ...``: the kind of items that decided, where they come from, and for probes
    how many retrievals gave one and why the others did not."""
    source = settings["source"]
    kind = source["kind"]
    if kind == "probes":
        return (
            f"**Source.** probes built from your recorded retrievals (`{source['retrievals']}`), "
            f"no labels: {source['summary']}; {source['used']} scored."
        )
    if kind == "labelled":
        unused = source.get("unused_retrievals")
        aside = (
            f"; the retrievals in `{unused}` were not used (items with real answers are preferred)"
            if unused is not None
            else ""
        )
        return f"**Source.** labelled items (`{settings['items']}`){aside}."
    return f"**Source.** the built-in suite `{settings['suite']}` (answers known by construction)."
