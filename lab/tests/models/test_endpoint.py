"""The OpenAI-compatible backend against a real server (llama-cpp-python on the SmolLM2 GGUF).

Two references: llama.cpp itself, in this process, scoring the whole sequence ``prompt + c`` from
its logits (the same engine: the method must give its numbers), and transformers on the same GGUF
file (another engine: they must agree within the tolerance stated below). Failures are tested on
real servers too: the llama-cpp-python server stopped and started again, and small
standard-library servers that answer like a chat-only API, a slow server or an overloaded one.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from bookend_rag.cli import main
from bookend_rag_lab.cli.endpoint import served_theory
from bookend_rag_lab.experiments.calibrate import measure_outcomes
from bookend_rag_lab.experiments.evaluate import evaluate
from bookend_rag_lab.experiments.runspec import RunSpec
from bookend_rag_lab.items.hard import hard_items
from bookend_rag_lab.items.lookup import lookup_items
from bookend_rag_lab.models import CallCache, LocalScorer
from bookend_rag_lab.models.endpoint import EndpointError, EndpointScorer
from bookend_rag_lab.models.llama_server import LlamaServer
from bookend_rag_lab.models.weights import smollm2_gguf

#: Engines differ: llama.cpp runs the Q4_1 weights with 8-bit activations and an f16 key-value
#: cache, transformers de-quantises them to float32. Measured on the 80 prompts of
#: ``bookend eval --quick`` (bench/RESULTS.md, "Served models"): the gold answer's log-probability
#: differs by 0.11 nats on average, at most 0.42; the same answer wins on 96% of the prompts.
ENGINE_TOLERANCE = 0.6
#: One engine, contexts split differently: llama.cpp's logits depend slightly on how a context is
#: batched (a cached prefix and a few new tokens, or all at once); measured up to 0.006 nats.
SAME_ENGINE = 0.02
#: Asked per context: llama-cpp-python has no cap, and 1000 leaves few tokens to the bound.
TOP = 1000
SERVED = "SmolLM2-135M-Instruct"  # the session server's alias (conftest), a name of the preset
EXAMPLE_ITEMS = Path(__file__).resolve().parents[3] / "examples" / "eval_items.jsonl"
PROMPT = "The capital of France is"


def _prompts(n_items: int, k: int, seed: int = 0) -> list[tuple[str, tuple[str, ...]]]:
    items = hard_items(n_items, k, seed=seed)
    rng = np.random.default_rng(seed)
    return [(it.prompt(list(rng.permutation(k))), it.continuations) for it in items]


@pytest.mark.slow
def test_scores_are_the_engines_own_for_the_whole_sequence(server: LlamaServer) -> None:
    """The step-by-step next-token scores equal llama.cpp's logits over ``prompt + c``."""
    import llama_cpp

    llm = llama_cpp.Llama(
        str(smollm2_gguf()), n_ctx=1024, logits_all=True, n_threads=1, verbose=False
    )
    prompt, continuations = _prompts(1, 4)[0]
    with EndpointScorer(server.url, SERVED, top_logprobs=TOP) as scorer:
        got = scorer.score(prompt, continuations)
        assert scorer.bounded_tokens == 0
    for k, continuation in enumerate(continuations):
        head = llm.tokenize(prompt.encode(), special=True)
        ids = llm.tokenize((prompt + " " + continuation).encode(), special=True)
        assert ids[: len(head)] == head
        llm.reset()
        llm.eval(ids)
        logits = np.asarray(llm.scores[: len(ids)], dtype=np.float64)
        logp = logits - np.logaddexp.reduce(logits, axis=1, keepdims=True)
        rows = range(len(head) - 1, len(ids) - 1)
        expected = sum(logp[t, ids[t + 1]] for t in rows)
        greedy = all(int(np.argmax(logp[t])) == ids[t + 1] for t in rows)
        assert got.logprob[k] == pytest.approx(expected, abs=SAME_ENGINE)
        assert got.greedy[k] == greedy


