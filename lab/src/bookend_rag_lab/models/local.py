"""The in-process model: load local weights (a model directory or a GGUF file) and score with them.

Loading (:func:`load_trained`): transformers' ``from_pretrained`` with ``local_files_only``, so
nothing is downloaded; a GGUF file goes through ``from_pretrained(directory, gguf_file=name)``,
which dequantises it (needs the packages ``gguf`` and ``accelerate``). The tokenizer comes from the
same directory or file. Names such as ``smollm2`` resolve through
:mod:`~bookend_rag_lab.models.weights`.

Scoring (:func:`score_continuations`): one model call scores one prompt. The prompt is run once
with a key-value cache, and the continuations (the candidates, or the answer alone) are then run
after it in one pass. The pass packs every continuation into one sequence after the prompt's cache,
with a block mask that lets each continuation see the prompt and its own earlier tokens only (and
positions that restart after the prompt), so the prompt's cache is extended once. Models whose
cache is not a plain append-only one (sliding-window layers, as in Gemma 3) instead get the cache
repeated once per continuation, a batch that copies it K times; both give the same numbers as
scoring ``prompt + c`` from scratch (tested).

:class:`LocalScorer` is the :class:`~bookend_rag_lab.models.scorer.Scorer` of a loaded model,
through a call cache. Importing this module does not import torch; loading and scoring do.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import bookend_rag
from bookend_rag.spec import preset_key
from bookend_rag_lab import deps
from bookend_rag_lab.models.cache import CallCache, call_key, generation_key
from bookend_rag_lab.models.scorer import (
    IN_PROCESS,
    Capabilities,
    ChatPrompt,
    Continuations,
    Prompt,
    answer_text,
    first_line,
)
from bookend_rag_lab.models.weights import resolve_weights

if TYPE_CHECKING:
    import torch

__all__ = [
    "DTYPES",
    "LocalScorer",
    "TrainedModel",
    "chat_text",
    "load_trained",
    "prompt_ids",
    "score_continuations",
]

DTYPES = ("float32", "bfloat16", "float16")


@dataclass
class TrainedModel:
    """A loaded causal LM, its base model and tokenizer.

    Attributes:
        lm: the causal language model (with its head), in eval mode, no parameter gradients.
        base: its headless base model (returns ``last_hidden_state``).
        tokenizer: the matching tokenizer.
        name: the path it was loaded from.
    """

    lm: Any
    base: torch.nn.Module
    tokenizer: Any
    name: str


def load_trained(path: str | Path, *, device: str = "cpu", dtype: str = "float32") -> TrainedModel:
    """Load a causal LM from a local model directory or a ``.gguf`` file, offline.

    ``path`` may also name installed weights
    (:data:`~bookend_rag_lab.models.weights.NAMED_WEIGHTS`).
    ``device`` is ``"cpu"``, ``"cuda"`` or ``"auto"`` (CUDA when available); ``dtype`` one of
    :data:`DTYPES`.

    Raises:
        ValueError: when the path does not exist or is neither a directory nor a GGUF file, for an
            unknown device or dtype, or for ``device="cuda"`` without a GPU.
    """
    import torch

    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}, got dtype={dtype!r}")
    if device not in ("auto", "cpu", "cuda"):
        raise ValueError(f"device must be 'auto', 'cpu' or 'cuda', got device={device!r}")
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    elif device == "cuda" and not torch.cuda.is_available():
        raise ValueError("device='cuda' but torch sees no CUDA device")
    source = resolve_weights(path)
    kwargs: dict[str, Any] = {}
    if source.is_file():
        if source.suffix.lower() != ".gguf":
            raise ValueError(
                f"weights must be a model directory or a .gguf file, got path={path!r}"
            )
        directory, kwargs["gguf_file"] = str(source.parent), source.name
    else:
        directory = str(source)
    tf = deps.transformers()
    tokenizer = tf.AutoTokenizer.from_pretrained(directory, local_files_only=True, **kwargs)
    lm = tf.AutoModelForCausalLM.from_pretrained(
        directory,
        local_files_only=True,
        dtype=getattr(torch, dtype),
        attn_implementation="sdpa",
        **kwargs,
    )
    lm.to(device)
    lm.eval()
    lm.requires_grad_(False)
    return TrainedModel(lm=lm, base=lm.base_model, tokenizer=tokenizer, name=str(source))


def chat_text(tokenizer: Any, prompt: ChatPrompt) -> str:
    """The chat prompt rendered by the model's own chat template, ending with the generation
    prompt (the opening of the assistant turn).

    Raises:
        ValueError: when the tokenizer has no chat template.
    """
    if not getattr(tokenizer, "chat_template", None):
        raise ValueError(
            "the model's tokenizer has no chat template: give a text template (a --template file "
            "that is not chat messages) or weights that carry one"
        )
    text: str = tokenizer.apply_chat_template(
        prompt.as_dicts(), add_generation_prompt=True, tokenize=False
    )
    return text


def prompt_ids(tokenizer: Any, prompt: Prompt) -> list[int]:
    """The tokens the model reads before the answer: completion text with the tokenizer's special
    tokens (its BOS), a chat rendered by its template (which writes its own special tokens)."""
    if isinstance(prompt, ChatPrompt):
        ids: list[int] = tokenizer.encode(chat_text(tokenizer, prompt), add_special_tokens=False)
    else:
        ids = tokenizer.encode(prompt)
    return ids


def greedy_answers(
    lm: Any, tokenizer: Any, prompts: Sequence[Prompt], max_tokens: int
) -> list[str]:
    """The model's greedy continuation of each prompt, at most ``max_tokens`` tokens, decoded
    without special tokens and cut to its first line (:func:`first_line`), in one batch: the
    prompts are padded on the left (the attention mask hides the padding), and generation stops
    once every sequence has reached the end-of-sequence token or ended its line. One prompt is
    one sequence without padding. A batch of K one-document prompts takes little longer than one,
    since each step's time is the weights' reading."""
    import torch
    from transformers import StoppingCriteria, StoppingCriteriaList

    encoded = [prompt_ids(tokenizer, p) for p in prompts]
    start = max(len(ids) for ids in encoded)
    pad = tokenizer.eos_token_id
    fill = next((t for t in (tokenizer.pad_token_id, pad) if t is not None), 0)  # masked anyway
    ids = torch.tensor([[fill] * (start - len(e)) + e for e in encoded])
    mask = torch.tensor([[0] * (start - len(e)) + [1] * len(e) for e in encoded])

    def text_of(sequence: Any) -> str:
        decoded: str = tokenizer.decode(sequence[start:], skip_special_tokens=True)
        return decoded

    class _LineEnded(StoppingCriteria):
        def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
            ended = [first_line(text_of(row)) != text_of(row) for row in input_ids]
            return torch.tensor(ended, dtype=torch.bool)

    with torch.inference_mode():
        out = lm.generate(
            ids,
            attention_mask=mask,
            max_new_tokens=max_tokens,
            do_sample=False,
            pad_token_id=pad,
            stopping_criteria=StoppingCriteriaList([_LineEnded()]),
        )
    return [first_line(text_of(row)) for row in out]


def score_continuations(
    lm: Any,
    tokenizer: Any,
    prompt: Prompt,
    continuations: Sequence[str],
    *,
    packed: bool | None = None,
) -> Continuations:
    """Score each continuation after ``prompt`` (see the module docstring): ``" " + c`` after
    completion text, ``c`` opening the assistant turn of a :class:`ChatPrompt`
    (:func:`~bookend_rag_lab.models.scorer.answer_text`).

    ``packed`` chooses the continuation pass: ``None`` (default) packs them when the model's cache
    is a plain append-only one, ``False`` forces the batched pass (``True`` is only exact for
    such caches).

    Raises:
        ValueError: when a continuation encodes to no tokens.
    """
    import torch

    device = next(lm.parameters()).device
    ids = torch.tensor([prompt_ids(tokenizer, prompt)], dtype=torch.long, device=device)
    cand = [
        tokenizer.encode(answer_text(prompt, c), add_special_tokens=False) for c in continuations
    ]
    if not cand or any(len(c) == 0 for c in cand):
        raise ValueError(f"a continuation encodes to no tokens: {list(continuations)!r}")
    with torch.inference_mode():
        out = lm(input_ids=ids, use_cache=True, logits_to_keep=1)
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
            rows = pass_(lm, out.cache, ids, [cand[k] for k in longer])
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


class LocalScorer:
    """The :class:`~bookend_rag_lab.models.scorer.Scorer` of an in-process model.

    ``model`` needs ``lm``, ``tokenizer`` and ``name`` (a :class:`TrainedModel`). Its
    ``model_id`` is ``"NAME|DTYPE"`` (the weights' dtype), so calls of another precision never
    share a cache entry; :attr:`spec` is the theory spec read from the model's config, and
    :attr:`weights` the path it was loaded from.

    Attributes:
        calls: model calls made (cache misses); identical requests are answered from the cache.
        capabilities: whole continuations of text and chat prompts, in process.
    """

    capabilities: Capabilities = IN_PROCESS

    def __init__(self, model: Any, cache: CallCache | None = None) -> None:
        self.model = model
        self.model_id = f"{model.name}|{str(model.lm.dtype).removeprefix('torch.')}"
        self.cache = cache if cache is not None else CallCache()
        self.calls = 0

    @cached_property
    def spec(self) -> bookend_rag.ModelSpec:
        """The theory spec of the model's architecture (its depth), from its config, named after
        the weights: their preset's key when they name one (``gemma3-270m`` for
        ``gemma-3-270m-q4_k_m.gguf``), else their file or directory name."""
        spec = bookend_rag.ModelSpec.from_hf_config(self.model.lm.config.to_dict())
        weights = Path(self.model.name).name
        return spec.model_copy(update={"name": preset_key(weights) or weights})

    @cached_property
    def context_length(self) -> int | None:
        """The positions the model was trained for (its config's ``max_position_embeddings``;
        ``None`` when the config names none)."""
        found = getattr(self.model.lm.config, "max_position_embeddings", None)
        return found if isinstance(found, int) else None

    @property
    def weights(self) -> Path:
        """The model file or directory the weights were loaded from."""
        return Path(self.model.name)

    def token_length(self, text: str) -> int:
        """Tokens of ``text`` under the model's tokenizer (no special tokens)."""
        return len(self.model.tokenizer.encode(text, add_special_tokens=False))

    def is_cached(self, prompt: Prompt, continuations: Sequence[str]) -> bool:
        """Whether this request is answered without a model call."""
        return self.cache.get(call_key(self.model_id, prompt, continuations)) is not None

    def score(self, prompt: Prompt, continuations: Sequence[str]) -> Continuations:
        """The scores of the continuations after ``prompt`` (cached)."""
        key = call_key(self.model_id, prompt, continuations)
        found = self.cache.get(key)
        if found is None:
            found = score_continuations(self.model.lm, self.model.tokenizer, prompt, continuations)
            self.calls += 1
            self.cache.put(key, found)
        return found

    def generate(self, prompt: Prompt, max_tokens: int) -> str:
        """The model's greedy answer after ``prompt``, at most ``max_tokens`` tokens (cached)."""
        return self.generate_batch([prompt], max_tokens)[0]

    def generate_batch(self, prompts: Sequence[Prompt], max_tokens: int) -> list[str]:
        """:meth:`generate` for each prompt, the uncached ones in one batch
        (:func:`greedy_answers`); each is one model call."""
        keys = [generation_key(self.model_id, p, max_tokens) for p in prompts]
        todo = {k: p for k, p in zip(keys, prompts, strict=True) if self.cache.get(k) is None}
        if todo:
            texts = greedy_answers(
                self.model.lm, self.model.tokenizer, list(todo.values()), max_tokens
            )
            for key, text in zip(todo, texts, strict=True):
                self.calls += 1
                self.cache.put(key, Continuations((), (), text))
        return [(self.cache.get(k) or Continuations((), (), "")).generated or "" for k in keys]
