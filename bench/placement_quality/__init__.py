"""Placement quality benchmark: the pieces behind ``bench/quality.py``, one job per module.

- :mod:`.curves`: position curves (accuracy by normalised gold position), published and measured.
- :mod:`.expected`: expected accuracy of an order under a rank distribution, and the oracle.
- :mod:`.frameworks`: the orders of the real LangChain, LlamaIndex and Haystack reorderers.
- :mod:`.strategies`: every strategy compared, as a function from retrieval scores to an order.
- :mod:`.panel`: the model-free curve panel (models x K x rank distributions x strategies).
- :mod:`.stats`: confidence intervals and paired tests.
- :mod:`.retrieval`: BM25 and MiniLM rankings of an item's documents.
- :mod:`.lm`: scoring candidate answers by log-probability with SmolLM2.
- :mod:`.real`: the real runs (position curves, calibration, strategies on ranked lists).
- :mod:`.figures`: the PNG figures.
"""
