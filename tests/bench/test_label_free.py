"""`bench/label_free.py`: the retrievals it builds hide the answers and keep the retriever's
order, stay off the evaluation split, the MDE it states scales with the retrievals, and a cell
with no labelled runs yet runs them and is judged."""

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from label_free import (
    CALIBRATION_ITEMS,
    DRY_RUN,
    RETRIEVAL_COUNTS,
    Cell,
    K,
    cells,
    main,
    retrieval_records,
    retrievals_needed,
)

from bookend_rag.retrievals import RecordedDocument, RetrievalRecord
from bookend_rag_lab.items.records import records_items
from bookend_rag_lab.items.suites import suite_items
from bookend_rag_lab.stats import minimum_detectable_difference


# The records suite only: NQ's passages take minutes to rank on a shared core.
@pytest.fixture(scope="module")
def records() -> list[RetrievalRecord]:
    """The records suite's retrieval records, built once for the module: ranking the items with
    MiniLM takes seconds, and the tests only read them."""
    return retrieval_records("records")


def test_records_are_the_calibration_items_in_the_retrievers_order_without_answers(
    records: list[RetrievalRecord],
) -> None:
    items = suite_items("records", CALIBRATION_ITEMS, K, split="calibration")
    assert len(records) == len(items) == CALIBRATION_ITEMS
    for record, item in zip(records, items, strict=True):
        assert record.question == item.question
        assert sorted(d.text for d in record.documents) == sorted(item.documents)
        scores = [d.score for d in record.documents]
        assert all(s is not None for s in scores)
        assert scores == sorted(scores, reverse=True)  # the retriever's order, best first
        # Nothing of the label travels: no field names the answer, the candidates or the gold.
        line = json.loads(record.to_json_line())
        fields = {"schema", "question", "documents", "model", "order", "source", "time"}
        assert set(line) == fields | {"unrecorded"}
        assert line["order"] is None
        assert line["model"] is None


def test_records_never_hold_an_evaluation_question(records: list[RetrievalRecord]) -> None:
    # An item's question does not depend on its retriever: BM25 alone, without MiniLM's seconds.
    items = records_items(CALIBRATION_ITEMS, K, split="evaluation", retrievers=["bm25"])
    evaluation = {i.question for i in items}
    assert not evaluation & {r.question for r in records}


def test_cells_name_the_labelled_runs_they_are_judged_against() -> None:
    names = [c.name for c in cells("smollm2")]
    assert len(names) == len(set(names)) == 8
    assert [n.split("-")[0] for n in names[::2]] == ["records", "hard", "squad", "nq"]
    hard = Cell("hard", "bookend", "smollm2")
    assert hard.eval_report.parent.name == "smollm2-k10"
    assert Cell("records", "chat", "smollm2").eval_report.parts[-3] == "eval-chat"
    assert "--template" in Cell("nq", "chat", "smollm2").model_args("float32")
    assert Cell("nq", "bookend", "smollm2").tune_dtype() == "bfloat16"
    squad = Cell("squad", "chat", "smollm2")
    assert squad.labelled_dir.parts[-2:] == ("tune-chat", "squad-smollm2-k10")
    assert squad.eval_report.parts[-3:-1] == ("eval-chat", "squad-smollm2-k10")
    assert squad.tune_dtype() == "bfloat16"
    assert Cell("records", "bookend", "smollm2").tune_dtype() == "float32"


