"""Fits: the theory to a measured influence profile, and parametric or slot profiles to outcomes.

NumPy and SciPy only: fits can be redone from saved reports without torch.

- :mod:`~bookend_rag_lab.fitting.theory_fit`: compare a measured per-position profile with the
  Cesàro theory; fit ``(H, alpha)`` or the Poisson limit.
- :mod:`~bookend_rag_lab.fitting.outcomes`: :class:`~bookend_rag_lab.fitting.outcomes.SlotOutcome`,
  one item scored with its gold document in one slot, and its JSON form.
- :mod:`~bookend_rag_lab.fitting.slots`: the slot table of a calibration and the slot profile.
- :mod:`~bookend_rag_lab.fitting.profile`: fit a :class:`~bookend_rag.FittedProfile` to outcomes
  (maximum likelihood) or to a measured position profile (least squares).
- :mod:`~bookend_rag_lab.fitting.holdout`: does a profile predict calibration cells it never saw?
"""
