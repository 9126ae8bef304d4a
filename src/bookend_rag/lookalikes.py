"""Look-alike chunks: near-duplicates found by the Jaccard similarity of word shingles.

A chunk's shingles are its word n-grams (lower-cased runs of word characters, ``n = 3`` by
default; a chunk of fewer than ``n`` words is one shingle). For chunks ``a`` and ``b`` with
shingle sets ``S(a)``, ``S(b)``:

    J(a, b) = |S(a) ∩ S(b)| / |S(a) ∪ S(b)|,    |S(a) ∪ S(b)| = |S(a)| + |S(b)| - |S(a) ∩ S(b)|

Every intersection comes from one sparse product ``X Xᵀ`` of the chunk-by-shingle incidence
matrix ``X`` (``scipy.sparse``), so K chunks cost one pass over their shingles plus the product,
not K² set operations in Python. The product stays sparse: it holds only the pairs of chunks that
share a shingle, so memory follows those pairs, not K². Their number is bounded before the product
(the sum over shingles of the squared count of chunks holding it); above :data:`MAX_SHARED_PAIRS`
:func:`lookalike_groups` refuses with one line instead of running out of memory. Chunks with
``J >= threshold`` are linked; look-alike groups are the connected components of those links
(``scipy.sparse.csgraph``). :func:`jaccard_matrix`, the dense table, refuses above
:data:`MAX_DENSE_CHUNKS` chunks.

The default ``threshold = 0.5`` was set on the calibration split of the hard items (200 items,
K = 10): it links all 400 planted near-duplicates to their gold document and one of the 1,400
other documents (0.6: 390 and 1; 0.4: 400 and 3).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from bookend_rag.arrays import FloatArray

if TYPE_CHECKING:
    from scipy import sparse

__all__ = [
    "DEFAULT_LOOKALIKE_THRESHOLD",
    "MAX_DENSE_CHUNKS",
    "MAX_SHARED_PAIRS",
    "jaccard_matrix",
    "lookalike_groups",
    "shingles",
]

#: Jaccard similarity at and above which two chunks are look-alikes (see the module docstring).
DEFAULT_LOOKALIKE_THRESHOLD = 0.5

#: Most shingle matches :func:`lookalike_groups` takes on (the sum over shingles of the squared
#: number of chunks holding it: the work of the sparse product, which bounds its size), so the
#: product stays within a few hundred MB. Distinct chunks share few shingles (100,000 passages of
#: 30 random words take 2.8 million, each chunk matching itself); boilerplate shared by every
#: chunk does not.
MAX_SHARED_PAIRS = 20_000_000

#: Most chunks :func:`jaccard_matrix` tabulates (its dense K x K table then takes 800 MB).
MAX_DENSE_CHUNKS = 10_000

_WORD = re.compile(r"\w+")


def _check(texts: Sequence[str], n: int) -> None:
    if isinstance(texts, str | bytes) or not all(isinstance(t, str) for t in texts):
        raise TypeError("texts must be a sequence of strings")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got n={n!r}")


def shingles(text: str, n: int = 3) -> frozenset[tuple[str, ...]]:
    """The word n-grams of ``text`` (see the module docstring); empty for a text without words."""
    words = _WORD.findall(text.lower())
    if len(words) <= n:
        return frozenset([tuple(words)]) if words else frozenset()
    return frozenset(tuple(words[i : i + n]) for i in range(len(words) - n + 1))


def jaccard_matrix(texts: Sequence[str], n: int = 3) -> FloatArray:
    """``out[a, b] = J(a, b)``, with ``J = 0`` where both chunks have no words and ``J(a, a) = 1``.

    Raises:
        TypeError: when ``texts`` is not a sequence of strings.
        ValueError: when ``n`` is not a positive integer.
    """
    _check(texts, n)
    if len(texts) > MAX_DENSE_CHUNKS:
        raise ValueError(
            f"jaccard_matrix tabulates K x K similarities: K={len(texts)} is over "
            f"{MAX_DENSE_CHUNKS:,} (lookalike_groups compares only chunks that share a shingle)"
        )
    incidence = _incidence(texts, n)
    shared = np.asarray((incidence @ incidence.T).todense(), dtype=np.float64)
    sizes = np.diag(shared).copy()
    union = sizes[:, None] + sizes[None, :] - shared
    out = np.divide(shared, union, out=np.zeros_like(shared), where=union > 0)
    np.fill_diagonal(out, 1.0)
    return out


def _incidence(texts: Sequence[str], n: int) -> sparse.csr_matrix:
    """The chunk-by-shingle incidence matrix ``X`` (one row per text, ones where it holds a
    shingle)."""
    # Imported here, not at the top: scipy.sparse is most of `import bookend_rag`'s time, and only
    # drop_lookalikes (off by default) needs it.
    from scipy import sparse

    vocabulary: dict[tuple[str, ...], int] = {}
    rows: list[int] = []
    cols: list[int] = []
    for row, text in enumerate(texts):
        for gram in shingles(text, n):
            rows.append(row)
            cols.append(vocabulary.setdefault(gram, len(vocabulary)))
    return sparse.csr_matrix(
        (np.ones(len(rows)), (rows, cols)), shape=(len(texts), max(len(vocabulary), 1))
    )


def lookalike_groups(
    texts: Sequence[str], *, threshold: float = DEFAULT_LOOKALIKE_THRESHOLD, n: int = 3
) -> tuple[int, ...]:
    """Each chunk's look-alike group, named by the index of its first member in ``texts``; a
    chunk with no look-alike is its own group.

    Raises:
        TypeError: when ``texts`` is not a sequence of strings.
        ValueError: when ``threshold`` is not in (0, 1] or ``n`` is not a positive integer.
    """
    if not isinstance(threshold, int | float) or not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must be in (0, 1], got threshold={threshold!r}")
    _check(texts, n)
    if not len(texts):
        return ()
    incidence = _incidence(texts, n)
    holders = np.diff(incidence.tocsc().indptr).astype(np.float64)  # chunks per shingle
    pairs = float(holders @ holders)
    if pairs > MAX_SHARED_PAIRS:
        raise ValueError(
            f"drop_lookalikes at K={len(texts)}: comparing the chunks that share shingles takes "
            f"{pairs:,.0f} shingle matches, over the {MAX_SHARED_PAIRS:,} allowed; drop "
            "look-alikes among fewer chunks (for example the top few hundred) before placing"
        )
    from scipy import sparse
    from scipy.sparse.csgraph import connected_components

    shared = (incidence @ incidence.T).tocoo()
    sizes = np.asarray(incidence.sum(axis=1), dtype=np.float64).ravel()
    union = sizes[shared.row] + sizes[shared.col] - shared.data
    linked = shared.data / union >= threshold  # J as jaccard_matrix computes it
    links = sparse.csr_matrix(
        (np.ones(int(linked.sum())), (shared.row[linked], shared.col[linked])),
        shape=(len(texts), len(texts)),
    )
    _, labels = connected_components(links, directed=False)
    first: dict[int, int] = {}
    return tuple(first.setdefault(int(label), i) for i, label in enumerate(labels))
