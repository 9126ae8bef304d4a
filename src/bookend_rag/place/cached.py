"""The calls that place without holding a placer: :func:`reorder`, and :func:`cached_placer`, the
one cache of placers that it and the framework adapters share."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, TypeVar, cast

from bookend_rag.config import DEFAULT_MODEL
from bookend_rag.errors import shown
from bookend_rag.outlet import deliver
from bookend_rag.place.placer import Bookend
from bookend_rag.placement.result import Placement
from bookend_rag.profiles.io import ModelLike, file_stamp
from bookend_rag.recorder import RecorderLike, as_recorder
from bookend_rag.tokens import tokenizer_file
from bookend_rag.tuned import ConfigSource

__all__ = ["cached_placer", "placer_for", "reorder"]

T = TypeVar("T")


def reorder(
    items: Sequence[T],
    scores: Sequence[float | None] | None = None,
    *,
    model: ModelLike | None = None,
    lengths: Sequence[float] | None = None,
    config: ConfigSource | None = None,
    recorder: RecorderLike = None,
    question: str | None = None,
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
    retrieval record file (:mod:`bookend_rag.recorder`): the items' texts (each string, or each
    item's ``text`` as the placement read it) and scores as they are at the call, the order
    placed and ``question``, the user's question, which ``bookend tune --retrievals`` needs to
    build probes from the record. ``question`` is recorded only: it does not change the
    placement (``suffix_tokens`` counts what follows the chunks).

    Example:
        >>> reorder(["a", "b", "c", "d", "e"], [0.9, 0.8, 0.3, 0.2, 0.1]).order
        (0, 1, 2, 3, 4)
        >>> p = reorder(["a", "b", "c", "d", "e"], [0.9, 0.8, 0.3, 0.2, 0.1], suffix_tokens=0)
        >>> p.order[0], p.order[-1]  # the bookend view: the final chunk holds the Recency Delta
        (1, 0)
        >>> reorder(["a", "b", "c"], [0.1, 0.9, 0.5], config={"strategy": "relevance"}).items
        ['b', 'c', 'a']

    Raises:
        ValueError: a bad item, score, setting, ``config`` or ``question``, in one line naming
            it.
    """
    if question is not None and not isinstance(question, str):
        raise ValueError(f"question must be a string or None, got question={shown(question)}")
    if config is None:
        placer = cached_placer({"model": DEFAULT_MODEL if model is None else model, **settings})
    else:  # a config file may change between calls: read it each time
        overrides = settings if model is None else {"model": model, **settings}
        placer = Bookend.from_config(config, **overrides)
    kept = None if recorder is None else as_recorder(recorder)
    placement = placer.place(items, scores, lengths=lengths)
    # Nothing to send in the usual call (no note, no recorder): deliver's keyword call alone was a
    # fiftieth of placing 20 strings.
    if kept is not None or placement.notes:
        deliver(
            placement,
            placer,
            kept,
            source="reorder",
            items=items,
            scores=scores,
            question=question,
            text=placer.item_text,
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
    get = settings.get
    return placer_for(
        tuple(settings),
        tuple(settings.values()),
        get("model"),
        get("tokenizer"),
        get("token_counter"),
    )


def placer_for(
    names: tuple[str, ...],
    values: tuple[Any, ...],
    model: object,
    tokenizer: object,
    token_counter: object,
) -> Bookend[Any]:
    """:func:`cached_placer` of the settings ``names`` holding ``values``, of which ``model``,
    ``tokenizer`` and ``token_counter`` (``None`` when not among them) are also given apart:
    the framework adapters read their settings as one tuple at C speed, with no dict built on
    every call."""
    if isinstance(model, dict):  # an inline profile or spec
        at = names.index("model")
        values = (*values[:at], _DictKey(model), *values[at + 1 :])
    # A placer is looked up on every call of reorder and of an adapter: the cache hashes the
    # values and their types at C speed.
    try:
        return _kept_placer(_file_states(model, tokenizer, token_counter), names, *values)
    except TypeError:  # a value that does not hash (or a build that raised it: it raises again)
        return Bookend(**dict(zip(names, values, strict=True)))


@lru_cache(maxsize=64, typed=True)
def _kept_placer(files: object, names: tuple[str, ...], *values: Any) -> Bookend[Any]:
    """The placer of the settings ``names``, ``values`` (:func:`cached_placer`; ``files``, the
    state of the files they name, only keys the cache)."""
    given: dict[str, Any] = {
        name: value.value if isinstance(value, _DictKey) else value
        for name, value in zip(names, values, strict=True)
    }
    return Bookend(**given)


class _DictKey:
    """A dict (an inline profile or spec) as a key of the cache: compared and hashed by its
    items, each with its type, as they were when the key was made."""

    __slots__ = ("_frozen_items", "_hash", "value")

    def __init__(self, value: dict[str, Any]) -> None:
        self.value = value
        self._frozen_items = _frozen(value)
        self._hash = hash(self._frozen_items)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _DictKey) and self._frozen_items == other._frozen_items

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


def _file_states(model: object, tokenizer: object, counter: object) -> object:
    """The real path and state of each file the settings name (``model``, a profile file; a
    local tokenizer): a placer built from them is current while these stay the same."""
    # Asked on every call of reorder and of an adapter, where both tokenizer settings are
    # usually None: then the model's state alone (the settings themselves are in the key too).
    if tokenizer is None and counter is None:
        return _file_state(model)
    return (
        _file_state(model),
        None if tokenizer is None else _tokenizer_state(tokenizer),
        None if counter is None else _tokenizer_state(counter),
    )


def _tokenizer_state(counter: object) -> tuple[str, tuple[int, int]] | None:
    """For a tokenizer named by a string, the state of the local file it reads, if any."""
    return _file_state(tokenizer_file(counter)) if isinstance(counter, str) else None


def _file_state(path: object) -> tuple[str, tuple[int, int]] | None:
    """A file's real path and state, ``None`` when ``path`` names none."""
    if not isinstance(path, str):  # a model name, usually: no path object to convert
        if not isinstance(path, os.PathLike):
            return None
        path = os.fspath(path)
    stamp = file_stamp(path)  # None unless path is a string that names a file
    return None if stamp is None else (os.path.realpath(cast(str, path)), stamp)
