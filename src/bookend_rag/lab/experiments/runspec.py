"""What a run measures on (:class:`RunSpec`): its items (a file, a list, or a built-in suite's),
the prompt they are rendered into and the retrievers that rank them; and the items it loads
(:class:`RunItems`). ``evaluate``, ``tune`` and ``calibrate`` each take one, beside the model (a
:class:`~bookend_rag.lab.models.backends.ScorerSpec` or a scorer) and their own options.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bookend_rag.lab.experiments.setup import run_families, source_settings, templated
from bookend_rag.lab.experiments.trials import retriever_names
from bookend_rag.lab.items.item import Item
from bookend_rag.lab.items.suites import load_items
from bookend_rag.lab.items.template import PromptTemplate, TemplateLike, template_of

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
            ValueError: for malformed items, a bad template, unknown retrievers or suites, or bad
                sizes.
        """
        suite, k, n_items, split = self.sized(suite=suite, n_items=n_items, split=split)
        prompt = template_of(self.template)
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
        settings = source_settings(self.items, suite, k, len(loaded), self.seed, families, split)
        rendered = templated(loaded, prompt)
        return RunItems(rendered, prompt, retriever_names(rendered, self.retrievers), settings)


@dataclass(frozen=True)
class RunItems:
    """What :meth:`RunSpec.load` gives a run.

    Attributes:
        items: the items, rendered into the template.
        template: the template.
        retrievers: the retrievers' names, which the items take in turn.
        settings: the report settings that name the items
            (:func:`~bookend_rag.lab.experiments.setup.source_settings`).
    """

    items: list[Item]
    template: PromptTemplate
    retrievers: list[str]
    settings: dict[str, Any]