class FakeRuns:
    """``bookend tune`` and ``bookend eval`` as ``label_free._run`` calls them, writing reports of
    the shape the script reads (no model): each call's arguments are kept."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.calls: list[list[str]] = []
        self.rng = np.random.default_rng(0)

    def __call__(self, args: Sequence[str], log: Path) -> str:
        self.calls.append(list(args))
        out = Path(args[args.index("--out") + 1])
        out = out if out.is_absolute() else self.root / out
        out.mkdir(parents=True, exist_ok=True)
        if "--dry-run" in args:
            return "840 distinct prompts; at most 840 model calls and at most 397,880 prompt tokens"
        if args[1] == "tune":
            chosen = "measured-slots" if "--retrievals" in args else "default"
            tune = {"decision": {"chosen": chosen, "best": None}, "items": []}
            settings = {"dtype": args[args.index("--dtype") + 1]}
            report = {**tune, "n_judged": 60, "timing": {"seconds": 1.0}, "settings": settings}
            (out / "tuned.json").write_text("{}", encoding="utf-8")
        else:
            names = [a.split("=")[1] for a in args if a.startswith("--config=")]
            columns = ["bookend-default", "retrieval", "reversed", "langchain", "llamaindex"]
            columns += ["haystack", "random", *(f"bookend-{n}" for n in names)]
            items = [
                {
                    "id": f"squad:evaluation:{i}",
                    "results": {
                        c: {"candidate_prob": p}
                        for c, p in zip(columns, self.rng.uniform(size=len(columns)), strict=True)
                    },
                }
                for i in range(20)
            ]
            report = {"model": "smollm2", "items": items}
        (out / "report.json").write_text(json.dumps(report), encoding="utf-8")
        return ""


def _fake_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeRuns:
    """``label_free`` with its repository root at ``tmp_path``, its model runs faked and one
    retrieval record per suite."""
    import label_free

    runs = FakeRuns(tmp_path)
    monkeypatch.setattr(label_free, "ROOT", tmp_path)
    monkeypatch.setattr(label_free, "_run", runs)
    documents = [RecordedDocument(text=t, score=s) for t, s in (("a b", 2.0), ("c d", 1.0))]
    record = RetrievalRecord(question="q?", documents=documents)
    monkeypatch.setattr(label_free, "retrieval_records", lambda suite: [record])
    return runs


def test_a_cell_without_labelled_runs_runs_them_and_is_judged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:

    runs = _fake_runs(tmp_path, monkeypatch)
    out = tmp_path / "judged.json"
    assert main(["--cells", "squad-bookend-smollm2", "--json", str(out)]) == 0
    dry, free, labelled, judging = runs.calls  # the probes first: a refusal skips the rest
    assert labelled[labelled.index("--suite") + 1] == "squad"
    assert labelled[labelled.index("--out") + 1] == "bench/tune/squad-smollm2-k10"
    assert "--retrievals" in dry
    assert "--dry-run" in dry
    assert "--retrievals" in free
    assert "--dry-run" not in free
    assert all(c[c.index("--dtype") + 1] == "bfloat16" for c in runs.calls)
    # No labelled evaluation to reuse: one eval scores both decisions on the evaluation items.
    assert judging[1] == "eval"
    assert "--reuse" not in judging
    assert judging[judging.index("--suite") + 1] == "squad"
    configs = sorted(a.split("=")[1] for a in judging if a.startswith("--config="))
    assert configs == ["label-free", "labelled"]
    judged = json.loads(out.read_text(encoding="utf-8"))["squad-bookend-smollm2"]
    assert judged["decisions"] == {"label-free": "measured-slots", "labelled": "default"}
    assert judged["dtypes"] == {"label-free": "bfloat16", "labelled": "bfloat16"}
    assert judged["columns"] == {"label-free": "label-free", "labelled": "labelled"}
    assert judged["reused_eval_scores"] is False
    assert judged["label_free_minus_labelled"]["n"] == 20
    # Resumable: a second run finds every step done and calls nothing.
    assert main(["--cells", "squad-bookend-smollm2", "--json", str(out)]) == 0
    assert len(runs.calls) == 4


@pytest.mark.parametrize(("suite", "dtype"), [("records", "float32"), ("nq", "bfloat16")])
def test_qwens_judging_runs_also_score_the_theorys_view(
    suite: str, dtype: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Qwen2.5-Coder has no evaluation runs of its own: its judging runs score the view too, so
    that they are its cells of "Does it help?" and of the default's matrix."""
    runs = _fake_runs(tmp_path, monkeypatch)
    assert main(["--model", "qwen25", "--cells", f"{suite}-chat-qwen25"]) == 0
    judging = runs.calls[-1]
    assert judging[1] == "eval"
    assert judging[judging.index("--items") + 1] == "60"
    configs = {a.split("=")[1]: a.split("=")[2] for a in judging if a.startswith("--config=")}
    assert sorted(configs) == ["label-free", "labelled", "view"]
    assert configs["view"] == "bench/eval/configs/qwen25-view.json"
    assert all(c[c.index("--dtype") + 1] == dtype for c in runs.calls)
    assert all("--template" in c for c in runs.calls)
    # The other models' judging runs score only the two decisions.
    assert main(["--cells", f"{suite}-chat-smollm2"]) == 0
    assert not [a for a in runs.calls[-1] if a.startswith("--config=view")]


