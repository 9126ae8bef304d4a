"""How far the heuristic (local search from several starts, placement beyond ``exact_max_k``) falls
short of the exact programme, on random problems small enough for the exact one (K = 5 to 11).

Per profile shape: a theory profile (its density falls to the final token), a measured U (it rises
again) and a table that falls but for its final bin (which spans a fifth of the tokens). Lengths of
1 to 500 tokens, relevance uniform on [0, 1], each weight rule that weighs lengths, with and
without a prompt around the chunks. Usage: ``python bench/heuristic_gap.py [--problems N]``.
"""

from __future__ import annotations

import argparse

import numpy as np

from bookend_rag import InfluenceProfile, Layout, ModelSpec, TabulatedProfile, TheoryProfile
from bookend_rag.placement.exact import exact_order
from bookend_rag.placement.problem import Problem
from bookend_rag.placement.strategies import optimal_order

SHAPES: dict[str, InfluenceProfile] = {
    "theory (llama-3.1-8b)": TheoryProfile(ModelSpec.preset("llama-3.1-8b")),
    "measured U": TabulatedProfile(weights=(9.0, 2.0, 1.0, 0.5, 0.4, 0.6, 1.5, 4.0)),
    "rising final bin": TabulatedProfile(weights=(4.0, 3.0, 2.0, 1.0, 8.0)),
}
RULES = ("mass", "anchored", "density")
LAYOUTS = (Layout(suffix_tokens=0), Layout(prefix_tokens=120, suffix_tokens=40))


def shortfalls(profile: InfluenceProfile, problems: int, seed: int) -> np.ndarray:
    """Per random problem, ``1 - heuristic / exact`` of the linear objective."""
    rng = np.random.default_rng(seed)
    gaps = np.empty(problems)
    for i in range(problems):
        k = int(rng.integers(5, 12))
        relevance, lengths = rng.random(k), rng.integers(1, 501, k).astype(float)
        rule, layout = RULES[i % len(RULES)], LAYOUTS[(i // len(RULES)) % len(LAYOUTS)]
        problem = Problem.build(relevance, lengths, profile, layout, rule=rule, exact_max_k=0)
        exact = float(problem.objective(exact_order(problem)))
        gaps[i] = 1.0 - float(problem.objective(optimal_order(problem))) / exact
    return gaps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", type=int, default=2000, help="per profile shape")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"{args.problems} random problems per shape, K = 5 to 11, rules {', '.join(RULES)}")
    print(f"{'profile':<24}{'worst':>8}{'mean':>9}{'short by > 0.1%':>17}")
    for name, profile in SHAPES.items():
        gaps = shortfalls(profile, args.problems, args.seed)
        print(f"{name:<24}{gaps.max():>8.2%}{gaps.mean():>9.3%}{np.mean(gaps > 1e-3):>17.1%}")


if __name__ == "__main__":
    main()
