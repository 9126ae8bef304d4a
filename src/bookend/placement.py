"""Placement: the prompt order of chunks that gives the most relevant text the most influence.

The objective of an order is ``sum_p r[o_p] · w_p``: the relevance of the chunk in position ``p``
times the weight of its span under a weight rule (:mod:`bookend.weighing`).

* Equal lengths, and the ``slot`` rule (the default) whatever the lengths: the slot weights are
  fixed, so sorting chunks by relevance into slots sorted by weight is optimal (rearrangement
  inequality).
* The ``mass`` rule on a profile whose density does not rise before the final token
  (every theory profile): the relevance order with one chunk moved to the end is optimal (exchange
  argument, :mod:`bookend.weighing`), so the ``K`` such orders are compared directly (above
  ``K = 64``, only the likeliest chunks are tried at the end).
* Otherwise, unequal lengths: a chunk's weight depends only on the total length placed before it,
  so a dynamic programme over subsets is exact in ``O(2^K · K)``; it is used up to ``exact_max_k``
  chunks. Beyond, a local search with swap and insertion moves runs from several starts (relevance
  per divisor, ``r / l`` or ``r / lbar``, with each likely chunk at the end; the sorted assignment
  into equal-length slot weights; the alternate and relevance orders) and keeps the best, so it is
  never worse than any of them.
* Competing chunks (``competition=c``, off by default): the model draws its answer from the chunks
  in proportion to weight times pull, and chunk ``i`` holds the answer with probability
  ``pi_i = r_i / sum(r)``; its pull is ``pi_i + c`` (an irrelevant chunk still pulls ``c``). The
  order maximises the expected share of the answer drawn from the right chunk,
  ``J(o) = sum_p pi[o_p] (pi[o_p] + c) w_p / sum_p (pi[o_p] + c) w_p``, by Dinkelbach's method:
  place by the linear objective with relevance ``(pi + c)(pi - J)`` and repeat from the new ``J``
  until it stops rising. Chunks likelier than ``J`` go to heavy slots; plausible chunks below it
  (near-duplicates, distractors) to light ones. Exact when each linear step is (rules ``slot`` and
  ``mass``, whose total weight no order changes); ``c`` large gives the linear objective's order.
* Source groups (chunks that must keep their original relative order) are precedence constraints:
  exact in the dynamic programme, kept by every move of the local search; the fixed patterns
  (``alternate``, ``relevance``) give each group's positions to its members in input order.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from functools import lru_cache
from typing import Literal, TypeAlias

import numpy as np
import numpy.typing as npt

from bookend.arrays import FloatArray
from bookend.layout import Layout
from bookend.profile import InfluenceProfile
from bookend.weighing import DEFAULT_WEIGHT_RULE, ChunkWeigher, WeightRule

__all__ = [
    "STRATEGIES",
    "Strategy",
    "alternate_order",
    "answer_shares",
    "competing_order",
    "exact_order",
    "local_search",
    "objective",
    "optimal_order",
    "rank_order",
    "strategy_order",
]

IntArray: TypeAlias = npt.NDArray[np.int64]
Strategy: TypeAlias = Literal["bookend", "alternate", "relevance"]
STRATEGIES: tuple[Strategy, ...] = ("bookend", "alternate", "relevance")

# Full swap-and-insert neighbourhoods are evaluated up to this many chunks; above it only
# adjacent swaps, which cost O(K) per pass.
FULL_NEIGHBOURHOOD_MAX_K = 32
_MAX_ROUNDS = 200
# Above twice this many chunks, starts try only the likeliest chunks at the end.
END_CANDIDATES = 32
# Relative tolerance under which two objective values count as equal: moves and starts are then
# chosen by their fixed enumeration order, so rounding noise (a rescaled score) cannot flip them.
_TIE = 1e-10
# Dinkelbach's method converges superlinearly; a handful of steps reach the fixed point.
_DINKELBACH_STEPS = 20


def objective(
    order: Sequence[int] | IntArray,
    relevance: FloatArray,
    lengths: FloatArray,
    profile: InfluenceProfile,
    layout: Layout | None = None,
    rule: WeightRule = DEFAULT_WEIGHT_RULE,
) -> float:
    """``sum_p relevance[order[p]] · w_p`` with ``w`` the weights of ``lengths[order]`` under
    ``rule`` (chunks laid end to end in ``layout``)."""
    return ChunkWeigher.build(profile, lengths, layout, rule).objective(order, relevance)


def rank_order(relevance: FloatArray) -> IntArray:
    """Indices by relevance, highest first; ties keep input order."""
    ranked = np.argsort(-np.asarray(relevance, dtype=np.float64), kind="stable")
    return ranked.astype(np.int64, copy=False)


def alternate_order(relevance: FloatArray) -> IntArray:
    """The classic lost-in-the-middle pattern, stable in the parity of K.

    Best first, second best last, third second, fourth second to last, and so on inwards.
    """
    ranked = rank_order(relevance)
    return np.concatenate((ranked[0::2], ranked[1::2][::-1]))


def _first_best(values: FloatArray) -> int:
    """Index of the first value within :data:`_TIE` (relative) of the maximum."""
    top = float(values.max())
    return int(np.argmax(values >= top - _TIE * max(abs(top), 1e-300)))


def _sorted_assignment(relevance: FloatArray, slot_ranking: IntArray) -> IntArray:
    """Most relevant chunk into the heaviest slot, and so on (ties: earlier slot, earlier chunk).

    ``slot_ranking`` lists the slots by weight, heaviest first (see :func:`_slot_ranking`).
    """
    order = np.empty(relevance.size, dtype=np.int64)
    order[slot_ranking] = rank_order(relevance)
    return order


@lru_cache(maxsize=512)
def _equal_slot_ranking(
    profile: InfluenceProfile, prefix: float, total: float, k: int, length: float
) -> IntArray:
    """Slots of ``k`` chunks of one ``length`` from ``prefix`` in a sequence of ``total``, heaviest
    first (ties keep the earlier slot). Keyed on what repeats between calls."""
    lengths = np.full(k, length)
    # With equal lengths every weight rule gives the mean density.
    weigher = ChunkWeigher(profile, "density", lengths, prefix, total, lengths, None)
    weights = weigher.weights_of_orders(np.arange(k))
    ranking = np.argsort(-weights, kind="stable").astype(np.int64, copy=False)
    ranking.flags.writeable = False
    return ranking


def _slot_ranking(weigher: ChunkWeigher) -> IntArray:
    """:func:`_equal_slot_ranking` for a weigher whose chunks all have one length."""
    k = weigher.lengths.size
    return _equal_slot_ranking(
        weigher.profile, weigher.prefix, weigher.total, k, float(weigher.lengths[0])
    )


def _group_ranks(groups: Sequence[Hashable | None] | None, k: int) -> IntArray | None:
    """Per chunk, a group id (or -1 for no constraint); ``None`` when nothing is constrained."""
    if groups is None or all(g is None for g in groups):
        return None
    if len(groups) != k:
        raise ValueError(f"groups must have one key per chunk ({k}), got {len(groups)} keys")
    ids: dict[Hashable, int] = {}
    out = np.full(k, -1, dtype=np.int64)
    for i, g in enumerate(groups):
        if g is not None:
            out[i] = ids.setdefault(g, len(ids))
    return out


@lru_cache(maxsize=32)
def _subsets_by_size(k: int) -> tuple[IntArray, ...]:
    """The bit masks of the subsets of ``k`` chunks with 1, 2, ..., ``k`` members."""
    subsets = np.arange(1 << k)
    popcount = np.zeros(1 << k, dtype=np.int64)
    for j in range(k):
        popcount += (subsets >> j) & 1
    return tuple(subsets[popcount == size] for size in range(1, k + 1))


def exact_order(
    relevance: FloatArray,
    weigher: ChunkWeigher,
    groups: Sequence[Hashable | None] | None = None,
) -> IntArray:
    """The optimal order by dynamic programming over subsets, ``O(2^K · K)``.

    ``dp[T] = max_{j in T} dp[T - j] + r_j · w_j(end of T - j, end of T)``: the best value of
    placing the set ``T`` first, since a chunk's span, and so its weight under every rule, depends
    only on the total length before it. Chunks of one group enter only after their predecessors
    in that group.
    """
    k = relevance.size
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    lengths = weigher.lengths
    subsets = np.arange(1 << k)
    sums = np.zeros(1 << k)
    for j in range(k):
        sums += ((subsets >> j) & 1) * lengths[j]
    continuous, point = weigher.parts(weigher.prefix + sums)
    pred = np.zeros(k, dtype=np.int64)
    group_id = _group_ranks(groups, k)
    if group_id is not None:
        for j in range(k):
            if group_id[j] >= 0:
                earlier = np.flatnonzero(group_id[:j] == group_id[j])
                pred[j] = int(np.sum(1 << earlier)) if earlier.size else 0
    per_continuous, per_point = weigher.unit_weights(np.arange(k))
    gain = relevance * per_continuous
    point_gain = None if point is None or per_point is None else relevance * per_point
    dp = np.full(1 << k, -np.inf)
    dp[0] = 0.0
    choice = np.full(1 << k, -1, dtype=np.int64)
    for targets in _subsets_by_size(k):
        best = np.full(targets.size, -np.inf)
        arg = np.full(targets.size, -1, dtype=np.int64)
        for j in range(k):
            before = targets ^ (1 << j)
            valid = ((targets >> j) & 1).astype(bool) & ((before & pred[j]) == pred[j])
            value = gain[j] * (continuous[targets] - continuous[before])
            if point_gain is not None and point is not None:
                value = value + point_gain[j] * (point[targets] - point[before])
            cand = np.where(valid, dp[before] + value, -np.inf)
            better = cand > best
            best = np.where(better, cand, best)
            arg = np.where(better, j, arg)
        dp[targets] = best
        choice[targets] = arg
    order = np.empty(k, dtype=np.int64)
    state = (1 << k) - 1
    for pos in range(k - 1, -1, -1):
        j = int(choice[state])
        order[pos] = j
        state ^= 1 << j
    return order


def _respects_groups(orders: IntArray, group_id: IntArray) -> npt.NDArray[np.bool_]:
    """Whether each row keeps every group's chunks in increasing input order."""
    ok = np.ones(orders.shape[0], dtype=bool)
    for g in np.unique(group_id[group_id >= 0]):
        members = group_id[orders] == g  # (M, K)
        seq = np.where(members, orders, -1)
        # Within a row, the members' indices read left to right must increase.
        running = np.maximum.accumulate(seq, axis=1)
        ok &= np.all(~members | (seq >= running), axis=1)
    return ok


