"""The public one-call API: :func:`reorder`, and :class:`Bookend`, its reusable configured form."""

from __future__ import annotations

import copy
import math
import operator
from collections.abc import Callable, Hashable, Mapping, Sequence
from functools import lru_cache
from typing import Any, Generic, TypeVar

import numpy as np

from bookend.arrays import FloatArray
from bookend.config import (
    DEFAULT_MODEL,
    LengthsMode,
    ModelLike,
    PlacementConfig,
)
from bookend.layout import Layout
from bookend.placement import (
    IntArray,
    Strategy,
    rank_order,
    strategy_order,
)
from bookend.profile import InfluenceProfile
from bookend.result import Placement
from bookend.tokens import (
    CHARS_PER_TOKEN,
    TokenCounterLike,
    approx_token_count,
    make_token_counter,
)
from bookend.weighing import WeightRule

__all__ = [
    "Bookend",
    "relevance_from_scores",
    "reorder",
    "validate_scores",
]

T = TypeVar("T")

Getter = Callable[[Any], Any] | str | None


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
    try:
        quick = np.asarray(scores)
    except ValueError:  # ragged nesting: the slow path below names the entry
        quick = np.asarray([])
    if quick.ndim == 1 and quick.size == n_items and quick.dtype.kind in "fiu":
        # Plain numbers (no None, string, bool-only or nested entry): one conversion, one check.
        arr = quick.astype(np.float64, copy=False)
        _check_finite(arr, list(range(n_items)))
        return arr
    positions = [i for i, s in enumerate(scores) if s is not None]
    for i in positions:
        if not _is_real(scores[i]):
            raise ValueError(f"scores must be real numbers or None; scores[{i}]={scores[i]!r}")
    arr = np.asarray([scores[i] for i in positions], dtype=np.float64)
    _check_finite(arr, positions)
    return arr if len(positions) == n_items else None


def _check_finite(arr: FloatArray, positions: Sequence[int]) -> None:
    """Raise naming the first NaN or infinite score (``positions`` maps back to the input)."""
    # A finite sum proves every value finite (NaN and inf propagate); only then skip the scan.
    if not math.isfinite(float(arr.sum())) and not np.isfinite(arr).all():
        bad = np.flatnonzero(~np.isfinite(arr))
        raise ValueError(
            f"scores must be finite; scores[{positions[bad[0]]}]={float(arr[bad[0]])!r} "
            f"({bad.size} non-finite value{'s' if bad.size > 1 else ''})"
        )


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


