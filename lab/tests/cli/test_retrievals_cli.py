"""``bookend eval --retrievals`` and ``bookend tune --retrievals``: probe items from a record file,
the cost stated first, the source named in every report, labelled items preferred, and bad
arguments refused in one line before any model loads."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from bookend_rag.cli import main
from bookend_rag.retrievals import RecordedDocument, RetrievalRecord

NO_MODEL = "/nonexistent/model-dir"

_TOPICS = ["harbour", "railway", "library", "orchard", "bridge", "market", "castle", "canal"]


def _write_retrievals(path: Path, n: int, k: int) -> Path:
    """``n`` retrievals of ``k`` documents (the first one a copy of the second: skipped)."""
    records = []
    for r in range(n):
        texts = [
            f"The {_TOPICS[(r + d) % len(_TOPICS)]} of town {r} was built in year {1800 + d}."
            for d in range(k)
        ]
        if r == 0:
            texts[0] = texts[1]
        documents = [RecordedDocument(text=t, score=1.0 - d / k) for d, t in enumerate(texts)]
        records.append(RetrievalRecord(question=f"question {r}?", documents=documents))
    path.write_text("".join(r.to_json_line() + "\n" for r in records), encoding="utf-8")
    return path


def _write_items(path: Path, n: int) -> Path:
    scored = {"a": 2, "b": 1, "c": 0}
    rows = [
        {
            "question": f"q{i}?",
            "documents": [{"text": f"doc {c} {i}", "score": s} for c, s in scored.items()],
            "answer": f"a{i}",
            "candidates": [f"a{i}", "b"],
        }
        for i in range(n)
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("command", ["eval", "tune"])
@pytest.mark.parametrize(
    ("design", "probes"),
    [
        ("self-answer", "9 self-answer probes from 9 retrievals; 9 probes used by this run."),
        # The byte-level test tokenizer has no single-token code: every probe says so.
        (
            "codes",
            "8 codes probes from 9 retrievals; 1 skipped: no phrase of the retriever's first "
            "document names it alone (a duplicate); 8 with codes of several tokens; 8 probes used "
            "by this run.",
        ),
    ],
)
def test_a_dry_run_states_the_cost_and_the_probes_first(
    command: str,
    design: str,
    probes: str,
    saved_model: Path,
    tmp_path: Path,
    counted: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    retrievals = _write_retrievals(tmp_path / "retrievals.jsonl", 9, 4)
    before = hashlib.sha256(retrievals.read_bytes()).hexdigest()
    argv = [command, "--weights", str(saved_model), "--retrievals", str(retrievals)]
    argv += ["--probes", design, "--dry-run", "--no-progress", "--threads", "1"]
    assert main([*argv, "--out", str(tmp_path / "out")]) == 0
    captured = capsys.readouterr()
    assert f"## bookend {command} --dry-run" in captured.out
    if command == "eval":
        assert "Nothing was scored." in captured.out
    else:  # tune times 3 scoring calls and a batch of answers (one retrieval's: 4)
        timed = 3 + (4 if design == "self-answer" else 0)
        assert f"Nothing was judged; {timed} calls timed the run" in captured.out
        assert "Wall time on this machine: about " in captured.out
    sentence = (
        f"**Source.** probes built from your recorded retrievals (`{retrievals}`), no labels: "
    )
    assert sentence + probes in captured.out
    # Self-answer probes would generate one answer per document (9 x 4), priced, not generated.
    planned = "dry run: 36 answers not generated (one request each, priced)"
    assert (planned in captured.err) == (design == "self-answer")
    assert len(counted) == (0 if command == "eval" else 3)  # the scoring calls timed
    assert hashlib.sha256(retrievals.read_bytes()).hexdigest() == before


def test_items_limits_the_probes(
    saved_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    retrievals = _write_retrievals(tmp_path / "retrievals.jsonl", 9, 4)
    argv = ["eval", "--weights", str(saved_model), "--retrievals", str(retrievals)]
    argv += ["--items", "5", "--dry-run", "--no-progress", "--out", str(tmp_path / "out")]
    assert main(argv) == 0
    out = capsys.readouterr().out
    # Self-answer probes stop reading once five are built: no answer is made for a sixth.
    assert "5 self-answer probes from 5 retrievals" in out
    assert "5 probes used by this run." in out


def test_labelled_items_are_preferred_to_retrievals(
    saved_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    retrievals = _write_retrievals(tmp_path / "retrievals.jsonl", 4, 3)
    items = _write_items(tmp_path / "items.jsonl", 4)
    argv = ["eval", "--weights", str(saved_model), "--retrievals", str(retrievals)]
    argv += ["--items-file", str(items), "--dry-run", "--out", str(tmp_path / "out")]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert (
        f"**Source.** labelled items (`{items}`); the retrievals in `{retrievals}` were not used "
        "(items with real answers are preferred)." in out
    )


@pytest.mark.parametrize("design", ["self-answer", "codes"])
def test_eval_and_tune_run_on_probes_and_their_reports_say_so(
    design: str,
    saved_model: Path,
    tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
) -> None:
    tmp_path = tmp_path_factory.mktemp("cli")  # not the model's directory, whose files are hashed
    # The tiny random model's greedy answer follows the prompt's last bytes and hardly anything
    # before them: with the documents last, each document gets its own answer (with the question
    # last, most documents got the same one, which tune refuses as a model that does not answer).
    template = tmp_path / "documents-last.j2"
    template.write_text(
        "Q: {{ question }}\n{% for d in documents %}{{ d }}\n{% endfor %}", encoding="utf-8"
    )
    n = 9
    retrievals = _write_retrievals(tmp_path / "retrievals.jsonl", n, 3)
    common = ["--weights", str(saved_model), "--retrievals", str(retrievals), "--threads", "1"]
    common += ["--no-progress", "--probes", design, "--template", str(template)]
    argv = ["eval", *common, "--random-draws", "1", "--no-oracle", "--out", str(tmp_path / "e")]
    assert main(argv) == 0
    assert "**Source.** probes built from your recorded retrievals" in capsys.readouterr().out
    report = json.loads((tmp_path / "e" / "report.json").read_text(encoding="utf-8"))
    source = report["settings"]["source"]
    assert (source["kind"], source["design"], source["records"]) == ("probes", design, n)
    skipped = sum(len(numbers) for numbers in source["skipped"].values())
    assert source["probes"] + skipped == n
    assert source["probes"] == source["used"] == report["n_items"] >= 4, source["summary"]
    if design == "codes":
        assert source["probes"] == 8  # the copied first document names nothing alone
    else:  # the tiny model's own answers: one request per document of each retrieval read
        assert n <= source["generated_answers"] <= 3 * n
    assert {row["family"] for row in report["items"]} == {"probe"}
    # The target document is the retriever's first: retrieval order puts it in slot 1.
    assert {row["results"]["retrieval"]["gold_slot"] for row in report["items"]} == {0}
    argv = ["tune", *common, "--max-calls", "400", "--out", str(tmp_path / "t")]
    assert main(argv) == 0
    assert "**Source.** probes built from your recorded retrievals" in capsys.readouterr().out
    tuned = json.loads((tmp_path / "t" / "tuned.json").read_text(encoding="utf-8"))
    assert tuned["provenance"]["settings"]["source"]["kind"] == "probes"
    assert tuned["provenance"]["n_items"] == source["probes"]
    # The answers are generated before the budget starts: the report's Time line says so.
    tuned_source = tuned["provenance"]["settings"]["source"]
    answers = "answer requests built the probes (outside the budget)"
    text = (tmp_path / "t" / "report.md").read_text(encoding="utf-8")
    assert (f"{tuned_source['generated_answers']} {answers}" in text) == (design == "self-answer")


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--retrievals", "OUT/none.jsonl"], "retrievals='OUT/none.jsonl': file not found"),
        (["--retrievals", "OUT/bad.jsonl"], "bad.jsonl:2: not JSON"),
        (["--retrievals", "OUT/empty.jsonl"], "holds no retrieval: 0 records"),
        (["--retrievals", "OUT/good.jsonl", "--retriever", "bm25"], "retrievers must be ['file']"),
        (["--retrievals", "OUT/good.jsonl", "--items", "0"], "--items must be >= 1"),
    ],
)
@pytest.mark.parametrize("command", ["eval", "tune"])
def test_bad_retrievals_are_refused_in_one_line_before_loading(
    command: str,
    extra: list[str],
    needle: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    good = _write_retrievals(tmp_path / "good.jsonl", 2, 3)
    lines = good.read_text(encoding="utf-8").splitlines()
    (tmp_path / "bad.jsonl").write_text(f"{lines[0]}\n{{not json\n", encoding="utf-8")
    (tmp_path / "empty.jsonl").write_text("\n", encoding="utf-8")
    argv = [command, "--weights", NO_MODEL, "--out", str(tmp_path / "out")]
    argv += [a.replace("OUT", str(tmp_path)) for a in extra]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert needle.replace("OUT", str(tmp_path)) in err
    assert len(err.splitlines()) == 1, err