def test_a_cell_another_process_runs_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two processes on one cell would each append the cell's retrievals: the second stops."""
    import label_free

    runs = _fake_runs(tmp_path, monkeypatch)
    cell = Cell("squad", "bookend", "smollm2")
    with label_free.running(cell), pytest.raises(SystemExit, match="being written by another run"):
        main(["--cells", cell.name])
    assert runs.calls == []
    assert main(["--cells", cell.name]) == 0  # the lock goes with the process that held it


def test_a_cell_kept_compressed_is_judged_and_resumes_from_its_retrievals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import label_free
    from compress_evidence import compress_runs

    runs = _fake_runs(tmp_path, monkeypatch)
    out = tmp_path / "judged.json"
    argv = ["--cells", "squad-bookend-smollm2", "--json", str(out)]
    assert main(argv) == 0
    judged = json.loads(out.read_text(encoding="utf-8"))
    cell = Cell("squad", "bookend", "smollm2")
    records = (cell.dir / "retrievals.jsonl").read_text(encoding="utf-8")
    compress_runs([tmp_path / "bench"])  # as the repository keeps the cell
    assert not list((tmp_path / "bench").rglob("report.json"))
    assert main(["--judge-only", *argv]) == 0
    assert json.loads(out.read_text(encoding="utf-8")) == judged
    # The label-free tune again: its retrievals come back plain from the compressed copy.
    (cell.dir / "report.json.xz").unlink()
    monkeypatch.setattr(label_free, "retrieval_records", lambda suite: pytest.fail("rebuilt"))
    assert main(argv) == 0
    assert (cell.dir / "retrievals.jsonl").read_text(encoding="utf-8") == records
    assert [c[1] for c in runs.calls[4:]] == ["tune"]  # the labelled tune and the eval are done
    assert "--retrievals" in runs.calls[4]


