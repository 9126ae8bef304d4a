"""The tune report's caution where code probes chose an order measured on the probes themselves:
the situation in which label-free tuning was measured behind the labelled decision."""

import pytest

from bookend_rag_lab.report.source import PROBE_MEASURED, probe_caution

SOURCE = {"kind": "probes", "retrievals": "r.jsonl", "summary": "", "used": 1}
PROBES = {"source": SOURCE | {"design": "codes"}}


@pytest.mark.parametrize("chosen", PROBE_MEASURED)
def test_a_probe_measured_choice_is_cautioned(chosen: str) -> None:
    caution = probe_caution(PROBES, chosen)
    assert caution is not None
    assert caution.startswith(f"**Caution.** `{chosen}` was measured on code probes.")
    assert "Label-free tuning" in caution


@pytest.mark.parametrize("chosen", ["default", "relevance", "reversed", "alternate"])
def test_a_fixed_order_from_probes_is_not_cautioned(chosen: str) -> None:
    assert probe_caution(PROBES, chosen) is None


@pytest.mark.parametrize("kind", ["labelled", "built-in"])
def test_labelled_and_built_in_items_are_not_cautioned(kind: str) -> None:
    assert probe_caution({"source": {"kind": kind}}, "measured-slots") is None


@pytest.mark.parametrize("chosen", ["default", "relevance", *PROBE_MEASURED])
def test_every_choice_from_self_answer_probes_is_cautioned(chosen: str) -> None:
    """Self-answer probes were measurably behind the labels in one of the cells checked."""
    caution = probe_caution({"source": SOURCE | {"design": "self-answer"}}, chosen)
    assert caution is not None
    assert caution.startswith(f"**Caution.** `{chosen}` was chosen on self-answer probes")
    assert "8.7 points behind" in caution
