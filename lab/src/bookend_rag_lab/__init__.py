"""The lab: everything that runs a model (the distribution ``bookend-rag-lab``: torch,
transformers; the core's ``lab`` extra installs it).

The lab imports the core (:mod:`bookend_rag`) and is never imported by it: the core reaches
``bookend_rag.evaluate``, ``bookend_rag.tune`` and the ``bookend validate``, ``calibrate``,
``eval`` and ``tune`` subcommands through the entry points the lab's ``pyproject.toml`` declares
(groups ``bookend_rag.exports`` and ``bookend_rag.commands``). Importing this package imports
nothing heavy; :func:`evaluate`, :func:`tune`, :func:`calibrate`, :func:`validate_influence`,
:func:`load_scorer` and the specs the experiments take (:class:`RunSpec`, :class:`ScorerSpec`) are
loaded on first use. Layers, top down:

- :mod:`~bookend_rag_lab.cli`: the subcommands; parse and call one experiment.
- :mod:`~bookend_rag_lab.experiments`: ``validate_influence``, ``calibrate``, ``evaluate``,
  ``tune``: library functions, each a short pipeline of named steps.
- :mod:`~bookend_rag_lab.report`: the reports (JSON, Markdown, terminal lines) and PNG figures.
- :mod:`~bookend_rag_lab.fitting`: fits of the theory and of profiles, the held-back check.
- :mod:`~bookend_rag_lab.influence`: the Jacobian-norm influence measurement of the validator.
- :mod:`~bookend_rag_lab.reorderers`, :mod:`~bookend_rag_lab.frameworks`: the orders compared
  (bookend, LangChain, LlamaIndex, Haystack, retrieval order, random, oracle).
- :mod:`~bookend_rag_lab.metrics`: per-item metrics of a scored prompt;
  :mod:`~bookend_rag_lab.stats`: every interval.
- :mod:`~bookend_rag_lab.items`: one item type, one prompt renderer, the suites (``hard``,
  ``lookup``, ``nq``, ``records``, ``squad``) and the JSONL format.
- :mod:`~bookend_rag_lab.retrieval`: BM25, MiniLM or given scores rank an item's documents.
- :mod:`~bookend_rag_lab.models`: the scorer interface, the call cache, local weights.
- :mod:`~bookend_rag_lab.progress`, :mod:`~bookend_rag_lab.deps`: progress bars; the extra's import
  guard.
- :mod:`~bookend_rag_lab.runfiles`: a run's files, plain as a run writes them or compressed as
  ``bench/`` keeps them.

Where a newcomer adds: a scorer backend in :mod:`bookend_rag_lab.models` (a class with the
:class:`~bookend_rag_lab.models.Scorer` members, registered in
:mod:`bookend_rag_lab.models.backends`), an item suite in :mod:`bookend_rag_lab.items.suites`.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = [
    "CalibrationResult",
    "EvalResult",
    "RunSpec",
    "ScorerSpec",
    "TuneResult",
    "calibrate",
    "evaluate",
    "load_scorer",
    "tune",
    "validate_influence",
]

_HOMES = {
    "CalibrationResult": "bookend_rag_lab.experiments.calibrate",
    "EvalResult": "bookend_rag_lab.experiments.evaluate",
    "calibrate": "bookend_rag_lab.experiments.calibrate",
    "evaluate": "bookend_rag_lab.experiments.evaluate",
    "load_scorer": "bookend_rag_lab.models",
    "RunSpec": "bookend_rag_lab.experiments.runspec",
    "ScorerSpec": "bookend_rag_lab.models.backends",
    "TuneResult": "bookend_rag_lab.experiments.tune",
    "tune": "bookend_rag_lab.experiments.tune",
    "validate_influence": "bookend_rag_lab.experiments.validate",
}


def __getattr__(name: str) -> Any:
    # The experiments import scipy, the report modules and, when run, torch: load them on first
    # use so that the command line (which imports bookend_rag_lab.cli) starts fast.
    if name in _HOMES:
        return getattr(import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'bookend_rag_lab' has no attribute {name!r}")
