"""What a run measures on (:class:`RunSpec`): its items (a file, a list, or a built-in suite's),
or probe items built from the user's recorded retrievals; the prompt they are rendered into and
the retrievers that rank them; and the items it loads (:class:`RunItems`). ``evaluate``, ``tune``
and ``calibrate`` each take one, beside the model (a
:class:`~bookend_rag_lab.models.backends.ScorerSpec` or a scorer) and their own options.

Which source decides, recorded in the report's ``settings["source"]``: labelled items (a file or
a list) when given, even beside retrievals (items with real answers stay the preferred source);
else probes from retrievals, built once the model is loaded (:meth:`RunItems.for_model`), since
the model answers each document for self-answer probes (:mod:`~bookend_rag_lab.items.self_answer`,
the default) and its tokenizer draws the codes of code probes
(:mod:`~bookend_rag_lab.items.codes`), each design taken from
:data:`~bookend_rag_lab.experiments.probing.PROBE_DESIGNS`; else a built-in suite.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bookend_rag.errors import shown
from bookend_rag.retrievals import RetrievalReader, RetrievalRecord, retrieval_files
from bookend_rag_lab.experiments.cost import DryRun, Estimate, answers_estimate
from bookend_rag_lab.experiments.probing import DEFAULT_DESIGN, PROBE_DESIGNS, ProbeRequest
from bookend_rag_lab.experiments.setup import run_families, source_settings, templated
from bookend_rag_lab.experiments.trials import retriever_names
from bookend_rag_lab.items.item import Item
from bookend_rag_lab.items.suites import load_items
from bookend_rag_lab.items.template import PromptTemplate, TemplateLike, template_of
from bookend_rag_lab.models.scorer import Prompt, Scorer

__all__ = ["DEFAULT_K", "RunItems", "RunSpec"]

#: Documents per built-in item when a run is not told.
DEFAULT_K = 10

#: What :attr:`RunSpec.retrievals` holds: paths or patterns, or the records.
Retrievals = str | Path | Sequence[str | Path] | Sequence[RetrievalRecord]


@dataclass(frozen=True)
class RunSpec:
    """The items of a run and the prompt they are rendered into.

    A field left ``None`` takes the experiment's default, which its docstring gives (``evaluate``
    draws 100 items from the ``evaluation`` split, ``tune`` 60 from the ``calibration`` split, so
    that ``evaluate`` can confirm its choice on items it never saw).

    Attributes:
        items: a JSONL path (format in :mod:`bookend_rag_lab.items.item`), a list of
            :class:`~bookend_rag_lab.items.item.Item`, or ``None`` for built-in items.
        suite: the built-in items' suite (:mod:`bookend_rag_lab.items.suites`: ``hard``,
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
            (:mod:`~bookend_rag_lab.items.template`): a Jinja2 template file (``.json``: chat
            messages), a LangChain, LlamaIndex or Haystack prompt object, or ``None`` for
            bookend's own completion prompt. The report records its name and hash.
        retrievals: recorded retrievals (JSON Lines files of
            :class:`~bookend_rag.retrievals.RetrievalRecord`: a path or glob pattern, or several,
            read as :func:`~bookend_rag.retrievals.retrieval_files` orders them, a recorder's
            rotated parts oldest first; or the records) to build probe items from when ``items``
            is ``None``: their documents ranked by the recorded scores (retriever ``"file"``
            only), and ``n_items`` caps them (``None``: every usable retrieval).
        probes: how probes are built, a name in
            :data:`~bookend_rag_lab.experiments.probing.PROBE_DESIGNS`: ``"self-answer"``
            (default) or ``"codes"`` (drawn with ``seed``).
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
    retrievals: Retrievals | None = None
    probes: str = DEFAULT_DESIGN

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
        if self.probes not in PROBE_DESIGNS:
            raise ValueError(
                f"probes must be one of {list(PROBE_DESIGNS)}, got probes={self.probes!r}"
            )
        if self.retrievers is not None and list(self.retrievers) != ["file"]:
            raise ValueError(
                "probes keep the retriever's own order: retrievers must be ['file'] with "
                f"retrievals, got retrievers={list(self.retrievers)!r}"
            )
        if self.n_items is not None and self.n_items < 1:
            raise ValueError(f"n_items must be >= 1 or None, got n_items={self.n_items!r}")
        named = _named(self.retrievals)
        records, read = _read(self.retrievals)
        if not records:
            counted = ", ".join(["0 records", *_reading_notes(read)])
            raise ValueError(f"retrievals={named!r} holds no retrieval: {counted}")
        _check_usable(records, self.probes, named)
        settings = source_settings(None, "", 0, None, self.seed, None, "", retrievals=named)
        settings["source"] |= read
        pending = _Pending(records, self.n_items, self.seed, self.probes, _reading_notes(read))
        return RunItems([], prompt, ["file"], settings, pending)