@lru_cache(maxsize=64)
def _move_templates(k: int) -> IntArray:
    """Position permutations of every pairwise swap and every insertion move on ``k`` slots.

    Row ``m`` maps new positions to old ones, so ``order[templates]`` lists all neighbours.
    """
    identity = np.arange(k)
    i, j = np.triu_indices(k, 1)
    swaps = np.tile(identity, (i.size, 1))
    swaps[np.arange(i.size), i] = j
    swaps[np.arange(i.size), j] = i
    # Moving the chunk at src to dst (dst == src - 1 would repeat an adjacent swap).
    src, dst = np.meshgrid(identity, identity, indexing="ij")
    keep = (dst != src) & (dst != src - 1)
    src, dst = src[keep], dst[keep]
    pos = identity[None, :]
    lo, hi = np.minimum(src, dst)[:, None], np.maximum(src, dst)[:, None]
    shift = np.where(dst[:, None] > src[:, None], 1, -1)
    inserts = np.where((pos >= lo) & (pos <= hi), pos + shift, pos)
    inserts[np.arange(src.size), dst] = src
    templates = np.vstack((swaps, inserts)).astype(np.int64)
    templates.flags.writeable = False
    return templates


def _neighbourhood(order: IntArray) -> IntArray:
    """Every order one swap or one insertion away from ``order``."""
    return order[_move_templates(order.size)]


