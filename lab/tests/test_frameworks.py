"""The framework orders come from the real classes and follow their documented patterns.

LangChain's and LlamaIndex's ``LongContextReorder`` alternate from the least relevant document
inwards, so the best document lands first for odd K and last for even K; Haystack's
``LostInTheMiddleRanker`` puts the best first, the second last, and so on inwards, for every K.
"""

from collections.abc import Callable

import pytest

from bookend_rag_lab.frameworks import haystack_order, langchain_order, llama_index_order


def descending(k: int) -> list[float]:
    return [1.0 - i / k for i in range(k)]


def alternating_from_the_tail(k: int) -> list[int]:
    """The documented LangChain / LlamaIndex pattern for a list in relevance order."""
    out: list[int] = []
    for i, rank in enumerate(reversed(range(k))):
        if i % 2 == 0:
            out.insert(0, rank)
        else:
            out.append(rank)
    return out


@pytest.mark.parametrize("k", [3, 4, 5, 6, 9, 10])
@pytest.mark.parametrize("order", [langchain_order, llama_index_order])
def test_long_context_reorder_parity_flip(
    order: Callable[[list[float]], list[int]], k: int
) -> None:
    got = order(descending(k))
    assert got == alternating_from_the_tail(k)
    assert got.index(0) == (0 if k % 2 else k - 1)


@pytest.mark.parametrize("k", [3, 4, 5, 6, 9, 10])
def test_haystack_best_first_second_last(k: int) -> None:
    got = haystack_order(descending(k))
    assert got == list(range(0, k, 2)) + list(range(1, k, 2))[::-1]


def test_examples_from_the_patterns() -> None:
    assert langchain_order(descending(5)) == [0, 2, 4, 3, 1]
    assert langchain_order(descending(6)) == [1, 3, 5, 4, 2, 0]
    assert haystack_order(descending(6)) == [0, 2, 4, 5, 3, 1]


def test_llama_index_sorts_by_score_langchain_does_not() -> None:
    scores = [0.1, 0.9, 0.5]  # the list is not in relevance order
    assert llama_index_order(scores) == [1, 0, 2]
    assert langchain_order(scores) == [0, 2, 1]