@dataclass(frozen=True)
class RunItems:
    """What :meth:`RunSpec.load` gives a run.

    Attributes:
        items: the items, rendered into the template (probes: none until :meth:`for_model`).
        template: the template.
        retrievers: the retrievers' names, which the items take in turn.
        settings: the report settings that name the items and their ``source``
            (:func:`~bookend_rag_lab.experiments.setup.source_settings`).
        pending: the retrievals whose probes :meth:`for_model` builds (``None``: none).
        unanswered: the generation prompts of self-answer probes built for a dry run, whose
            answers are placeholders: what the answers would cost.
        most_answers: the most answers the run would generate (a dry run's bound): those of
            :attr:`unanswered`, or where a limit stopped the reading, one per document of every
            retrieval that passed the checks made before generation, since a run reads on past
            a retrieval that gives no probe.
    """

    items: list[Item]
    template: PromptTemplate
    retrievers: list[str]
    settings: dict[str, Any]
    pending: _Pending | None = None
    unanswered: tuple[Prompt, ...] = ()
    most_answers: int = 0

    def for_model(
        self,
        scorer: Scorer,
        say: Callable[[str], None],
        *,
        answer: bool = True,
        progress: bool = True,
    ) -> RunItems:
        """The items the run scores on ``scorer``: the probes of the pending retrievals, said in
        one line to ``say`` (:meth:`~bookend_rag_lab.items.probes.Probes.summary`); other items
        as they are. Self-answer probes take the model's answer from each document (a progress
        bar counts them; ``answer=False``, for a dry run, generates nothing and gives each
        document a placeholder answer of
        :data:`~bookend_rag_lab.items.self_answer.ANSWER_TOKENS` words, an upper bound on what
        scoring it costs); code probes draw codes that are single tokens of its tokenizer. Both
        keep prompts within its context.

        Raises:
            ValueError: when no retrieval gives a probe, or the probes are not worth scoring
                (:attr:`~bookend_rag_lab.items.probes.Probes.worth_scoring`: the model gave one
                answer for most documents), with the reasons counted.
        """
        if self.pending is None:
            return self
        unanswered: list[Prompt] = []
        pending = self.pending
        request = ProbeRequest(
            pending.records,
            pending.seed,
            pending.limit,
            self.template,
            scorer,
            unanswered if not answer else None,
            progress,
        )
        probes = PROBE_DESIGNS[pending.design].build(request)
        items = probes.items[: pending.limit]
        summary = "; ".join([probes.summary(), *pending.notes])
        if not items or not probes.worth_scoring:
            usable = "" if not items else " worth scoring"
            raise ValueError(
                f"retrievals={self.settings['source']['retrievals']!r} give no probe item"
                f"{usable}: {summary}"
            )
        say(summary)
        if unanswered:
            say(f"dry run: {len(unanswered)} answers not generated (one request each, priced)")
        found = probes.to_json() | {"summary": summary, "used": len(items)}
        source = self.settings["source"] | found
        settings = self.settings | {"n_items": len(items), "source": source}
        return replace(
            self,
            items=templated(items, self.template),
            settings=settings,
            pending=None,
            unanswered=tuple(unanswered),
            most_answers=pending.most_answers(len(unanswered)),
        )

    def dry_run(self, scorer: Scorer, scoring: Estimate, *, budgeted: bool = False) -> DryRun:
        """What a dry run states on ``scorer``: the ``scoring`` it priced and the answers of the
        self-answer probes built for it (:attr:`unanswered`); ``budgeted``: the command has a
        budget, which bounds the scoring only."""
        answers = answers_estimate(scorer, self.unanswered) if self.unanswered else None
        return DryRun(scoring, answers, len(self.items), self.most_answers, budgeted)


