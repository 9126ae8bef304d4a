"""The lab's experiments as library functions, each a short pipeline of named steps.

- :mod:`~bookend_rag_lab.experiments.validate`: :func:`validate_influence` (``bookend validate``).
- :mod:`~bookend_rag_lab.experiments.calibrate`: :func:`calibrate` (``bookend calibrate``).
- :mod:`~bookend_rag_lab.experiments.evaluate`: :func:`evaluate` (``bookend eval``).
- :mod:`~bookend_rag_lab.experiments.tune`: :func:`tune` (``bookend tune``), with its steps:
  :mod:`~bookend_rag_lab.experiments.folds`, :mod:`~bookend_rag_lab.experiments.measured_slots`,
  :mod:`~bookend_rag_lab.experiments.candidates`, :mod:`~bookend_rag_lab.experiments.race`, and
  :mod:`~bookend_rag_lab.experiments.budget` and :mod:`~bookend_rag_lab.experiments.judging`, what
  they share.
- :mod:`~bookend_rag_lab.experiments.trials`: the steps ``evaluate`` and ``tune`` chain (rank, plan,
  score, record, curve, oracle), for any experiment that compares orders of items.
- :mod:`~bookend_rag_lab.experiments.runspec`: :class:`RunSpec`, the items and prompt that
  ``evaluate``, ``tune`` and ``calibrate`` take (beside the model, a
  :class:`~bookend_rag_lab.models.backends.ScorerSpec` or a scorer, and their own options).
- :mod:`~bookend_rag_lab.experiments.setup`: what ``evaluate`` and ``tune`` set up before scoring
  (families, theory spec, model hash) and how they record their items and model.
"""
