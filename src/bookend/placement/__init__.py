"""Placement: the prompt order of chunks that gives the most relevant text the most influence.

Every optimiser takes a :class:`~bookend.placement.problem.Problem` (relevance, the chunks'
weigher, source groups, the objective) and returns an order:

- :mod:`~bookend.placement.sorted_assignment`: rank the slots, sort the chunks into them (the
  default path: exact whenever every chunk has one length in the weigher's frame);
- :mod:`~bookend.placement.mass_path`: the relevance order with the best final chunk (exact for
  the ``mass`` rule on a density that does not rise);
- :mod:`~bookend.placement.exact`: the exact subset programme, ``O(2^K · K)``;
- :mod:`~bookend.placement.rotated_ends`: an order with the best choice of final chunk;
- :mod:`~bookend.placement.local_search`: swap and insertion moves from several starts;
- :mod:`~bookend.placement.competing`: competing chunks, Dinkelbach's method over the linear
  placement.

:mod:`~bookend.placement.linear` says which optimiser solves which problem,
:mod:`~bookend.placement.strategies` names the strategies (``bookend`` and the fixed patterns of
:mod:`~bookend.placement.orders`), :mod:`~bookend.placement.groups` keeps source groups in order,
:mod:`~bookend.placement.selection` applies ``top_k`` and the budget first, and
:mod:`~bookend.placement.result` holds the :class:`~bookend.Placement` a caller gets back.

A new optimiser is a module here with a function ``(problem) -> order``, and a line in
:func:`bookend.placement.linear.optimiser_for` that says when it applies.
"""
