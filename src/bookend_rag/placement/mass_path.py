"""The exact mass path: under a rule whose weights are span mass over a divisor every chunk shares
(``mass``: :attr:`WeightRule.mass_path <bookend_rag.weighing.WeightRule.mass_path>`), with a
density that does not rise before the final token (every theory profile:
:attr:`~bookend_rag.InfluenceProfile.density_falls_to_final_token`), the relevance order with the
best final chunk is optimal.

Exchange argument: swapping neighbours ``a, b`` at offset ``s`` changes the objective by
``(r_a - r_b) · (M(s, s + l_a) + M(s, s + l_b) - M(s, s + l_a + l_b))``, with ``M`` the mass of a
span, which is ``>= 0`` when the density does not rise; so apart from the final slot (which holds
the point masses) chunks go in relevance order, and only the final chunk is left to choose.
"""

from __future__ import annotations

from bookend_rag.arrays import IntArray
from bookend_rag.placement.orders import rank_order
from bookend_rag.placement.problem import Problem
from bookend_rag.placement.rotated_ends import best_rotation

__all__ = ["mass_path_applies", "mass_path_order"]


def mass_path_applies(problem: Problem) -> bool:
    """Whether :func:`mass_path_order` is exact for ``problem`` (module docstring)."""
    weigher = problem.weigher
    # A table's rising final bin spans many tokens: there the relevance order fell up to 17% short
    # of the optimum.
    return (
        problem.groups is None
        and weigher.rule.mass_path
        and weigher.profile.density_falls_to_final_token
    )


def mass_path_order(problem: Problem) -> IntArray:
    """The relevance order with the best final chunk."""
    return best_rotation(problem, rank_order(problem.relevance))
