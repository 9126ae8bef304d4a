"""The influence validator's measurement: Jacobian-norm influence of every position on the last.

- :mod:`~bookend_rag_lab.influence.architectures`: transformers configs from presets, config.json or
  objects (published dimensions, width shrink for CPU runs), random-weight models, offline.
- :mod:`~bookend_rag_lab.influence.jacobian`: Hutchinson estimate of the influence of every input
  position on the final position, averaged over seeds and inputs.
- :mod:`~bookend_rag_lab.influence.attn_share`: per-layer attention share ``E[|a| / (|x| + |a|)]``.
- :mod:`~bookend_rag_lab.influence.rope`: switch rotary position embeddings off (identity rotation).
- :mod:`~bookend_rag_lab.influence.hooks`: the context manager base of the hooked measurements.
- :mod:`~bookend_rag_lab.influence.text`: the bundled natural text and token windows from it.
- :mod:`~bookend_rag_lab.influence.runner`: measure (Step 0 or trained weights) and report.

"Probe" here means a Hutchinson probe: a random sign vector whose backward pass estimates a
Jacobian norm.
"""
