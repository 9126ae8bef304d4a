"""``BookendRanker``: a drop-in for Haystack's ``LostInTheMiddleRanker`` that knows the model."""

from __future__ import annotations

import math
import operator
import os
import warnings
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import haystack
from haystack import Document, component, default_from_dict, default_to_dict

from bookend_rag import (
    DEFAULT_LOOKALIKE_THRESHOLD,
    DEFAULT_MODEL,
    DEFAULT_SUFFIX_TOKENS,
    DEFAULT_WEIGHT_RULE,
    EXACT_MAX_K,
    Bookend,
    ConfigSource,
    ModelLike,
    Placement,
    PlacementConfig,
    StrategyName,
    adapters,
    load_config,
    relevance_from_scores,
)

__all__ = ["SLOT_KEY", "WEIGHT_KEY", "BookendRanker"]

SLOT_KEY, WEIGHT_KEY = adapters.SLOT_KEY, adapters.WEIGHT_KEY
PLACEMENT_OPTIONS = adapters.PLACEMENT_OPTIONS

# A warning raised while the ranker runs (a model bookend knows no architecture for, resolved at
# the first run) names the user's line, not this package's or a Haystack pipeline's.
adapters.not_the_callers(__file__, haystack.__file__)


@component
class BookendRanker:
    """Lay documents out in the prompt so the model reads the most relevant ones best.

    A drop-in for ``LostInTheMiddleRanker``: the same ``run(documents, top_k=...,
    word_count_threshold=...)`` contract and output, the same deduplication by document id
    (keeping the best score) and the same error for documents without text; with
    ``strategy="alternate"`` the output is exactly that ranker's, for any input it accepts (it
    refuses some that ranker lets through: see the README, "Differences from
    LostInTheMiddleRanker"). It differs where
    that ranker is blind: the order comes from the model's influence profile (``model``),
    relevance from ``Document.score`` when every document has one (else the input order, as
    ``LostInTheMiddleRanker`` assumes), the budget counts tokens, not words, and with
    ``count_question=True`` the question passed as ``run(query=...)`` is counted after the
    documents.

    Usage:
        ```python
        pipeline.add_component("ranker", BookendRanker(model="llama-3.1-8b", top_k=10))
        pipeline.connect("retriever.documents", "ranker.documents")
        pipeline.connect("ranker.documents", "prompt_builder.documents")
        ```

    The placement settings are keyword parameters, as ``LostInTheMiddleRanker``'s are: the fields
    of :class:`bookend_rag.PlacementConfig`, where each is described. The ranker holds them in
    one such config, checked at construction: ``ranker.top_k`` reads it, and ``ranker.top_k = 3``
    replaces it by a copy with that setting, checked with the others (``ranker.top_k = 0`` raises
    there, in one line, and is not kept), so the next ``run`` uses it; ``run(top_k=...,
    budget=...)`` overrides one for a single call, as Haystack's rankers do. Here
    ``strategy="alternate"`` takes the input order as the relevance order, as
    ``LostInTheMiddleRanker`` does, and ``repeat_top`` returns the top document at both ends
    (annotated copies, or the same object twice).

    Without ``model``, the placement is for :data:`bookend_rag.DEFAULT_MODEL` (``"llama-3.1-8b"``),
    the same default as :func:`bookend_rag.reorder`: for a 32-layer decoder, most relevant first.
    ``Placement.explain()`` names the profile that decided; name your model for its own.
    The profile file (``model`` given as a path) and the ``tokenizer`` are loaded in
    ``warm_up()`` (or the first ``run``). Everything serialises with ``to_dict`` / ``from_dict``
    and pipeline YAML: a ``ModelSpec`` or profile object given as ``model`` is stored in its JSON
    form.

    ``config=`` gives every placement setting at once: a :class:`bookend_rag.PlacementConfig`, the
    path of a config JSON file or of the ``tuned.json`` that ``bookend tune`` writes, its JSON
    text or a mapping (``BookendRanker(config="tuned.json")``). A placement setting given beside it
    with a value other than its default overrides the config's (a setting passed at its default
    cannot be told from one not passed); a ``model`` other than the one a tuned config was
    measured on warns. ``to_dict`` stores a config given as a path as that path (``from_dict``
    reads the file again) and any other as its JSON object, with the settings that differ from
    the config's.

    Notes: each placement note (``Placement.notes``: documents without a score, handled by
    ``missing_scores``; a ``repeat_top`` that did not fit ...) is sent to ``warnings``
    (``PlacementNote``, at the caller's line), to the ``bookend_rag`` logger and to the
    component's ``notes`` output (a list of strings, present only when there are notes, so a
    pipeline without notes gives ``LostInTheMiddleRanker``'s output; connect it to an optional
    input, or read it in ``pipeline.run``'s result).

    Args:
        word_count_threshold: as in ``LostInTheMiddleRanker``: keep the most relevant documents
            until their words reach this many (the one that reaches it included).
        source_key: ``meta`` key of a source; documents sharing a value keep their input order.
        annotate: return copies of the documents with ``bookend_slot`` and ``bookend_weight``
            added to ``meta``; without it the same objects come back, unmodified.
        recorder: off (``None``), a JSON Lines file path (``to_dict`` stores it, ``from_dict``
            makes its directory where there is none) or an object with ``record(call)`` (not
            serialised: ``to_dict`` warns): appends each ``run``'s ``query``, the documents
            with their scores as the retriever gave them, the model and the order placed
            (:mod:`bookend_rag.recorder`). In a pipeline, give the ranker the query in the run
            data (``pipeline.run({..., "ranker": {"query": query}})``): a record without one
            cannot become a ``bookend tune --retrievals`` probe.
        config: every placement setting from a config or a ``tuned.json`` (see above).

    Raises:
        ValueError: a bad parameter: one line naming it and its value.
    """

    def __init__(
        self,
        *,
        top_k: int | None = None,
        budget: int | None = None,
        word_count_threshold: int | None = None,
        model: ModelLike = DEFAULT_MODEL,
        strategy: StrategyName = "bookend",
        weight_rule: str = DEFAULT_WEIGHT_RULE,
        competition: float | None = None,
        lookalike_threshold: float = DEFAULT_LOOKALIKE_THRESHOLD,
        drop_lookalikes: bool = False,
        distance: bool = False,
        missing_scores: adapters.MissingScores = "drop_scores",
        repeat_top: bool = False,
        prefix_tokens: int = 0,
        suffix_tokens: int = DEFAULT_SUFFIX_TOKENS,
        count_question: bool = False,
        equal_lengths: bool = False,
        tokenizer: str | None = None,
        source_key: str | None = None,
        exact_max_k: int = EXACT_MAX_K,
        annotate: bool = False,
        recorder: adapters.RecorderLike = None,
        config: ConfigSource | None = None,
    ) -> None:
        _check_own_settings(word_count_threshold, source_key, annotate)
        given = locals()  # the parameters, of which the placement settings are checked here
        settings = {name: given[name] for name in PLACEMENT_OPTIONS}
        if config is not None:
            changed = {n: v for n, v in settings.items() if v != _DEFAULTS[n]}
            settings = adapters.with_config({"config": config, **changed})
        #: The config as given (``None``: the settings alone).
        self.config = config
        # Every placement setting, in one config read on every run: ranker.top_k reads it, and an
        # assignment replaces it (__setattr__), so a setting changed later reaches the next run.
        self._placement = PlacementConfig(**settings)
        self.word_count_threshold = word_count_threshold
        self.source_key = source_key
        self.annotate = annotate
        self.recorder = recorder  # resolved into _recorder by __setattr__
        self._placers: adapters.PlacerCache[Document] = adapters.PlacerCache(_content, _meta_value)

    def __getattr__(self, name: str) -> Any:
        """A placement setting (``ranker.top_k``), read from the one config that holds them
        (Python asks here only for a name the instance does not hold itself)."""
        placement = self.__dict__.get("_placement")
        if placement is None or name not in PLACEMENT_OPTIONS:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return getattr(placement, name)

    def __setattr__(self, name: str, value: Any) -> None:
        """A placement setting assigned after construction replaces the config by a copy with
        it, checked with the others as they are, so a bad value fails at the assignment rather
        than at the next ``run`` and is not kept; the ranker's own settings are checked too."""
        if name in PLACEMENT_OPTIONS:
            name, value = "_placement", PlacementConfig(**{**self._settings(), name: value})
        elif name == "recorder":  # checked and opened here, not on every run
            object.__setattr__(self, "_recorder", adapters.as_recorder(value))
        elif name in _OWN_SETTINGS and "_placers" in self.__dict__:
            own = self._own_settings() | {name: value}
            _check_own_settings(own["word_count_threshold"], own["source_key"], own["annotate"])
        object.__setattr__(self, name, value)  # @component rebuilds the class: no bare super()

    def _own_settings(self) -> dict[str, Any]:
        """The ranker's own settings (not placement settings), by name."""
        return {name: getattr(self, name) for name in _OWN_SETTINGS}

    def _settings(self, **overrides: int | None) -> dict[str, Any]:
        """The placement settings, with this call's overrides (``None``: not overridden)."""
        settings = dict(self._placement.__dict__)  # the fields: cheaper than iterating the model
        settings.update((k, v) for k, v in overrides.items() if v is not None)
        return settings

    def warm_up(self) -> None:
        """Read the profile file and load the tokenizer, once (a changed setting reloads)."""
        self._placers.placer(self._settings(), source_key=self.source_key)

    def to_dict(self) -> dict[str, Any]:
        """Serialise the component (for ``Pipeline.dumps`` / ``to_dict``): the current settings,
        checked, with a profile object in its JSON form; with ``config``, the config (its path, or
        its JSON object) and only the settings that differ from it."""
        settings = self._placement.model_dump()
        own = self._own_settings()
        own["recorder"] = _recorder_ref(self.recorder)
        if self.config is None:
            return default_to_dict(self, **settings, **own)
        tuned = load_config(self.config)
        base = tuned.config.model_dump()
        changed = {n: v for n, v in settings.items() if v != base[n]}
        return default_to_dict(self, config=_config_ref(self.config), **changed, **own)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BookendRanker:
        """Rebuild the component from :meth:`to_dict` output (a config path is read again; the
        directory of a recorder path is made if this machine has none, readable by its owner
        only).

        Raises:
            ValueError: ``data`` is not a mapping, or holds a bad setting or config, or a
                recorder path whose directory cannot be made.
        """
        if not isinstance(data, Mapping):
            raise ValueError(f"data must be a mapping (to_dict output), got data={data!r}")
        params = dict(data.get("init_parameters") or {})
        _make_recorder_directory(params.get("recorder"))
        if params.get("config") is None:
            return default_from_dict(cls, dict(data))
        # The settings stored beside a config differ from it: set them after construction, where
        # a value equal to a default still overrides the config's.
        changed = {name: params.pop(name) for name in PLACEMENT_OPTIONS if name in params}
        ranker = default_from_dict(cls, {**data, "init_parameters": params})
        ranker._placement = PlacementConfig(**{**ranker._settings(), **changed})
        return ranker

    def placer(
        self, top_k: int | None = None, budget: int | None = None, query: str | None = None
    ) -> Bookend[Document]:
        """The :class:`bookend_rag.Bookend` for the current settings and this call's overrides."""
        # Without overrides, the config's own fields, not a copy (the placer reads them only).
        settings = (
            self._placement.__dict__
            if top_k is None and budget is None
            else self._settings(top_k=top_k, budget=budget)
        )
        placer = self._placers.placer(settings, source_key=self.source_key)
        return placer.with_question(query)

    def place(
        self,
        documents: list[Document],
        top_k: int | None = None,
        budget: int | None = None,
        query: str | None = None,
        word_count_threshold: int | None = None,
    ) -> Placement[Document]:
        """The full :class:`bookend_rag.Placement` (order, weights, ``explain()``) that :meth:`run`
        uses, over the deduplicated and cut documents (``Placement.items``); its notes are
        returned, not sent (:meth:`run` sends them)."""
        return self._place(documents, top_k, budget, query, word_count_threshold)[0]

    def _place(
        self,
        documents: list[Document],
        top_k: int | None,
        budget: int | None,
        query: str | None,
        word_count_threshold: int | None,
    ) -> tuple[Placement[Document], Bookend[Document], list[float | None] | None]:
        """:meth:`place`, with the placer and the scores it placed by."""
        distinct_ids, checked_scores = _check_documents(documents)
        _check_word_count(word_count_threshold)
        # Checked on every call too: they are plain attributes, and may have been changed.
        _check_own_settings(self.word_count_threshold, self.source_key, self.annotate)
        if query is not None and not isinstance(query, str):
            raise ValueError(f"query must be a string or None, got query={query!r}")
        placer = self.placer(top_k, budget, query)
        docs = self._deduplicate(documents, distinct_ids)
        # LostInTheMiddleRanker takes the input order as the relevance order; so does alternate.
        if placer.config.strategy == "alternate":
            scores = None
        else:  # the scores the check read, unless deduplication dropped some documents
            kept = checked_scores if len(docs) == len(documents) else list(map(_SCORE, docs))
            scores = adapters.given_scores(kept)
        words = word_count_threshold or self.word_count_threshold
        if words is not None:
            docs, scores = self._within_words(docs, scores, placer.config.top_k, words)
        return placer.place(docs, scores), placer, scores

    @component.output_types(documents=list[Document], notes=list[str])
    def run(
        self,
        documents: list[Document],
        top_k: int | None = None,
        budget: int | None = None,
        query: str | None = None,
        word_count_threshold: int | None = None,
    ) -> dict[str, Any]:
        """Reorder ``documents`` for the prompt.

        Args:
            documents: the retrieved documents (textual).
            top_k: overrides the component's ``top_k`` for this call.
            budget: overrides the component's token ``budget`` for this call.
            query: the question placed after the documents; with ``count_question`` its
                tokens are added to the prompt layout for this call.
            word_count_threshold: overrides the component's ``word_count_threshold``.

        Returns:
            ``{"documents": [...]}``: the same ``Document`` objects in prompt order (annotated
            copies with ``annotate=True``), and ``"notes"``, the placement's notes, when it has
            any (also sent to ``warnings`` and the ``bookend_rag`` logger).

        Raises:
            ValueError: a document without text or with a score that is not a number, or a bad
                ``documents``, ``top_k``, ``budget``, ``query`` or ``word_count_threshold``: one
                line naming it and its value.
        """
        placement, placer, _ = self._place(documents, top_k, budget, query, word_count_threshold)
        if self.annotate:
            annotations = adapters.slot_annotations(placement)
            placed = [
                replace(doc, meta={**doc.meta, **annotation})
                for doc, annotation in zip(placement.items, annotations, strict=True)
            ]
        else:
            placed = placement.items
        notes = adapters.deliver(
            placement,
            placer,
            self._recorder,
            source="haystack",
            items=documents,
            scores=None if self._recorder is None else [doc.score for doc in documents],
            question=query,
            text=_content,
            metadata=_meta,
            by_identity=True,
        )
        if notes:
            return {"documents": placed, "notes": list(notes)}
        return {"documents": placed}

    @component.output_types(documents=list[Document], notes=list[str])
    async def run_async(
        self,
        documents: list[Document],
        top_k: int | None = None,
        budget: int | None = None,
        query: str | None = None,
        word_count_threshold: int | None = None,
    ) -> dict[str, Any]:
        """Async :meth:`run` (used by ``Pipeline.run_async``); runs inline, it is short CPU work."""
        return self.run(documents, top_k, budget, query, word_count_threshold)

    def _within_words(
        self, docs: list[Document], scores: list[float | None] | None, top_k: int | None, words: int
    ) -> tuple[list[Document], list[float | None] | None]:
        """The most relevant documents (at most ``top_k``) until their words reach ``words``,
        the one that reaches it included, as ``LostInTheMiddleRanker`` counts them."""
        config = self._placement
        relevance = relevance_from_scores(
            scores, len(docs), distance=config.distance, missing_scores=config.missing_scores
        ).tolist()
        ranked = sorted(range(len(docs)), key=lambda i: -relevance[i])[:top_k]
        kept: list[int] = []
        total = 0
        for i in ranked:
            kept.append(i)
            total += len((docs[i].content or "").split())
            if total >= words:
                break
        kept.sort()
        return [docs[i] for i in kept], None if scores is None else [scores[i] for i in kept]

    def _deduplicate(self, documents: list[Document], distinct_ids: int) -> list[Document]:
        """One document per id, the most relevant one, at the first position of that id
        (``distinct_ids``: how many ids the documents hold, :func:`_check_documents`)."""
        if distinct_ids == len(documents):  # no two share an id
            return list(documents)
        best: dict[str, Document] = {}
        for doc in documents:
            kept = best.get(doc.id)
            if kept is None or self._better(doc.score, kept.score):
                best[doc.id] = doc
        return list(best.values())

    def _better(self, score: float | None, than: float | None) -> bool:
        if score is None:
            return False
        if than is None:
            return True
        return score < than if self._placement.distance else score > than