def _adjacent_swap_passes(
    order: IntArray, relevance: FloatArray, weigher: ChunkWeigher, group_id: IntArray | None
) -> IntArray:
    """Odd-even transposition: apply every improving adjacent swap, alternating parities."""
    cur = order.copy()
    lengths = weigher.lengths
    scale = max(float(np.abs(relevance).max(initial=0.0)), 1e-300)
    idle = 0
    for sweep in range(2 * cur.size + 2):
        left = np.arange(sweep % 2, cur.size - 1, 2)
        if left.size == 0:
            break
        edges = weigher.prefix + np.concatenate(([0.0], np.cumsum(lengths[cur])))
        a, b = cur[left], cur[left + 1]
        e0, e1, e2 = edges[left], edges[left + 1], edges[left + 2]
        mid = e0 + lengths[b]
        pair = np.concatenate((a, b, b, a))
        w = weigher.span_weights(
            pair, np.concatenate((e0, e1, e0, mid)), np.concatenate((e1, e2, mid, e2))
        ).reshape(4, -1)
        old = relevance[a] * w[0] + relevance[b] * w[1]
        new = relevance[b] * w[2] + relevance[a] * w[3]
        improve = new - old > _TIE * scale
        if group_id is not None:
            ga, gb = group_id[a], group_id[b]
            improve &= (ga < 0) | (ga != gb)
        if np.any(improve):
            sel = left[improve]
            cur[sel], cur[sel + 1] = cur[sel + 1].copy(), cur[sel].copy()
            idle = 0
        else:
            idle += 1
            if idle >= 2:
                break
    return cur


