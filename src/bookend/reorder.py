"""The public one-call API: :func:`reorder`, and :class:`Bookend`, its reusable configured form."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Hashable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, Generic, TypeVar

import numpy as np

from bookend.placement import (
    STRATEGIES,
    IntArray,
    Strategy,
    rank_order,
    strategy_order,
)
from bookend.profile import InfluenceProfile, Layout, ModelLike, resolve_profile
from bookend.result import Placement
from bookend.theory import FloatArray
from bookend.tokens import TokenCounterLike, make_token_counter
from bookend.weighing import DEFAULT_WEIGHT_RULE, WeightRule, check_weight_rule

__all__ = [
    "DEFAULT_MODEL",
    "PLACEMENT_OPTIONS",
    "Bookend",
    "relevance_from_scores",
    "reorder",
    "validate_scores",
]

T = TypeVar("T")

#: The spec used when the caller names no model: a 32-layer decoder (Llama 3.1 8B).
DEFAULT_MODEL = "llama-3.1-8b"

Getter = Callable[[Any], Any] | str | None

#: The keyword settings of :class:`Bookend` that framework adapters mirror as their own fields
#: (``model``, ``text`` and ``source`` are adapter-specific).
PLACEMENT_OPTIONS = (
    "strategy",
    "weight_rule",
    "distance",
    "budget",
    "repeat_top",
    "prefix_tokens",
    "suffix_tokens",
    "token_counter",
    "exact_max_k",
)


def relevance_from_scores(
    scores: Sequence[float | None] | None, n_items: int, *, distance: bool = False
) -> FloatArray:
    """The relevance the objective uses, from the caller's scores.

    * With scores: min-max normalised to ``[0, 1]`` (1 for the best), so positive scaling and
      shifting of scores change nothing; ``distance=True`` means lower is better. Equal scores all
      get relevance 1 and keep their input order.
    * Without scores, or with any score missing (``None``): the input order is the relevance
      order, and a reciprocal-rank prior gives the chunk at input position ``i`` (0-based)
      relevance ``1 / (i + 1)``.

    Raises:
        ValueError: scores of the wrong count, or NaN or infinite scores.
    """
    return _relevance(validate_scores(scores, n_items), n_items, distance)


def validate_scores(scores: Sequence[float | None] | None, n_items: int) -> FloatArray | None:
    """The scores as a float array, or ``None`` when there are none to use.

    Missing scores (``None`` entries, as retrievers leave them for some nodes) make the whole list
    unusable: one missing score means the input order is the relevance order for every item, so
    a missing score never sends the best item to the middle. The other entries are still checked.

    Raises:
        ValueError: a wrong count, a value that is not a real number, or NaN or infinite scores.
    """
    if scores is None:
        return None
    if isinstance(scores, str | bytes) or not hasattr(scores, "__len__"):
        raise ValueError(f"scores must be a sequence of numbers, got scores={scores!r}")
    if len(scores) != n_items:
        raise ValueError(
            f"scores must have one value per item ({n_items}), got {len(scores)} scores"
        )
    positions = [i for i, s in enumerate(scores) if s is not None]
    for i in positions:
        if not _is_real(scores[i]):
            raise ValueError(f"scores must be real numbers or None; scores[{i}]={scores[i]!r}")
    arr = np.asarray([scores[i] for i in positions], dtype=np.float64)
    # A finite sum proves every value finite (NaN and inf propagate); only then skip the scan.
    if not math.isfinite(float(arr.sum())) and not np.isfinite(arr).all():
        bad = np.flatnonzero(~np.isfinite(arr))
        raise ValueError(
            f"scores must be finite; scores[{positions[bad[0]]}]={float(arr[bad[0]])!r} "
            f"({bad.size} non-finite value{'s' if bad.size > 1 else ''})"
        )
    return arr if len(positions) == n_items else None


_REAL_TYPES = (int, float, np.integer, np.floating)


def _is_real(value: object) -> bool:
    """A real number: an int, float or NumPy scalar (not a bool, a string or a sequence)."""
    return isinstance(value, _REAL_TYPES) and not isinstance(value, bool)


def _relevance(scores: FloatArray | None, n_items: int, distance: bool) -> FloatArray:
    if scores is None:
        return 1.0 / np.arange(1, n_items + 1, dtype=np.float64)
    if scores.size == 0:
        return scores
    signed = -scores if distance else scores
    # Halved first, so that the span of scores near the float limits cannot overflow.
    half = signed / 2
    lo, hi = float(half.min()), float(half.max())
    if hi == lo:
        return np.ones(scores.size)
    # Rounded to a fixed grid: scaling or shifting the scores moves the quotient by a few ulps,
    # which must not change any decision downstream.
    return np.asarray(np.round((half - lo) / (hi - lo), 12), dtype=np.float64)


def _getter(spec: Getter, param: str) -> Callable[[Any], Any] | None:
    """A callable from a callable, an attribute name / mapping key, or ``None``."""
    if spec is None or callable(spec):
        return spec
    if isinstance(spec, str):
        attr = operator.attrgetter(spec)

        def get(item: Any) -> Any:
            return item[spec] if isinstance(item, Mapping) else attr(item)

        return get
    raise ValueError(f"{param} must be a callable, an attribute name or None, got {param}={spec!r}")


@lru_cache(maxsize=256)
def _equal_lengths(n_items: int, length: float) -> FloatArray:
    lengths = np.full(n_items, length)
    lengths.flags.writeable = False
    return lengths


def _pick(items: list[T], indices: list[int]) -> list[T]:
    """``[items[i] for i in indices]``, at C speed for long lists."""
    if len(indices) < 2:
        return [items[i] for i in indices]
    return list(operator.itemgetter(*indices)(items))


@lru_cache(maxsize=64)
def _cached_profile(model: str, file_state: tuple[int, int] | None) -> InfluenceProfile:
    """``resolve_profile(model)``; ``file_state`` (mtime, size) keys a profile file's version."""
    return resolve_profile(model)


