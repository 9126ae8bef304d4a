"""The placer: :class:`Bookend`, the settings validated once, and the path that places each call.

A call takes a shortcut (:mod:`bookend_rag.place.shortcut`) when the placer's settings and the
call allow one, else the array path (:mod:`bookend_rag.place.array_path`); both give the same
placement.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, NoReturn, TypeVar

from bookend_rag.config import DEFAULT_MODEL, PlacementConfig
from bookend_rag.place.array_path import place_on_arrays
from bookend_rag.place.items import Getter, ItemReader, getter, item_list
from bookend_rag.place.setup import Setup
from bookend_rag.place.shortcut import Shortcut
from bookend_rag.placement.result import Placement
from bookend_rag.profiles.base import InfluenceProfile
from bookend_rag.profiles.io import ModelLike, ResolvedModel, resolve_reference
from bookend_rag.tokens import TokenCounterLike, make_token_counter
from bookend_rag.tuned import ConfigSource, load_config

__all__ = ["Bookend"]

T = TypeVar("T")


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
            lengths: the theory's profiles under the default layout; no source groups, and
            every setting declared :attr:`~bookend_rag.config.Shortcuts.DEFAULT_ONLY` at its
            default: no budget, repeat, look-alikes or competition), the default's and a
            tokenizer's are taken when a placement's ``lengths`` are first read; a callable is
            called on every placement.
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

    __slots__ = ("_setup", "_shortcut", "_token_counter", "config")

    config: PlacementConfig
    _setup: Setup
    _shortcut: Shortcut | None
    _token_counter: TokenCounterLike

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
        self._set_up(config, token_counter, getter(text, "text"), getter(source, "source"), None)

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
        reading = (token_counter, getter(text, "text"), getter(source, "source"))
        placer._set_up(chosen, *reading, None, () if other_model is None else (other_model,))
        return placer

    def _set_up(
        self,
        config: PlacementConfig,
        token_counter: TokenCounterLike,
        text: Callable[[Any], Any] | None,
        source: Callable[[Any], Any] | None,
        resolved: ResolvedModel | None,
        notes: tuple[str, ...] = (),
    ) -> None:
        """Take ``config`` and what follows from it: ``config.model``, checked when the config
        was, is resolved (a file read) here, once, unless the caller already holds it
        (``resolved``); its notice and ``notes`` begin the notes of every placement; the
        shortcuts the settings allow are decided here, once."""
        if resolved is None:
            resolved = resolve_reference(config.model)
        notices = notes if resolved.notice is None else (resolved.notice, *notes)
        counter = (
            make_token_counter(config.tokenizer, setting="tokenizer")
            if token_counter is None
            else make_token_counter(token_counter)
        )
        reader = ItemReader(counter, text, source, config.equal_lengths)
        setup = Setup(config, resolved.profile, notices, config.layout, reader)
        set_slot = object.__setattr__
        set_slot(self, "config", config)
        set_slot(self, "_setup", setup)
        set_slot(self, "_shortcut", Shortcut.of(setup))
        set_slot(self, "_token_counter", token_counter)

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(
            f"cannot set {name!r}: a Bookend is immutable; "
            f"placer.with_settings({name}=...) returns a placer with another setting"
        )

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"cannot delete {name!r}: a Bookend is immutable")

    def with_settings(self, **changes: Any) -> Bookend[T]:
        """This placer with some settings changed (the fields of
        :class:`~bookend_rag.PlacementConfig`, validated as at construction).

        Raises:
            ValueError: an unknown setting or a bad value, named in the message.
        """
        config = PlacementConfig(**{**dict(self.config), **changes})
        return self._with_config(config)

    def with_question(self, question: str | None) -> Bookend[T]:
        """This placer with ``question``'s tokens added after the chunks when the setting
        ``count_question`` is on (the per-call prompt layout of the adapters); else, or for
        ``None`` or an empty question, the same placer."""
        if not (question and self.config.count_question):
            return self
        suffix = self.config.suffix_tokens + self.count_tokens(question)
        # A validated count plus a token count: no new validation needed.
        return self._with_config(self.config.model_copy(update={"suffix_tokens": suffix}))

    def _with_config(self, config: PlacementConfig) -> Bookend[T]:
        """A placer of ``config`` that reads items as this one does (the profile and the notices
        kept when the model is the same)."""
        placer: Bookend[T] = Bookend.__new__(type(self))
        setup = self._setup
        reading = (self._token_counter, setup.reader.text, setup.reader.source)
        if config.model == self.config.model:
            placer._set_up(config, *reading, ResolvedModel(setup.profile), setup.notices)
        else:
            placer._set_up(config, *reading, None)
        return placer

    @property
    def notices(self) -> tuple[str, ...]:
        """The notes every placement of this placer begins with (a model bookend knows no
        architecture for, a tuned config used with another model), each warned once already:
        when the model was resolved, when the config was read."""
        return self._setup.notices

    @property
    def item_text(self) -> Callable[[Any], Any] | None:
        """How this placer reads an item's text (``text``; ``None``: the items are texts)."""
        return self._setup.reader.text

    @property
    def profile(self) -> InfluenceProfile:
        """The influence profile ``config.model`` refers to."""
        return self._setup.profile

    def count_tokens(self, text: str) -> int:
        """Tokens in ``text`` as this placer counts them (``token_counter``, ``tokenizer`` or the
        four-characters approximation)."""
        return int(self._setup.reader.count(text))

    def __repr__(self) -> str:
        config = self.config
        return (
            f"Bookend(model={self.profile.name!r}, strategy={config.strategy!r}, "
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
        if type(items) is not list:  # read only: a caller's list needs no copy
            items = item_list(items)
        shortcut = self._shortcut
        if shortcut is not None and lengths is None and len(items) >= 2:
            placement = shortcut.place(items, scores)
            if placement is not None:
                return placement
        return place_on_arrays(self._setup, items, scores, lengths)
