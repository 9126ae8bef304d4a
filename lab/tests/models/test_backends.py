"""Scorer backends by name: a run names one with a ``ScorerSpec``, builds it after its own checks
and closes it at its end; the command line's options choose one without building it."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from bookend_rag_lab.cli.endpoint import scorer_spec
from bookend_rag_lab.experiments.evaluate import evaluate
from bookend_rag_lab.experiments.runspec import RunSpec
from bookend_rag_lab.items.hard import hard_items
from bookend_rag_lab.models.backends import BACKENDS, Backend, ScorerSpec, register
from bookend_rag_lab.models.cache import CallCache
from bookend_rag_lab.models.scorer import Capabilities, Continuations, Prompt


class _Toy:
    """A backend of a few lines: every continuation is as likely, and it records its closing."""

    capabilities = Capabilities("toy")

    def __init__(self, cache: CallCache, words: int) -> None:
        self.model_id = f"toy-{words}"
        self.calls = 0
        self.cache = cache
        self.closed = False

    def token_length(self, text: str) -> int:
        return len(text.split())

    def is_cached(self, prompt: Prompt, continuations: Sequence[str]) -> bool:
        return False

    def score(self, prompt: Prompt, continuations: Sequence[str]) -> Continuations:
        self.calls += 1
        return Continuations(tuple(0.0 for _ in continuations), tuple(True for _ in continuations))

    def close(self) -> None:
        self.closed = True


def test_a_registered_backend_is_named_by_a_spec_built_by_the_run_and_closed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    built: list[_Toy] = []

    def build(spec: ScorerSpec, cache: CallCache, say: Any) -> _Toy:
        built.append(_Toy(cache, **spec.options))
        return built[-1]

    toy = Backend("toy", _Toy.capabilities, lambda args: False, lambda args: {}, build)
    monkeypatch.setitem(BACKENDS, "toy", toy)
    run = RunSpec(hard_items(3, 3, seed=0), retrievers=["bm25"])
    spec = ScorerSpec("toy", options={"words": 2})
    result = evaluate(run, spec, theory="smollm2-135m", out_dir=tmp_path, progress=False)
    (scorer,) = built
    assert result.report["model"] == "toy-2"
    assert result.calls == scorer.calls > 0
    assert scorer.closed
    assert scorer.cache.path == tmp_path / "calls.jsonl"  # the run's cache, as for local weights
    # A bad argument ends the run before the backend is built.
    with pytest.raises(ValueError, match="random_draws must be >= 1"):
        evaluate(run, spec, theory="smollm2-135m", random_draws=0, progress=False)
    assert len(built) == 1


def test_an_unknown_backend_or_a_taken_name_is_refused() -> None:
    with pytest.raises(ValueError, match=r"backend must be one of \['chat', 'completions'"):
        ScorerSpec("toy")
    with pytest.raises(ValueError, match="'local' is registered already"):
        register(BACKENDS["local"])
    assert list(BACKENDS) == ["local", "completions", "chat", "generation"]


def _args(*flags: str, **given: Any) -> argparse.Namespace:
    served = {"served_model": "m", "api_key_env": "KEY", "concurrency": 2, "timeout": 9.0}
    values = {
        "weights": None,
        "endpoint": "http://127.0.0.1:1/v1" if flags else None,
        **(served if flags else {"served_model": None}),
        "top_logprobs": None,
        "chat": "--chat" in flags,
        "no_logprobs": "--no-logprobs" in flags,
        "max_answer_tokens": 32,
    }
    return argparse.Namespace(**(values | given))


def test_the_command_line_options_name_a_backend_without_building_it() -> None:
    local = scorer_spec(_args(weights="w.gguf", device="auto", dtype="bfloat16", cache="c.jsonl"))
    assert local == ScorerSpec("local", "w.gguf", "auto", "bfloat16", {}, "c.jsonl")
    assert scorer_spec(_args()) == ScorerSpec()  # calibrate's arguments: the spec's defaults
    transport = {
        "base_url": "http://127.0.0.1:1/v1",
        "served_model": "m",
        "api_key_env": "KEY",
        "concurrency": 2,
        "timeout": 9.0,
    }
    chosen = {
        ("--endpoint",): ("completions", {"top_logprobs": 1000}),
        ("--chat",): ("chat", {"top_logprobs": 20}),
        ("--no-logprobs",): ("generation", {"max_tokens": 32}),
        ("--chat", "--no-logprobs"): ("generation", {"max_tokens": 32}),
    }
    for flags, (name, options) in chosen.items():
        spec = scorer_spec(_args(*flags))
        assert (spec.backend, spec.options) == (name, transport | options)
        assert spec.capabilities.served
    assert not ScorerSpec().capabilities.served
    assert scorer_spec(_args("--chat", top_logprobs=5)).options["top_logprobs"] == 5
    with pytest.raises(ValueError, match="needs --served-model NAME"):
        scorer_spec(_args("--endpoint", served_model=None))
    with pytest.raises(ValueError, match="give either --weights or --endpoint"):
        scorer_spec(_args("--endpoint", weights="w.gguf"))
