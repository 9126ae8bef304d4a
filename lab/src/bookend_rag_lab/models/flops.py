"""The arithmetic of one model call: floating-point operations of the prompt and of the candidates.

A decoder layer's matrix products, per token (``d`` the width, ``h`` and ``g`` the query and
key-value heads of size ``e``, ``f`` the MLP's width, three matrices as in a gated MLP)::

    linear    = 2 d (h e) + 2 * 2 d (g e) + 2 (h e) d + 3 * 2 d f    (Q, K and V, O, the MLP)
    attention = 2 * 2 h e k                                 (Q Kᵀ, then the weights times V)

with ``k`` the keys the token reads: every earlier token and itself (``p + 1`` at position ``p``),
at most the window on a sliding-window layer (Gemma 3's local layers). The output head costs
``2 d V`` per position whose logits are kept (``V`` the vocabulary). Norms, rotary embeddings and
softmaxes are elementwise and left out (a few percent at these sizes).

One scoring call (:func:`~bookend_rag_lab.models.local.score_continuations`) runs the prompt's
``P`` tokens with the head at its last position only, then each continuation's tokens but its last
(the first token's probability is read after the prompt) after the prompt's cache, the head at each
of them. :func:`call_flops` counts exactly that: the work any engine must do for the call, whatever
it does beyond it (llama-cpp-python's server, with ``logits_all``, runs the head at every
position). Divided by a call's time it gives the rate an engine reaches, to be read against the
machine's peak (``bench/model_speed.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["CallFlops", "Flops", "ModelShape", "call_flops"]


@dataclass(frozen=True)
class Flops:
    """Floating-point operations of one forward pass, by part (a multiply-add counts two)."""

    linear: float
    attention: float
    head: float

    @property
    def total(self) -> float:
        """All three parts."""
        return self.linear + self.attention + self.head

    def __add__(self, other: Flops) -> Flops:
        return Flops(
            self.linear + other.linear, self.attention + other.attention, self.head + other.head
        )


@dataclass(frozen=True)
class CallFlops:
    """One scoring call's operations: the prompt's pass and the candidates' passes."""

    prompt: Flops
    candidates: Flops

    @property
    def total(self) -> float:
        """The whole call."""
        return self.prompt.total + self.candidates.total


def _keys(start: int, stop: int, window: int | None) -> int:
    """``sum_{p = start}^{stop - 1} min(p + 1, window)``: the keys read by the tokens at positions
    ``start .. stop - 1`` (no window: ``p + 1`` each)."""
    below = max(0, (stop if window is None else min(stop, window)) - start)  # p + 1 <= window
    first = start + 1
    total = below * (first + first + below - 1) // 2
    return total + (stop - start - below) * (window or 0)


@dataclass(frozen=True)
class ModelShape:
    """The sizes of a decoder-only model that its operations depend on.

    Attributes:
        layers: decoder layers.
        hidden: the width ``d``.
        intermediate: the MLP's width ``f``.
        heads, kv_heads, head_dim: query heads ``h``, key-value heads ``g``, their size ``e``.
        vocab: the vocabulary ``V`` (the output head's rows).
        window: the sliding window of the layers marked in ``sliding``, ``None`` for none.
        sliding: per layer, whether its attention is windowed.
    """

    layers: int
    hidden: int
    intermediate: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    window: int | None = None
    sliding: tuple[bool, ...] = ()

    def __post_init__(self) -> None:
        sizes = ("layers", "hidden", "intermediate", "heads", "kv_heads", "head_dim", "vocab")
        for name in sizes:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {name}={value!r}")
        if self.sliding and len(self.sliding) != self.layers:
            raise ValueError(
                f"sliding must name every layer: got {len(self.sliding)} flags for "
                f"layers={self.layers}"
            )
        if any(self.sliding) and (self.window is None or self.window < 1):
            raise ValueError(f"sliding layers need a positive window, got window={self.window!r}")

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> ModelShape:
        """The shape from a transformers config's ``to_dict()`` (Llama, Qwen2, Gemma 3 and the
        like: ``head_dim`` defaults to ``hidden_size / num_attention_heads``, the key-value heads
        to the query heads; ``layer_types`` marks the sliding-window layers).

        Raises:
            ValueError: when a size is missing or not a positive integer.
        """
        text = config.get("text_config") or config
        try:
            heads = text["num_attention_heads"]
            layer_types = text.get("layer_types") or ()
            return cls(
                layers=text["num_hidden_layers"],
                hidden=text["hidden_size"],
                intermediate=text["intermediate_size"],
                heads=heads,
                kv_heads=text.get("num_key_value_heads") or heads,
                head_dim=text.get("head_dim") or text["hidden_size"] // heads,
                vocab=text["vocab_size"],
                window=text.get("sliding_window") if "sliding_attention" in layer_types else None,
                sliding=tuple(kind == "sliding_attention" for kind in layer_types),
            )
        except KeyError as missing:
            raise ValueError(f"the model's config has no {missing.args[0]}") from None

    def forward(self, new: int, past: int = 0, logits: int = 1) -> Flops:
        """The operations of ``new`` tokens after ``past`` cached ones, the head at ``logits`` of
        them (see the module docstring).

        Raises:
            ValueError: for a negative count, or more logits than new tokens.
        """
        for name, value in (("new", new), ("past", past), ("logits", logits)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {name}={value!r}")
        if logits > new:
            raise ValueError(f"logits={logits} is more than the new tokens, new={new}")
        d, q, kv = self.hidden, self.heads * self.head_dim, self.kv_heads * self.head_dim
        per_token = 2 * d * q + 2 * 2 * d * kv + 2 * q * d + 3 * 2 * d * self.intermediate
        sliding = self.sliding or (False,) * self.layers
        keys = sum(_keys(past, past + new, self.window if s else None) for s in sliding)
        return Flops(
            linear=float(self.layers * new * per_token),
            attention=float(2 * 2 * q * keys),
            head=float(2 * d * self.vocab * logits),
        )


def call_flops(shape: ModelShape, prompt_tokens: int, continuations: Sequence[int]) -> CallFlops:
    """The operations of one scoring call: a prompt of ``prompt_tokens`` tokens, then each
    continuation of ``n`` tokens (``continuations``) as its ``n - 1`` first tokens after the
    prompt, the head at each (see the module docstring).

    Raises:
        ValueError: for a prompt of no tokens or a continuation of none.
    """
    if prompt_tokens < 1 or any(n < 1 for n in continuations):
        raise ValueError(
            f"a call needs a prompt and continuations of at least one token, got "
            f"prompt_tokens={prompt_tokens}, continuations={list(continuations)}"
        )
    candidates = Flops(0.0, 0.0, 0.0)
    for n in continuations:
        candidates += shape.forward(n - 1, past=prompt_tokens, logits=n - 1)
    return CallFlops(shape.forward(prompt_tokens), candidates)
