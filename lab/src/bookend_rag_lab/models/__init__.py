"""Models behind one scorer interface: local weights in-process, and served endpoints.

- :mod:`~bookend_rag_lab.models.scorer`: the :class:`Scorer` protocol every backend implements,
  :class:`Continuations`, and :func:`~bookend_rag_lab.models.scorer.score_all`.
- :mod:`~bookend_rag_lab.models.cache`: :class:`CallCache` (JSONL, resumable) and its key.
- :mod:`~bookend_rag_lab.models.local`: the in-process transformers / GGUF model and its scorer.
- :mod:`~bookend_rag_lab.models.weights`: named weights (``smollm2``, ``gemma3-270m``,
  ``qwen2.5-coder-0.5b``).
- :mod:`~bookend_rag_lab.models.endpoint`: a model served over an OpenAI-compatible API
  (:class:`~bookend_rag_lab.models.endpoint.EndpointScorer`, completions; the transport every served
  scorer shares), :mod:`~bookend_rag_lab.models.chat` (chat prompts through
  ``/v1/chat/completions``, with log-probabilities or generation only), and
  :mod:`~bookend_rag_lab.models.llama_server`, the real servers their tests and benchmark start
  (llama-cpp-python's and upstream llama.cpp's).

- :mod:`~bookend_rag_lab.models.flops`: the floating-point operations of one scoring call (the
  prompt's and the candidates'), what ``bench/model_speed.py`` reads an engine's rate by.
- :mod:`~bookend_rag_lab.models.backends`: the backends by name, and :class:`ScorerSpec`, the
  scorer a run builds when it needs it.

A new backend is a class with the :class:`Scorer` attributes and methods that answers repeated
requests from a :class:`CallCache`, and declares its
:class:`~bookend_rag_lab.models.scorer.Capabilities` (what the experiments ask it instead of its
class), registered in :mod:`~bookend_rag_lab.models.backends`. :func:`load_scorer` loads local
weights; a :class:`ScorerSpec` names any backend, as the command line's ``--weights`` and
``--endpoint`` do.
"""

from __future__ import annotations

from pathlib import Path

from bookend_rag_lab.models.backends import ScorerSpec
from bookend_rag_lab.models.cache import CallCache
from bookend_rag_lab.models.local import LocalScorer, load_trained
from bookend_rag_lab.models.scorer import Continuations, Scorer

__all__ = ["CallCache", "Continuations", "LocalScorer", "Scorer", "ScorerSpec", "load_scorer"]


def load_scorer(
    weights: str | Path,
    *,
    device: str = "cpu",
    dtype: str = "float32",
    cache: str | Path | None = None,
) -> Scorer:
    """The scorer of local ``weights`` (a model directory, a ``.gguf`` file or a named weight)
    on ``device`` in ``dtype``, answering repeated calls from the JSONL ``cache`` (in memory
    when ``None``).

    Raises:
        ValueError: for missing weights, or an unknown device or dtype.
    """
    model = load_trained(weights, device=device, dtype=dtype)
    return LocalScorer(model, CallCache(cache))
