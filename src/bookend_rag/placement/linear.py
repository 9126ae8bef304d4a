"""The linear objective's optimal order: which optimiser solves which problem.

Read top to bottom, the first that applies is used:

1. one chunk or none: nothing to order;
2. every chunk one length in the weigher's frame (the default ``slot`` rule whatever the
   lengths, equal lengths, a per-document profile), no groups: rank the slots, sort the chunks
   into them (:mod:`~bookend_rag.placement.sorted_assignment`), optimal by the rearrangement
   inequality;
3. a rule with ``mass_path`` (``mass``; ``slot`` took step 2) on a density that does not rise
   (every theory profile), no groups: the relevance order with the best final chunk
   (:mod:`~bookend_rag.placement.mass_path`), exact;
4. at most ``exact_max_k`` chunks: the exact subset programme (:mod:`~bookend_rag.placement.exact`);
5. otherwise local search from several starts (:mod:`~bookend_rag.placement.local_search`):
   exact where the density falls to the final token, a local optimum with no bound on its gap
   where the density rises again.
"""

from __future__ import annotations

import numpy as np

from bookend_rag.arrays import IntArray
from bookend_rag.placement.exact import exact_order
from bookend_rag.placement.local_search import local_search_order
from bookend_rag.placement.mass_path import mass_path_applies, mass_path_order
from bookend_rag.placement.problem import Optimiser, Problem
from bookend_rag.placement.sorted_assignment import sorted_assignment

__all__ = ["linear_order", "optimiser_for"]


def linear_order(problem: Problem) -> IntArray:
    """The order maximising ``sum_p r[o_p] · w_p`` (exact except on step 5 of the docstring, where
    the density rises again)."""
    return optimiser_for(problem)(problem)


def optimiser_for(problem: Problem) -> Optimiser:
    """The optimiser :func:`linear_order` uses for ``problem`` (the module docstring's table)."""
    if problem.size <= 1:
        return _input_order
    if problem.groups is None and problem.weigher.equal_lengths:
        return sorted_assignment
    if mass_path_applies(problem):
        return mass_path_order
    if problem.size <= problem.exact_max_k:
        return exact_order
    return local_search_order


def _input_order(problem: Problem) -> IntArray:
    return np.arange(problem.size, dtype=np.int64)
