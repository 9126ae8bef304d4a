"""The placing API: :func:`reorder`, and :class:`Bookend`, its configured, reusable form.

``Bookend.place`` reads top to bottom: the scores become relevance (:mod:`bookend_rag.relevance`),
the items get token lengths (:mod:`bookend_rag.tokens`), ``top_k`` and the budget choose the chunks
to keep (:mod:`bookend_rag.placement.selection`), the strategy orders them
(:mod:`bookend_rag.placement.strategies`; by default the slots are ranked and the chunks sorted into
them), and a :class:`~bookend_rag.Placement` holds the result.
"""

from __future__ import annotations

import operator
import os
from collections.abc import Callable, Hashable, Mapping, Sequence
from functools import lru_cache, partial
from typing import Any, Generic, NoReturn, TypeVar, cast

import numpy as np

from bookend_rag.arrays import FloatArray, IntArray
from bookend_rag.config import DEFAULT_MODEL, PlacementConfig
from bookend_rag.inputs import equal_lengths, finite_floats, scores_by_policy, validate_lengths
from bookend_rag.layout import Layout
from bookend_rag.lookalikes import lookalike_groups
from bookend_rag.outlet import deliver
from bookend_rag.placement.orders import rank_order
from bookend_rag.placement.problem import Problem
from bookend_rag.placement.result import Numbers, Placement
from bookend_rag.placement.selection import select_chunks
from bookend_rag.placement.small_k import (
    SMALL_K_MAX,
    relevance_order,
    small_k_order,
)
from bookend_rag.placement.sorted_assignment import (
    assign_by_rank,
    assign_floats_by_rank,
    front_to_back_ranks,
)
from bookend_rag.placement.strategies import ranks_without_lengths, strategy_order
from bookend_rag.profiles.base import InfluenceProfile
from bookend_rag.profiles.io import (
    ModelLike,
    ResolvedModel,
    file_stamp,
    resolve_reference,
)
from bookend_rag.recorder import RecorderLike, as_recorder
from bookend_rag.relevance import relevance
from bookend_rag.tokens import (
    TokenCounter,
    TokenCounterLike,
    all_strings,
    approx_token_count,
    approx_token_counts,
    counts_on_demand,
    item_texts,
    make_token_counter,
    token_lengths,
    tokenizer_file,
)
from bookend_rag.tuned import ConfigSource, load_config
from bookend_rag.weighing import weight_rule_named

__all__ = ["Bookend", "cached_placer", "reorder"]

T = TypeVar("T")

Getter = Callable[[Any], Any] | str | None


def _getter(spec: Getter, param: str) -> Callable[[Any], Any] | None:
    """A callable from a callable, an attribute name / mapping key, or ``None``."""
    if spec is None or callable(spec):
        return spec
    if isinstance(spec, str):
        attr = operator.attrgetter(spec)

        def get(item: Any) -> Any:
            try:
                return item[spec] if isinstance(item, Mapping) else attr(item)
            except (KeyError, AttributeError):
                what = "key" if isinstance(item, Mapping) else "attribute"
                raise ValueError(
                    f"{param}={spec!r}: an item of type {type(item).__name__} has no "
                    f"{what} {spec!r}"
                ) from None

        return get
    raise ValueError(f"{param} must be a callable, an attribute name or None, got {param}={spec!r}")


def _item_list(items: Sequence[T]) -> list[T]:
    """``items`` as a list; a string (which would be placed character by character), a mapping
    or anything not iterable is refused."""
    if isinstance(items, str | bytes | Mapping) or not hasattr(items, "__iter__"):
        raise ValueError(
            f"items must be a list or other sequence of chunks, got items={_short(items)}"
        )
    return list(items)


