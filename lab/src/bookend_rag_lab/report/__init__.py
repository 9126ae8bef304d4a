"""Reports of the lab's experiments: JSON, Markdown, terminal summaries and PNG figures.

- :mod:`~bookend_rag_lab.report.evaluation`: the versioned ``bookend eval`` report, its Markdown
  tables and the files written.
- :mod:`~bookend_rag_lab.report.tuning`: the ``bookend tune`` report and the tuned config with its
  provenance.
- :mod:`~bookend_rag_lab.report.calibration`: the ``bookend calibrate`` report and its terminal
  lines.
- :mod:`~bookend_rag_lab.report.influence`: the ``bookend validate`` terminal summary.
- :mod:`~bookend_rag_lab.report.source`: the sentence that says which items decided.
- :mod:`~bookend_rag_lab.report.cells`: the Markdown tables' cells.
- :mod:`~bookend_rag_lab.report.figures`: every PNG figure (through the one matplotlib entry point,
  :func:`bookend_rag.plot.pyplot`).
"""
