"""Placement: the prompt order of chunks that gives the most relevant text the most influence.

Every optimiser takes a :class:`~bookend_rag.placement.problem.Problem` (relevance, the chunks'
weigher, source groups, the objective) and returns an order:

- :mod:`~bookend_rag.placement.sorted_assignment`: rank the slots, sort the chunks into them (the
  default path: exact whenever every chunk has one length in the weigher's frame);
- :mod:`~bookend_rag.placement.mass_path`: the relevance order with the best final chunk (exact for
  the ``mass`` rule on a density that does not rise);
- :mod:`~bookend_rag.placement.exact`: the exact subset programme, ``O(2^K · K)``;
- :mod:`~bookend_rag.placement.rotated_ends`: an order with the best choice of final chunk;
- :mod:`~bookend_rag.placement.local_search`: swap and insertion moves from several starts;
- :mod:`~bookend_rag.placement.competing`: competing chunks, Dinkelbach's method over the linear
  placement.

:mod:`~bookend_rag.placement.linear` says which optimiser solves which problem,
:mod:`~bookend_rag.placement.strategies` holds the strategies, objects in one registry (``bookend``
and the fixed patterns), :mod:`~bookend_rag.placement.groups` keeps source groups in
order, :mod:`~bookend_rag.placement.selection` applies ``top_k`` and the budget first,
:mod:`~bookend_rag.placement.result` holds the :class:`~bookend_rag.Placement` a caller gets back,
and :mod:`~bookend_rag.placement.explanation` says what it did (``explain()``, the baselines).

A new optimiser is a module here with a function ``(problem) -> order``, and a line in
:func:`bookend_rag.placement.linear.optimiser_for` that says when it applies; a new strategy is a
:class:`~bookend_rag.placement.strategies.Strategy` registered in
:mod:`~bookend_rag.placement.strategies`.
"""