def local_search(
    start: IntArray,
    relevance: FloatArray,
    weigher: ChunkWeigher,
    groups: Sequence[Hashable | None] | None = None,
) -> IntArray:
    """Improve ``start`` by swap and insertion moves until no move improves the objective.

    Up to :data:`FULL_NEIGHBOURHOOD_MAX_K` chunks every pairwise swap and every insertion is
    evaluated (best improvement first); above it, odd-even adjacent-swap passes. Moves that would
    reorder chunks of one group are never taken. The result is never worse than ``start``.
    """
    group_id = _group_ranks(groups, start.size)
    cur = _adjacent_swap_passes(start, relevance, weigher, group_id)
    if cur.size > FULL_NEIGHBOURHOOD_MAX_K or cur.size < 3:
        return cur
    cur_val = weigher.objective(cur, relevance)
    scale = max(float(np.abs(relevance).max(initial=0.0)), 1e-300) * weigher.lengths.size
    for _ in range(_MAX_ROUNDS):
        cands = _neighbourhood(cur)
        if group_id is not None:
            cands = cands[_respects_groups(cands, group_id)]
            if cands.shape[0] == 0:
                break
        values = weigher.objectives(cands, relevance)
        best = _first_best(values)
        if values[best] <= cur_val + _TIE * scale:
            break
        cur, cur_val = cands[best], float(values[best])
    return cur


def _repair_groups(order: IntArray, group_id: IntArray | None) -> IntArray:
    """Reassign each group's positions to its members in input order."""
    if group_id is None:
        return order
    out = order.copy()
    for g in np.unique(group_id[group_id >= 0]):
        pos = np.flatnonzero(group_id[order] == g)
        out[pos] = np.sort(order[pos])
    return out


