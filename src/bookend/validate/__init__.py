"""Validator: measure a model's real influence profile, test the theory on it, feed it to placement.

Optional extra ``bookend[validate]`` (torch, transformers). Importing this package does not import
torch; the modules that need it import it when called and fail with a clear message otherwise.

Modules, one job each:

- :mod:`~bookend.validate.architectures`: transformers configs from presets, config.json or objects
  (published dimensions, width shrink for CPU runs), random-weight models, offline.
- :mod:`~bookend.validate.jacobian`: Hutchinson estimate of the Jacobian-norm influence of every
  input position on the final position, averaged over seeds and inputs.
- :mod:`~bookend.validate.rope`: switch rotary position embeddings off (identity rotation).
- :mod:`~bookend.validate.attn_share`: per-layer attention share ``E[|a| / (|x| + |a|)]``.
- :mod:`~bookend.validate.fit`: fit ``(H, alpha)`` or the Poisson limit to a measured profile,
  and the comparison metrics. NumPy and SciPy only.
- :mod:`~bookend.validate.weights`: trained weights (Hugging Face directory or GGUF) and the
  bundled natural text.
- :mod:`~bookend.validate.probe`: the synthetic multi-document lookup generator (pure Python).
- :mod:`~bookend.validate.hard_probe`: harder lookup items (near-duplicates, distractors about the
  gold entity, 20-400-token documents) on which retrievers often miss (pure Python).
- :mod:`~bookend.validate.calibrate`: score the probe with a model, per-slot profile.
- :mod:`~bookend.validate.runner`: the ``validate`` measurement end to end, as a JSON-ready report.
- :mod:`~bookend.validate.plot`: the PNG figures.
- :mod:`~bookend.validate.cli`: the ``validate`` and ``calibrate`` subcommands.
"""
