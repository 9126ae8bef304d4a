"""Placement quality without a model: the pieces behind ``bench/quality.py``, one job per module.

- :mod:`.curves`: position curves (accuracy by normalised gold position), published and measured.
- :mod:`.expected`: expected accuracy of an order under a rank distribution, and the oracle.
- :mod:`.strategies`: the product's strategies and the panel's oracle.
- :mod:`.panel`: the model-free curve panel (models x K x rank distributions x strategies).
- :mod:`.report`: the panel's tables.
- :mod:`.figures`: the panel's PNG figure.

Real runs on a model are ``bookend eval`` (:mod:`bookend_rag_lab.experiments.evaluate`).
"""
