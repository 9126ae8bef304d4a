"""``bookend eval`` end to end on a tiny random model built here (offline, seconds)."""

import json
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import transformers

import bookend_rag
from bookend_rag.cli import main
from bookend_rag_lab.experiments.evaluate import EvalResult, evaluate
from bookend_rag_lab.experiments.runspec import RunSpec
from bookend_rag_lab.items.item import Item
from bookend_rag_lab.models import CallCache, LocalScorer
from bookend_rag_lab.report.evaluation import REPORT_VERSION
from bookend_rag_lab.runfiles import compress

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "eval_items.jsonl"


@pytest.fixture
def tiny(llama_config: Any, byte_tokenizer: Any) -> SimpleNamespace:
    transformers.set_seed(0)
    lm = transformers.LlamaForCausalLM(llama_config).eval()
    return SimpleNamespace(lm=lm, tokenizer=byte_tokenizer, name="tiny-llama")


@pytest.fixture
def model_dir(tiny: SimpleNamespace, tmp_path: Path) -> Path:
    """The tiny model saved as a weights directory."""
    tiny.lm.save_pretrained(tmp_path / "model")
    tiny.tokenizer.save_pretrained(tmp_path / "model")
    return tmp_path / "model"


def test_user_jsonl_end_to_end_through_the_cli(
    model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    config = tmp_path / "compete.json"
    config.write_text('{"model": "smollm2-135m", "competition": 0.05}', encoding="utf-8")
    code = main(
        [
            "eval",
            "--config",
            f"compete={config}",
            "--weights",
            str(model_dir),
            "--items-file",
            str(EXAMPLE),
            "--out",
            str(out),
            "--threads",
            "1",
            "--random-draws",
            "2",
            "--no-progress",
        ]
    )
    assert code == 0
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["report_version"] == REPORT_VERSION
    assert report["n_items"] == 10
    assert report["settings"]["retrievers"] == ["file"]  # every document carries a score
    # Some items have no candidates: the primary metric is then the gold log-probability.
    assert report["metrics"] == ["gold_logprob", "accuracy"]
    assert report["primary_metric"] == "gold_logprob"
    names = set(report["strategies"])
    assert {"bookend-theory", "bookend-rank-only", "random", "retrieval", "reversed"} <= names
    assert "bookend-compete vs random" in report["paired"]
    assert report["settings"]["profiles"]["compete"]["competition"] == 0.05
    assert "bookend-theory vs random" in report["paired"]
    assert "bookend-theory vs retrieval" in report["paired"]
    first = report["items"][0]["results"]
    assert first["retrieval"]["order"] == [0, 1, 2]  # scores 0.82 > 0.61 > 0.40
    assert first["reversed"]["order"] == [2, 1, 0]
    for entry in report["strategies"].values():
        e = entry["gold_logprob"]
        assert e["ci_low"] <= e["mean"] <= e["ci_high"] < 0.0
    assert (out / "report.md").read_text(encoding="utf-8").startswith("## bookend eval")
    for png in ("position_curve.png", "strategies.png"):
        assert (out / png).read_bytes()[:4] == b"\x89PNG"
    assert "| bookend-theory |" in capsys.readouterr().out


def test_cli_errors_are_one_line_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "q", "documents": ["a"], "answer": "a"}\n', encoding="utf-8")
    assert main(["eval", "--items-file", str(bad), "--weights", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("bookend eval: error: line 1")
    assert "\n" not in err
    assert main(["eval", "--weights", str(tmp_path / "missing"), "--quick"]) == 2
    assert "weights path does not exist" in capsys.readouterr().err
    config = tmp_path / "config.json"
    config.write_text('{"competition": -1}', encoding="utf-8")
    assert main(["eval", "--config", f"c={config}", "--weights", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert f"--config c={str(config)!r}: not a placement config" in err
    assert "competition" in err
    assert "\n" not in err


def _items(n: int, k: int) -> list[Item]:
    return [
        Item(
            item_id=str(i),
            question=f"What is the code of item {i}?",
            documents=tuple(f"The code of item {j} is {100 + j}." for j in range(k)),
            answer=str(100 + i % k),
            candidates=tuple(str(100 + j) for j in range(k)),
            gold=i % k,
        )
        for i in range(n)
    ]


def test_cache_resumes_without_model_calls(
    tiny: SimpleNamespace, tmp_path: Path, counted: list[str]
) -> None:
    cache = tmp_path / "calls.jsonl"

    def run() -> Any:  # a fresh process's scorer: the cache file is all it shares
        scorer = LocalScorer(tiny, CallCache(cache))
        return evaluate(RunSpec(_items(4, 4), retrievers=["bm25"]), scorer, progress=False)

    first = run()
    assert first.calls == len(counted) > 0
    assert first.report["timing"]["distinct_prompts"] == len(counted)
    lines = cache.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(counted)
    counted.clear()
    # An interrupted run: drop the last half of the cache and a torn final line.
    cache.write_text("\n".join(lines[: len(lines) // 2]) + '\n{"key": "ab', encoding="utf-8")
    resumed = run()
    assert resumed.calls == len(counted) == len(lines) - len(lines) // 2
    counted.clear()
    again = run()
    assert again.calls == 0
    assert counted == []
    assert again.report["strategies"] == first.report["strategies"]


def test_a_run_kept_compressed_resumes_and_is_reused_without_model_calls(
    tiny: SimpleNamespace, tmp_path: Path, counted: list[str]
) -> None:
    # As bench/ keeps a run: its report and call log compressed (bench/compress_evidence.py).
    items = RunSpec(_items(4, 4), retrievers=["bm25"])
    first = evaluate(
        items, LocalScorer(tiny, CallCache(tmp_path / "calls.jsonl")), out_dir=tmp_path
    )
    compress(tmp_path / "calls.jsonl", append=True)
    compress(tmp_path / "report.json")
    counted.clear()
    resumed = evaluate(
        items, LocalScorer(tiny, CallCache(tmp_path / "calls.jsonl")), progress=False
    )
    assert resumed.calls == 0
    assert counted == []
    assert resumed.report["strategies"] == first.report["strategies"]
    reused = evaluate(items, LocalScorer(tiny), progress=False, reuse=tmp_path / "report.json")
    assert reused.calls == len(counted) == 3  # only the three reused scores checked again
    assert reused.report["strategies"] == first.report["strategies"]


def test_identical_prompts_share_one_model_call(tiny: SimpleNamespace, counted: list[str]) -> None:
    # Two documents allow only two orders, so a dozen strategies make at most two prompts.
    result = evaluate(RunSpec(_items(3, 2), retrievers=["bm25"]), LocalScorer(tiny), progress=False)
    assert len(counted) == len(set(counted)) <= 3 * 2
    timing = result.report["timing"]
    assert timing["requests"] > 3 * 2
    assert timing["model_calls"] == timing["distinct_prompts"] == len(counted)
    assert result.report["metrics"] == ["gold_logprob", "candidate_prob", "accuracy"]
    assert result.report["primary_metric"] == "candidate_prob"


def test_the_lookup_suite_runs_through_the_cli(
    model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    argv = ["eval", "--suite", "lookup", "--weights", str(model_dir), "--docs", "3"]
    argv += ["--items", "4", "--retriever", "bm25", "--random-draws", "1", "--no-oracle"]
    assert main([*argv, "--threads", "1", "--no-progress", "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    settings = report["settings"]
    assert (settings["items"], settings["suite"], settings["k"]) == ("built-in", "lookup", 3)
    assert settings["families"] == ["birthplace", "access_code"]  # the evaluation default
    assert [row["id"] for row in report["items"]] == [
        f"evaluation:{1_000_000 + i}" for i in range(4)
    ]
    assert report["model"] == f"{model_dir}|float32"
    assert "oracle" not in report["strategies"]
    assert "| bookend-theory |" in capsys.readouterr().out


class _Renamed:
    """A second scorer backend: another model id in front of the same in-process model (what an
    endpoint backend is to the experiments: the five Scorer members, nothing else)."""

    def __init__(self, inner: LocalScorer) -> None:
        self.inner = inner
        self.model_id = "renamed-tiny"
        self.calls = 0

    def token_length(self, text: str) -> int:
        return self.inner.token_length(text)

    def is_cached(self, prompt: str, continuations: Any) -> bool:
        return self.inner.is_cached(prompt, continuations)

    def score(self, prompt: str, continuations: Any) -> Any:
        before = self.inner.calls
        result = self.inner.score(prompt, continuations)
        self.calls += self.inner.calls - before
        return result


def test_another_scorer_backend_plugs_in_and_needs_a_theory(tiny: SimpleNamespace) -> None:
    scorer = _Renamed(LocalScorer(tiny))
    with pytest.raises(ValueError, match="theory must be given for scorer 'renamed-tiny'"):
        evaluate(RunSpec(_items(2, 3), retrievers=["bm25"]), scorer, progress=False)
    run = RunSpec(_items(2, 3), retrievers=["bm25"])
    result = evaluate(run, scorer, theory="smollm2-135m", progress=False)
    assert result.report["model"] == "renamed-tiny"
    assert result.calls == scorer.calls == result.report["timing"]["model_calls"] > 0
    assert "smollm2-135m" in result.report["settings"]["theory"]


def test_bookend_evaluate_is_the_lab_function_and_imports_no_torch() -> None:
    assert bookend_rag.evaluate is evaluate
    assert bookend_rag.EvalResult is EvalResult
    code = "import sys, bookend_rag; bookend_rag.evaluate; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def _orders(report: dict[str, Any]) -> set[tuple[str, tuple[int, ...]]]:
    return {
        (str(it["id"]), tuple(r["order"]))
        for it in report["items"]
        for r in it["results"].values()
        if "order" in r
    }


def test_a_previous_report_answers_its_orders_and_only_new_ones_call_the_model(
    tiny: SimpleNamespace, tmp_path: Path, counted: list[str]
) -> None:
    items = RunSpec(_items(6, 5), retrievers=["bm25"])
    first = evaluate(items, LocalScorer(tiny), progress=False, out_dir=tmp_path)
    assert first.report["settings"]["reused"] is None
    counted.clear()
    slots = bookend_rag.TabulatedProfile(weights=(1.0, 0.3, 0.2, 0.4, 3.0), kind="slot")
    run = {"progress": False, "profiles": {"slots": slots}}
    second = evaluate(items, LocalScorer(tiny), reuse=tmp_path / "report.json", **run)
    new = _orders(second.report) - _orders(first.report)
    assert new  # the table orders some items as no earlier strategy did
    # Only the new orders call the model, and three reused ones are rescored as a check.
    assert len(counted) == second.calls == len({*counted}) == len(new) + 3
    assert second.report["settings"]["reused"] == str(tmp_path / "report.json")
    for old, now in zip(first.report["items"], second.report["items"], strict=True):
        assert all(now["results"][name] == result for name, result in old["results"].items())
    # What it reused is what scoring gives: a full run agrees on every strategy.
    full = evaluate(items, LocalScorer(tiny), **run)
    assert full.report["strategies"] == second.report["strategies"]


def test_reuse_refuses_a_report_of_another_model_or_other_scores(
    tiny: SimpleNamespace, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items = RunSpec(_items(3, 4), retrievers=["bm25"])
    evaluate(items, LocalScorer(tiny), progress=False, out_dir=tmp_path)
    path = tmp_path / "report.json"
    report = json.loads(path.read_text(encoding="utf-8"))
    for result in report["items"][0]["results"].values():
        if "order" in result:
            result["gold_logprob"] += 0.5  # another model's score of the same prompt
    path.write_text(json.dumps(report), encoding="utf-8")
    with pytest.raises(ValueError, match=r"--reuse .*report.json: item '0' in order .* scores"):
        evaluate(items, LocalScorer(tiny), progress=False, reuse=path)
    report["model"] = "another-model|float32"
    path.write_text(json.dumps(report), encoding="utf-8")
    other = re.escape("is a report of 'another-model|float32', not of")
    with pytest.raises(ValueError, match=other):
        evaluate(items, LocalScorer(tiny), progress=False, reuse=path)
    assert main(["eval", "--weights", str(tmp_path), "--reuse", str(tmp_path / "no.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert "--reuse must be a bookend eval report.json" in err
    assert "\n" not in err
