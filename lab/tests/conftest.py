"""Fixtures for the lab's tests: tiny configurations, a byte-level tokenizer, no network."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

# Read when the hub library is imported, hence before transformers. The lab's tests need torch
# and transformers: without them they fail loudly rather than skip.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
import torch
import transformers

from bookend_rag_lab.models import local as scoring

torch.set_num_threads(2)


@pytest.fixture(autouse=True)
def _seeded_torch() -> None:
    """Every test starts from torch's seed 0: a test that draws from the global generator
    (random inputs, a model's initial weights) draws the same values whichever tests ran before."""
    torch.manual_seed(0)


@pytest.fixture
def gpt2_config() -> Callable[..., Any]:
    """Factory of a GPT-2 of width 64 (2 layers unless told)."""

    def make(layers: int = 2) -> Any:
        return transformers.GPT2Config(
            n_embd=64, n_head=4, n_layer=layers, n_positions=128, vocab_size=300
        )

    return make


@pytest.fixture
def qwen2_config() -> Callable[..., Any]:
    """Factory of a Qwen2 of width 64 with grouped-query attention (2 layers unless told)."""

    def make(layers: int = 2) -> Any:
        return transformers.Qwen2Config(
            hidden_size=64,
            intermediate_size=128,
            num_hidden_layers=layers,
            num_attention_heads=4,
            num_key_value_heads=2,
            vocab_size=300,
            max_position_embeddings=256,
        )

    return make


@pytest.fixture
def llama_config() -> Any:
    """A 2-layer Llama of width 64 with a byte-sized vocabulary."""
    return transformers.LlamaConfig(
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=256,
        max_position_embeddings=2048,
        bos_token_id=None,
        eos_token_id=None,
    )


@pytest.fixture
def gemma3_config(llama_config: Any) -> Any:
    """The tiny Llama's sizes as a Gemma 3 with a sliding window (8) far shorter than the prompt."""
    shared = ("hidden_size", "intermediate_size", "num_attention_heads", "vocab_size")
    return transformers.Gemma3TextConfig(
        **{name: getattr(llama_config, name) for name in shared},
        num_hidden_layers=3,
        num_key_value_heads=1,
        head_dim=16,
        sliding_window=8,
        layer_types=["sliding_attention", "full_attention", "sliding_attention"],
        bos_token_id=None,
        eos_token_id=None,
        pad_token_id=None,
    )


@pytest.fixture
def byte_tokenizer() -> Any:
    """A byte-level tokenizer (256 ids, no merges), built offline."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    tok = Tokenizer(models.BPE(vocab={c: i for i, c in enumerate(alphabet)}, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tok)


@pytest.fixture
def saved_model(tmp_path: Path, llama_config: Any, byte_tokenizer: Any) -> Path:
    """The tiny Llama and the byte tokenizer saved with ``save_pretrained``: a weights dir."""
    torch.manual_seed(0)
    transformers.AutoModelForCausalLM.from_config(llama_config).save_pretrained(tmp_path)
    byte_tokenizer.save_pretrained(tmp_path)
    return tmp_path


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every real model call, by prompt (the scorer's own counter is not trusted)."""
    prompts: list[str] = []
    real = scoring.score_continuations

    def spy(lm: Any, tokenizer: Any, prompt: str, continuations: Any) -> Any:
        prompts.append(prompt)
        return real(lm, tokenizer, prompt, continuations)

    monkeypatch.setattr(scoring, "score_continuations", spy)
    return prompts
