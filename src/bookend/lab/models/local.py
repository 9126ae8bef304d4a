"""Scoring continuations of a prompt with a causal LM, with an on-disk cache of model calls.

One model call scores one prompt: the prompt is run once with a key-value cache, and the
continuations (the candidates, or the answer alone) are then run after it in one pass. For each
continuation ``c`` it returns the total log-probability ``sum_t ln P(c_t | prompt, c_<t)`` and
whether greedy decoding would produce it (every token is the most likely one).

The continuation pass packs every continuation into one sequence after the prompt's cache, with a
block mask that lets each continuation see the prompt and its own earlier tokens only (and
positions that restart after the prompt), so the prompt's cache is extended once. Models whose
cache is not a plain append-only one (sliding-window layers, as in Gemma 3) instead get the cache
repeated once per continuation, a batch that copies it K times; both give the same numbers as
scoring ``prompt + c`` from scratch (tested).

:class:`CallCache` keeps the results in a JSONL file keyed by a hash of (model id, prompt,
continuations), written as each call finishes, so an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["CallCache", "Continuations", "ModelScorer", "score_continuations"]


@dataclass(frozen=True)
class Continuations:
    """Per continuation: total log-probability and whether greedy decoding produces it."""

    logprob: tuple[float, ...]
    greedy: tuple[bool, ...]


def score_continuations(
    lm: Any,
    tokenizer: Any,
    prompt: str,
    continuations: Sequence[str],
    *,
    packed: bool | None = None,
) -> Continuations:
    """Score each ``" " + continuation`` after ``prompt`` (see the module docstring).

    ``packed`` chooses the continuation pass: ``None`` (default) packs them when the model's cache
    is a plain append-only one, ``False`` forces the batched pass (``True`` is only exact for
    such caches).

    Raises:
        ValueError: when a continuation encodes to no tokens.
    """
    import torch

    device = next(lm.parameters()).device
    prompt_ids = torch.tensor([tokenizer.encode(prompt)], dtype=torch.long, device=device)
    cand = [tokenizer.encode(" " + c, add_special_tokens=False) for c in continuations]
    if not cand or any(len(c) == 0 for c in cand):
        raise ValueError(f"a continuation encodes to no tokens: {list(continuations)!r}")
    with torch.inference_mode():
        out = lm(input_ids=prompt_ids, use_cache=True, logits_to_keep=1)
        first = torch.log_softmax(out.logits[0, -1].float(), dim=-1)
        top = int(first.argmax())
        logprob = [float(first[c[0]]) for c in cand]
        greedy = [c[0] == top for c in cand]
        longer = [k for k, c in enumerate(cand) if len(c) > 1]
        if longer:
            if packed is None:
                packed = _appendable(out.cache)
            pass_ = _packed_pass if packed else _batched_pass
            # rows[k][t - 1]: log-probabilities of the token after c_<t (t >= 1) of continuation k
            rows = pass_(lm, out.cache, prompt_ids, [cand[k] for k in longer])
            for k, logp in zip(longer, rows, strict=True):
                best = logp.argmax(dim=-1)
                for t in range(1, len(cand[k])):
                    logprob[k] += float(logp[t - 1, cand[k][t]])
                    greedy[k] = greedy[k] and int(best[t - 1]) == cand[k][t]
    return Continuations(tuple(logprob), tuple(greedy))


def _appendable(cache: Any) -> bool:
    """Whether every layer of the cache is a plain append-only one (no sliding window)."""
    from transformers.cache_utils import DynamicLayer

    layers = getattr(cache, "layers", None) or []
    return bool(layers) and all(type(layer) is DynamicLayer for layer in layers)


def _packed_pass(lm: Any, cache: Any, prompt_ids: Any, cand: Sequence[list[int]]) -> list[Any]:
    """All continuations in one sequence after the prompt, each masked off from the others."""
    import torch

    prompt_len, device = prompt_ids.shape[1], prompt_ids.device
    inputs = [c[:-1] for c in cand]
    total = sum(len(c) for c in inputs)
    ids = torch.tensor([[t for c in inputs for t in c]], dtype=torch.long, device=device)
    positions = torch.tensor(
        [[prompt_len + t for c in inputs for t in range(len(c))]], dtype=torch.long, device=device
    )
    mask = torch.zeros((1, 1, total, prompt_len + total), dtype=torch.bool, device=device)
    mask[..., :prompt_len] = True
    starts = [0, *itertools.accumulate(len(c) for c in inputs)][:-1]
    for start, c in zip(starts, inputs, strict=True):
        block = torch.ones((len(c), len(c)), dtype=torch.bool, device=device).tril()
        mask[0, 0, start : start + len(c), prompt_len + start : prompt_len + start + len(c)] = block
    logits = lm(input_ids=ids, position_ids=positions, attention_mask=mask, cache=cache).logits
    logp = torch.log_softmax(logits[0].float(), dim=-1)
    return [logp[s : s + len(c)] for s, c in zip(starts, inputs, strict=True)]


def _batched_pass(lm: Any, cache: Any, prompt_ids: Any, cand: Sequence[list[int]]) -> list[Any]:
    """One batch row per continuation, on a copy of the prompt's cache per row."""
    import torch

    device = prompt_ids.device
    longest = max(len(c) for c in cand)
    cache.batch_repeat_interleave(len(cand))
    # Right padding is harmless: a causal model never lets a later (pad) token affect an earlier
    # one, and only real positions are read.
    batch = torch.zeros((len(cand), longest - 1), dtype=torch.long, device=device)
    for k, c in enumerate(cand):
        batch[k, : len(c) - 1] = torch.tensor(c[:-1])
    logp = torch.log_softmax(lm(input_ids=batch, cache=cache).logits.float(), dim=-1)
    return [logp[k, : len(c) - 1] for k, c in enumerate(cand)]


