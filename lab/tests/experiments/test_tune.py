"""``bookend tune`` end to end: a user JSONL on a tiny random model built here, a planted scorer
for the decisions, the folds and the slot design, the LangChain table, the errors."""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import io
import json
import math
import random
import re
import subprocess
import sys
import warnings
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import bookend_rag
from bookend_rag.cli import main
from bookend_rag_lab.decision import INTERIM_SHARE
from bookend_rag_lab.experiments.budget import Budget
from bookend_rag_lab.experiments.calibrate import measure_outcomes
from bookend_rag_lab.experiments.candidates import (
    FITTED,
    Candidates,
    fixed_candidates,
    langchain_table,
)
from bookend_rag_lab.experiments.folds import Folds
from bookend_rag_lab.experiments.judging import Judging
from bookend_rag_lab.experiments.measured_slots import (
    NO_FILLER,
    SlotMeasurement,
    measure_slots,
    slot_blocks,
)
from bookend_rag_lab.experiments.race import FIRST_LOOK
from bookend_rag_lab.experiments.runspec import RunSpec
from bookend_rag_lab.experiments.trials import Ranked
from bookend_rag_lab.experiments.tune import MEASURE_BLOCKS, TuneResult, tune
from bookend_rag_lab.fitting.outcomes import SlotOutcome, slot_outcome
from bookend_rag_lab.frameworks import haystack_order, langchain_order, llama_index_order
from bookend_rag_lab.items.item import Item, items_sha256, load_jsonl
from bookend_rag_lab.metrics import metric_names
from bookend_rag_lab.models import CallCache, Continuations, ScorerSpec
from bookend_rag_lab.reorderers import bookend_strategy
from bookend_rag_lab.report.tuning import tuned_config

#: The theory of SmolLM2 (its name alone gives SmolLM2's measured profile): relevance first.
THEORY = bookend_rag.ModelSpec.preset("smollm2-135m")


def _write_items(path: Path, n: int, k: int, *, gold_first: bool = False) -> Path:
    """``n`` lookups of ``k`` scored documents, each holding one code; the gold document is
    ranked anywhere, or first (the highest score) with ``gold_first``."""
    rng = random.Random(7)
    lines = []
    for i in range(n):
        codes = [str(100 + 7 * j + i) for j in range(k)]
        gold = 0 if gold_first else rng.randrange(k)
        documents = [
            {"text": f"Record {j}: the code of entity {i}-{j} is {codes[j]}.", "score": s}
            for j, s in enumerate(sorted((rng.random() for _ in range(k)), reverse=True))
        ]
        documents[gold]["text"] = f"Record {gold}: the code of entity {i} is {codes[gold]}."
        lines.append(
            json.dumps(
                {
                    "id": f"user-{i}",
                    "question": f"What is the code of entity {i}?",
                    "documents": documents,
                    "answer": codes[gold],
                    "candidates": codes,
                    "gold": gold,
                }
            )
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _directory_sha256(directory: Path) -> str:
    listing = "\n".join(
        f"{p.relative_to(directory).as_posix()} {hashlib.sha256(p.read_bytes()).hexdigest()}"
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    )
    return hashlib.sha256(listing.encode("utf-8")).hexdigest()


def _placed_everywhere_by_config(
    path: Path, config: bookend_rag.PlacementConfig, provenance: dict[str, Any], work: Path
) -> None:
    """The written ``tuned.json``, passed by ``config=`` to the core, the three adapters and
    ``bookend reorder --config``, places as its config does, and its provenance is kept."""
    from haystack import Document as HaystackDocument
    from haystack_integrations.components.rankers.bookend import BookendRanker
    from langchain_bookend import BookendReorder
    from langchain_core.documents import Document
    from llama_index.core.schema import NodeWithScore, TextNode
    from llama_index.postprocessor.bookend import BookendNodePostprocessor

    texts = [f"passage {i} " + "word " * (3 * i) for i in range(5)]
    scores = [0.3, 0.9, 0.1, 0.7, 0.5]
    loaded = bookend_rag.load_config(path)
    assert loaded.config == config
    assert loaded.provenance == provenance
    expected = bookend_rag.Bookend.from_config(config).place(texts, scores).items
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the tuned model is not overridden: no warning
        assert bookend_rag.reorder(texts, scores, config=path).items == expected
        assert bookend_rag.Bookend.from_config(str(path)).config == config
        reorder = BookendReorder(config=str(path))
        docs = [
            Document(page_content=t, metadata={"score": s})
            for t, s in zip(texts, scores, strict=True)
        ]
        assert [d.page_content for d in reorder.invoke(docs)] == expected
        post = BookendNodePostprocessor(config=path)
        nodes = [
            NodeWithScore(node=TextNode(text=t), score=s)
            for t, s in zip(texts, scores, strict=True)
        ]
        placed = post.postprocess_nodes(nodes)
        assert [n.node.get_content() for n in placed] == expected
        ranker = BookendRanker(config=str(path))
        hay = [
            HaystackDocument(id=str(i), content=t, score=s)
            for i, (t, s) in enumerate(zip(texts, scores, strict=True))
        ]
        assert [d.content for d in ranker.run(hay)["documents"]] == expected
        assert ranker.to_dict()["init_parameters"]["config"] == str(path)
        chunks = work / "chunks.json"
        chunks.write_text(json.dumps({"chunks": texts, "scores": scores}), encoding="utf-8")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["reorder", str(chunks), "--config", str(path)]) == 0
        assert json.loads(out.getvalue())["chunks"] == expected
    with pytest.warns(UserWarning, match=re.escape(provenance["model"])):
        BookendReorder(config=str(path), model="qwen2.5-7b")


