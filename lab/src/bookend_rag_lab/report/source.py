"""The sentence every report (and dry run) of ``bookend eval`` and ``bookend tune`` gives its
items' source: which kind of items decided, labelled items, a built-in suite, or probes built from
recorded retrievals without labels (the report's ``settings["source"]``,
:func:`~bookend_rag_lab.experiments.setup.source_settings`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["GENERATED", "PROBE_MEASURED", "probe_caution", "source_sentence"]

#: tune's candidates measured on the run's own items (a slot table, a profile fitted to it). From
#: probes, such a choice was measurably behind the labelled decision on labelled evaluation items
#: (``bench/RESULTS.md``, "Label-free tuning": records, SmolLM2, bookend's prompt).
PROBE_MEASURED = ("measured-slots", "fitted")

#: The built-in suites whose items are generated (the others are real questions with real answers).
GENERATED = ("hard", "lookup")


def source_sentence(settings: Mapping[str, Any]) -> str:
    """``**Source.** ...``: the kind of items that decided, where they come from, and for probes
    how many retrievals gave one and why the others did not."""
    source = settings["source"]
    kind = source["kind"]
    if kind == "probes":
        return (
            f"**Source.** probes built from your recorded retrievals (`{source['retrievals']}`), "
            f"no labels: {source['summary']}; {_used(source['used'])}."
        )
    if kind == "labelled":
        unused = source.get("unused_retrievals")
        aside = (
            f"; the retrievals in `{unused}` were not used (items with real answers are preferred)"
            if unused is not None
            else ""
        )
        return f"**Source.** labelled items (`{settings['items']}`){aside}."
    how = "answers known by construction" if settings["suite"] in GENERATED else "real answers"
    return f"**Source.** the built-in suite `{settings['suite']}` ({how})."


def _used(count: int) -> str:
    """How many probes the run measures (``--items`` may keep fewer than were built)."""
    return f"{count} {'probe' if count == 1 else 'probes'} used by this run"


def probe_caution(settings: Mapping[str, Any], chosen: str) -> str | None:
    """``**Caution.** ...`` for a decision from probes: from self-answer probes, any decision (in
    one of the 16 cells checked against labels it was measurably behind); from code probes, an
    order measured on the probes themselves (the situation in which they were far behind); else
    ``None`` (``bench/RESULTS.md``, "Label-free tuning")."""
    source = settings["source"]
    if source["kind"] != "probes":
        return None
    if source.get("design") == "self-answer":
        return (
            f"**Caution.** `{chosen}` was chosen on self-answer probes, a proxy for labelled "
            "items. Checked against labels in 16 cells (SmolLM2, Gemma 3 270M and "
            "Qwen2.5-Coder-0.5B, K = 10), it made the labelled decision in 13, was within the "
            "noise of it in 2 more and was "
            "measurably behind it in 1: on generated hard items in bookend's prompt it kept the "
            "default where the labels chose the retriever's order, 8.7 points behind "
            '(bench/RESULTS.md, "Label-free tuning"). Check it on a few labelled items '
            "(`bookend eval --items-file ... --config tuned=tuned.json`) before you rely on it."
        )
    if chosen not in PROBE_MEASURED:
        return None
    return (
        f"**Caution.** `{chosen}` was measured on code probes. In the cell where label-free "
        "tuning was checked against labels and code probes chose such a table (ISO records, "
        "SmolLM2, bookend's prompt), it was 37 points behind the labelled decision on labelled "
        'evaluation items (bench/RESULTS.md, "Label-free tuning"). Check it on a few labelled '
        "items (`bookend eval --items-file ... --config tuned=tuned.json`) before you use it."
    )