#: The default of every placement setting (those of :class:`bookend_rag.PlacementConfig`).
_DEFAULTS = {name: PlacementConfig.model_fields[name].default for name in PLACEMENT_OPTIONS}
#: The ranker's own settings (not :class:`bookend_rag.PlacementConfig`'s).
_OWN_SETTINGS = ("word_count_threshold", "source_key", "annotate")


def _config_ref(config: ConfigSource) -> str | dict[str, Any]:
    """How ``to_dict`` stores a config: a path as the path, anything else as its JSON object (a
    ``tuned.json`` document when it has provenance)."""
    if isinstance(config, os.PathLike) or (
        isinstance(config, str) and not config.lstrip().startswith("{")
    ):
        return os.fspath(config)
    return load_config(config).to_json()


def _recorder_ref(recorder: adapters.RecorderLike) -> str | None:
    """How ``to_dict`` stores a recorder: a path as the path. An object (a caller's queue, a
    configured :class:`~bookend_rag.recorder.RetrievalRecorder`) cannot be serialised: stored as
    ``None``, with a warning naming the fix, so a loaded pipeline does not stop recording
    without a word."""
    if recorder is None:
        return None
    if isinstance(recorder, str | os.PathLike):
        return os.fspath(recorder)
    path = getattr(recorder, "path", None)
    fix = f"recorder={os.fspath(path)!r}" if isinstance(path, str | os.PathLike) else "a path"
    warnings.warn(
        f"BookendRanker.to_dict: recorder={adapters.shown(recorder)} is an object and is not "
        f"serialised (a loaded pipeline records nothing); give the ranker {fix} to serialise it",
        adapters.RecorderWarning,
        stacklevel=adapters.caller_stacklevel(),
    )
    return None


