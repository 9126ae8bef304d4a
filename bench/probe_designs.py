"""Which probe design reproduces the position curve of real questions? (issue 37 §3, diagnostic)

For the first ``N`` calibration items of a suite (SmolLM2, float32, one thread, bookend's prompt),
the mean probability of the target among the candidates with the target document moved to slots
1, 2, 5 and 10 (the other documents in the retriever's order), for three designs:

- ``labelled``: the suite's own items (the real question, its gold document and candidates);
- ``codes``: today's probes (``bookend_rag_lab.items.codes``), built from the same items as
  answer-less retrieval records: a code statement per document, the question naming the
  retriever's first document by its opening words;
- ``self-answer``: the real question kept; the candidates are the model's own greedy answers to
  it from each document alone (one generation per document), the target the answer from the
  retriever's first document. No labels: the pseudo-gold is the retriever's top document.

Usage (from the repository root)::

    OMP_NUM_THREADS=1 .venv/bin/python bench/probe_designs.py --suite records --items 30
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import label_free

from bookend_rag_lab.experiments.trials import Ranked, retriever_names
from bookend_rag_lab.items.answers import normalize_answer
from bookend_rag_lab.items.codes import probe_items
from bookend_rag_lab.items.suites import suite_items
from bookend_rag_lab.items.template import BOOKEND_PROMPT
from bookend_rag_lab.metrics import candidate_probabilities
from bookend_rag_lab.models.local import LocalScorer, load_trained, prompt_ids
from bookend_rag_lab.models.weights import smollm2_gguf

SLOTS = (1, 2, 5, 10)
MAX_NEW_TOKENS = 16


def target_curve(
    scorer: LocalScorer,
    cases: Sequence[tuple[str, Sequence[str], Sequence[str], int, int]],
) -> dict[int, float]:
    """Per slot, the mean probability (points) of candidate ``answer`` with document ``target``
    moved to that slot; each case is (question, documents in retriever order, candidates, target
    document, answer index)."""
    out: dict[int, list[float]] = {s: [] for s in SLOTS}
    for question, documents, candidates, target, answer in cases:
        rest = [d for d in range(len(documents)) if d != target]
        for slot in SLOTS:
            order = [*rest[: slot - 1], target, *rest[slot - 1 :]]
            prompt = BOOKEND_PROMPT.prompt([documents[d] for d in order], question)
            logprob = scorer.score(prompt, list(candidates)).logprob
            out[slot].append(100 * float(candidate_probabilities(logprob)[answer]))
    return {s: round(float(np.mean(v)), 1) for s, v in out.items()}


def self_answer(scorer: LocalScorer) -> Callable[[str, str], str]:
    """The model's greedy answer to a question from one document alone (its first line, up to
    the end of its first sentence)."""
    import torch

    model = scorer.model

    def answer(document: str, question: str) -> str:
        ids = torch.tensor(
            [prompt_ids(model.tokenizer, BOOKEND_PROMPT.prompt([document], question))]
        )
        with torch.inference_mode():
            out = model.lm.generate(
                ids,
                max_new_tokens=MAX_NEW_TOKENS,
                do_sample=False,
                pad_token_id=model.tokenizer.eos_token_id,
            )
        text = model.tokenizer.decode(out[0, ids.shape[1] :], skip_special_tokens=True)
        text = text.strip().split("\n")[0].strip()
        return re.split(r"(?<=[^A-Z0-9])\. ", text)[0].rstrip(".").strip()

    return answer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--suite", default="records")
    parser.add_argument("--items", type=int, default=30)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    scorer = LocalScorer(load_trained(smollm2_gguf(), dtype="float32"))

    items = suite_items(args.suite, label_free.CALIBRATION_ITEMS, label_free.K, split="calibration")
    items = items[: args.items]
    ranked = Ranked.of(items, retriever_names(items, None))
    labelled = []
    for item, ranking in zip(items, ranked.per_item, strict=True):
        assert item.candidates is not None
        assert item.gold is not None
        docs = [item.documents[d] for d in ranking.indices]
        labelled.append(
            (
                item.question,
                docs,
                item.candidates,
                list(ranking.indices).index(item.gold),
                item.gold,
            )
        )
    print("labelled", target_curve(scorer, labelled), flush=True)

    records = label_free.retrieval_records(args.suite)[: args.items]
    probes = probe_items(records, template=BOOKEND_PROMPT, token_length=scorer.token_length)
    codes = []
    for p in probes.items:
        assert p.candidates is not None
        assert p.gold is not None
        codes.append((p.question, p.documents, p.candidates, p.gold, p.gold))
    print("codes", target_curve(scorer, codes), flush=True)

    answer = self_answer(scorer)
    selfs = []
    for record in records:
        docs = [d.text for d in record.documents]
        answers = [answer(d, record.question) for d in docs]
        candidates: list[str] = []
        for a in answers:
            if a and normalize_answer(a) not in {normalize_answer(c) for c in candidates}:
                candidates.append(a)
        if not answers[0] or len(candidates) < 2:
            continue
        gold = [normalize_answer(c) for c in candidates].index(normalize_answer(answers[0]))
        selfs.append((record.question, docs, candidates, 0, gold))
    print(f"self-answer (n = {len(selfs)})", target_curve(scorer, selfs), flush=True)


if __name__ == "__main__":
    main()
