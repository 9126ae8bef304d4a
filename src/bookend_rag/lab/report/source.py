"""The sentence every report (and dry run) of ``bookend eval`` and ``bookend tune`` gives its
items' source: which kind of items decided, labelled items, a built-in suite, or probes built from
recorded retrievals without labels (the report's ``settings["source"]``,
:func:`~bookend_rag.lab.experiments.setup.source_settings`)."""

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
    how = "answers known by construction" if settings["suite"] in GENERATED else "real answers"
    return f"**Source.** the built-in suite `{settings['suite']}` ({how})."


def probe_caution(settings: Mapping[str, Any], chosen: str) -> str | None:
    """``**Caution.** ...`` when code probes chose an order measured on the probes themselves (the
    situation in which the recorded evidence found the label-free decision measurably behind the
    labelled one), else ``None``. Self-answer probes, the default, were not measured behind in any
    cell checked so far (``bench/RESULTS.md``, "Label-free tuning")."""
    source = settings["source"]
    if source["kind"] != "probes" or source.get("design") != "codes":
        return None
    if chosen not in PROBE_MEASURED:
        return None
    return (
        f"**Caution.** `{chosen}` was measured on code probes. In the cell where label-free "
        "tuning was checked against labels and code probes chose such a table (ISO records, "
        "SmolLM2, bookend's prompt), it was 37 points behind the labelled decision on labelled "
        'evaluation items (bench/RESULTS.md, "Label-free tuning"); self-answer probes (the '
        "default, `--probes self-answer`) chose as the labels did there. Check it on a few "
        "labelled items (`bookend eval --items-file ... --config tuned=tuned.json`) before you "
        "use it."
    )