@dataclass(frozen=True)
class _Pending:
    """Retrievals whose probes are built once the model is known: the records, the most probes
    to keep (``None``: all), the seed of their codes, the design (a name in
    :data:`~bookend_rag_lab.experiments.probing.PROBE_DESIGNS`) and what reading them met
    beside records, as clauses of the probes' summary."""

    records: tuple[RetrievalRecord, ...]
    limit: int | None
    seed: int
    design: str
    notes: tuple[str, ...] = ()

    def most_answers(self, planned: int) -> int:
        """The most answers a run generates, given the ``planned`` ones of a dry run (which
        gives every retrieval that passed the checks made before generation a probe)."""
        if not planned or self.limit is None:
            return planned
        unusable = PROBE_DESIGNS[self.design].unusable
        usable = (r for r in self.records if unusable(r) is None)
        return max(planned, sum(len(r.documents) for r in usable))


def _paths(retrievals: Retrievals) -> list[str | Path] | None:
    """The paths and patterns ``retrievals`` names (``None``: they are records)."""
    if isinstance(retrievals, (str, Path)):
        return [retrievals]
    paths = [r for r in retrievals if isinstance(r, (str, Path))]
    return paths if paths and len(paths) == len(retrievals) else None


def _named(retrievals: Retrievals) -> str:
    """How the report names retrievals: the paths and patterns as given, or ``"given"``."""
    paths = _paths(retrievals)
    return "given" if paths is None else " ".join(str(p) for p in paths)


def _read(retrievals: Retrievals) -> tuple[tuple[RetrievalRecord, ...], dict[str, Any]]:
    """The records, and what reading them met beside them (the report's ``source``): the files
    read in order, the cut-off last lines skipped, the calls the recorder could not record."""
    given = [retrievals] if isinstance(retrievals, (str, Path)) else retrievals
    paths = _paths(given)
    if paths is None:
        records = tuple(r for r in given if isinstance(r, RetrievalRecord))
        if len(records) != len(given):
            raise ValueError(
                "retrievals must be paths and glob patterns, or RetrievalRecord objects, "
                f"got {shown(list(given))}"
            )
        unrecorded = sum(r.unrecorded for r in records)
        return records, {"files": [], "partial_lines": 0, "unrecorded": unrecorded}
    reader = RetrievalReader(retrieval_files(*paths))
    records = tuple(reader)
    files = [str(f) for f in reader.files]
    read = {"files": files, "partial_lines": reader.partial_lines, "unrecorded": reader.unrecorded}
    return records, read


def _reading_notes(read: dict[str, Any]) -> tuple[str, ...]:
    """What reading the files met beside records, as clauses of the probes' summary: the
    cut-off last lines skipped, the calls the recorder could not record (none: no clause)."""
    notes = []
    if read["partial_lines"]:
        lines = "line" if read["partial_lines"] == 1 else "lines"
        notes.append(
            f"{read['partial_lines']} cut-off last {lines} skipped (a file still being written)"
        )
    if read["unrecorded"]:
        notes.append(f"{read['unrecorded']} calls the recorder could not record")
    return tuple(notes)


def _check_usable(records: Sequence[RetrievalRecord], design: str, named: str) -> None:
    """Refuse, before any model loads, retrievals of which none can give a probe of ``design``
    whatever the model (:attr:`~bookend_rag_lab.experiments.probing.ProbeDesign.unusable`),
    each reason counted."""
    chosen = PROBE_DESIGNS[design]
    reasons = Counter(chosen.unusable(record) for record in records)
    if reasons[None]:
        return
    counted = "; ".join(f"{n} skipped: {chosen.reasons[k]}" for k, n in reasons.items() if k)
    raise ValueError(
        f"retrievals={named!r}: none of its {len(records)} retrievals can give a {design} "
        f"probe: {counted}"
    )
