"""Code probes (``--probes codes``) from retrievals on the real SmolLM2: codes that are single
tokens of its tokenizer, so each order costs one model call and no continuation pass, in bookend's
completion prompt and in the model's own chat template; and the probes see the end the model
reads best in each."""

from __future__ import annotations

from typing import Any

import pytest

from bookend_rag.retrievals import RecordedDocument, RetrievalRecord
from bookend_rag_lab.experiments.evaluate import evaluate
from bookend_rag_lab.experiments.runspec import RunSpec
from bookend_rag_lab.items.template import JinjaTemplate
from bookend_rag_lab.models import LocalScorer
from bookend_rag_lab.models import local as scoring

_CHAT = JinjaTemplate(
    [("user", "{% for d in documents %}{{ d }}\n\n{% endfor %}{{ question }}")], name="chat"
)

_FACTS = [
    "The harbour of Elmsworth was dredged in 1911 to take larger steamers.",
    "Millbrook's railway station closed to passengers in 1964.",
    "The old library on Queen Street holds the county's parish records.",
    "Orchards east of the river grow mostly cider apples.",
]


def _records() -> list[RetrievalRecord]:
    return [
        RetrievalRecord(
            question="Which town is this about?",
            documents=[
                RecordedDocument(text=_FACTS[(r + d) % len(_FACTS)], score=1.0 - d / 4)
                for d in range(4)
            ],
        )
        for r in range(4)
    ]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("template", "ahead", "behind"),
    [(None, "reversed", "retrieval"), (_CHAT, "retrieval", "reversed")],
    ids=["completion", "chat"],
)
def test_each_order_is_one_call_with_no_continuation_pass(
    template: JinjaTemplate | None,
    ahead: str,
    behind: str,
    smollm2: LocalScorer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(*_args: Any) -> Any:
        raise AssertionError("a continuation pass: a code took more than one token")

    monkeypatch.setattr(scoring, "_packed_pass", refuse)
    monkeypatch.setattr(scoring, "_batched_pass", refuse)
    before = smollm2.calls
    result = evaluate(
        RunSpec(retrievals=_records(), template=template, probes="codes"),
        smollm2,
        random_draws=1,
        oracle=False,
        progress=False,
    )
    report = result.report
    source = report["settings"]["source"]
    assert (source["kind"], source["probes"], source["multi_token_codes"]) == ("probes", 4, [])
    assert smollm2.calls - before == report["timing"]["distinct_prompts"] > 0
    # Where the named document sits moves its code's probability as this model's ends predict
    # (bench/RESULTS.md): in bookend's completion prompt it reads the last slot best, in a chat
    # the first ("retrieval" puts the named document first, "reversed" last).
    means = {name: s["candidate_prob"]["mean"] for name, s in report["strategies"].items()}
    assert means[ahead] > means[behind]