def test_user_jsonl_end_to_end_on_a_tiny_model(
    saved_model: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    work = tmp_path_factory.mktemp("tune")  # not the model's directory, whose files are hashed
    items_file = _write_items(work / "items.jsonl", 12, 4)
    out = work / "out"
    model_hash = _directory_sha256(saved_model)
    result = tune(
        RunSpec(items_file),
        ScorerSpec(weights=saved_model),
        measure_blocks=MEASURE_BLOCKS,
        out_dir=out,
        progress=False,
    )
    report = result.report
    assert {p.name for p in result.files} == {"tuned.json", "report.json", "report.md", "tune.png"}
    assert (out / "tune.png").read_bytes()[:4] == b"\x89PNG"
    # Folds: the items alternate between the two folds in the order of their ids' hashes.
    by_hash = sorted(
        (f"user-{i}" for i in range(12)), key=lambda s: hashlib.sha256(s.encode()).hexdigest()
    )
    # The race judges a prefix of that order: all of it, or up to the look that settled it.
    judged = report["n_judged"]
    assert [row["id"] for row in report["items"]] == by_hash[:judged]
    assert [row["fold"] for row in report["items"]] == ([0, 1] * 6)[:judged]
    if report["stopped"] == "settled":
        assert FIRST_LOOK <= judged < 12
        assert judged % 5 == 0
        assert report["settled"]
        assert report["settled"] in (out / "report.md").read_text("utf-8")
    else:
        assert (report["stopped"], judged, report["settled"]) == ("items", 12, None)
    # Every candidate was judged on every item before the first look (no elimination before),
    # the cross-fitted slot table among them; the random shuffle too (the first 10 items).
    assert set(report["candidates"]) == {
        "default", "relevance", "reversed", "view", "alternate", "langchain", "measured-slots",
        "fitted",
    }  # fmt: skip
    for row in report["items"][:FIRST_LOOK]:
        assert set(report["candidates"]) | {"random", "random#0"} == set(row["results"])
    assert set(report["timing"]["step_seconds"]) == {"loading", "items", "measure", "race"}
    measured = report["measurement"]
    assert measured["scored_pairs"] == measured["planned_pairs"] == 12 * 2  # 2 of 4 slots each
    assert measured["tables"]["fold 0 held out"]["items_per_slot"] == 3
    # The fitted profile comes from the same 24 pairs: each fold's from the other fold's 12.
    fits = measured["fits"]
    assert fits["target"] == "candidate_prob"
    assert [fits[p]["n_outcomes"] for p in ("pooled", "fold 0 held out", "fold 1 held out")] == [
        24,
        12,
        12,
    ]
    fitted = report["candidates"]["fitted"]["config"]
    assert fitted["pooled"]["model"] == fits["pooled"]["profile"]
    assert [c["model"] for c in fitted["per_fold"]] == [
        fits["fold 0 held out"]["profile"],
        fits["fold 1 held out"]["profile"],
    ]
    # The guard: the decision follows from its Bonferroni-corrected interval.
    decision = report["decision"]
    guard = decision["guard"]
    # Seven rivals of the default; the error rate split between the looks and the last one.
    share = INTERIM_SHARE if report["stopped"] == "settled" else 1 - INTERIM_SHARE
    assert guard["level"] == pytest.approx(1 - share * 0.05 / 7)
    assert (guard["anytime"] is not None) == (report["stopped"] == "settled")
    assert decision["switched"] == (guard["ci_low"] > 0)
    assert result.decision.chosen == decision["chosen"]
    if not decision["switched"]:
        assert decision["chosen"] == "default"
    # The config written is the chosen one and loads as a PlacementConfig.
    doc = json.loads((out / "tuned.json").read_text(encoding="utf-8"))
    assert set(doc) == {"config", "provenance"}
    config = bookend_rag.PlacementConfig.model_validate(doc["config"])
    written = report["candidates"][decision["chosen"]]["config"]
    written = written.get("pooled", written)  # measured-slots: the table of every fold
    assert config == result.config == bookend_rag.PlacementConfig.model_validate(written)
    assert bookend_rag.Bookend.from_config(config).place(["a", "b", "c"], [0.2, 0.9, 0.5]).items
    # Provenance.
    p = doc["provenance"]
    assert p["model"] == f"{saved_model}|float32"
    assert p["model_sha256"] == model_hash
    assert p["items_sha256"] == items_sha256(load_jsonl(items_file))
    assert (p["n_items"], p["n_judged"], p["chosen"]) == (12, judged, decision["chosen"])
    assert p["guard"] == guard
    assert p["versus_framework"]["reference"] in ("alternate", "langchain")
    assert p["versus_framework"]["n"] == judged
    assert p["bookend_version"] == bookend_rag.__version__
    assert datetime.datetime.fromisoformat(p["date"]).tzinfo is not None
    _placed_everywhere_by_config(out / "tuned.json", config, p, work)
    text = (out / "report.md").read_text(encoding="utf-8")
    assert text.startswith("## bookend tune:")
    assert decision["reason"] in text
    # The guard's figures in the report's units (points), not as fractions.
    assert f"(MDE {100 * guard['mde']:.2f}) at {guard['level']:.2%}" in text
    if not decision["switched"]:
        assert f"{4 * guard['n']} items (4x) would halve it, to about " in text
    assert "### Fitted profile" in text
    assert "Target `candidate_prob`, 24 outcomes. Pooled: primacy " in text
    # A run that chooses `fitted` writes a tuned.json that loads and places everywhere.
    fitted_config = bookend_rag.PlacementConfig.model_validate(fitted["pooled"])
    placed = bookend_rag.Bookend.from_config(fitted_config).place(["a", "b c"], [0.1, 0.9])
    assert isinstance(placed.profile, bookend_rag.FittedProfile)
    fitted_path = work / "fitted.json"
    fitted_path.write_text(json.dumps(tuned_config(fitted_config, report)), encoding="utf-8")
    _placed_everywhere_by_config(fitted_path, fitted_config, p, work)


def test_items_hash_changes_with_any_field() -> None:
    item = Item("a", "q?", ("x", "y"), "x", candidates=("x", "y"), gold=0)
    other = Item("a", "q?", ("x", "y "), "x", candidates=("x", "y"), gold=0)
    assert items_sha256([item]) == items_sha256([Item(**vars(item))])
    assert items_sha256([item]) != items_sha256([other])
    assert items_sha256([item, other]) != items_sha256([other, item])


def test_the_budget_caps_the_calls_and_a_rerun_resumes_with_none(
    saved_model: Path, tmp_path: Path, counted: list[str]
) -> None:
    items_file = _write_items(tmp_path / "items.jsonl", 12, 4)
    run, model = (
        RunSpec(items_file),
        ScorerSpec(weights=saved_model, cache=tmp_path / "calls.jsonl"),
    )
    capped = tune(run, model, max_calls=30, progress=False)
    assert capped.calls == len(counted) <= 30
    assert capped.report["stopped"] == "calls"
    assert capped.report["measurement"]["calls"] <= 15  # half of the budget
    assert capped.report["n_judged"] < 12
    counted.clear()
    full = tune(run, model, progress=False)
    assert full.report["stopped"] in ("items", "settled")  # no budget stopped it
    made = len(counted)
    assert full.calls == made > 0
    counted.clear()
    again = tune(run, model, progress=False)
    assert again.calls == 0
    assert counted == []
    assert again.report["candidates"] == full.report["candidates"]
    assert again.report["decision"] == full.report["decision"]


class _Planted:
    """A scorer backend whose candidates' log-probabilities are planted: a candidate scores
    ``slope * slot / (K - 1)`` plus noise fixed by the prompt, ``slot`` being where the document
    holding it sits. ``slope > 0`` plants a model that reads the last slot best; ``slope = 0`` one
    that reads every slot alike."""

    def __init__(self, slope: float, cache: CallCache | None = None) -> None:
        self.slope = slope
        self.model_id = f"planted-{slope}"
        self.calls = 0
        self.cache = cache or CallCache()

    def token_length(self, text: str) -> int:
        return len(text.split())

    def _key(self, prompt: str, continuations: Sequence[str]) -> str:
        return f"{self.model_id}|{prompt}|{'|'.join(continuations)}"

    def is_cached(self, prompt: str, continuations: Sequence[str]) -> bool:
        return self.cache.get(self._key(prompt, continuations)) is not None

    def score(self, prompt: str, continuations: Sequence[str]) -> Continuations:
        key = self._key(prompt, continuations)
        found = self.cache.get(key)
        if found is not None:
            return found
        self.calls += 1
        slots = re.findall(r"Document (\d+): [^\n]* is (\d+)\.", prompt)
        where = {code: int(slot) - 1 for slot, code in slots}
        k = len(slots)
        logprob = tuple(
            self.slope * where[c] / (k - 1) + random.Random(prompt + c).gauss(0.0, 0.3)
            for c in continuations
        )
        found = Continuations(logprob, tuple(False for _ in continuations))
        self.cache.put(key, found)
        return found


def _tune_measuring(run: RunSpec, planted: _Planted, **options: Any) -> TuneResult:
    """``tune`` on planted scores with the theory's model and the suggested slot measurement
    (its cross-fitted candidates race too), no progress bar."""
    return tune(
        run, planted, theory=THEORY, measure_blocks=MEASURE_BLOCKS, progress=False, **options
    )


def test_tune_switches_to_a_candidate_planted_ahead(tmp_path: Path) -> None:
    items_file = _write_items(tmp_path / "items.jsonl", 40, 6, gold_first=True)
    result = _tune_measuring(RunSpec(items_file), _Planted(3.0))
    report = result.report
    # Gold last wins: the default (most relevant first) is measurably behind.
    assert result.decision.switched
    assert result.decision.chosen != "default"
    assert report["decision"]["guard"]["ci_low"] > 0
    means = report["measurement"]["tables"]["pooled"]["slot_means"]
    assert means == sorted(means)  # the measured table rises with the slot, as planted
    # The race left the clearly-behind candidates (first-slot orders) behind, but never the
    # user's current order (the retriever's: relevance), which every candidate is compared with.
    assert "alternate" in {n for n, c in report["candidates"].items() if c["eliminated_at"]}
    assert report["candidates"]["relevance"]["eliminated_at"] is None
    assert report["chosen"]["current"] == "relevance"
    assert report["chosen"]["versus_current"]["verdict"] == "better"
    assert report["chosen"]["versus_random"]["verdict"] == "better"


def test_tune_compares_every_candidate_with_the_users_framework_order(tmp_path: Path) -> None:
    # A Haystack user's order today is the alternating pattern: it stays in the race to the end
    # and every candidate is compared with it (the rule that a kept default behind it gives way
    # to it is tested on planted scores in test_selection.py).
    items_file = _write_items(tmp_path / "items.jsonl", 40, 6, gold_first=True)
    run = RunSpec(items_file)
    result = _tune_measuring(run, _Planted(-3.0), current="haystack")
    report = result.report
    assert report["chosen"]["current"] == "alternate"
    assert report["candidates"]["alternate"]["eliminated_at"] is None
    assert "minus your order (alternate)" in result.markdown
    with pytest.raises(ValueError, match="current must be one of"):
        tune(run, _Planted(0.0), theory=THEORY, current="mine", progress=False)


def test_without_measure_blocks_no_slot_is_measured_and_no_measured_candidate_races(
    tmp_path: Path,
) -> None:
    items_file = _write_items(tmp_path / "items.jsonl", 20, 6, gold_first=True)
    result = tune(RunSpec(items_file), _Planted(3.0), theory=THEORY, progress=False)
    report = result.report
    assert "measured-slots" not in report["candidates"]
    assert "fitted" not in report["candidates"]
    assert (report["measurement"]["planned_pairs"], report["timing"]["measure_calls"]) == (0, 0)
    assert "`measured-slots` was left out" in result.markdown
    assert report["decision"]["guard"]["level"] == pytest.approx(
        1 - (INTERIM_SHARE if report["stopped"] == "settled" else 1 - INTERIM_SHARE) * 0.05 / 5
    )  # five rivals of the default
    with pytest.raises(ValueError, match="measure_blocks must be an integer >= 0, got "):
        tune(RunSpec(items_file), _Planted(3.0), theory=THEORY, measure_blocks=-1)


def test_tune_keeps_the_default_when_no_slot_matters(tmp_path: Path) -> None:
    items_file = _write_items(tmp_path / "items.jsonl", 40, 6, gold_first=True)
    result = _tune_measuring(RunSpec(items_file), _Planted(0.0))
    assert not result.decision.switched
    assert result.config == bookend_rag.PlacementConfig(model=THEORY)
    assert "keep the default" in result.decision.reason
    assert result.decision.guard is not None
    assert result.decision.guard.mde > 0
    assert f"{4 * result.decision.guard.n} items (4x) would halve it" in result.markdown


def _items(n: int, k: int) -> list[Item]:
    return [
        Item(
            f"item-{i}",
            f"q{i}?",
            tuple(f"document {j} of item {i}" for j in range(k)),
            f"a{i}",
            candidates=(f"a{i}", "b", "c"),
            scores=tuple(float(k - j) for j in range(k)),
            gold=(3 * i) % k,
        )
        for i in range(n)
    ]


def test_folds_are_balanced_by_the_hash_of_the_id_in_any_order() -> None:
    items = _items(11, 5)
    folds = Folds.of_items(items, 3)
    assert sorted(Counter(folds.of).values()) == [3, 4, 4]
    shuffled = list(reversed(items))
    again = Folds.of_items(shuffled, 3)
    by_id = {it.item_id: f for it, f in zip(items, folds.of, strict=True)}
    assert {it.item_id: f for it, f in zip(shuffled, again.of, strict=True)} == by_id
    # Every prefix of the judging order holds the folds in equal measure (within one item).
    for n in range(1, 12):
        counts = Counter(folds.of[i] for i in folds.order[:n])
        assert max(counts.values()) - min(counts.get(f, 0) for f in range(3)) <= 1


def test_the_slot_design_is_stratified_and_moves_the_gold_through_retrieval_order() -> None:
    items = _items(14, 5)
    rankings = Ranked.of(items, ["file"]).per_item
    folds = Folds.of_items(items, 2)
    blocks = slot_blocks(items, rankings, folds, 5)
    assert all(len(block) == 5 for block in blocks)
    per_item: dict[int, list[int]] = {}
    for block in blocks:
        assert sorted(slot for slot, _ in block) == list(range(5))  # each block: every slot
        assert len({folds.of[t.item] for _, t in block}) == 1  # of one fold
        for slot, trial in block:
            item = items[trial.item]
            assert item.gold is not None
            assert trial.order.index(item.gold) == slot
            others = [d for d in trial.order if d != item.gold]
            assert others == sorted(others)  # documents 0..K-1 are the retrieval order here
            per_item.setdefault(trial.item, []).append(slot)
    # ceil(5 / 2) = 3 distinct slots an item; 7 items a fold give 21 pairs, of which whole
    # blocks of 5 keep 20 (the last item of each fold loses one).
    assert all(len(s) == len(set(s)) <= 3 for s in per_item.values())
    assert sum(len(s) for s in per_item.values()) == 2 * 20
    assert [folds.of[b[0][1].item] for b in blocks] == [0, 1] * 4


def test_each_fold_is_judged_with_a_table_measured_on_the_other_folds() -> None:
    items = _items(8, 4)
    folds = Folds.of_items(items, 2)
    # Fold 0's items read slot 0 best, fold 1's slot 2: each table follows the *other* fold.
    pairs = tuple(
        (i, s, 1.0 if s == (0 if folds.of[i] == 0 else 2) else 0.2)
        for i in range(8)
        for s in range(4)
    )
    measurement = SlotMeasurement(4, "candidate_prob", folds, pairs, len(pairs), 0)
    weights = [measurement.table(f).weights for f in (0, 1)]  # type: ignore[union-attr]
    assert max(range(4), key=lambda s: weights[0][s]) == 2
    assert max(range(4), key=lambda s: weights[1][s]) == 0
    pooled = measurement.table()
    assert pooled is not None
    assert pooled.weights[0] == pooled.weights[2] > pooled.weights[1]


def test_a_table_of_log_probabilities_weighs_slots_by_their_geometric_mean() -> None:
    items = _items(4, 3)
    folds = Folds.of_items(items, 2)
    pairs = tuple((i, s, -1000.0 - s) for i in range(4) for s in range(3))
    table = SlotMeasurement(3, "gold_logprob", folds, pairs, len(pairs), 0).table()
    assert table is not None
    assert table.weights == pytest.approx((1.0, math.exp(-1), math.exp(-2)))


def test_the_outcome_span_is_the_gold_documents_tokens_inside_the_documents_block() -> None:
    item = Item(
        "tiny",
        "q?",
        ("alpha beta", "gamma", "delta epsilon zeta"),
        "x",
        candidates=("x", "y"),
        gold=0,
    )
    values = {"gold_logprob": -1.5, "candidate_prob": 0.6, "accuracy": 1.0}
    outcome = slot_outcome(item, (2, 0, 1), 1, values, lambda text: len(text.split()), NO_FILLER)
    # By hand, one token a word: the instruction is 7 words, "Document 1: delta epsilon zeta"
    # 5, "Document 2: alpha beta" (the gold document) 4, "Document 3: gamma" 3, and
    # "Question: q? Answer:" 3.
    assert outcome == SlotOutcome(
        item_id="tiny",
        family="file",
        n_docs=3,
        slot=1,
        gold_start=5,
        gold_end=9,
        n_tokens=12,
        prompt_tokens=22,
        correct=True,
        candidate_prob=0.6,
        logprob=-1.5,
        filler=(0, 0),
    )


def _judging(items: Sequence[Item], scorer: Any, folds: int = 2) -> Judging:
    budget = Budget(scorer, None, None, 0.0)
    ranked = Ranked.of(items, ["file"])
    folded = Folds.of_items(items, folds)
    return Judging(scorer, items, ranked, folded, metric_names(items), budget, 0, False)


def test_the_measurement_keeps_the_outcomes_calibrate_records(tmp_path: Path) -> None:
    items = load_jsonl(_write_items(tmp_path / "items.jsonl", 8, 4))
    scorer = _Planted(2.0)
    measurement = measure_slots(_judging(items, scorer), k=4, share=1.0)
    assert len(measurement.outcomes) == len(measurement.pairs) == 16
    # The documents' scores fall with their index, so the retrieval order is the file's order
    # and the measurement's prompts are calibrate's: the same outcome, span and score.
    for (index, outcome), (item, slot, value) in zip(
        measurement.outcomes, measurement.pairs, strict=True
    ):
        assert (index, outcome.slot, outcome.candidate_prob) == (item, slot, value)
        assert outcome == measure_outcomes(scorer, [items[index]], NO_FILLER)[slot]


def _outcomes(items: Sequence[Item], folds: Folds, best: Sequence[int]) -> list[SlotOutcome]:
    """Every item of 4 documents of 10 tokens in every slot; fold ``f``'s items answer best in
    slot ``best[f]``, with noise fixed by the item and slot."""
    return [
        SlotOutcome(
            item_id=item.item_id,
            family="file",
            n_docs=4,
            slot=s,
            gold_start=10 * s,
            gold_end=10 * s + 10,
            n_tokens=40,
            prompt_tokens=60,
            correct=s == best[folds.of[i]],
            candidate_prob=(0.8 if s == best[folds.of[i]] else 0.3)
            + random.Random(f"{i}:{s}").uniform(-0.1, 0.1),
            logprob=-1.0,
            filler=NO_FILLER,
        )
        for i, item in enumerate(items)
        for s in range(4)
    ]


def _measurement(items: Sequence[Item], folds: Folds, outcomes: Sequence[SlotOutcome]) -> Any:
    index = {item.item_id: i for i, item in enumerate(items)}
    pairs = tuple((index[o.item_id], o.slot, o.candidate_prob) for o in outcomes)
    with_index = tuple((index[o.item_id], o) for o in outcomes)
    return SlotMeasurement(4, "candidate_prob", folds, pairs, len(pairs), 0, with_index)


def test_the_fit_judged_on_a_fold_never_sees_its_outcomes() -> None:
    items = _items(12, 4)
    folds = Folds.of_items(items, 2)
    planted = _measurement(items, folds, _outcomes(items, folds, [0, 3]))
    # Fold 0's outcomes altered (its items now read slot 1 best): the profile judged on fold 0
    # stays the same; the one judged on fold 1 and the pooled one change.
    altered = _measurement(items, folds, _outcomes(items, folds, [1, 3]))
    before, after = planted.fits(), altered.fits()
    assert after["fold 0 held out"].profile == before["fold 0 held out"].profile is not None
    assert after["fold 1 held out"].profile != before["fold 1 held out"].profile
    assert after["pooled"].profile != before["pooled"].profile
    assert before["fold 0 held out"].n_outcomes == 24
    # The candidate judged on each fold is that fold's fit; choosing it writes the pooled one.
    candidates = Candidates.build(THEORY, 4, planted)
    assert FITTED in candidates.names
    assert list(candidates.measured[FITTED].per_fold) == [
        bookend_rag.PlacementConfig(model=before[f"fold {f} held out"].profile) for f in (0, 1)
    ]
    assert candidates.written(FITTED) == bookend_rag.PlacementConfig(model=before["pooled"].profile)
    # Fold 0 is judged with the fit of fold 1's items, which read the last slot best.
    fold_0 = bookend_strategy(candidates.of_fold(0)[FITTED])
    assert fold_0([0.9, 0.5, 0.3, 0.1], [10.0] * 4)[-1] == 0


def test_a_fit_with_too_few_outcomes_leaves_the_candidate_out_with_the_reason() -> None:
    items = _items(4, 4)
    folds = Folds.of_items(items, 2)
    measurement = _measurement(items, folds, _outcomes(items, folds, [0, 3]))
    candidates = Candidates.build(THEORY, 4, measurement)
    assert FITTED not in candidates.names
    assert "measured-slots" in candidates.names
    fits = candidates.fits_to_json()
    assert fits["pooled"]["n_outcomes"] == 16
    assert fits["fold 0 held out"] == {
        "n_outcomes": 8,
        "left_out": "8 outcomes, fewer than the 10 that 5 parameters need",
    }
    # Without candidates and with log-probabilities measured, nothing is fitted at all.
    bare = SlotMeasurement(4, "gold_logprob", folds, measurement.pairs, 16, 0)
    assert bare.fit_target() is None
    assert bare.fit().reason == "no measured item has candidates to fit an outcome to"


@pytest.mark.parametrize("k", range(2, 13))
def test_the_langchain_table_reproduces_langchain_and_alternate_haystack(k: int) -> None:
    rng = random.Random(k)
    scores = sorted((rng.random() for _ in range(k)), reverse=True)
    lengths = [float(3 + (7 * j) % 11) for j in range(k)]
    table = bookend_strategy(bookend_rag.PlacementConfig(model=langchain_table(k)))
    assert table(scores, lengths) == langchain_order(scores) == llama_index_order(scores)
    alternate = bookend_strategy(fixed_candidates("smollm2-135m", k)["alternate"])
    assert alternate(scores, lengths) == haystack_order(scores)
    reversed_ = bookend_strategy(fixed_candidates("smollm2-135m", k)["reversed"])
    assert reversed_(scores, lengths) == list(reversed(range(k)))


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"folds": 1}, "folds must be an integer >= 2, got folds=1"),
        ({"folds": True}, "folds=True"),
        ({"max_calls": 0}, "max_calls must be an integer >= 1 or None, got max_calls=0"),
        ({"minutes": 0}, "minutes must be a number > 0 or None, got minutes=0"),
        ({"minutes": float("nan")}, "minutes=nan"),
        ({"batch": 0}, "batch must be an integer >= 1, got batch=0"),
        ({"confidence": 1.0}, "confidence must lie in (0, 1), got confidence=1.0"),
        ({"folds": 7}, "folds=7 needs at least 14 items (two per fold), got 12 items"),
        ({"retrievers": ["tfidf"]}, "retrievers must be drawn from"),
    ],
)
def test_bad_arguments_are_one_line_errors_before_any_model_loads(
    kwargs: dict[str, Any], needle: str, tmp_path: Path
) -> None:
    items_file = _write_items(tmp_path / "items.jsonl", 12, 4)
    run = RunSpec(items_file, retrievers=kwargs.get("retrievers"))
    options = {name: value for name, value in kwargs.items() if name != "retrievers"}
    # The weights do not exist: an error about them would mean the model was being loaded.
    with pytest.raises(ValueError, match=re.escape(needle)) as error:
        tune(run, ScorerSpec(weights=tmp_path / "missing"), progress=False, **options)
    assert "\n" not in str(error.value)