def _profile(model: ModelLike) -> InfluenceProfile:
    """The profile for ``model``; a profile file is read again whenever it changes."""
    if not isinstance(model, str | Path):
        return resolve_profile(model)
    path = Path(model)
    if path.suffix != ".json":
        return _cached_profile(str(model), None)
    try:
        stat = path.stat()
    except OSError:
        return resolve_profile(model)  # the loader raises its clear error
    return _cached_profile(str(path.resolve()), (stat.st_mtime_ns, stat.st_size))


class Bookend(Generic[T]):
    """A configured placer: validate the settings once, then :meth:`place` many lists.

    Args:
        model: a preset name (``"llama-3.1-8b"``), a :class:`~bookend.ModelSpec`, an influence
            profile, a published curve (``"liu2023:gpt-3.5-turbo"``) or a profile JSON path.
        strategy: ``"bookend"`` (optimal under the profile), ``"alternate"`` (best first, second
            best last, inwards) or ``"relevance"`` (most relevant first). Every strategy keeps
            ``source`` groups in input order.
        weight_rule: how the influence on a chunk's tokens becomes its weight: ``"mass"`` (the
            default: total influence in units of a mean-length chunk, so no chunk gains weight by
            being shorter), ``"anchored"``, ``"density"`` or ``"slot"`` (rank-only); see
            :mod:`bookend.weighing`.
        distance: scores are distances (lower is better).
        budget: keep only the most relevant chunks whose tokens fit (greedy by relevance; a
            repeated top chunk counts twice); the result lists what was dropped.
        repeat_top: put the most relevant kept chunk at both ends of the prompt, when the budget
            has room for the copy and its source order allows it (``Placement.notes`` says when
            not).
        prefix_tokens: tokens before the chunks in the analysed sequence (system prompt).
        suffix_tokens: tokens after the chunks (the question); see :class:`~bookend.Layout`.
        token_counter: how to count tokens when ``lengths`` are not given: ``None`` for the
            fast ``ceil(chars / 4)`` approximation, a callable, or a tokenizer with ``encode``.
        text: how to get an item's text (callable or attribute / key name); strings need none.
        source: a source key per item (callable or attribute / key name): chunks sharing a key
            keep their original relative order. ``None`` keys are unconstrained.
        exact_max_k: largest K solved exactly by dynamic programming when lengths differ.
    """

    def __init__(
        self,
        model: ModelLike = DEFAULT_MODEL,
        *,
        strategy: Strategy = "bookend",
        weight_rule: WeightRule = DEFAULT_WEIGHT_RULE,
        distance: bool = False,
        budget: int | None = None,
        repeat_top: bool = False,
        prefix_tokens: int = 0,
        suffix_tokens: int = 0,
        token_counter: TokenCounterLike = None,
        text: Getter = None,
        source: Getter = None,
        exact_max_k: int = 12,
    ) -> None:
        if strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {STRATEGIES}, got strategy={strategy!r}")
        if budget is not None and (
            isinstance(budget, bool)
            or not isinstance(budget, int | float | np.integer | np.floating)
            or not math.isfinite(budget)
            or int(budget) != budget
            or budget < 1
        ):
            raise ValueError(f"budget must be a positive integer or None, got budget={budget!r}")
        if (
            isinstance(exact_max_k, bool)
            or not isinstance(exact_max_k, int)
            or not (0 <= exact_max_k <= 20)
        ):
            raise ValueError(
                f"exact_max_k must be an integer in [0, 20], got exact_max_k={exact_max_k!r}"
            )
        for name, value in (("prefix_tokens", prefix_tokens), ("suffix_tokens", suffix_tokens)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {name}={value!r}")
        self.model = model
        self.profile = _profile(model)
        self.strategy: Strategy = strategy
        self.weight_rule: WeightRule = check_weight_rule(weight_rule)
        self.distance = bool(distance)
        self.budget = None if budget is None else int(budget)
        self.repeat_top = bool(repeat_top)
        self.layout = Layout(prefix_tokens=prefix_tokens, suffix_tokens=suffix_tokens)
        self.token_counter = token_counter
        self._count = make_token_counter(token_counter)
        self._text = _getter(text, "text")
        self._source = _getter(source, "source")
        self.exact_max_k = exact_max_k

    def __repr__(self) -> str:
        return (
            f"Bookend(model={self.profile.name!r}, strategy={self.strategy!r}, "
            f"weight_rule={self.weight_rule!r}, budget={self.budget!r}, "
            f"repeat_top={self.repeat_top!r})"
        )

    def _lengths(self, items: Sequence[T], lengths: Sequence[float] | None) -> FloatArray:
        n = len(items)
        if lengths is not None:
            if isinstance(lengths, str | bytes) or not hasattr(lengths, "__len__"):
                raise ValueError(f"lengths must be a sequence of token counts, got {lengths!r}")
            if len(lengths) != n:
                raise ValueError(f"lengths must have one value per item ({n}), got {len(lengths)}")
            if isinstance(lengths, list | tuple) and n and lengths.count(lengths[0]) == n:
                # All equal, the common rank-only call: check one value, skip the conversion.
                first = lengths[0]
                if _is_real(first) and math.isfinite(first) and first >= 1 and first % 1 == 0:
                    return _equal_lengths(n, float(first))
            for i, value in enumerate(lengths):
                if not _is_real(value):
                    raise ValueError(f"lengths must be numbers; lengths[{i}]={value!r}")
            arr = np.asarray(lengths, dtype=np.float64)
            bad = np.flatnonzero(~np.isfinite(arr) | (arr < 1) | (arr % 1 != 0))
            if bad.size:
                raise ValueError(
                    "lengths must be whole token counts >= 1; "
                    f"lengths[{bad[0]}]={lengths[bad[0]]!r}"
                )
            return arr
        texts: Sequence[Any] = items if self._text is None else [self._text(i) for i in items]
        counts = []
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise ValueError(
                    f"cannot count tokens of items[{i}] of type {type(items[i]).__name__}: pass "
                    "lengths=, or text= naming how to get its text"
                )
            counts.append(self._count(text))
        # An empty text still takes a slot in the prompt: count it as one token.
        return np.maximum(np.array(counts, dtype=np.float64), 1.0)

    def _select(self, relevance: FloatArray, lengths: FloatArray) -> tuple[IntArray, bool]:
        """Input indices kept under the budget (all without one), ascending, and whether the
        top kept chunk's repeat fits too (the repeat is paid before any further chunk)."""
        repeat = self.repeat_top
        if self.budget is None:
            return np.arange(relevance.size), repeat
        kept: list[int] = []
        used = 0.0
        for i in rank_order(relevance).tolist():
            if used + lengths[i] > self.budget:
                continue
            if not kept:
                repeat = repeat and 2 * lengths[i] <= self.budget
                used += lengths[i] * (2 if repeat else 1)
            else:
                used += lengths[i]
            kept.append(i)
        if not kept and relevance.size:
            raise ValueError(
                f"budget={self.budget} is smaller than every chunk "
                f"(shortest is {int(lengths.min())} tokens)"
            )
        return np.asarray(sorted(kept), dtype=np.int64), repeat

    def place(
        self,
        items: Sequence[T],
        scores: Sequence[float | None] | None = None,
        *,
        lengths: Sequence[float] | None = None,
    ) -> Placement[T]:
        """Choose the prompt order of ``items``.

        Args:
            items: the chunks: strings, or any objects (see ``text``/``lengths``). Duplicates are
                kept.
            scores: per item relevance (higher is better unless ``distance=True``); without them,
                or if any is ``None``, the input order is the relevance order.
            lengths: per item whole token counts (>= 1); counted with ``token_counter`` when
                omitted (a count below one counts as one).

        Returns:
            A :class:`~bookend.Placement`; every item appears once unless a budget dropped it
            (see ``Placement.dropped``) or ``repeat_top`` repeated the top one.
        """
        items = list(items)
        raw = validate_scores(scores, len(items))
        relevance = _relevance(raw, len(items), self.distance)
        lens = self._lengths(items, lengths)
        kept, repeat_fits = self._select(relevance, lens)
        groups: list[Hashable | None] | None = None
        if self._source is not None:
            groups = [self._source(items[i]) for i in kept.tolist()]
        notes: list[str] = []
        if self.repeat_top and not repeat_fits and kept.size >= 2:
            notes.append("repeat_top: no room in the budget for a second copy of the top chunk")
        local, repeated = self._order(relevance[kept], lens[kept], groups, repeat_fits, notes)
        prompt = kept[local].tolist()
        dropped = tuple(sorted(set(range(len(items))) - set(kept.tolist())))
        return Placement(
            order=tuple(prompt),
            items=_pick(items, prompt),
            relevance=relevance,
            lengths=lens,
            scores=raw,
            dropped=dropped,
            strategy=self.strategy,
            profile=self.profile,
            layout=self.layout,
            weight_rule=self.weight_rule,
            repeated=repeated,
            notes=tuple(notes),
        )

    def _order(
        self,
        relevance: FloatArray,
        lengths: FloatArray,
        groups: list[Hashable | None] | None,
        repeat: bool,
        notes: list[str],
    ) -> tuple[IntArray, bool]:
        """Positions into the kept arrays in prompt order, and whether the top one is repeated.

        ``repeat_top`` is a final step: the top chunk goes to both ends (only if its source order
        allows a copy before and after every other chunk of its source), and the others are
        placed between the two copies, which count as fixed chunks there.
        """
        if repeat and relevance.size >= 2:
            top = int(rank_order(relevance)[0])
            inner = np.delete(np.arange(relevance.size), top)
            alone = groups is None or all(groups[i] != groups[top] for i in inner)
            if alone or (groups is not None and groups[top] is None):
                inner_order = strategy_order(
                    self.strategy,
                    relevance[inner],
                    lengths[inner],
                    self.profile,
                    self.layout,
                    groups=None if groups is None else [groups[i] for i in inner],
                    rule=self.weight_rule,
                    exact_max_k=self.exact_max_k,
                    fixed=(float(lengths[top]), float(lengths[top])),
                )
                return np.concatenate(([top], inner[inner_order], [top])), True
            notes.append(
                "repeat_top: the top chunk's source has other chunks here, and a copy at both "
                "ends would break their order"
            )
        order = strategy_order(
            self.strategy,
            relevance,
            lengths,
            self.profile,
            self.layout,
            rule=self.weight_rule,
            exact_max_k=self.exact_max_k,
            groups=groups,
        )
        return order, False


def reorder(
    items: Sequence[T],
    scores: Sequence[float | None] | None = None,
    *,
    model: ModelLike = DEFAULT_MODEL,
    lengths: Sequence[float] | None = None,
    **options: Any,
) -> Placement[T]:
    """Place ``items`` in the prompt order that gives the most relevant text the most influence.

    ``reorder(items, scores, model=..., lengths=..., **options)`` is
    ``Bookend(model, **options).place(items, scores, lengths=lengths)``; see :class:`Bookend` for
    the options (``strategy``, ``weight_rule``, ``distance``, ``budget``, ``repeat_top``,
    ``prefix_tokens``, ``suffix_tokens``, ``token_counter``, ``text``, ``source``, ``exact_max_k``).

    Example:
        >>> p = reorder(["a", "b", "c", "d", "e"], [0.9, 0.8, 0.3, 0.2, 0.1])
        >>> p.order[0], p.order[-1]
        (1, 0)
    """
    placer: Bookend[T] = Bookend(model, **options)
    return placer.place(items, scores, lengths=lengths)
