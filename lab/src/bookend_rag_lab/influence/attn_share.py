"""Per-layer attention share: the direct estimate of the theory's ``alpha`` (arXiv 2602.16837).

For layer ``l`` with residual-stream input ``x_l`` and attention output ``a_l`` (what the block adds
to the stream, after the output projection), per token::

    alpha_l = E[ |a_l| / (|x_l| + |a_l|) ]

averaged over positions and the batch. Hooks read ``x_l`` as the decoder block's input and ``a_l``
as its attention submodule's output. (Gemma-2 normalises ``a_l`` once more before adding it; the
hook sees it before that norm.)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import torch

from bookend_rag_lab.influence.hooks import HookScope

__all__ = ["AttentionShareRecorder", "decoder_layers"]

_ATTN_NAMES = ("self_attn", "attn", "attention", "self_attention")


def decoder_layers(model: torch.nn.Module) -> list[torch.nn.Module]:
    """The decoder blocks of a base model: its longest ``ModuleList`` (``layers`` or ``h``)."""
    lists: list[torch.nn.ModuleList] = [
        m for m in model.modules() if isinstance(m, torch.nn.ModuleList)
    ]
    if not lists:
        raise ValueError(f"cannot find decoder layers in model={type(model).__name__}")
    longest = lists[0]
    for candidate in lists[1:]:
        if len(candidate) > len(longest):
            longest = candidate
    return list(longest)


def _attention_of(layer: torch.nn.Module) -> torch.nn.Module:
    for name in _ATTN_NAMES:
        sub = getattr(layer, name, None)
        if isinstance(sub, torch.nn.Module):
            return sub
    raise ValueError(f"cannot find the attention module of layer={type(layer).__name__}")


class AttentionShareRecorder(HookScope):
    """Context manager recording ``alpha_l`` for every layer during forward passes.

    Example:
        >>> with AttentionShareRecorder(model) as rec:  # doctest: +SKIP
        ...     model(inputs_embeds=x)
        >>> rec.shares()  # one value per layer  # doctest: +SKIP
    """

    def __init__(self, model: torch.nn.Module) -> None:
        self._layers = decoder_layers(model)
        self._inputs: list[torch.Tensor | None] = [None] * len(self._layers)
        self._sums = np.zeros(len(self._layers))
        self._counts = np.zeros(len(self._layers))
        super().__init__()

    def __enter__(self) -> AttentionShareRecorder:
        for index, layer in enumerate(self._layers):
            self._handles.append(
                layer.register_forward_pre_hook(self._pre_hook(index), with_kwargs=True)
            )
            self._handles.append(_attention_of(layer).register_forward_hook(self._hook(index)))
        return self

    def _pre_hook(self, index: int) -> Any:
        def hook(_module: torch.nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
            stream = args[0] if args else kwargs.get("hidden_states")
            self._inputs[index] = stream.detach() if isinstance(stream, torch.Tensor) else None

        return hook

    def _hook(self, index: int) -> Any:
        def hook(_module: torch.nn.Module, _args: Any, output: Any) -> None:
            attn = output[0] if isinstance(output, tuple) else output
            stream = self._inputs[index]
            if stream is None or not isinstance(attn, torch.Tensor):
                return
            a = attn.detach().norm(dim=-1)
            x = stream.norm(dim=-1)
            ratio = a / (x + a).clamp_min(1e-30)
            self._sums[index] += float(ratio.sum())
            self._counts[index] += ratio.numel()

        return hook

    def shares(self) -> npt.NDArray[np.float64]:
        """Mean ``alpha_l`` per layer over everything recorded (NaN for a layer never run)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.asarray(self._sums / self._counts, dtype=np.float64)