def test_the_cli_tunes_and_its_config_reaches_a_langchain_chain_and_eval(
    saved_model: Path, tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    from langchain_bookend import BookendReorder
    from langchain_core.documents import Document

    tmp_path = tmp_path_factory.mktemp("cli")  # not the model's directory, whose files are hashed

    items_file = _write_items(tmp_path / "items.jsonl", 8, 3)
    out = tmp_path / "out"
    argv = ["tune", "--weights", str(saved_model), "--items-file", str(items_file)]
    argv += ["--out", str(out), "--threads", "1", "--no-progress", "--max-calls", "500"]
    assert main(argv) == 0
    assert "## bookend tune:" in capsys.readouterr().out
    doc = json.loads((out / "tuned.json").read_text(encoding="utf-8"))
    assert doc["provenance"]["settings"]["max_calls"] == 500
    config = bookend_rag.PlacementConfig.model_validate(doc["config"])
    reorder = BookendReorder(**config.model_dump())
    docs = [Document(page_content=t, metadata={"score": s}) for t, s in [("a", 0.1), ("b", 0.9)]]
    expected = bookend_rag.Bookend.from_config(config, text="page_content").place(docs, [0.1, 0.9])
    assert reorder.invoke(docs) == expected.items
    # eval confirms a tuned config by the file tune wrote, and warns about one tuned on other
    # weights (the same config, another recorded hash).
    other = tmp_path / "other.json"
    other_doc = {**doc, "provenance": {**doc["provenance"], "model_sha256": "0" * 64}}
    other.write_text(json.dumps(other_doc), encoding="utf-8")
    argv = ["eval", "--weights", str(saved_model), "--items-file", str(items_file), "--config"]
    argv += [f"tuned={out / 'tuned.json'}", "--config", f"other={other}"]
    argv += ["--out", str(tmp_path / "eval"), "--no-progress"]
    with pytest.warns(UserWarning, match="tuned on model") as caught:
        assert main([*argv, "--threads", "1", "--random-draws", "1", "--no-oracle"]) == 0
    tuned_warnings = [str(w.message) for w in caught if "tuned on model" in str(w.message)]
    assert len(tuned_warnings) == 1  # the other file only: tuned.json's hash is the model's
    assert f"config={str(other)!r}" in tuned_warnings[0]
    assert "0" * 64 in tuned_warnings[0]
    assert doc["provenance"]["model_sha256"] in tuned_warnings[0]
    report = json.loads((tmp_path / "eval" / "report.json").read_text(encoding="utf-8"))
    assert report["settings"]["profiles"]["tuned"] == doc["config"]
    assert "bookend-tuned vs random" in report["paired"]


def test_cli_errors_are_one_line_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items_file = _write_items(tmp_path / "items.jsonl", 4, 3)
    argv = ["tune", "--items-file", str(items_file), "--weights", str(tmp_path / "missing")]
    assert main([*argv, "--folds", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "bookend tune: error: folds must be an integer >= 2, got folds=1"
    assert main([*argv, "--max-calls", "0"]) == 2
    assert "max_calls=0" in capsys.readouterr().err


def test_a_scorer_without_local_weights_records_no_model_hash(tmp_path: Path) -> None:
    items_file = _write_items(tmp_path / "items.jsonl", 8, 3)
    planted = _Planted(1.0)
    result = _tune_measuring(RunSpec(items_file), planted)
    assert result.report["provenance"]["model_sha256"] is None
    assert result.report["provenance"]["model"] == "planted-1.0"
    assert result.calls == planted.calls > 0


def test_bookend_tune_is_the_lab_function_loaded_on_first_use() -> None:
    assert bookend_rag.tune is tune
    # `import bookend_rag` loads no lab module; the attribute loads the lab's tune, not torch.
    code = (
        "import sys, bookend_rag; "
        "before = any(m.startswith('bookend_rag_lab') for m in sys.modules); "
        "bookend_rag.tune; print(before, 'bookend_rag_lab.experiments.tune' in sys.modules, "
        "'torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True", "False"]