def test_a_cell_whose_probe_tune_refuses_is_recorded_and_runs_no_labelled_tune(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import label_free

    runs = FakeRuns(tmp_path)
    refusal = (
        "bookend tune: error: retrievals='r.jsonl' give no probe item: 0 self-answer probes from "
        "1 retrieval; 1 skipped: one answer from every document (no other candidate)"
    )

    def refusing(args: Sequence[str], log: Path) -> str:
        if "--retrievals" in args and "--dry-run" not in args:
            runs.calls.append(list(args))
            log.write_text("Loading weights\n" + refusal + "\n", encoding="utf-8")
            raise SystemExit("exit 2")
        return runs(args, log)

    monkeypatch.setattr(label_free, "ROOT", tmp_path)
    monkeypatch.setattr(label_free, "_run", refusing)
    monkeypatch.setattr(label_free.tempfile, "gettempdir", lambda: str(tmp_path))
    documents = [RecordedDocument(text=t, score=s) for t, s in (("a b", 2.0), ("c d", 1.0))]
    record = RetrievalRecord(question="q?", documents=documents)
    monkeypatch.setattr(label_free, "retrieval_records", lambda suite: [record])
    out = tmp_path / "judged.json"
    assert main(["--model", "gemma3", "--cells", "squad-chat-gemma3", "--json", str(out)]) == 0
    assert [c[1] for c in runs.calls] == ["tune", "tune"]  # the dry run, the refused tune
    judged = json.loads(out.read_text(encoding="utf-8"))["squad-chat-gemma3"]
    assert judged == {"decisions": {"label-free": None, "labelled": None}, "refused": refusal}
    # Resumable: the refusal is the outcome, not retried.
    assert main(["--model", "gemma3", "--cells", "squad-chat-gemma3", "--json", str(out)]) == 0
    assert len(runs.calls) == 2
    assert "| none: 0 self-answer probes from 1 retrieval;" in label_free.markdown(
        {"squad-chat-gemma3": judged}
    )
    echoed = refusal.replace("give no probe item:", "give no probe item worth scoring:")
    row = label_free.markdown({"c": judged | {"refused": echoed}}).splitlines()[-1]
    assert row.startswith("| c | none: 0 self-answer probes from 1 retrieval;")


def test_the_dry_run_figures_are_read_from_what_tune_prints() -> None:
    printed = (
        "## bookend tune --dry-run\n\n840 distinct prompts; at most 840 model calls (the rest "
        "are in the call cache) and at most 397,880 prompt tokens (counted by m's tokenizer)."
    )
    found = DRY_RUN.search(printed)
    assert found is not None
    assert found.groups() == ("840", "397,880")


def _tune(diffs: np.ndarray, best: str | None = "reversed") -> dict[str, object]:
    items = [
        {"results": {"default": {"candidate_prob": 0.5}, "reversed": {"candidate_prob": 0.5 + d}}}
        for d in diffs
    ]
    return {"decision": {"best": best}, "items": items}


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-0.5, 0.5), min_size=3, max_size=80).filter(lambda v: np.std(v) > 1e-6))
def test_the_mde_at_n_retrievals_is_the_probe_differences_mde_rescaled(diffs: list[float]) -> None:
    d = np.asarray(diffs)
    needed = retrievals_needed(_tune(d))
    assert needed["pair"] == ["reversed", "default"]
    assert needed["n"] == d.size
    mde = needed["mde"]
    # At the probes' own count it is the paired comparison's MDE; it halves as n quadruples.
    at_own = minimum_detectable_difference(d) * np.sqrt(d.size)
    for n in RETRIEVAL_COUNTS:
        assert mde[str(n)] == pytest.approx(at_own / np.sqrt(n), rel=1e-4)
    assert mde["120"] == pytest.approx(mde["30"] / 2)


def test_no_mde_when_no_rival_was_scored() -> None:
    assert retrievals_needed(_tune(np.zeros(5), best=None)) == {"pair": None, "mde": {}}


def test_tunes_caution_counts_the_cells_the_committed_judgements_hold() -> None:
    """The **Caution.** line of a decision from self-answer probes states how often the probes
    made the labelled decision, were within the noise of it and were behind it; it must count
    what ``bench/label_free*.json`` hold."""
    from bookend_rag_lab.report.source import probe_caution

    bench = Path(__file__).resolve().parents[2] / "bench"
    judged = {
        name: cell
        for f in ("label_free.json", "label_free_gemma3.json", "label_free_qwen25.json")
        for name, cell in json.loads((bench / f).read_text(encoding="utf-8")).items()
        if "refused" not in cell
    }
    same = sum(c["decisions"]["label-free"] == c["decisions"]["labelled"] for c in judged.values())
    caution = probe_caution({"source": {"kind": "probes", "design": "self-answer"}}, "default")
    assert caution is not None
    assert f"Checked against labels in {len(judged)} cells" in caution
    assert f"made the labelled decision in {same}," in caution
    behind = sum(c["measurably_behind"] for c in judged.values())
    assert f"within the noise of it in {len(judged) - same - behind} more" in caution
    assert f"measurably behind it in {behind}:" in caution