def _end_candidates(relevance: FloatArray, weigher: ChunkWeigher) -> IntArray:
    """Chunks worth trying in the final slot: all of them up to ``2·END_CANDIDATES``; beyond, the
    ``END_CANDIDATES / 4`` best by relevance, by relevance per divisor, by relevance times length
    and by length (the final slot holds the point masses and, under ``mass``, rewards long
    chunks)."""
    k = relevance.size
    if k <= 2 * END_CANDIDATES:
        return np.arange(k, dtype=np.int64)
    lengths = weigher.lengths
    keys = (relevance, relevance / weigher.continuous_divisor, relevance * lengths, lengths)
    best = [np.argsort(-key, kind="stable")[: END_CANDIDATES // 4] for key in keys]
    return np.unique(np.concatenate(best)).astype(np.int64)


def _ends_rotated(base: IntArray, ends: IntArray) -> IntArray:
    """One order per chunk in ``ends``: ``base`` without that chunk, then the chunk."""
    k = base.size
    keep = base[None, :] != ends[:, None]
    rest = base[None, :].repeat(ends.size, axis=0)[keep].reshape(ends.size, k - 1)
    return np.concatenate((rest, ends[:, None]), axis=1).astype(np.int64, copy=False)


def _ratio_starts(relevance: FloatArray, weigher: ChunkWeigher) -> IntArray:
    """Relevance per divisor (Smith's rule ``r / l`` for the density rules, the relevance order
    for ``mass``) with each likely chunk moved to the end: one order per row.

    Exchange argument: where the density is locally linear and decreasing, ``a`` before ``b``
    gains ``d · (r_a l_b - r_b l_a)`` under mean density, so chunks go in decreasing ``r / l``;
    under ``mass`` they go in decreasing ``r``. The final slot also holds the point masses, so
    the end is tried with every likely chunk.
    """
    by_ratio = np.argsort(-relevance / weigher.continuous_divisor, kind="stable").astype(np.int64)
    return _ends_rotated(by_ratio, _end_candidates(relevance, weigher))


def optimal_order(
    relevance: FloatArray,
    lengths: FloatArray,
    profile: InfluenceProfile,
    layout: Layout | None = None,
    *,
    rule: WeightRule = DEFAULT_WEIGHT_RULE,
    exact_max_k: int = 12,
    groups: Sequence[Hashable | None] | None = None,
    fixed: tuple[float, float] = (0.0, 0.0),
    competition: float | None = None,
) -> IntArray:
    """The order maximising the objective (exact where the docstring of this module says).

    Args:
        relevance: per chunk, higher is better.
        lengths: per chunk token counts (> 0).
        profile: the influence profile.
        layout: tokens before and after the chunks.
        rule: how a span's mass becomes a chunk's weight (:mod:`bookend.weighing`).
        exact_max_k: largest K solved by the exact dynamic programme when lengths differ.
        groups: per chunk a hashable group key or ``None``; chunks with one key keep their
            relative input order.
        fixed: token lengths of a chunk fixed before and after these ones (a repeated top chunk).
        competition: ``None`` for the linear objective, else the pull ``c >= 0`` of an irrelevant
            chunk: maximise the expected answer share (module docstring).
    """
    weigher = ChunkWeigher.build(profile, lengths, layout, rule, fixed=fixed)
    if competition is not None:
        return competing_order(relevance, weigher, competition, exact_max_k, groups)
    return _optimal(relevance, weigher, exact_max_k, groups)


def _answer_probabilities(relevance: FloatArray) -> FloatArray:
    total = float(relevance.sum())
    if total <= 0:
        return np.full(relevance.size, 1.0 / relevance.size)
    return np.asarray(relevance / total, dtype=np.float64)


def answer_shares(
    orders: npt.ArrayLike, relevance: FloatArray, weigher: ChunkWeigher, competition: float
) -> FloatArray:
    """Per row of ``orders``, the expected share of the answer drawn from the right chunk:
    ``J(o) = sum_p pi[o_p] (pi[o_p] + c) w_p / sum_p (pi[o_p] + c) w_p`` with
    ``pi = relevance / sum(relevance)`` and ``c = competition``."""
    return _shares(
        np.asarray(orders, dtype=np.int64), _answer_probabilities(relevance), weigher, competition
    )


def _shares(idx: IntArray, pi: FloatArray, weigher: ChunkWeigher, competition: float) -> FloatArray:
    """:func:`answer_shares` with the answer probabilities ``pi`` already computed."""
    pull = (pi + competition)[idx] * weigher.weights_of_orders(idx)
    total = pull.sum(axis=-1)
    return np.asarray(
        np.divide((pi[idx] * pull).sum(axis=-1), total, out=np.zeros_like(total), where=total > 0),
        dtype=np.float64,
    )


def competing_order(
    relevance: FloatArray,
    weigher: ChunkWeigher,
    competition: float,
    exact_max_k: int = 12,
    groups: Sequence[Hashable | None] | None = None,
) -> IntArray:
    """The order maximising the expected answer share ``J`` (module docstring) by Dinkelbach's
    method, starting from the linear objective's order; never returns an order with a lower
    ``J`` than that start."""
    if not (isinstance(competition, int | float) and competition >= 0 and np.isfinite(competition)):
        raise ValueError(
            f"competition must be a finite number >= 0, got competition={competition!r}"
        )
    order = _optimal(relevance, weigher, exact_max_k, groups)
    if relevance.size <= 1:
        return order
    pi = _answer_probabilities(relevance)
    best = float(_shares(order, pi, weigher, competition))
    for _ in range(_DINKELBACH_STEPS):
        gain = (pi + competition) * (pi - best)
        # Shifted to be non-negative, as the structured paths assume; the rules this is exact
        # for give every order the same total weight, so the shift changes no decision.
        step = _optimal(np.round(gain - gain.min(), 12), weigher, exact_max_k, groups)
        value = float(_shares(step, pi, weigher, competition))
        if value <= best * (1 + _TIE):
            break
        order, best = step, value
    return order


def _optimal(
    relevance: FloatArray,
    weigher: ChunkWeigher,
    exact_max_k: int,
    groups: Sequence[Hashable | None] | None,
) -> IntArray:
    k = relevance.size
    if k <= 1:
        return np.arange(k, dtype=np.int64)
    group_id = _group_ranks(groups, k)
    if weigher.equal_lengths and group_id is None:
        return _sorted_assignment(relevance, _slot_ranking(weigher))
    structured = weigher.profile.density_non_increasing and weigher.rule == "mass"
    if structured and group_id is None:
        # Exact: the relevance order with the best choice of final chunk (module docstring).
        ends = _ends_rotated(rank_order(relevance), _end_candidates(relevance, weigher))
        return np.asarray(ends[_first_best(weigher.objectives(ends, relevance))], dtype=np.int64)
    if k <= exact_max_k:
        return exact_order(relevance, weigher, groups)
    ratio = _ratio_starts(relevance, weigher)
    mean = float(weigher.lengths.mean())
    slots = _equal_slot_ranking(weigher.profile, weigher.prefix, weigher.total, k, mean)
    starts = np.vstack(
        (
            ratio[_first_best(weigher.objectives(ratio, relevance))],
            _sorted_assignment(relevance, slots),
            alternate_order(relevance),
            rank_order(relevance),
        )
    )
    starts = np.vstack([_repair_groups(s, group_id) for s in starts])
    values = weigher.objectives(starts, relevance)
    if weigher.profile.density_non_increasing or k > FULL_NEIGHBOURHOOD_MAX_K:
        return local_search(starts[_first_best(values)], relevance, weigher, groups)
    # A density that rises again (a measured U) has several local optima: search from every
    # start (on 300 random instances this reached the exact optimum where the best single start
    # missed by up to 3%).
    ends = np.vstack([local_search(s, relevance, weigher, groups) for s in starts])
    return np.asarray(ends[_first_best(weigher.objectives(ends, relevance))], dtype=np.int64)


def strategy_order(
    strategy: Strategy,
    relevance: FloatArray,
    lengths: FloatArray,
    profile: InfluenceProfile,
    layout: Layout | None = None,
    *,
    rule: WeightRule = DEFAULT_WEIGHT_RULE,
    exact_max_k: int = 12,
    groups: Sequence[Hashable | None] | None = None,
    fixed: tuple[float, float] = (0.0, 0.0),
    competition: float | None = None,
) -> IntArray:
    """The order a named strategy gives: ``bookend`` (optimal), ``alternate`` or ``relevance``.

    Every strategy keeps source ``groups`` in input order: the fixed patterns give each group's
    positions to its members in input order.
    """
    if strategy == "bookend":
        return optimal_order(
            relevance,
            lengths,
            profile,
            layout,
            rule=rule,
            exact_max_k=exact_max_k,
            groups=groups,
            fixed=fixed,
            competition=competition,
        )
    if strategy == "alternate":
        pattern = alternate_order(relevance)
    elif strategy == "relevance":
        pattern = rank_order(relevance)
    else:
        raise ValueError(f"strategy must be one of {STRATEGIES}, got strategy={strategy!r}")
    return _repair_groups(pattern, _group_ranks(groups, relevance.size))
