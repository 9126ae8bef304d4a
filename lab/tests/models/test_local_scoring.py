"""Continuation scoring against the plain definition: score ``prompt + c`` from scratch."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
import torch
import transformers

from bookend_rag_lab.models import local as scoring
from bookend_rag_lab.models.scorer import first_line, generate, generate_all

PROMPT = "Documents: the code of Lumen is 4411; Onyx moved to Oslo. Question: where? Answer:"
CONTINUATIONS = ["Oslo", "4411", "O", "Lumen North", "a much longer answer, with commas"]


def _from_scratch(lm: Any, tokenizer: Any, prompt: str, continuation: str) -> tuple[float, bool]:
    prompt_ids = tokenizer.encode(prompt)
    cont = tokenizer.encode(" " + continuation, add_special_tokens=False)
    with torch.inference_mode():
        logits = lm(input_ids=torch.tensor([prompt_ids + cont])).logits[0].float()
    logp = torch.log_softmax(logits[len(prompt_ids) - 1 : -1], dim=-1)
    total = sum(float(logp[t, tok]) for t, tok in enumerate(cont))
    greedy = all(int(logp[t].argmax()) == tok for t, tok in enumerate(cont))
    return total, greedy


@pytest.mark.parametrize(
    ("arch", "packed"), [("llama", True), ("qwen2", True), ("gpt2", True), ("gemma3", False)]
)
def test_scores_equal_the_from_scratch_definition(
    arch: str,
    packed: bool,
    llama_config: Any,
    qwen2_config: Any,
    gpt2_config: Any,
    gemma3_config: Any,
    byte_tokenizer: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = {
        "llama": llama_config,
        "qwen2": qwen2_config(),
        "gpt2": gpt2_config(),
        "gemma3": gemma3_config,
    }[arch]
    transformers.set_seed(0)
    lm = transformers.AutoModelForCausalLM.from_config(config, attn_implementation="sdpa").eval()
    used: list[str] = []
    for name in ("_packed_pass", "_batched_pass"):
        real = getattr(scoring, name)
        monkeypatch.setattr(
            scoring, name, lambda *a, _real=real, _name=name: used.append(_name) or _real(*a)
        )
    got = scoring.score_continuations(lm, byte_tokenizer, PROMPT, CONTINUATIONS)
    assert used == ["_packed_pass" if packed else "_batched_pass"]
    for k, continuation in enumerate(CONTINUATIONS):
        total, greedy = _from_scratch(lm, byte_tokenizer, PROMPT, continuation)
        assert got.logprob[k] == pytest.approx(total, abs=1e-4), continuation
        assert got.greedy[k] == greedy, continuation


def test_cached_scores_match_full_sequence_scores(llama_config: Any, byte_tokenizer: Any) -> None:
    torch.manual_seed(0)
    tiny_lm = transformers.AutoModelForCausalLM.from_config(llama_config).eval()
    prompt = "The code is"
    candidates = ["4821", "77", "x"]
    cached = scoring.score_continuations(tiny_lm, byte_tokenizer, prompt, candidates).logprob
    base = byte_tokenizer.encode(prompt)
    for k, cand in enumerate(candidates):
        ids = base + byte_tokenizer.encode(" " + cand, add_special_tokens=False)
        with torch.no_grad():
            logp = torch.log_softmax(tiny_lm(input_ids=torch.tensor([ids])).logits[0], dim=-1)
        full = sum(float(logp[t - 1, ids[t]]) for t in range(len(base), len(ids)))
        assert cached[k] == pytest.approx(full, abs=1e-3)


def test_the_generated_answer_is_the_argmax_decode_and_is_cached(
    llama_config: Any, byte_tokenizer: Any
) -> None:
    """``LocalScorer.generate``: the token-by-token argmax from the prompt (the definition of a
    greedy answer), at most ``max_tokens`` tokens, cut to its first line; asked again, the call
    cache answers."""
    transformers.set_seed(0)
    lm = transformers.AutoModelForCausalLM.from_config(llama_config).eval()
    model = SimpleNamespace(lm=lm, tokenizer=byte_tokenizer, name="tiny")
    start = len(byte_tokenizer.encode(PROMPT))
    for max_tokens in (1, 6, 40):
        ids = byte_tokenizer.encode(PROMPT)
        for _ in range(max_tokens):
            with torch.inference_mode():
                token = int(lm(input_ids=torch.tensor([ids])).logits[0, -1].argmax())
            if token == byte_tokenizer.eos_token_id:
                break
            ids.append(token)
        decoded = byte_tokenizer.decode(ids[start:], skip_special_tokens=True)
        scorer = scoring.LocalScorer(model)
        assert generate(scorer, PROMPT, max_tokens) == first_line(decoded)
        assert generate(scorer, PROMPT, max_tokens) == first_line(decoded)
        assert scorer.calls == 1


def test_a_batch_of_prompts_of_different_lengths_answers_as_one_by_one(
    llama_config: Any, byte_tokenizer: Any
) -> None:
    """``generate_all`` through ``LocalScorer.generate_batch``: the prompts padded on the left
    (masked) give each prompt's own greedy answer; each uncached prompt is one call, and a prompt
    asked before comes from the call cache."""
    transformers.set_seed(0)
    lm = transformers.AutoModelForCausalLM.from_config(llama_config).eval()
    model = SimpleNamespace(lm=lm, tokenizer=byte_tokenizer, name="tiny")
    prompts = [PROMPT, "Q: x?\nA:", PROMPT + " More words before the answer.", "Hi"]
    alone = scoring.LocalScorer(model)
    expected = [generate(alone, p, 8) for p in prompts]
    batched = scoring.LocalScorer(model)
    assert generate(batched, prompts[1], 8) == expected[1]
    assert generate_all(batched, prompts, 8) == expected
    assert batched.calls == len(prompts)  # the second prompt was cached
    assert generate_all(batched, prompts, 8) == expected
    assert batched.calls == len(prompts)


def test_first_line_keeps_the_text_up_to_its_first_line_with_words() -> None:
    assert first_line(" Paris.\nThe capital") == " Paris."
    assert first_line("\n\n Oslo\nmore") == "\n\n Oslo"
    assert first_line("no newline") == "no newline"
    assert first_line(" \n ") == " \n "


def test_a_scorer_that_cannot_generate_is_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match="object cannot generate an answer"):
        generate(object(), PROMPT, 4)
    with pytest.raises(ValueError, match="max_tokens must be >= 1, got max_tokens=0"):
        generate(object(), PROMPT, 0)