def _make_recorder_directory(recorder: Any) -> None:
    """Make the directory of a recorder path read from a serialised pipeline, which may have
    been recorded on another machine (the ranker itself refuses a path without a directory)."""
    if not isinstance(recorder, str):
        return  # not a path: the ranker's own check names it
    directory = os.path.dirname(recorder)
    if not directory or os.path.isdir(directory):
        return
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
    except OSError as exc:
        raise ValueError(
            f"recorder={recorder!r}: its directory cannot be made on this machine "
            f"({exc.strerror or exc}); set init_parameters.recorder to a writable path or null"
        ) from None


def _check_word_count(words: int | None) -> None:
    if words is not None and (isinstance(words, bool) or not isinstance(words, int) or words < 1):
        raise ValueError(
            f"word_count_threshold must be a positive integer or None, "
            f"got word_count_threshold={words!r}"
        )


def _check_own_settings(words: int | None, source_key: str | None, annotate: bool) -> None:
    """The settings that are the ranker's own, not :class:`bookend_rag.PlacementConfig`'s."""
    _check_word_count(words)
    if source_key is not None and not isinstance(source_key, str):
        raise ValueError(f"source_key must be a meta key or None, got source_key={source_key!r}")
    if not isinstance(annotate, bool):
        raise ValueError(f"annotate must be True or False, got annotate={annotate!r}")