def _source_keys(source: Callable[[Any], Any], items: list[T], chosen: Sequence[int]) -> list[Any]:
    """The source key of each chosen item, checked to be hashable (keys are grouped)."""
    keys = [source(items[i]) for i in chosen]
    for i, key in zip(chosen, keys, strict=True):
        try:
            hash(key)
        except TypeError:
            raise ValueError(
                f"source must give a hashable key (a string, a number or None); items[{i}] gave "
                f"{_short(key)}"
            ) from None
    return keys


def _short(value: object) -> str:
    """``repr(value)`` on one line, cut to 80 characters."""
    text = " ".join(repr(value).split())
    return text if len(text) <= 80 else text[:77] + "..."


def _pick(items: list[T], indices: list[int]) -> list[T]:
    """``[items[i] for i in indices]``, at C speed for long lists."""
    if len(indices) < 2:
        return [items[i] for i in indices]
    return list(operator.itemgetter(*indices)(items))


class Bookend(Generic[T]):
    """A configured placer: validate the settings once, then :meth:`place` many lists.

    ``Bookend(model, **settings)``, or ``Bookend.from_config(config)``: the settings are the
    fields of :class:`~bookend_rag.PlacementConfig` (unknown ones raise) and :attr:`config` holds
    them; nothing else does. A placer is immutable: :meth:`with_settings` returns one with other
    settings.

    Args:
        model: a model name as users type it (a preset name ``"llama-3.1-8b"``, a Hugging Face
            id, an Ollama tag ``"llama3.1:8b"``, a served or API model name), a
            :class:`~bookend_rag.ModelSpec` or ``{"depth", "attn_share"}`` spec, an influence
            profile or its JSON object, a published curve (``"liu2023:gpt-3.5-turbo"``) or a
            profile JSON path. A name bookend knows no architecture for (``"gpt-4o"``, a
            fine-tune's name) places with the default order, with a ``UserWarning`` once per
            process and name and the same line in ``Placement.notes``; a clear misspelling of a
            preset name raises (:func:`bookend_rag.spec.resolve_model_name`).
        token_counter: how to count tokens when ``lengths`` are not given: ``None`` (the
            ``tokenizer`` setting, else the fast ``ceil(chars / 4)`` approximation), a tokenizer
            name (see :func:`bookend_rag.tokens.load_tokenizer`), a callable, or an object with
            ``encode``. Where the counts cannot move the order (the fixed patterns, and the
            ``bookend`` strategy with slots that weigh less from front to back whatever the
            lengths: the theory's profiles under the default layout; no budget, repeat,
            look-alikes, competition or source groups), the default's and a tokenizer's are
            taken when a placement's ``lengths`` are first read; a callable is called on every
            placement.
        text: how to get an item's text (callable or attribute / key name); strings need none,
            nor items with a ``text`` string (an attribute, as LlamaIndex's nodes have, or a
            key), which is read as ``text="text"`` reads it.
        source: a source key per item (callable or attribute / key name): chunks sharing a key
            keep their original relative order. ``None`` keys are unconstrained.
        **settings: the other fields of :class:`~bookend_rag.PlacementConfig` (each described
            there). Every strategy keeps ``source`` groups in input order; ``repeat_top`` copies
            the top chunk only when the budget and its source order allow it (``Placement.notes``
            says when not).

    ``token_counter``, ``text`` and ``source`` say how to read the caller's items; a placer from
    :meth:`with_settings` keeps them.

    Raises:
        ValueError: an unknown setting or a bad value, named in the message.
    """

    __slots__ = (
        "_count",
        "_few",
        "_layout",
        "_notices",
        "_profile",
        "_ranks",
        "_source",
        "_text",
        "_token_counter",
        "config",
    )

    config: PlacementConfig
    _profile: InfluenceProfile
    _notices: tuple[str, ...]
    _layout: Layout
    _token_counter: TokenCounterLike
    _count: TokenCounter
    _text: Callable[[Any], Any] | None
    _source: Callable[[Any], Any] | None
    _few: bool
    _ranks: Callable[[int], IntArray] | None

    def __init__(
        self,
        model: ModelLike = DEFAULT_MODEL,
        *,
        token_counter: TokenCounterLike = None,
        text: Getter = None,
        source: Getter = None,
        **settings: Any,
    ) -> None:
        config = PlacementConfig(model=model, **settings)
        self._adopt(config, token_counter, _getter(text, "text"), _getter(source, "source"), None)

    @classmethod
    def from_config(
        cls,
        config: ConfigSource,
        *,
        token_counter: TokenCounterLike = None,
        text: Getter = None,
        source: Getter = None,
        **settings: Any,
    ) -> Bookend[T]:
        """A placer for ``config``: a :class:`~bookend_rag.PlacementConfig`, a config JSON file or
        the ``tuned.json`` of ``bookend tune`` (a path), its JSON text or a mapping
        (:func:`bookend_rag.load_config`). ``token_counter``, ``text`` and ``source`` are as in the
        class.

        ``settings`` (the fields of :class:`~bookend_rag.PlacementConfig`) override the config's:
        ``Bookend.from_config("tuned.json", budget=2000)`` places with the tuned settings and
        that budget. A ``model`` other than the one a tuned config was measured on warns
        (:meth:`bookend_rag.TunedConfig.warn_if_other_model`), and every placement's ``notes``
        say so too.

        Raises:
            ValueError: one line naming ``config=`` and the value (a missing file, not JSON, not
                a placement config), or an unknown setting or a bad value.
        """
        tuned = load_config(config)
        chosen = tuned.config
        other_model = None
        if settings:
            other_model = tuned.warn_if_other_model(model=settings.get("model"))
            chosen = PlacementConfig(**{**dict(chosen), **settings})
        placer: Bookend[T] = cls.__new__(cls)
        reading = (token_counter, _getter(text, "text"), _getter(source, "source"))
        placer._adopt(chosen, *reading, None, () if other_model is None else (other_model,))
        return placer

    def _adopt(
        self,
        config: PlacementConfig,
        token_counter: TokenCounterLike,
        text: Callable[[Any], Any] | None,
        source: Callable[[Any], Any] | None,
        model: ResolvedModel | None,
        notes: tuple[str, ...] = (),
    ) -> None:
        """Take ``config`` and what follows from it: ``config.model``, checked when the config
        was, is resolved (a file read) here, once, unless the caller already holds it; its notice
        and ``notes`` begin the notes of every placement."""
        if model is None:
            model = resolve_reference(config.model)
        set_slot = object.__setattr__
        set_slot(self, "config", config)
        set_slot(self, "_profile", model.profile)
        set_slot(self, "_notices", notes if model.notice is None else (model.notice, *notes))
        set_slot(self, "_layout", config.layout)
        set_slot(self, "_token_counter", token_counter)
        counter = (
            make_token_counter(config.tokenizer, setting="tokenizer")
            if token_counter is None
            else make_token_counter(token_counter)
        )
        set_slot(self, "_count", counter)
        set_slot(self, "_text", text)
        set_slot(self, "_source", source)
        # Decided here, once per placer: whether the lengths cannot move the order (a fixed
        # pattern, or slots that rank front to back whatever the lengths), so that counts taken
        # when first read (the default's, a tokenizer's; a caller's own function is called at
        # once, its errors the caller's to see) serve, and the order is a rank per slot
        # (:attr:`_ranks`); and whether a few plain inputs take the small-K path
        # (:meth:`_place_few`), which counts with the default approximation where the slot
        # ranking needs the counts.
        plain = (
            config.competition is None
            and config.budget is None
            and not config.repeat_top
            and not config.drop_lookalikes
            and source is None
        )
        rule = weight_rule_named(config.weight_rule)
        ranks = (
            ranks_without_lengths(config.strategy, model.profile, rule, config.layout)
            if plain and (config.equal_lengths or counts_on_demand(counter))
            else None
        )
        few = ranks is not None or (
            plain
            and config.strategy == "bookend"
            and (config.equal_lengths or counter is approx_token_count)
        )
        set_slot(self, "_few", few)
        set_slot(self, "_ranks", ranks)

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(
            f"cannot set {name!r}: a Bookend is immutable; "
            f"placer.with_settings({name}=...) returns a placer with another setting"
        )

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"cannot delete {name!r}: a Bookend is immutable")

    def with_settings(self, **changes: Any) -> Bookend[T]:
        """This placer with some settings changed (the fields of
        :class:`~bookend_rag.PlacementConfig`,
        validated as at construction).

        Raises:
            ValueError: an unknown setting or a bad value, named in the message.
        """
        config = PlacementConfig(**{**dict(self.config), **changes})
        return self._derive(config)

    def with_question(self, question: str | None) -> Bookend[T]:
        """This placer with ``question``'s tokens added after the chunks when the setting
        ``count_question`` is on (the per-call prompt layout of the adapters); else, or for
        ``None`` or an empty question, the same placer."""
        if not (question and self.config.count_question):
            return self
        suffix = self.config.suffix_tokens + self.count_tokens(question)
        # A validated count plus a token count: no new validation needed.
        return self._derive(self.config.model_copy(update={"suffix_tokens": suffix}))

    def _derive(self, config: PlacementConfig) -> Bookend[T]:
        placer: Bookend[T] = Bookend.__new__(type(self))
        reading = (self._token_counter, self._text, self._source)
        if config.model == self.config.model:
            placer._adopt(config, *reading, ResolvedModel(self._profile), self._notices)
        else:
            placer._adopt(config, *reading, None)
        return placer

    @property
    def notices(self) -> tuple[str, ...]:
        """The notes every placement of this placer begins with (a model bookend knows no
        architecture for, a tuned config used with another model), each warned once already:
        when the model was resolved, when the config was read."""
        return self._notices

    @property
    def item_text(self) -> Callable[[Any], Any] | None:
        """How this placer reads an item's text (``text``; ``None``: the items are texts)."""
        return self._text

    @property
    def profile(self) -> InfluenceProfile:
        """The influence profile ``config.model`` refers to."""
        return self._profile

    def count_tokens(self, text: str) -> int:
        """Tokens in ``text`` as this placer counts them (``token_counter``, ``tokenizer`` or the
        four-characters approximation)."""
        return int(self._count(text))

    def __repr__(self) -> str:
        config = self.config
        return (
            f"Bookend(model={self._profile.name!r}, strategy={config.strategy!r}, "
            f"budget={config.budget!r}, repeat_top={config.repeat_top!r})"
        )

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
                or if every one is ``None``, the input order is the relevance order. Some
                ``None`` among numbers are handled by the setting ``missing_scores`` (by default
                every score is dropped), and ``Placement.notes`` says what was done.
            lengths: per item whole token counts (>= 1); counted with ``token_counter`` when
                omitted (a count below one counts as one), all 1 with ``equal_lengths``.

        Returns:
            A :class:`~bookend_rag.Placement`; every item appears once unless ``top_k`` or a budget
            dropped it (see ``Placement.dropped``) or ``repeat_top`` repeated the top one.
        """
        config = self.config
        if type(items) is not list:  # read only: a caller's list needs no copy
            items = _item_list(items)
        n = len(items)
        if n >= 2 and lengths is None:
            quick = self._place_quickly(items, scores)
            if quick is not None:
                return quick
        raw, score_note = scores_by_policy(scores, n, config.missing_scores, config.distance)
        rel = relevance(raw, n, config.distance)
        lens = self._lengths(items, lengths)
        notes = self._notes(score_note)
        duplicates = self._lookalike_drops(items, rel) if config.drop_lookalikes else ()
        kept, repeat_fits, cut_by_top_k = select_chunks(
            rel,
            lens,
            top_k=config.top_k,
            budget=config.budget,
            repeat_top=config.repeat_top,
            drop=duplicates,
        )
        chosen = range(n) if kept is None else kept.tolist()
        groups = None if self._source is None else _source_keys(self._source, items, chosen)
        if config.repeat_top and not repeat_fits and len(chosen) >= 2:
            notes.append("repeat_top: no room in the budget for a second copy of the top chunk")
        rel_kept, lens_kept = (rel, lens) if kept is None else (rel[kept], lens[kept])
        local, repeated = self._arrange(rel_kept, lens_kept, groups, repeat_fits, notes)
        if kept is None:
            prompt = local.tolist()
            dropped: tuple[int, ...] = ()
        else:
            prompt = kept[local].tolist()
            dropped = tuple(sorted(set(range(n)) - set(kept.tolist())))
        return self._result(
            items, prompt, rel, lens, raw, notes, dropped, cut_by_top_k, duplicates, repeated
        )

    def _place_quickly(
        self, items: list[T], scores: Sequence[float | None] | None
    ) -> Placement[T] | None:
        """:meth:`place` by a shortcut that gives the same placement when one applies (plain
        settings, lengths to be counted): :meth:`_place_few` up to
        :data:`~bookend_rag.placement.small_k.SMALL_K_MAX` chunks, :meth:`_place_by_rank` above
        where the lengths cannot move the order; else ``None``."""
        if len(items) <= SMALL_K_MAX:
            return self._place_few(items, scores)
        if self._ranks is not None:
            return self._place_by_rank(items, scores, self._ranks)
        return None

    def _place_by_rank(
        self,
        items: list[T],
        scores: Sequence[float | None] | None,
        ranks: Callable[[int], IntArray],
    ) -> Placement[T] | None:
        """:meth:`place` of chunks whose order their lengths cannot move
        (:func:`~bookend_rag.placement.strategies.ranks_without_lengths`): per slot the chunk of
        relevance rank ``ranks(K)[slot]``, by the rule of the array path
        (:func:`~bookend_rag.placement.sorted_assignment.assign_by_rank`), on arrays; the token
        counts are taken if the placement's lengths are read. ``None`` when ``top_k`` drops
        chunks or a text is not a string (the array path names it)."""
        config = self.config
        n = len(items)
        if config.top_k is not None and config.top_k < n:
            return None
        lens = self._deferred_lengths(items)
        if lens is None:
            return None
        raw, score_note = scores_by_policy(scores, n, config.missing_scores, config.distance)
        rel = relevance(raw, n, config.distance)
        notes = self._notes(score_note)
        prompt = assign_by_rank(rel, ranks(n)).tolist()
        return self._result(items, prompt, rel, lens, raw, notes)

    def _notes(self, score_note: str | None = None) -> list[str]:
        """The notes of every placement: the notice of a model bookend knows no architecture
        for, that of a tuned config used with another model, and what was done with missing
        scores (``missing_scores``)."""
        notes = list(self._notices)
        if score_note is not None:
            notes.append(score_note)
        return notes

    def _texts(self, items: list[T]) -> list[Any]:
        """Each item's text (:func:`~bookend_rag.tokens.item_texts`)."""
        return item_texts(items, self._text)

    def _deferred_lengths(self, items: list[T]) -> Numbers | None:
        """The lengths of a placement whose order they cannot move: all 1 with
        ``equal_lengths``, else the counts of the texts (read and checked now, copied) taken when
        first read; ``None`` when a text is not a string (the array path names it)."""
        if self.config.equal_lengths:
            return equal_lengths(len(items), 1.0)
        texts = self._texts(items)
        if not all_strings(texts):
            return None
        return partial(token_lengths, list(texts), self._count, None)

    def _place_few(
        self, items: list[T], scores: Sequence[float | None] | None
    ) -> Placement[T] | None:
        """:meth:`place` of a few chunks (2 to :data:`~bookend_rag.placement.small_k.SMALL_K_MAX`)
        on Python numbers (:mod:`bookend_rag.placement.small_k`), when the settings are plain
        (:attr:`_few`) and so are the inputs (float scores or none, string texts, or
        ``equal_lengths``); else ``None``, and the array path places them and names any bad
        input.
        """
        config = self.config
        n = len(items)
        if not self._few or (config.top_k is not None and config.top_k < n):
            return None
        raw: list[float] | None
        rel: Numbers
        if scores is None:
            raw, rel, by_relevance = None, relevance(None, n, config.distance), list(range(n))
        else:
            raw = finite_floats(scores, n)
            if raw is None:
                return None
            by_relevance, rel = relevance_order([-s for s in raw] if config.distance else raw)
        notes = self._notes()
        lens: Numbers | None
        if self._ranks is not None:
            lens = self._deferred_lengths(items)
            if lens is None:
                return None
            # Front to back, the relevance order itself.
            prompt = (
                by_relevance
                if self._ranks is front_to_back_ranks
                else assign_floats_by_rank(by_relevance, self._ranks(n).tolist())
            )
            return self._result(items, prompt, rel, lens, raw, notes)
        # The slot ranking reads the lengths: the default approximation's counts, now.
        counts: list[int] | None = None
        if config.equal_lengths:
            lens = equal_lengths(n, 1.0)
        else:
            texts = self._texts(items)
            if not all_strings(texts):
                return None
            lens = counts = approx_token_counts(texts)
        total_length = float(n if counts is None else sum(counts))
        rule = weight_rule_named(config.weight_rule)
        order = small_k_order(by_relevance, total_length, self._profile, rule, self._layout)
        if order is None:
            return None
        return self._result(items, order, rel, lens, raw, notes)

    def _result(
        self,
        items: list[T],
        prompt: list[int],
        rel: Numbers,
        lens: Numbers,
        raw: FloatArray | list[float] | None,
        notes: list[str],
        dropped: tuple[int, ...] = (),
        dropped_by_top_k: tuple[int, ...] = (),
        dropped_as_lookalikes: tuple[int, ...] = (),
        repeated: bool = False,
    ) -> Placement[T]:
        """The :class:`~bookend_rag.Placement` of ``prompt`` (input indices in prompt order), the
        one result of both paths of :meth:`place`."""
        config = self.config
        return Placement(
            order=tuple(prompt),
            items=_pick(items, prompt),
            relevance=rel,
            lengths=lens,
            scores=raw,
            dropped=dropped,
            dropped_by_top_k=dropped_by_top_k,
            dropped_as_lookalikes=dropped_as_lookalikes,
            strategy=config.strategy,
            profile=self._profile,
            layout=self._layout,
            weight_rule=config.weight_rule,
            competition=config.competition,
            repeated=repeated,
            notes=tuple(notes),
        )

    def _lookalike_drops(self, items: list[T], relevance: FloatArray) -> tuple[int, ...]:
        """Every item that is a look-alike of a more relevant one (ties: the earlier stays)."""
        values = self._texts(items)
        texts = [v for v in values if isinstance(v, str)]
        if len(texts) < len(values):
            i = next(i for i, v in enumerate(values) if not isinstance(v, str))
            raise ValueError(
                f"drop_lookalikes=True compares texts: items[{i}] of type "
                f"{type(items[i]).__name__} has none (pass text=)"
            )
        members: dict[int, list[int]] = {}
        threshold = self.config.lookalike_threshold
        for i, label in enumerate(lookalike_groups(texts, threshold=threshold)):
            members.setdefault(label, []).append(i)
        drops: list[int] = []
        for group in members.values():
            keep = max(group, key=lambda i: (relevance[i], -i))
            drops.extend(i for i in group if i != keep)
        return tuple(sorted(drops))

    def _lengths(self, items: list[T], lengths: Sequence[float] | None) -> FloatArray:
        if lengths is not None:
            return validate_lengths(lengths, len(items))
        if self.config.equal_lengths:
            return equal_lengths(len(items), 1.0)
        return token_lengths(items, self._count, self._text)

    def _arrange(
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
        strategy = self.config.strategy
        if repeat and relevance.size >= 2:
            top = int(rank_order(relevance)[0])
            inner = np.delete(np.arange(relevance.size), top)
            alone = groups is None or all(groups[i] != groups[top] for i in inner)
            if alone or (groups is not None and groups[top] is None):
                inner_groups = None if groups is None else [groups[i] for i in inner]
                copy = float(lengths[top])
                problem = self._problem(
                    relevance[inner], lengths[inner], inner_groups, (copy, copy)
                )
                inner_order = strategy_order(strategy, problem)
                return np.concatenate(([top], inner[inner_order], [top])), True
            notes.append(
                "repeat_top: the top chunk's source has other chunks here, and a copy at both "
                "ends would break their order"
            )
        return strategy_order(strategy, self._problem(relevance, lengths, groups)), False

    def _problem(
        self,
        relevance: FloatArray,
        lengths: FloatArray,
        groups: list[Hashable | None] | None,
        fixed: tuple[float, float] = (0.0, 0.0),
    ) -> Problem:
        config = self.config
        return Problem.build(
            relevance,
            lengths,
            self._profile,
            self._layout,
            rule=config.weight_rule,
            groups=groups,
            fixed=fixed,
            competition=config.competition,
            exact_max_k=config.exact_max_k,
        )


def reorder(
    items: Sequence[T],
    scores: Sequence[float | None] | None = None,
    *,
    model: ModelLike | None = None,
    lengths: Sequence[float] | None = None,
    config: ConfigSource | None = None,
    recorder: RecorderLike = None,
    **settings: Any,
) -> Placement[T]:
    """Place ``items`` in the prompt order that gives the most relevant text the most influence.

    ``reorder(items, scores, model=..., lengths=..., **settings)`` is
    ``Bookend(model, **settings).place(items, scores, lengths=lengths)``: ``lengths`` holds the
    per-item token counts, and the settings (``equal_lengths=True`` for rank-only placement,
    ``text``, ``source``, ``token_counter`` ...) are those of :class:`Bookend`; ``model``
    defaults to :data:`~bookend_rag.DEFAULT_MODEL`.

    ``config`` (a :class:`~bookend_rag.PlacementConfig`, the path of a config JSON file or of the
    ``tuned.json`` that ``bookend tune`` writes, its JSON text or a mapping) gives every setting
    at once: ``reorder(items, scores, config="tuned.json")`` is
    ``Bookend.from_config("tuned.json").place(items, scores)``. Settings given here, ``model``
    included, override the config's; a ``model`` other than the one a tuned config was measured
    on warns (``UserWarning``).

    Each of the placement's notes (``Placement.notes``: a missing score, a ``repeat_top`` that
    did not fit ...) is also sent to ``warnings`` (:class:`~bookend_rag.outlet.PlacementNote`)
    and the ``bookend_rag`` logger (:func:`bookend_rag.outlet.deliver`). ``recorder`` (a file
    path or a :class:`~bookend_rag.recorder.Recorder`; off by default) appends the call to a
    retrieval record file (:mod:`bookend_rag.recorder`).

    Example:
        >>> reorder(["a", "b", "c", "d", "e"], [0.9, 0.8, 0.3, 0.2, 0.1]).order
        (0, 1, 2, 3, 4)
        >>> p = reorder(["a", "b", "c", "d", "e"], [0.9, 0.8, 0.3, 0.2, 0.1], suffix_tokens=0)
        >>> p.order[0], p.order[-1]  # the bookend view: the final chunk holds the Recency Delta
        (1, 0)
        >>> reorder(["a", "b", "c"], [0.1, 0.9, 0.5], config={"strategy": "relevance"}).items
        ['b', 'c', 'a']

    Raises:
        ValueError: a bad item, score, setting or ``config``, in one line naming it.
    """
    if config is None:
        placer = cached_placer({"model": DEFAULT_MODEL if model is None else model, **settings})
    else:  # a config file may change between calls: read it each time
        overrides = settings if model is None else {"model": model, **settings}
        placer = Bookend.from_config(config, **overrides)
    kept = as_recorder(recorder)
    placement = placer.place(items, scores, lengths=lengths)
    deliver(
        placement, placer, kept, source="reorder", items=items, scores=scores, text=placer.item_text
    )
    return placement


def cached_placer(settings: Mapping[str, Any]) -> Bookend[Any]:
    """``Bookend(**settings)``, from the one cache of placers that :func:`reorder` and the
    framework adapters share: while the same settings come back, the same placer (the settings
    validated, the profile resolved and the tokenizer loaded once, not on every call).

    ``settings`` are :class:`Bookend`'s keyword arguments, ``model`` among them. They are
    compared by value, each with its type (``True`` equals ``1`` but is no count), and a file
    they name (a profile file, a local tokenizer) by its real path and state
    (:func:`~bookend_rag.profiles.io.file_stamp`), so a rewritten file gives a new placer. A
    ``model`` given as a dict (an inline profile or spec) is compared by its items; with any
    other setting that does not hash, each call builds its own placer.
    """
    files, names, values = _file_states(settings), tuple(settings), tuple(settings.values())
    model = settings.get("model")
    if isinstance(model, dict):  # an inline profile or spec
        at = names.index("model")
        values = (*values[:at], _ByItems(model), *values[at + 1 :])
    # A placer is looked up on every call of reorder and of an adapter: the cache hashes the
    # values and their types at C speed.
    try:
        return _kept_placer(files, names, *values)
    except TypeError:  # a value that does not hash (or a build that raised it: it raises again)
        return Bookend(**settings)


@lru_cache(maxsize=64, typed=True)
def _kept_placer(files: object, names: tuple[str, ...], *values: Any) -> Bookend[Any]:
    """The placer of the settings ``names``, ``values`` (:func:`cached_placer`; ``files``, the
    state of the files they name, only keys the cache)."""
    given: dict[str, Any] = {
        name: value.value if isinstance(value, _ByItems) else value
        for name, value in zip(names, values, strict=True)
    }
    return Bookend(**given)


class _ByItems:
    """A dict (an inline profile or spec) as a key of the cache: compared and hashed by its
    items, each with its type, as they were when the key was made."""

    __slots__ = ("_hash", "_items", "value")

    def __init__(self, value: dict[str, Any]) -> None:
        self.value = value
        self._items = _frozen(value)
        self._hash = hash(self._items)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _ByItems) and self._items == other._items

    def __hash__(self) -> int:
        return self._hash


