"""What a run measures on (:class:`RunSpec`): its items (a file, a list, or a built-in suite's),
or probe items built from the user's recorded retrievals; the prompt they are rendered into and
the retrievers that rank them; and the items it loads (:class:`RunItems`). ``evaluate``, ``tune``
and ``calibrate`` each take one, beside the model (a
:class:`~bookend_rag.lab.models.backends.ScorerSpec` or a scorer) and their own options.

Which source decides, recorded in the report's ``settings["source"]``: labelled items (a file or
a list) when given, even beside retrievals (items with real answers stay the preferred source);
else probes from retrievals (:mod:`~bookend_rag.lab.items.probes`), built once the model is
loaded, since its tokenizer draws their codes (:meth:`RunItems.for_model`); else a built-in suite.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bookend_rag.lab.experiments.setup import run_families, source_settings, templated
from bookend_rag.lab.experiments.trials import retriever_names
from bookend_rag.lab.items.item import Item
from bookend_rag.lab.items.probes import probe_items
from bookend_rag.lab.items.suites import load_items
from bookend_rag.lab.items.template import PromptTemplate, TemplateLike, template_of
from bookend_rag.lab.models.scorer import Scorer, context_length, exact_tokens
from bookend_rag.retrievals import RetrievalRecord, read_retrievals

__all__ = ["DEFAULT_K", "RunItems", "RunSpec"]

#: Documents per built-in item when a run is not told.
DEFAULT_K = 10


@dataclass(frozen=True)
class RunSpec:
    """The items of a run and the prompt they are rendered into.

    A field left ``None`` takes the experiment's default, which its docstring gives (``evaluate``
    draws 100 items from the ``evaluation`` split, ``tune`` 60 from the ``calibration`` split, so
    that ``evaluate`` can confirm its choice on items it never saw).

    Attributes:
        items: a JSONL path (format in :mod:`bookend_rag.lab.items.item`), a list of
            :class:`~bookend_rag.lab.items.item.Item`, or ``None`` for built-in items.
        suite: the built-in items' suite (:mod:`bookend_rag.lab.items.suites`: ``hard``,
            ``lookup``, ``nq``, ``records``).
        k: documents per built-in item (default :data:`DEFAULT_K`).
        n_items: built-in items (the first of the split).
        seed: the generated suites' seed (and the seed of a run's random orders).
        families: the generated suites' template families.
        split: the built-in items' split: ``calibration``, ``selection`` or ``evaluation``.
        retrievers: from ``"bm25"``, ``"minilm"``, ``"file"`` (the documents' own scores); items
            take them in turn. Default: ``"file"`` when every document has a score, else BM25 and
            MiniLM.
        template: the prompt the items are rendered into
            (:mod:`~bookend_rag.lab.items.template`): a Jinja2 template file (``.json``: chat
            messages), a LangChain, LlamaIndex or Haystack prompt object, or ``None`` for
            bookend's own completion prompt. The report records its name and hash.
        retrievals: recorded retrievals (a JSON Lines file of
            :class:`~bookend_rag.retrievals.RetrievalRecord`, or the records) to build probe
            items from when ``items`` is ``None``: their codes are drawn with ``seed``, their
            documents ranked by the recorded scores (retriever ``"file"`` only), and ``n_items``
            caps them (``None``: every usable retrieval).
    """

    items: str | Path | Sequence[Item] | None = None
    suite: str | None = None
    k: int | None = None
    n_items: int | None = None
    seed: int = 0
    families: Sequence[str] | None = None
    split: str | None = None
    retrievers: Sequence[str] | None = None
    template: TemplateLike = None
    retrievals: str | Path | Sequence[RetrievalRecord] | None = None

    def sized(self, *, suite: str, n_items: int, split: str) -> tuple[str, int, int, str]:
        """The run's suite, K, number of built-in items and split: this spec's, else the
        experiment's defaults (``suite``, ``n_items``, ``split``; K: :data:`DEFAULT_K`)."""
        return (
            suite if self.suite is None else self.suite,
            DEFAULT_K if self.k is None else self.k,
            n_items if self.n_items is None else self.n_items,
            split if self.split is None else self.split,
        )

    def load(self, *, suite: str, n_items: int, split: str) -> RunItems:
        """The run's items, rendered into its template, and their retrievers; ``suite``,
        ``n_items`` and ``split`` are the experiment's defaults (:meth:`sized`).

        Raises:
            ValueError: for malformed items or retrievals, a bad template, unknown retrievers or
                suites, or bad sizes.
        """
        prompt = template_of(self.template)
        if self.items is None and self.retrievals is not None:
            return self._pending_probes(prompt)
        suite, k, n_items, split = self.sized(suite=suite, n_items=n_items, split=split)
        families = run_families(suite, self.families)
        loaded = load_items(
            self.items,
            suite=suite,
            n_items=n_items,
            k=k,
            seed=self.seed,
            split=split,
            families=families,
        )
        named = None if self.retrievals is None else _named(self.retrievals)
        settings = source_settings(
            self.items, suite, k, len(loaded), self.seed, families, split, retrievals=named
        )
        rendered = templated(loaded, prompt)
        return RunItems(rendered, prompt, retriever_names(rendered, self.retrievers), settings)

    def _pending_probes(self, prompt: PromptTemplate) -> RunItems:
        """The run of probes from :attr:`retrievals`, read and checked now; the items are built
        by :meth:`RunItems.for_model`."""
        assert self.retrievals is not None
        if self.retrievers is not None and list(self.retrievers) != ["file"]:
            raise ValueError(
                "probes keep the retriever's own order: retrievers must be ['file'] with "
                f"retrievals, got retrievers={list(self.retrievers)!r}"
            )
        if self.n_items is not None and self.n_items < 1:
            raise ValueError(f"n_items must be >= 1 or None, got n_items={self.n_items!r}")
        if isinstance(self.retrievals, (str, Path)):
            records = tuple(read_retrievals(self.retrievals))
        else:
            records = tuple(self.retrievals)
        if not records:
            raise ValueError(f"retrievals={_named(self.retrievals)!r} holds no retrieval")
        named = _named(self.retrievals)
        settings = source_settings(None, "", 0, None, self.seed, None, "", retrievals=named)
        pending = _Pending(records, self.n_items, self.seed)
        return RunItems([], prompt, ["file"], settings, pending)


@dataclass(frozen=True)
class RunItems:
    """What :meth:`RunSpec.load` gives a run.

    Attributes:
        items: the items, rendered into the template (probes: none until :meth:`for_model`).
        template: the template.
        retrievers: the retrievers' names, which the items take in turn.
        settings: the report settings that name the items and their ``source``
            (:func:`~bookend_rag.lab.experiments.setup.source_settings`).
        pending: the retrievals whose probes :meth:`for_model` builds (``None``: none).
    """

    items: list[Item]
    template: PromptTemplate
    retrievers: list[str]
    settings: dict[str, Any]
    pending: _Pending | None = None

    def for_model(self, scorer: Scorer, say: Callable[[str], None]) -> RunItems:
        """The items the run scores on ``scorer``: the probes of the pending retrievals, with
        codes that are single tokens of its tokenizer and prompts within its context, said in one
        line to ``say`` (:meth:`~bookend_rag.lab.items.probes.Probes.summary`); other items as
        they are.

        Raises:
            ValueError: when no retrieval gives a probe, with the reasons counted.
        """
        if self.pending is None:
            return self
        exact = exact_tokens(scorer)
        probes = probe_items(
            self.pending.records,
            seed=self.pending.seed,
            template=self.template,
            token_length=scorer.token_length if exact else None,
            context=context_length(scorer),
        )
        items = probes.items[: self.pending.limit]
        if not items:
            raise ValueError(
                f"retrievals={self.settings['source']['retrievals']!r} give no probe item: "
                f"{probes.summary()}"
            )
        say(probes.summary())
        source = self.settings["source"] | probes.to_json() | {"used": len(items)}
        settings = self.settings | {"n_items": len(items), "source": source}
        return replace(self, items=templated(items, self.template), settings=settings, pending=None)


@dataclass(frozen=True)
class _Pending:
    """Retrievals whose probes are built once the model is known: the records, the most probes
    to keep (``None``: all) and the seed of their codes."""

    records: tuple[RetrievalRecord, ...]
    limit: int | None
    seed: int


def _named(retrievals: str | Path | Sequence[RetrievalRecord]) -> str:
    """How the report names retrievals: the file's path, or ``"given"``."""
    return str(retrievals) if isinstance(retrievals, (str, Path)) else "given"