def _check_documents(documents: list[Document]) -> tuple[int, list[float | None]]:
    """Haystack documents with text, a hashable id, and a finite real score or none; how many
    distinct ids they hold, and their scores."""
    if not isinstance(documents, list):
        raise ValueError(
            f"documents must be a list of Haystack Documents, got documents={documents!r}"
        )
    plain = _plain_documents(documents)
    if plain is not None:  # the common case, without the ABC checks
        return plain
    scores: list[float | None] = []
    for i, doc in enumerate(documents):
        if not isinstance(doc, Document):
            raise ValueError(
                f"documents must be Haystack Documents, got documents[{i}] of type "
                f"{type(doc).__name__}"
            )
        if doc.content is None:
            raise ValueError("Some provided documents are not textual; BookendRanker needs text.")
        if not isinstance(doc.content, str):
            raise ValueError(f"documents[{i}].content={doc.content!r} must be a string")
        try:
            hash(doc.id)
        except TypeError:
            raise ValueError(f"documents[{i}].id={doc.id!r} must be a string") from None
        # Checked here, not left to the core: deduplication compares the scores first, and it
        # moves the documents, so an index the core named would not be the caller's.
        scores.append(adapters.read_score(doc.score, "documents[{}].score", i))
    return len(set(map(_ID, documents))), scores


