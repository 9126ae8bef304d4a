"""``bookend eval``: does placement help on *your* model and data?

Importing this package does not import torch; the model is loaded when :func:`evaluate` runs
(optional extra ``bookend[validate]``). Modules, one job each:

- :mod:`~bookend.evaluation.items`: evaluation items, the JSONL format and its reader.
- :mod:`~bookend.evaluation.retrieval`: BM25, MiniLM or the file's scores rank the documents.
- :mod:`~bookend.evaluation.frameworks`: the LangChain, LlamaIndex and Haystack reorderers.
- :mod:`~bookend.evaluation.strategies`: every order compared (bookend, baselines, random, oracle).
- :mod:`~bookend.evaluation.scoring`: model calls (gold answer log-probability) and their cache.
- :mod:`~bookend.evaluation.stats`: bootstrap intervals, paired differences, detectable effects.
- :mod:`~bookend.evaluation.report`: the versioned JSON report and the Markdown tables.
- :mod:`~bookend.evaluation.figures`: the PNG figures.
- :mod:`~bookend.evaluation.run`: :func:`evaluate`, end to end.
- :mod:`~bookend.evaluation.cli`: the ``bookend eval`` subcommand.
"""

from bookend.evaluation.run import EvalResult, evaluate

__all__ = ["EvalResult", "evaluate"]
