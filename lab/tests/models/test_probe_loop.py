"""The loop a team runs (docs/guides/loop.md), end to end on SmolLM2 behind upstream llama.cpp's
``llama-server`` (conftest): a LangChain pipeline with bookend records its retrievals through
the adapter's recorder, ``bookend tune --retrievals ... --template ... --endpoint ...`` measures
on self-answer probes built from them, and the same adapter takes the ``tuned.json`` it wrote.
Not llama-cpp-python's server: it returns no log-probabilities for a context whose most likely
next token ends the text, which a self-answer candidate of several tokens can reach."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_bookend import BookendReorder
from langchain_core.documents import Document

import bookend_rag
from bookend_rag.cli import main
from bookend_rag.recorder import RetrievalRecorder
from bookend_rag.retrievals import read_retrievals
from bookend_rag_lab.models.llama_server import LlamaCppServer

from .conftest import SERVED

_PLACES = ["Elmsworth", "Millbrook", "Ashford", "Kelvin Bay", "Northope", "Stainby"]
_FACTS = [
    "{} harbour was dredged in {} to take larger steamers.",
    "The railway station of {} closed to passengers in {}.",
    "The library of {} moved to the old corn exchange in {}.",
    "{} held its first flower show in {}.",
]
_TEMPLATE = "{% for d in documents %}{{ d }}\n\n{% endfor %}Question: {{ question }}\nAnswer:"


def _question(query: int) -> str:
    """The question a user asked: of the first fact the retriever returns for it."""
    fact = (_FACTS[query % 4 :] + _FACTS[: query % 4])[0]
    what = fact.format(_PLACES[query % len(_PLACES)], "which year").rstrip(".")
    return f"{what}?"


def _retrieve(query: int) -> list[tuple[Document, float]]:
    """What the retriever returns for a query: four passages with falling scores."""
    place = _PLACES[query % len(_PLACES)]
    return [
        (Document(page_content=fact.format(place, 1850 + 7 * query + d)), 0.9 - 0.2 * d)
        for d, fact in enumerate(_FACTS[query % 4 :] + _FACTS[: query % 4])
    ]


@pytest.mark.slow
def test_record_tune_and_use_the_tuned_config_in_the_same_adapter(
    upstream: LlamaCppServer, tmp_path: Path
) -> None:
    records = tmp_path / "retrievals.jsonl"
    recorder = RetrievalRecorder(records)
    reorder = BookendReorder(model=SERVED, recorder=recorder)
    for query in range(24):
        pairs = _retrieve(query)
        placed = reorder.invoke({"documents": pairs, "question": _question(query)})
        assert len(placed) == len(pairs)
    recorder.flush()
    recorded = list(read_retrievals(records))
    assert [r.source for r in recorded] == ["langchain"] * 24
    assert [r.question for r in recorded] == [_question(q) for q in range(24)]
    assert [d.score for d in recorded[0].documents] == [s for _, s in _retrieve(0)]
    template = tmp_path / "prompt.j2"
    template.write_text(_TEMPLATE, encoding="utf-8")
    out = tmp_path / "tuned"
    argv = ["tune", "--endpoint", upstream.url, "--served-model", SERVED]
    argv += ["--retrievals", str(records), "--template", str(template), "--max-calls", "48"]
    argv += ["--out", str(out), "--threads", "1", "--no-progress"]
    assert main(argv) == 0
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "**Source.** probes built from your recorded retrievals" in report
    found = json.loads((out / "report.json").read_text(encoding="utf-8"))
    source = found["settings"]["source"]
    # Self-answer probes: the model's answer from each of the 4 documents of each retrieval.
    assert f"{source['probes']} self-answer probes from 24 retrievals" in report
    assert source["probes"] >= 4
    assert 4 * source["probes"] <= source["generated_answers"] <= 4 * 24
    timing = found["timing"]
    assert 0 < timing["model_calls"] <= 48
    assert f"{timing['prompt_tokens']:,} prompt tokens" in report
    # The same adapter takes the tuned config, and places as the core does with it.
    pairs = _retrieve(0)
    tuned = BookendReorder(config=str(out / "tuned.json"))
    texts = [d.page_content for d, _ in pairs]
    expected = bookend_rag.reorder(texts, [s for _, s in pairs], config=out / "tuned.json")
    assert [d.page_content for d in tuned.invoke(pairs)] == expected.items
    assert "decided by:" in expected.explain()