_ID = operator.attrgetter("id")
_CONTENT = operator.attrgetter("content")
_SCORE = operator.attrgetter("score")
_PLAIN_SCORES = {float, type(None)}


def _plain_documents(documents: list[Any]) -> tuple[int, list[float | None]] | None:
    """How many distinct ids the documents hold, and their scores, when every one is as
    retrievers make them (text, a string id, a finite float score or none), else ``None``;
    checked at C speed: a finite sum of the scores rules out NaN and the infinities, and the
    types are counted (a list's count compares by identity first, cheaper than a set). The set of
    ids is the deduplication's too, and the scores the placement's: reading each once saved a
    tenth of a call at K = 1000 (the ids) and a sixteenth at K = 20 (the scores)."""
    n = len(documents)
    if list(map(type, documents)).count(Document) != n:
        return None
    if list(map(type, map(_CONTENT, documents))).count(str) != n:
        return None
    ids = list(map(_ID, documents))
    if list(map(type, ids)).count(str) != n:
        return None
    scores = list(map(_SCORE, documents))
    if not set(map(type, scores)) <= _PLAIN_SCORES or not math.isfinite(sum(filter(None, scores))):
        return None
    return len(set(ids)), scores


def _content(document: Document) -> str:
    return document.content or ""


def _meta_value(document: Document, key: str) -> Any:
    return document.meta.get(key)


def _meta(document: Document) -> dict[str, Any]:
    return document.meta
