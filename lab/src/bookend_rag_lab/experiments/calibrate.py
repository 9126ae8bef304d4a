"""``bookend calibrate``: where does *this* model read a fact best? Slot table and fitted profile.

Every item of a suite (default the plain ``lookup`` items) is rendered with its gold document in
each slot ``s = 0..K-1`` in turn, for every K in ``docs`` and every filler range in ``filler`` (a
*cell*), and each candidate answer is scored after the prompt (:func:`measure_outcomes`). Each
(item, slot) becomes a :class:`~bookend_rag_lab.fitting.outcomes.SlotOutcome` with the gold
document's token span inside the documents block
(:func:`~bookend_rag_lab.fitting.outcomes.slot_outcome`).

Then, on the cells not held back: the slot table of the largest K
(:func:`~bookend_rag_lab.fitting.slots.slot_profile`), the fitted profile
(:func:`~bookend_rag_lab.fitting.profile.fit_outcomes`); on the held-back cells, the prediction
check (:mod:`bookend_rag_lab.fitting.holdout`). A refit reads the outcomes of earlier reports
instead of measuring. The report's fields: :mod:`bookend_rag_lab.report.calibration`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import bookend_rag
from bookend_rag_lab.experiments.runspec import RunSpec
from bookend_rag_lab.experiments.setup import templated
from bookend_rag_lab.fitting.holdout import heldback_report, heldback_summary
from bookend_rag_lab.fitting.outcomes import SlotOutcome, outcomes_from_json, slot_outcome
from bookend_rag_lab.fitting.profile import OutcomeFit, Target, fit_outcomes
from bookend_rag_lab.fitting.slots import slot_profile, summarise
from bookend_rag_lab.items.item import Item
from bookend_rag_lab.items.lookup import DEFAULT_FILLER
from bookend_rag_lab.items.suites import SUITES, suite_items
from bookend_rag_lab.items.template import BOOKEND_PROMPT, PromptTemplate, template_of
from bookend_rag_lab.metrics import item_metrics
from bookend_rag_lab.models import Scorer
from bookend_rag_lab.models.backends import ScorerSpec, scorer_for
from bookend_rag_lab.models.scorer import capabilities, endpoint_settings
from bookend_rag_lab.progress import progress_bar
from bookend_rag_lab.report.calibration import Cell, calibration_report, cell_line
from bookend_rag_lab.report.figures import plot_heldback, plot_slots

__all__ = ["CalibrationResult", "Cells", "calibrate", "load_outcomes", "measure_outcomes"]


@dataclass
class CalibrationResult:
    """What :func:`calibrate` returns.

    Attributes:
        report: the JSON report (:mod:`bookend_rag_lab.report.calibration`).
        table: the slot table of the largest fitted K.
        fit: the fitted profile and its likelihood.
        files: the files written.
    """

    report: dict[str, Any]
    table: bookend_rag.TabulatedProfile
    fit: OutcomeFit
    files: list[Path] = field(default_factory=list)


def calibrate(
    out: str | Path,
    run: RunSpec | None = None,
    scorer: Scorer | ScorerSpec | None = None,
    *,
    outcomes: Sequence[str | Path] | None = None,
    docs: Sequence[int] | None = None,
    filler: Sequence[tuple[int, int]] = (DEFAULT_FILLER,),
    metric: str = "accuracy",
    target: Target = "correct",
    holdout_docs: Sequence[int] = (),
    holdout_filler: Sequence[tuple[int, int]] = (),
    compare: Sequence[str] = (),
    slots_out: str | Path | None = None,
    json_path: str | Path | None = None,
    plot: str | Path | None = None,
    holdout_plot: str | Path | None = None,
    settings: Mapping[str, Any] | None = None,
    progress: bool = True,
    log: Callable[[str], None] | None = None,
) -> CalibrationResult:
    """Measure (or reload) outcomes, write the fitted profile to ``out`` and the slot table beside
    it (``slots_out``, default ``<out stem>-slots.json``); see ``bookend calibrate --help``.

    Args:
        run: the items measured (:class:`~bookend_rag_lab.experiments.runspec.RunSpec`, built-in
            only: ``items`` and ``retrievers`` do not apply): ``n_items`` items of ``suite`` per K
            in ``docs`` and filler range in ``filler``, rendered into ``template`` (token offsets
            of a chat prompt count its messages' text, :mod:`~bookend_rag_lab.items.template`);
            by default 30 of the ``lookup`` suite's ``calibration`` split, every template family.
        scorer, outcomes: the source of the outcomes, exactly one: the model (a
            :class:`~bookend_rag_lab.models.Scorer` or a
            :class:`~bookend_rag_lab.models.backends.ScorerSpec`, its calls cached in memory
            unless the spec names a cache), or earlier JSON reports (``json_path`` of a previous
            run) to refit.
        docs: every K measured (default: the run's K).
        filler: the ``lookup`` suite's filler ranges, one cell each; other suites take only
            ``(DEFAULT_FILLER,)``, their lengths being their own.
        metric: the slot table's weights, ``"accuracy"`` or ``"candidate_prob"``.
        target: what the fit's likelihood scores (:mod:`bookend_rag_lab.fitting.profile`).
        holdout_docs, holdout_filler: cells whose K or filler is listed are held back from the
            fit and predicted (:mod:`bookend_rag_lab.fitting.holdout`), with every profile of
            ``compare`` (paths or presets) beside the fitted one.
        json_path, plot, holdout_plot: the JSON report (written with the outcomes first, so that
            a failed fit loses no measurement), the slot table's PNG, the held-back PNG.
        settings: more settings to record in the report (the command line adds its threads).
        progress, log: progress bars on stderr; where the summary lines go (default nowhere).

    Raises:
        ValueError: for no or several sources, a run with items or retrievers, bad cells, every
            cell held back, or a held-back plot without held-back cells.
    """
    say = log or (lambda _message: None)
    if scorer is not None and outcomes is None:
        cells = Cells.of(run or RunSpec(), docs, filler)
        with scorer_for(scorer) as model:
            found, recorded = cells.measure(model, progress=progress), cells.settings(model)
    elif outcomes is not None and scorer is None:
        found, recorded = load_outcomes(outcomes)
    else:
        raise ValueError("give exactly one of scorer and outcomes (reports to refit)")
    recorded |= settings or {}
    groups = _groups(found)
    report = calibration_report(recorded, groups, found)
    _write_json(json_path, report)
    for cell, group in groups.items():
        say(cell_line(cell, group))
    train, heldback = _split(groups, holdout_docs, holdout_filler)
    if holdout_plot is not None and not heldback:
        raise ValueError("holdout_plot needs held-back cells (holdout_docs, holdout_filler)")
    name = Path(str(recorded.get("weights", "model"))).name
    table = _slot_table(train, metric, name, recorded, report["cells"])
    out_path = Path(out)
    files = [table.save(slots_out or out_path.with_name(f"{out_path.stem}-slots.json"))]
    fit = fit_outcomes(train, target=target, label=f"{name} fitted", settings=recorded)
    files.append(fit.profile.save(out_path))
    say(fit.summary())
    report["fit"] = fit.to_json()
    if heldback:
        others = {ref: bookend_rag.resolve_profile(ref) for ref in compare}
        report["holdout"] = heldback_report(fit, table, train, heldback, others)
        say(heldback_summary(report["holdout"]))
        files += _holdout_plot(holdout_plot, report["holdout"], name)
    files += _write_json(json_path, report) + _slots_plot(plot, table, train)
    return CalibrationResult(report=report, table=table, fit=fit, files=files)


def measure_outcomes(
    scorer: Scorer,
    items: Sequence[Item],
    filler: tuple[int, int],
    step: Callable[[int], object] | None = None,
) -> list[SlotOutcome]:
    """Score every item with its gold document in every slot (module docstring); ``filler``
    names the cell, ``step(1)`` is called after each (item, slot).

    Raises:
        ValueError: for an item without candidates or a known gold document, or a scorer that
            gives no log-probabilities (generation only).
    """
    if capabilities(scorer).generation_only:
        raise ValueError(
            "bookend calibrate fits log-probabilities and candidate probabilities: a "
            "generation-only scorer (--no-logprobs) gives neither"
        )
    out = []
    for item in items:
        if item.candidates is None or item.gold is None:
            raise ValueError(f"item {item.item_id!r} needs candidates and a gold document")
        for slot in range(len(item.documents)):
            order = item.order_with_gold_at(slot)
            scored = scorer.score(item.prompt(order), item.continuations)
            values = item_metrics(scored, item.answer_index, candidates=True)
            out.append(slot_outcome(item, order, slot, values, scorer.token_length, filler))
            if step is not None:
                step(1)
    return out


def load_outcomes(paths: Sequence[str | Path]) -> tuple[list[SlotOutcome], dict[str, Any]]:
    """The outcomes of earlier JSON reports, with the first report's settings and
    ``outcome_reports`` (the paths).

    Raises:
        ValueError: for a file that is not a calibrate report with outcomes.
    """
    outcomes: list[SlotOutcome] = []
    settings: dict[str, Any] = {}
    for path in paths:
        try:
            report = json.loads(Path(path).read_text(encoding="utf-8"))
            outcomes.extend(outcomes_from_json(report["outcomes"]))
        except (OSError, json.JSONDecodeError, KeyError) as exc:
            raise ValueError(
                f"not a calibrate report with outcomes: path={str(path)!r} ({exc})"
            ) from None
        settings = settings or dict(report.get("settings", {}))
    return outcomes, {**settings, "outcome_reports": [str(p) for p in paths]}


@dataclass(frozen=True)
class Cells:
    """What a calibration measures: ``n_items`` items of ``suite`` for every K in ``docs`` and
    every filler range in ``filler`` (one cell each).

    Raises:
        ValueError: for a filler range other than the default with a suite whose lengths are its
            own (checked before any model is loaded).
    """

    suite: str
    docs: Sequence[int]
    filler: Sequence[tuple[int, int]]
    n_items: int
    families: Sequence[str] | None
    seed: int
    split: str
    template: PromptTemplate = BOOKEND_PROMPT

    @classmethod
    def of(
        cls, run: RunSpec, docs: Sequence[int] | None, filler: Sequence[tuple[int, int]]
    ) -> Cells:
        """The cells of a run: its built-in items (by default 30 per cell of the ``lookup``
        suite's ``calibration`` split) for every K in ``docs`` (default: the run's K).

        Raises:
            ValueError: for a run with items, retrievals or retrievers (calibrate measures
                built-in items).
        """
        if run.items is not None or run.retrievals is not None or run.retrievers is not None:
            raise ValueError(
                "calibrate measures built-in items with the gold document in every slot: "
                "a run's items, retrievals and retrievers do not apply"
            )
        suite, k, n_items, split = run.sized(suite="lookup", n_items=30, split="calibration")
        cells = docs or (k,)
        prompt = template_of(run.template)
        return cls(suite, cells, filler, n_items, run.families, run.seed, split, prompt)

    def __post_init__(self) -> None:
        if self._own_lengths and list(self.filler) != [DEFAULT_FILLER]:
            raise ValueError(
                f"filler does not apply to suite {self.suite!r} (its lengths are its own), "
                f"got filler={list(self.filler)!r}"
            )

    @property
    def _own_lengths(self) -> bool:
        """Whether the suite's documents have lengths of their own (no filler)."""
        return self.suite in SUITES and not SUITES[self.suite].filler

    def measure(self, scorer: Scorer, *, progress: bool) -> list[SlotOutcome]:
        """The outcomes of every cell, cell by cell.

        Raises:
            ValueError: for bad suite arguments.
        """
        own_lengths = self._own_lengths
        out = []
        for k in self.docs:
            for filler in self.filler:
                items = suite_items(
                    self.suite,
                    self.n_items,
                    k,
                    seed=self.seed,
                    split=self.split,
                    families=self.families,
                    filler=None if own_lengths else filler,
                )
                items = templated(items, self.template)
                lengths = (
                    f"{self.suite} items" if own_lengths else f"filler {filler[0]}-{filler[1]}"
                )
                desc = f"calibrate K={k} {lengths}"
                with progress_bar(
                    len(items) * k, desc, unit="input", enabled=progress, leave=False
                ) as bar:
                    out += measure_outcomes(scorer, items, filler, bar.update)
        return out

    def settings(self, scorer: Scorer) -> dict[str, Any]:
        """What a measurement ran on (the report's and the profiles' settings)."""
        return {
            "weights": scorer.model_id,
            "docs": list(self.docs),
            "filler": [list(f) for f in self.filler],
            "items": self.n_items,
            "families": list(self.families) if self.families else "all",
            "items_kind": "plain" if self.suite == "lookup" else self.suite,
            "seed": self.seed,
            "split": self.split,
            "endpoint": endpoint_settings(scorer),
            "template": self.template.to_json(),
        }


def _groups(outcomes: Sequence[SlotOutcome]) -> dict[Cell, list[SlotOutcome]]:
    """The outcomes of each cell, cells in order of appearance."""
    cells: dict[Cell, list[SlotOutcome]] = {}
    for o in outcomes:
        cells.setdefault(o.cell, []).append(o)
    return cells


def _split(
    cells: Mapping[Cell, Sequence[SlotOutcome]],
    holdout_docs: Sequence[int],
    holdout_filler: Sequence[tuple[int, int]],
) -> tuple[list[SlotOutcome], list[SlotOutcome]]:
    """The training outcomes and the held-back ones (held-back cells in sorted order).

    Raises:
        ValueError: when every cell is held back.
    """
    held = {c for c in cells if c[0] in holdout_docs or c[1] in holdout_filler}
    train = [o for c, group in cells.items() if c not in held for o in group]
    if not train:
        raise ValueError("every cell is held back; nothing is left to fit")
    return train, [o for c in sorted(held) for o in cells[c]]


def _slot_table(
    train: Sequence[SlotOutcome],
    metric: str,
    name: str,
    settings: Mapping[str, Any],
    cells: Sequence[Mapping[str, Any]],
) -> bookend_rag.TabulatedProfile:
    """The slot table of the largest K among the training cells."""
    docs = max(o.n_docs for o in train)
    return slot_profile(
        summarise([o for o in train if o.n_docs == docs]),
        metric=metric,
        label=f"{name} calibrated (K={docs})",
        metadata={"settings": dict(settings), "cells": list(cells)},
    )


def _write_json(path: str | Path | None, report: Mapping[str, Any]) -> list[Path]:
    if path is None:
        return []
    out = Path(path)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return [out]


def _holdout_plot(path: str | Path | None, holdout: dict[str, Any], name: str) -> list[Path]:
    if path is None:
        return []
    trained = ", ".join(holdout["train_cells"])
    title = f"{name}: held-back cells against predictions fitted on {trained}"
    return [plot_heldback(holdout, path, title=title, skip=("fitted (slope 1)",))]


def _slots_plot(
    path: str | Path | None, table: bookend_rag.TabulatedProfile, train: Sequence[SlotOutcome]
) -> list[Path]:
    if path is None:
        return []
    docs = max(o.n_docs for o in train)
    rows = [o for o in train if o.n_docs == docs]
    title = f"{table.label}, {len(rows) // docs} items per slot"
    return [plot_slots(summarise(rows).to_json(), path, title=title)]