@pytest.mark.slow
def test_eval_through_the_server_matches_the_in_process_run(
    server: LlamaServer, smollm2: LocalScorer, tmp_path: Path
) -> None:
    """``bookend eval --endpoint`` writes the in-process report's fields, orders and figures."""
    run = RunSpec(k=4, n_items=2, retrievers=["bm25"])
    sizes = {"random_draws": 1, "oracle": False}
    local = evaluate(run, smollm2, theory=SERVED, progress=False, **sizes).report
    out = tmp_path / "served"
    code = main(
        [
            "eval",
            "--endpoint",
            server.url,
            "--served-model",
            SERVED,
            "--top-logprobs",
            str(TOP),
            "--docs",
            "4",
            "--items",
            "2",
            "--random-draws",
            "1",
            "--no-oracle",
            "--retriever",
            "bm25",
            "--threads",
            "1",
            "--no-progress",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    served = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert (out / "calls.jsonl").is_file()
    assert set(served) == set(local)
    assert set(served["settings"]) == set(local["settings"])
    assert served["model"] == f"{server.url}/{SERVED}"
    endpoint = served["settings"]["endpoint"]
    assert endpoint["method"] == "next-token"
    assert endpoint["tokenizer"] == "llama-cpp-python /extras/tokenize"
    assert endpoint["bounded_tokens"] == 0
    assert served["metrics"] == local["metrics"]
    pairs = [
        (mine, theirs)
        for row_s, row_l in zip(served["items"], local["items"], strict=True)
        for name, mine in row_s["results"].items()
        if name != "random"
        for theirs in [row_l["results"][name]]
    ]
    assert len(pairs) >= 10
    # Accuracy is an argmax: two engines may split a near tie (0.43 against 0.46 for the gold
    # answer, measured), but a gold answer with most of the probability wins on both.
    for mine, theirs in pairs:
        assert mine["order"] == theirs["order"]  # the same token lengths, hence the same orders
        assert mine["gold_logprob"] == pytest.approx(theirs["gold_logprob"], abs=ENGINE_TOLERANCE)
        assert mine["candidate_prob"] == pytest.approx(theirs["candidate_prob"], abs=0.1)
        if theirs["candidate_prob"] > 0.6:
            assert mine["accuracy"] == theirs["accuracy"] == 1.0


@pytest.mark.slow
def test_calibrate_through_the_server_matches_in_process(
    server: LlamaServer, smollm2: LocalScorer, tmp_path: Path
) -> None:
    out = tmp_path / "fitted.json"
    report = tmp_path / "report.json"
    served = ["--endpoint", server.url, "--served-model", SERVED, "--threads", "1"]
    cells = ["--docs", "3", "--items", "2", "--filler", "0-1", "--seed", "0"]
    code = main(["calibrate", *served, "--json", str(report), "--out", str(out), *cells])
    assert code == 0
    measured = json.loads(report.read_text(encoding="utf-8"))
    assert measured["settings"]["weights"] == f"{server.url}/{SERVED}"
    assert measured["settings"]["endpoint"]["served_model"] == SERVED
    items = lookup_items(2, 3, seed=0, split="calibration", filler=(0, 1))
    expected = measure_outcomes(smollm2, items, (0, 1))
    assert len(measured["outcomes"]) == len(expected) == 6
    for row, o in zip(measured["outcomes"], expected, strict=True):
        # Token spans agree (one tokenizer in two engines); scores within the engines' tolerance.
        spans = (row["gold_start"], row["gold_end"], row["n_tokens"], row["prompt_tokens"])
        assert spans == (o.gold_start, o.gold_end, o.n_tokens, o.prompt_tokens)
        assert row["logprob"] == pytest.approx(o.logprob, abs=ENGINE_TOLERANCE)
    assert json.loads(out.read_text(encoding="utf-8"))["label"] == f"{SERVED} fitted"


@pytest.mark.slow
def test_tune_through_the_server_writes_a_config_with_its_provenance(
    server: LlamaServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "tuned"
    served = ["--endpoint", server.url, "--served-model", SERVED, "--top-logprobs", str(TOP)]
    run = ["--items-file", str(EXAMPLE_ITEMS), "--max-calls", "24", "--threads", "1"]
    assert main(["tune", *served, *run, "--no-progress", "--out", str(out)]) == 0
    assert "## bookend tune:" in capsys.readouterr().out
    doc = json.loads((out / "tuned.json").read_text(encoding="utf-8"))
    provenance = doc["provenance"]
    assert provenance["model"] == f"{server.url}/{SERVED}"
    assert provenance["model_sha256"] is None  # no local weights to hash
    endpoint = provenance["settings"]["endpoint"]
    assert (endpoint["served_model"], endpoint["method"]) == (SERVED, "next-token")
    assert endpoint["completion_requests"] > 0
    assert (out / "calls.jsonl").is_file()


@pytest.mark.slow
def test_a_token_outside_the_top_n_gets_the_bound_or_an_error(server: LlamaServer) -> None:
    with (
        EndpointScorer(server.url, SERVED, top_logprobs=TOP) as wide,
        EndpointScorer(server.url, SERVED, top_logprobs=1) as narrow,
    ):
        exact = wide.score(PROMPT, ["Paris", "London"])
        bounded = narrow.score(PROMPT, ["Paris", "London"])
        assert narrow.bounded_tokens == 1
        assert narrow.settings()["bounded_tokens"] == 1
    assert exact.greedy == bounded.greedy == (True, False)
    assert bounded.logprob[0] == pytest.approx(exact.logprob[0], abs=SAME_ENGINE)
    # London is not the most likely next token: its bound is the top token's log-probability.
    assert bounded.logprob[1] == pytest.approx(exact.logprob[0], abs=SAME_ENGINE)
    assert bounded.logprob[1] > exact.logprob[1]
    with (
        EndpointScorer(server.url, SERVED, top_logprobs=1, beyond_top="error") as strict,
        pytest.raises(ValueError, match="not among the top_logprobs=1"),
    ):
        strict.score(PROMPT, ["London"])


@pytest.mark.slow
def test_concurrency_and_the_cache_leave_scores_unchanged(
    server: LlamaServer, tmp_path: Path
) -> None:
    prompts = _prompts(2, 3, seed=1)
    with EndpointScorer(server.url, SERVED, concurrency=1, top_logprobs=TOP) as one:
        serial = [one.score(p, c) for p, c in prompts]
    cache = CallCache(tmp_path / "calls.jsonl")
    with EndpointScorer(server.url, SERVED, concurrency=8, top_logprobs=TOP, cache=cache) as eight:
        wide = [eight.score(p, c) for p, c in prompts]
        assert all(eight.is_cached(p, c) for p, c in prompts)
        assert eight.calls == len(prompts)
    for a, b in zip(serial, wide, strict=True):
        np.testing.assert_allclose(a.logprob, b.logprob, atol=SAME_ENGINE)
        assert a.greedy == b.greedy
    with EndpointScorer(server.url, SERVED, cache=CallCache(tmp_path / "calls.jsonl")) as again:
        assert [again.score(p, c) for p, c in prompts] == wide
        assert again.calls == 0


@pytest.mark.slow
def test_a_run_resumes_from_the_cache_when_the_stopped_server_is_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server stops mid-run: the run fails with one line; started again, it resumes."""
    monkeypatch.setenv("BOOKEND_TEST_KEY", "secret-for-this-test")
    own = LlamaServer(
        smollm2_gguf(), SERVED, tmp_path / "server.log", api_key="secret-for-this-test"
    )
    prompts = _prompts(4, 3, seed=2)
    path = tmp_path / "calls.jsonl"
    keyed = {"api_key_env": "BOOKEND_TEST_KEY", "top_logprobs": TOP, "retries": 1}
    own.start()
    try:
        scorer = EndpointScorer(own.url, SERVED, cache=CallCache(path), backoff=0.1, **keyed)
        before = [scorer.score(p, c) for p, c in prompts[:2]]
        own.stop()
        started = time.monotonic()
        with pytest.raises(EndpointError, match="failed after 2 attempts: ConnectError"):
            scorer.score(*prompts[2])
        assert time.monotonic() - started < 30
        scorer.close()
        own.start()
        monkeypatch.delenv("BOOKEND_TEST_KEY")
        with pytest.raises(EndpointError, match="HTTP 401"):
            EndpointScorer(own.url, SERVED, **keyed)
        monkeypatch.setenv("BOOKEND_TEST_KEY", "secret-for-this-test")
        with EndpointScorer(own.url, SERVED, cache=CallCache(path), **keyed) as resumed:
            after = [resumed.score(p, c) for p, c in prompts]
            assert resumed.calls == len(prompts) - 2  # the first two come from the cache
    finally:
        own.stop()
    assert after[:2] == before
    assert len(path.read_text(encoding="utf-8").splitlines()) == len(prompts)


@pytest.mark.slow
def test_the_pid_is_the_running_servers_own(server: LlamaServer, tmp_path: Path) -> None:
    # What bench/model_speed.py reads the server's CPU time by.
    assert "llama_cpp.server" in Path(f"/proc/{server.pid}/cmdline").read_text(errors="replace")
    with pytest.raises(RuntimeError, match="the server is not running"):
        _ = LlamaServer(smollm2_gguf(), SERVED, tmp_path / "server.log").pid


@pytest.mark.slow
def test_a_model_the_server_does_not_serve_is_refused(server: LlamaServer) -> None:
    # llama-cpp-python itself answers any model name with the model it serves:
    raw = httpx.post(
        server.url + "/completions",
        json={"model": "no-such-model", "prompt": PROMPT, "max_tokens": 1},
        timeout=120,
    )
    assert raw.status_code == 200
    # ... so the scorer checks the name against /v1/models before scoring anything.
    with pytest.raises(ValueError, match=r"served_model='no-such-model' is not served at .*"):
        EndpointScorer(server.url, "no-such-model")


def _chat_only(completions: str) -> Callable[[str, str, Any], tuple[int, Any]]:
    def answer(method: str, path: str, body: Any) -> tuple[int, Any]:
        if path == "/v1/models":
            return 200, {"object": "list", "data": [{"id": "chat-model", "object": "model"}]}
        if path == "/v1/chat/completions":
            message = {"role": "assistant", "content": "Paris"}
            return 200, {"choices": [{"index": 0, "message": message, "logprobs": None}]}
        if path == "/v1/completions" and completions == "without log-probs":
            choice = {"text": " Paris", "index": 0, "logprobs": None, "finish_reason": "length"}
            return 200, {"choices": [choice], "usage": {"prompt_tokens": 5}}
        return 404, {"detail": "Not Found"}

    return answer


@pytest.mark.parametrize(
    ("completions", "message"),
    [
        ("absent", "has no /v1/completions"),
        ("without log-probs", "returned no next-token log-probabilities"),
    ],
)
def test_a_server_without_log_probabilities_is_refused(
    tiny_http: Any, completions: str, message: str
) -> None:
    with tiny_http(_chat_only(completions)) as url, pytest.raises(ValueError, match=message):
        EndpointScorer(url, "chat-model")


def test_a_slow_server_times_out_without_hanging(tiny_http: Any) -> None:
    def answer(method: str, path: str, body: Any) -> tuple[int, Any]:
        time.sleep(2.0)
        return 200, {"data": []}

    with tiny_http(answer) as url:
        started = time.monotonic()
        with pytest.raises(EndpointError, match=r"failed after 2 attempts: no answer within"):
            EndpointScorer(url, "m", timeout=0.3, retries=1, backoff=0.05)
        assert time.monotonic() - started < 1.5


@pytest.mark.parametrize(
    ("status", "attempts", "message"),
    [
        (503, 3, "failed after 3 attempts: HTTP 503: busy"),
        (429, 3, "failed after 3 attempts: HTTP 429: busy"),
        (400, 1, "was refused: HTTP 400: busy"),
    ],
)
def test_overload_is_retried_with_backoff_and_other_client_errors_are_not(
    tiny_http: Any, status: int, attempts: int, message: str
) -> None:
    seen: list[str] = []

    def answer(method: str, path: str, body: Any) -> tuple[int, Any]:
        seen.append(path)
        return status, {"error": {"message": "busy", "type": "overloaded"}}

    with tiny_http(answer) as url, pytest.raises(EndpointError, match=message):
        EndpointScorer(url, "m", retries=2, backoff=0.01)
    assert seen == ["/v1/models"] * attempts


def test_a_server_capping_log_probs_is_told_what_to_lower(tiny_http: Any) -> None:
    """vLLM refuses more log-probs than its ``--max-logprobs`` (20 by default) with a 400."""

    def answer(method: str, path: str, body: Any) -> tuple[int, Any]:
        if path == "/v1/models":
            return 200, {"data": [{"id": "capped"}]}
        return 400, {"error": {"message": "Requested logprobs of 1000, which is greater than 20"}}

    with tiny_http(answer) as url, pytest.raises(ValueError, match="lower top_logprobs"):
        EndpointScorer(url, "capped", top_logprobs=1000)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"base_url": "127.0.0.1:8000"}, "base_url must start with http"),
        ({"served_model": ""}, "served_model must name"),
        ({"concurrency": 0}, "concurrency must be >= 1, got concurrency=0"),
        ({"retries": -1}, "retries must be >= 0"),
        ({"top_logprobs": 0}, "top_logprobs must be >= 1"),
        ({"timeout": 0}, "timeout must be > 0"),
        ({"beyond_top": "guess"}, "beyond_top must be one of"),
    ],
)
def test_bad_settings_name_the_parameter(kwargs: dict[str, Any], message: str) -> None:
    settings: dict[str, Any] = {"base_url": "http://127.0.0.1:9/v1", "served_model": "m"}
    with pytest.raises(ValueError, match=message):
        EndpointScorer(**{**settings, **kwargs})


def test_the_command_line_refuses_incomplete_endpoint_options(
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = "http://127.0.0.1:9/v1"
    assert main(["eval", "--endpoint", url]) == 2
    assert "needs --served-model" in capsys.readouterr().err
    assert main(["eval", "--endpoint", url, "--served-model", "m", "--weights", "smollm2"]) == 2
    assert "either --weights or --endpoint" in capsys.readouterr().err
    assert main(["calibrate", "--endpoint", url, "--out", "x.json"]) == 2
    assert "needs --served-model" in capsys.readouterr().err
    assert served_theory(argparse.Namespace(served_model="Qwen/Qwen2.5-7B-Instruct")) == (
        "Qwen/Qwen2.5-7B-Instruct"
    )
    with pytest.raises(ValueError, match="names no preset for bookend-theory: give --theory"):
        served_theory(argparse.Namespace(served_model="my-finetune"))