def call_key(model_id: str, prompt: str, continuations: Sequence[str]) -> str:
    """The cache key of one model call."""
    text = json.dumps([model_id, prompt, list(continuations)], ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class CallCache:
    """Model-call results in memory, mirrored to an append-only JSONL file when ``path`` is set."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = None if path is None else Path(path)
        self._results: dict[str, Continuations] = {}
        if self.path is not None and self.path.is_file():
            text = self.path.read_text(encoding="utf-8")
            if text and not text.endswith("\n"):  # a torn last line: new rows start afresh
                with self.path.open("a", encoding="utf-8") as handle:
                    handle.write("\n")
            for line in text.splitlines():
                try:
                    row = json.loads(line)
                    self._results[row["key"]] = Continuations(
                        tuple(map(float, row["logprob"])), tuple(map(bool, row["greedy"]))
                    )
                except (json.JSONDecodeError, KeyError, TypeError):
                    continue  # a line cut short by an interrupted run: that call is redone

    def __len__(self) -> int:
        return len(self._results)

    def get(self, key: str) -> Continuations | None:
        """The stored result, or ``None``."""
        return self._results.get(key)

    def put(self, key: str, result: Continuations) -> None:
        """Store a result (and append it to the file)."""
        self._results[key] = result
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            row = {"key": key, "logprob": list(result.logprob), "greedy": list(result.greedy)}
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(row) + "\n")


class ModelScorer:
    """Scores prompts with one model through a :class:`CallCache`.

    Attributes:
        calls: model calls made (cache misses); identical requests are answered from the cache.
    """

    def __init__(self, lm: Any, tokenizer: Any, model_id: str, cache: CallCache) -> None:
        self.lm = lm
        self.tokenizer = tokenizer
        self.model_id = model_id
        self.cache = cache
        self.calls = 0

    def token_length(self, text: str) -> int:
        """Tokens of ``text`` under the model's tokenizer (no special tokens)."""
        return len(self.tokenizer.encode(text, add_special_tokens=False))

    def is_cached(self, prompt: str, continuations: Sequence[str]) -> bool:
        """Whether this request is answered without a model call."""
        return self.cache.get(call_key(self.model_id, prompt, continuations)) is not None

    def score(self, prompt: str, continuations: Sequence[str]) -> Continuations:
        """The scores of the continuations after ``prompt`` (cached)."""
        key = call_key(self.model_id, prompt, continuations)
        found = self.cache.get(key)
        if found is None:
            found = score_continuations(self.lm, self.tokenizer, prompt, continuations)
            self.calls += 1
            self.cache.put(key, found)
        return found