class Bookend(Generic[T]):
    """A configured placer: validate the settings once, then :meth:`place` many lists.

    ``Bookend(model, **settings)`` or ``Bookend.from_config(config)``: the settings are the fields
    of :class:`~bookend.PlacementConfig` (unknown ones raise), and :attr:`config` holds them.

    Args:
        model: a preset name (``"llama-3.1-8b"``) or Hugging Face id, a :class:`~bookend.ModelSpec`
            or ``{"depth", "attn_share"}`` spec, an influence profile or its JSON object, a
            published curve (``"liu2023:gpt-3.5-turbo"``) or a profile JSON path.
        token_counter: how to count tokens when ``lengths`` are not given: ``None`` (the
            ``tokenizer`` setting, else the fast ``ceil(chars / 4)`` approximation), a tokenizer
            name (see :func:`bookend.tokens.load_tokenizer`), a callable, or an object with
            ``encode``.
        text: how to get an item's text (callable or attribute / key name); strings need none.
        source: a source key per item (callable or attribute / key name): chunks sharing a key
            keep their original relative order. ``None`` keys are unconstrained.
        **settings: ``strategy``, ``weight_rule``, ``competition``, ``distance``, ``top_k``,
            ``budget``, ``repeat_top``, ``prefix_tokens``, ``suffix_tokens``, ``count_question``,
            ``lengths``, ``tokenizer``, ``exact_max_k``: see :class:`~bookend.PlacementConfig`.
            Every strategy keeps ``source`` groups in input order; ``repeat_top`` copies the top
            chunk only when the budget and its source order allow it (``Placement.notes`` says
            when not).

    Raises:
        ValueError: an unknown setting or a bad value, named in the message.
    """

    def __init__(
        self,
        model: ModelLike = DEFAULT_MODEL,
        *,
        token_counter: TokenCounterLike = None,
        text: Getter = None,
        source: Getter = None,
        **settings: Any,
    ) -> None:
        self._configure(
            PlacementConfig.from_settings(model=model, **settings),
            token_counter=token_counter,
            text=text,
            source=source,
            # A profile object places as given (the config keeps its serialisable form).
            profile=model if isinstance(model, InfluenceProfile) else None,
        )

    @classmethod
    def from_config(
        cls,
        config: PlacementConfig,
        *,
        token_counter: TokenCounterLike = None,
        text: Getter = None,
        source: Getter = None,
    ) -> Bookend[T]:
        """A placer for ``config``; ``token_counter``, ``text`` and ``source`` as in the class."""
        if not isinstance(config, PlacementConfig):
            raise ValueError(f"config must be a PlacementConfig, got config={config!r}")
        placer: Bookend[T] = cls.__new__(cls)
        placer._configure(
            config, token_counter=token_counter, text=text, source=source, profile=None
        )
        return placer

    def _configure(
        self,
        config: PlacementConfig,
        *,
        token_counter: TokenCounterLike,
        text: Getter,
        source: Getter,
        profile: InfluenceProfile | None,
    ) -> None:
        self.config = config
        self.model = config.model
        self.profile = config.profile() if profile is None else profile
        self.strategy: Strategy = config.strategy
        self.weight_rule: WeightRule = config.weight_rule
        self.competition: float | None = config.competition
        self.distance = config.distance
        self.top_k = config.top_k
        self.budget = config.budget
        self.repeat_top = config.repeat_top
        self.layout = config.layout
        self.equal_lengths = config.lengths == "equal"
        self.exact_max_k = config.exact_max_k
        self.token_counter = config.tokenizer if token_counter is None else token_counter
        self._count = make_token_counter(self.token_counter)
        self._text = _getter(text, "text")
        self._source = _getter(source, "source")

    def with_layout(self, layout: Layout) -> Bookend[T]:
        """This placer with another prompt layout (adapters add each call's question)."""
        if layout == self.layout:
            return self
        placer = copy.copy(self)
        placer.layout = layout
        return placer

    def count_tokens(self, text: str) -> int:
        """Tokens in ``text`` as this placer counts them (``token_counter``, ``tokenizer`` or the
        four-characters approximation)."""
        return int(self._count(text))

    def with_question(self, question: str | None) -> Bookend[T]:
        """This placer with ``question``'s tokens added after the chunks when the setting
        ``count_question`` is on (the per-call prompt layout of the adapters); else, or for
        ``None`` or an empty question, the same placer."""
        if not (question and self.config.count_question):
            return self
        return self.with_layout(
            Layout(
                prefix_tokens=self.layout.prefix_tokens,
                suffix_tokens=self.layout.suffix_tokens + self.count_tokens(question),
            )
        )

    def __repr__(self) -> str:
        return (
            f"Bookend(model={self.profile.name!r}, strategy={self.strategy!r}, "
            f"budget={self.budget!r}, repeat_top={self.repeat_top!r})"
        )

    def _lengths(self, items: Sequence[T], lengths: Sequence[float] | None) -> FloatArray:
        n = len(items)
        if lengths is None and self.equal_lengths:
            return _equal_lengths(n, 1.0)
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
        if self._count is approx_token_count and all(type(t) is str for t in texts):
            # The default counter, vectorised: ceil(chars / 4), at least one token.
            chars = np.fromiter(map(len, texts), dtype=np.float64, count=n)
            return np.maximum(np.ceil(chars / CHARS_PER_TOKEN), 1.0)
        counts = []
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                if self._text is not None:
                    raise ValueError(
                        f"text= must return a string, got {text!r} for items[{i}] of type "
                        f"{type(items[i]).__name__}"
                    )
                raise ValueError(
                    f"cannot count tokens of items[{i}] of type {type(items[i]).__name__}: pass "
                    "lengths=, or text= naming how to get its text"
                )
            counts.append(self._count(text))
        # An empty text still takes a slot in the prompt: count it as one token.
        return np.maximum(np.array(counts, dtype=np.float64), 1.0)

    def _select(self, relevance: FloatArray, lengths: FloatArray) -> tuple[IntArray, bool]:
        """Input indices kept under ``top_k`` and the budget (all without either), ascending,
        and whether the top kept chunk's repeat fits too (the repeat is paid before any further
        chunk)."""
        repeat = self.repeat_top
        if self.budget is None and (self.top_k is None or self.top_k >= relevance.size):
            return np.arange(relevance.size), repeat
        ranked = rank_order(relevance)[: self.top_k]
        if self.budget is None:
            return np.sort(ranked), repeat
        kept: list[int] = []
        used = 0.0
        for i in ranked.tolist():
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
        everything = kept.size == len(items)
        prompt = local.tolist() if everything else kept[local].tolist()
        dropped = () if everything else tuple(sorted(set(range(len(items))) - set(kept.tolist())))
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
            competition=self.competition,
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
                    competition=self.competition,
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
            competition=self.competition,
        )
        return order, False


def reorder(
    items: Sequence[T],
    scores: Sequence[float | None] | None = None,
    *,
    model: ModelLike = DEFAULT_MODEL,
    lengths: Sequence[float] | LengthsMode | None = None,
    **options: Any,
) -> Placement[T]:
    """Place ``items`` in the prompt order that gives the most relevant text the most influence.

    ``reorder(items, scores, model=..., lengths=..., **options)`` is
    ``Bookend(model, **options).place(items, scores, lengths=lengths)``; see :class:`Bookend` for
    the options. ``lengths`` is either the per-item token counts or the setting ``"tokens"`` /
    ``"equal"`` (see :class:`~bookend.PlacementConfig`).

    Example:
        >>> reorder(["a", "b", "c", "d", "e"], [0.9, 0.8, 0.3, 0.2, 0.1]).order
        (0, 1, 2, 3, 4)
        >>> p = reorder(["a", "b", "c", "d", "e"], [0.9, 0.8, 0.3, 0.2, 0.1], suffix_tokens=0)
        >>> p.order[0], p.order[-1]  # the bookend view: the final chunk holds the Recency Delta
        (1, 0)
    """
    if isinstance(lengths, str):
        placer: Bookend[T] = Bookend(model, lengths=lengths, **options)
        return placer.place(items, scores)
    placer = Bookend(model, **options)
    return placer.place(items, scores, lengths=lengths)
