"""The lab's experiments as library functions, each a short pipeline of named steps.

- :mod:`~bookend.lab.experiments.validate`: :func:`validate_influence` (``bookend validate``).
- :mod:`~bookend.lab.experiments.calibrate`: :func:`calibrate` (``bookend calibrate``).
- :mod:`~bookend.lab.experiments.evaluate`: :func:`evaluate` (``bookend eval``).
- :mod:`~bookend.lab.experiments.trials`: the steps ``evaluate`` chains (rank, plan, score,
  record, curve, oracle), for any experiment that compares orders of items.
"""
