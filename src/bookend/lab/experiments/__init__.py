"""The lab's experiments as library functions, each a short pipeline of named steps.

- :mod:`~bookend.lab.experiments.validate`: :func:`validate_influence` (``bookend validate``).
- :mod:`~bookend.lab.experiments.calibrate`: :func:`calibrate` (``bookend calibrate``).
- :mod:`~bookend.lab.experiments.evaluate`: :func:`evaluate` (``bookend eval``).
- :mod:`~bookend.lab.experiments.tune`: :func:`tune` (``bookend tune``), with its steps:
  :mod:`~bookend.lab.experiments.folds`, :mod:`~bookend.lab.experiments.measured_slots`,
  :mod:`~bookend.lab.experiments.candidates`, :mod:`~bookend.lab.experiments.race`, and
  :mod:`~bookend.lab.experiments.budget` and :mod:`~bookend.lab.experiments.judging`, what they
  share.
- :mod:`~bookend.lab.experiments.trials`: the steps ``evaluate`` and ``tune`` chain (rank, plan,
  score, record, curve, oracle), for any experiment that compares orders of items.
- :mod:`~bookend.lab.experiments.setup`: what ``evaluate`` and ``tune`` set up before scoring
  (families, scorer, call cache, theory spec, model hash) and how they record their items.
"""