def _frozen(value: object) -> object:
    """A dict or list as the tuple of its items, each with its type (``True`` equals ``1``), so
    that it hashes and equal ones make equal keys; any other value as it is."""
    if isinstance(value, dict):
        return dict, tuple((name, type(item), _frozen(item)) for name, item in value.items())
    if isinstance(value, list):
        return list, tuple((type(item), _frozen(item)) for item in value)
    return value


def _file_states(settings: Mapping[str, Any]) -> tuple[tuple[str, tuple[int, int]] | None, ...]:
    """The real path and state of each file ``settings`` name (a profile file, a local
    tokenizer): a placer built from them is current while these stay the same."""
    return (
        _file_state(settings.get("model")),
        _tokenizer_state(settings.get("tokenizer")),
        _tokenizer_state(settings.get("token_counter")),
    )


def _tokenizer_state(counter: object) -> tuple[str, tuple[int, int]] | None:
    """For a tokenizer named by a string, the state of the local file it reads, if any."""
    return _file_state(tokenizer_file(counter)) if isinstance(counter, str) else None


def _file_state(path: object) -> tuple[str, tuple[int, int]] | None:
    """A file's real path and state, ``None`` when ``path`` names none."""
    name = os.fspath(path) if isinstance(path, os.PathLike) else path
    stamp = file_stamp(name)  # None unless name is a string that names a file
    return None if stamp is None else (os.path.realpath(cast(str, name)), stamp)
