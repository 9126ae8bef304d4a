"""Issue 37 §3: how good a proxy is label-free tuning? Per cell (suite x prompt x model), the
decision ``bookend tune --retrievals`` makes from probes (no answers) against the one ``bookend
tune`` makes from the labelled calibration items, both judged on the labelled evaluation items.

Per cell, resumable at every step (each run keeps its own ``calls.jsonl``):

1. **Retrievals.** The suite's calibration split (the items the labelled tune used) becomes
   retrieval records with the answers hidden: the question, the suite's own retrieved documents in
   its retriever's order with the retriever's scores (the item's own scores, or BM25/MiniLM as the
   labelled runs rank the generated items), nothing of the answer, the candidates or the gold
   document. Written to ``bench/tune-probes/DESIGN/CELL/retrievals.jsonl``; the evaluation items are
   another split, so calibration and evaluation stay disjoint.
2. **Label-free tune.** ``bookend tune --retrievals --probes DESIGN`` on them (the labelled tune's
   weights, dtype and template, except Gemma 3's dtype: float32, see :data:`MODELS`;
   ``--threads 1``) into ``bench/tune-probes/DESIGN/CELL/``, and its ``--dry-run`` (a fresh cache,
   so every request counts) into ``dry-run.json``: what the decision costs on a hosted API. A cell
   whose labelled tune does not exist yet (the chat prompt on NQ, every SQuAD cell) runs it first,
   into the directory ``make tune`` and ``make prompts`` name (``bench/tune/SUITE-MODEL-k10``,
   ``bench/tune-chat/...``), in the label-free tune's precision (:meth:`Cell.probe_dtype`); a
   cell whose labelled evaluation does not exist either is judged as in step 3, both decisions by
   one ``bookend eval --config`` run (nothing to reuse). A label-free tune that refuses because no
   retrieval gives a probe, or because one answer was generated for most documents (a model that
   repeats the prompt instead of answering), is the cell's outcome: its one-line reason is kept in
   ``refused.txt`` and the labelled tune is not run for it.
3. **Judging.** Each decision is found among the eval report's columns when it is a fixed order
   the report scored (bookend's default, relevance, reversed, LangChain's, Haystack's; the chat
   reports' ``bookend-in-user-prompt`` is the labelled chat decision itself) and reused; a decision
   no column holds (a slot table or profile measured on the tune's own items) is scored by
   ``bookend eval --config NAME=tuned.json --reuse EVAL_REPORT`` on the same evaluation items into
   ``bench/tune-probes/DESIGN/CELL/eval/`` (only its new orders call the model).
4. **Report.** Per cell: both decisions, the label-free decision minus the labelled one, minus the
   retriever's order and minus the best fixed order in hindsight (paired 95% bootstrap intervals
   over the evaluation items, with the MDE), whether it is measurably behind, and the MDE a
   decision would have from 30, 60 and 120 retrievals: ``MDE_FACTOR * sd(d) / sqrt(n)`` with
   ``d`` the probe items' per-item differences of the probe tune's guard pair (its best rival
   minus the default).

Usage (from the repository root; ``make label-free`` runs the SmolLM2 cells)::

    .venv/bin/python bench/label_free.py --json bench/label_free.json
    .venv/bin/python bench/label_free.py --probes codes --json bench/label_free_codes.json
    .venv/bin/python bench/label_free.py --model gemma3 --json bench/label_free_gemma3.json
    .venv/bin/python bench/label_free.py --judge-only --json bench/label_free.json

``--judge-only`` runs no model: it judges the cells whose runs are complete and lists the rest.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bookend_rag.retrievals import RecordedDocument, RetrievalRecord, write_retrievals
from bookend_rag_lab.experiments.trials import Ranked, retriever_names
from bookend_rag_lab.items.suites import suite_items
from bookend_rag_lab.report.evidence import CURRENT, TUNE_TO_CANDIDATE, per_item
from bookend_rag_lab.runfiles import read_json, read_text, stored, writing
from bookend_rag_lab.stats import MDE_FACTOR, paired_difference

ROOT = Path(__file__).resolve().parent.parent
BOOKEND = str(Path(sys.executable).parent / "bookend")


def _rel(path: Path) -> str:
    """``path`` from the repository root, as the runs (cwd: the root) record it."""
    return str(path.relative_to(ROOT))


METRIC = "candidate_prob"
#: What ``bookend tune --retrievals`` says when no retrieval gives a probe.
NO_PROBES = "give no probe item"
#: The labelled tunes' calibration items, and the K of every cell.
CALIBRATION_ITEMS, K = 60, 10
#: Retrieval counts whose MDE the report states.
RETRIEVAL_COUNTS = (30, 60, 120)
#: Tune candidates whose order is fixed by rule (not measured on the tune's own items), so the
#: eval report's column of the same name scores it on the evaluation items.
FIXED_BY_RULE = ("default", "relevance", "reversed", "langchain", "alternate")
#: The fixed orders "best fixed order" is taken over (eval report candidates).
FIXED_ORDERS = ("default", "relevance", "reversed", "langchain", "llamaindex", "haystack")
#: The chat eval reports' column holding the labelled chat decision (``make prompts``).
LABELLED_CHAT_COLUMN = "bookend-in-user-prompt"


@dataclass(frozen=True)
class Model:
    """A model's options as its labelled runs used them: the weights, the chat prompt (``make
    prompts``: SmolLM2's own chat template; Gemma 3's chat format written out, its base GGUF has
    none) and the tunes' precision (an eval takes its report's, so that ``--reuse`` agrees);
    ``probe_dtype``, where set, is the label-free tunes' precision instead; ``eval_items``, where
    set, the evaluation items of every cell (else 150 in bookend's prompt, 100 in the chat
    prompt); ``view``, where set, the theory's view (a ``tuned.json``) that the judging runs score
    too, so that they are also the model's cells of "Does it help?" and of the default's matrix
    (the other models have those runs of their own)."""

    weights: str
    chat_template: str
    tune_dtype: str
    passage_tune_dtype: str
    probe_dtype: str | None = None
    eval_items: int | None = None
    view: str | None = None


MODELS = {
    "smollm2": Model("smollm2", "bench/prompts/chat-json-records.json", "float32", "bfloat16"),
    # Gemma 3's labelled tunes ran in bfloat16; its label-free ones run in float32, tune's default
    # and on Gemma 3 its fastest engine (bench/model_speed.py: bfloat16 several times slower there).
    "gemma3": Model(
        "gemma3-270m", "bench/prompts/gemma-chat-json-records.j2", "bfloat16", "bfloat16", "float32"
    ),
    # Qwen2.5-Coder-0.5B-Instruct in float32 on the records: on one thread as fast as llama-server
    # on its GGUF (bench/model_speed_qwen25.json); on the passages in bfloat16, as SmolLM2's, a
    # quarter less CPU a call with the same decisions (bench/model_speed_qwen25_bfloat16.json).
    # Its own chat template renders the chat prompt. About 4x SmolLM2's time per call, so 60
    # evaluation items in both prompts.
    "qwen25": Model(
        "qwen2.5-coder-0.5b",
        "bench/prompts/chat-json-records.json",
        "float32",
        "bfloat16",
        eval_items=60,
        view="bench/eval/configs/qwen25-view.json",
    ),
}


#: The suites of Wikipedia passages (about 100 words each, so about 1,500 prompt tokens at K = 10):
#: their tunes take the model's ``passage_tune_dtype``, as ``make tune`` runs NQ's in bfloat16.
PASSAGE_SUITES = ("nq", "squad")


@dataclass(frozen=True)
class Cell:
    """One cell: a suite, a prompt (``bookend`` or ``chat``) and a model."""

    suite: str
    prompt: str
    model: str
    probes: str = "self-answer"

    @property
    def name(self) -> str:
        return f"{self.suite}-{self.prompt}-{self.model}"

    @property
    def spec(self) -> Model:
        return MODELS[self.model]

    @property
    def chat(self) -> bool:
        return self.prompt == "chat"

    @property
    def dir(self) -> Path:
        return ROOT / "bench" / "tune-probes" / self.probes / self.name

    @property
    def refusal(self) -> Path:
        """Where a label-free tune that built no probe keeps the line it refused with."""
        return self.dir / "refused.txt"

    @property
    def log(self) -> Path:
        """Where the cell's runs write their progress (not part of the record)."""
        return Path(tempfile.gettempdir()) / f"bookend-label-free-{self.probes}-{self.name}.log"

    @property
    def labelled_dir(self) -> Path:
        top = "tune-chat" if self.chat else "tune"
        return ROOT / "bench" / top / f"{self.suite}-{self.model}-k{K}"

    @property
    def eval_report(self) -> Path:
        # The labelled evaluation runs of the generated suite predate its suite name.
        if self.chat:
            return ROOT / "bench" / "eval-chat" / f"{self.suite}-{self.model}-k{K}" / "report.json"
        name = f"{self.model}-k{K}" if self.suite == "hard" else f"{self.suite}-{self.model}-k{K}"
        return ROOT / "bench" / "eval" / name / "report.json"

    @property
    def eval_items(self) -> int:
        # make prompts judges the chat cells on 100 evaluation items, make eval/suites on 150.
        return self.spec.eval_items or (100 if self.chat else 150)

    def tune_dtype(self) -> str:
        return (
            self.spec.passage_tune_dtype if self.suite in PASSAGE_SUITES else self.spec.tune_dtype
        )

    def probe_dtype(self) -> str:
        return self.spec.probe_dtype or self.tune_dtype()

    def eval_dtype(self) -> str:
        report = _report(self.eval_report.parent)
        return self.probe_dtype() if report is None else str(report["settings"]["dtype"])

    def model_args(self, dtype: str) -> list[str]:
        template = ["--template", self.spec.chat_template] if self.chat else []
        return ["--weights", self.spec.weights, "--dtype", dtype, "--threads", "1", *template]


def cells(model: str, probes: str = "self-answer") -> list[Cell]:
    """A model's cells for one probe design, the cheapest first: the short records, the generated
    hard items, then the Wikipedia passages (SQuAD's cells and NQ's chat cell run their labelled
    tunes too)."""
    suites = ("records", "hard", "squad", "nq")
    return [
        Cell(suite, prompt, model, probes) for suite in suites for prompt in ("bookend", "chat")
    ]


def retrieval_records(suite: str) -> list[RetrievalRecord]:
    """The calibration items of ``suite`` as the retriever returned them, answers hidden: the
    question and the documents in the retriever's order with its scores (step 1)."""
    items = suite_items(suite, CALIBRATION_ITEMS, K, split="calibration")
    ranked = Ranked.of(items, retriever_names(items, None))
    records = []
    for item, ranking, retriever in zip(items, ranked.per_item, ranked.assigned, strict=True):
        documents = [
            RecordedDocument(text=item.documents[d], score=s, metadata={"retriever": retriever})
            for d, s in zip(ranking.indices, ranking.scores, strict=True)
        ]
        records.append(RetrievalRecord(question=item.question, documents=documents))
    return records


def _run(args: Sequence[str], log: Path) -> str:
    """One model run in the foreground, its stderr appended to ``log``; its stdout (the report).
    A failure ends the script."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    print("+", " ".join(args), file=sys.stderr, flush=True)
    with log.open("a", encoding="utf-8") as err:
        done = subprocess.run(
            args, stdout=subprocess.PIPE, stderr=err, env=env, cwd=ROOT, check=False, text=True
        )
    if done.returncode != 0:
        raise SystemExit(f"exit {done.returncode}: {' '.join(args)} (see {log})")
    return done.stdout


#: The lock a cell's process holds in the cell's directory.
CELL_LOCK = ".cell.lock"

#: The dry run's figures as ``bookend tune --dry-run`` prints them.
DRY_RUN = re.compile(r"([\d,]+) distinct prompts; .*? and (?:at most )?([\d,]+) prompt tokens")


def _report(directory: Path) -> dict[str, Any] | None:
    path = directory / "report.json"
    return read_json(path) if stored(path) else None


@contextlib.contextmanager
def running(cell: Cell) -> Iterator[None]:
    """Hold the cell while its runs write: a second process on the same cell would append its
    records and calls to the same files (its retrievals twice over), so it stops instead. The
    cell's lock is not its runs' own (``.lock``): its label-free tune writes in the same directory.

    Raises:
        SystemExit: another process holds the cell.
    """
    with contextlib.ExitStack() as held:
        try:
            held.enter_context(writing(cell.dir, lock=CELL_LOCK, what=cell.name))
        except ValueError as error:  # only the lock's: the cell's own errors pass as they are
            raise SystemExit(str(error)) from None
        yield


def label_free_tune(cell: Cell) -> None:
    """Steps 1 and 2: the records, the dry run's cost, the probe tune (each skipped when done)."""
    cell.dir.mkdir(parents=True, exist_ok=True)
    records = cell.dir / "retrievals.jsonl"
    if not records.is_file() and stored(records):  # kept compressed: tune reads them plain
        records.write_text(read_text(records), encoding="utf-8")
    elif not records.is_file():
        write_retrievals(records, retrieval_records(cell.suite))
    tune = [BOOKEND, "tune", "--retrievals", _rel(records), "--probes", cell.probes]
    tune += cell.model_args(cell.probe_dtype())
    log = cell.log
    dry = cell.dir / "dry-run.json"
    if not dry.is_file():
        with tempfile.TemporaryDirectory() as scratch:  # an empty cache: every request counts
            printed = _run([*tune, "--dry-run", "--no-progress", "--out", scratch], log)
        found = DRY_RUN.search(printed)
        if found is None:
            raise SystemExit(f"the dry run of {cell.name} printed no cost: {printed!r}")
        requests, tokens = (int(g.replace(",", "")) for g in found.groups())
        cost = {"requests": requests, "prompt_tokens": tokens}
        dry.write_text(json.dumps(cost, indent=1) + "\n", encoding="utf-8")
    if _report(cell.dir) is None and not cell.refusal.is_file():
        try:
            _run([*tune, "--no-progress", "--out", _rel(cell.dir)], log)
        except SystemExit:
            last = log.read_text(encoding="utf-8").strip().splitlines()[-1]
            if NO_PROBES not in last:
                raise
            # The user would get this refusal: the cell's outcome, not a failed run.
            cell.refusal.write_text(last + "\n", encoding="utf-8")


def labelled_tune(cell: Cell) -> None:
    """The labelled tune where it does not exist yet (the chat prompt on NQ, the SQuAD cells), as
    ``make tune`` and ``make prompts`` run the others."""
    if _report(cell.labelled_dir) is not None:
        return
    cell.labelled_dir.mkdir(parents=True, exist_ok=True)
    args = [BOOKEND, "tune", "--items", str(CALIBRATION_ITEMS), "--docs", str(K)]
    # Run for this comparison: the label-free tune's precision, so the cell's decisions and their
    # judging share one (Gemma 3's float32, several times faster there than bfloat16).
    args += ["--suite", cell.suite, *cell.model_args(cell.probe_dtype())]
    _run([*args, "--no-progress", "--out", _rel(cell.labelled_dir)], cell.log)


def _chosen(tune: Mapping[str, Any]) -> str:
    return str(tune["decision"]["chosen"])


def _column(tune: Mapping[str, Any], labelled: bool, cell: Cell) -> str | None:
    """The eval report column that scores a decision, or ``None`` when none does."""
    if labelled and cell.chat:
        return LABELLED_CHAT_COLUMN
    chosen = _chosen(tune)
    return TUNE_TO_CANDIDATE.get(chosen, chosen) if chosen in FIXED_BY_RULE else None


def judging_eval(cell: Cell, configs: Mapping[str, Path]) -> Path:
    """Step 3 for decisions no column holds: ``bookend eval --config`` on the same evaluation
    items, reusing the eval report's scores where it exists; the new report's path."""
    out = cell.dir / "eval"
    if _report(out) is None:
        args = [BOOKEND, "eval", "--items", str(cell.eval_items), "--docs", str(K)]
        args += ["--suite", cell.suite, "--random-draws", "2", "--no-oracle"]
        args += cell.model_args(cell.eval_dtype())
        args += [f"--config={name}={_rel(path)}" for name, path in configs.items()]
        args += [f"--config=view={cell.spec.view}"] if cell.spec.view else []
        if stored(cell.eval_report):
            args += ["--reuse", _rel(cell.eval_report)]
        _run([*args, "--no-progress", "--out", _rel(out)], cell.log)
    return out / "report.json"


def _values(report: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    """Per column (eval candidates by their :data:`CANDIDATES` names, other strategies by their
    own), each item's ``candidate_prob`` by item id."""
    items = report["items"]
    ids = [it["id"] for it in items]
    out = {
        name: dict(zip(ids, vals, strict=True)) for name, vals in per_item(report, METRIC).items()
    }
    for strategy in items[0]["results"]:
        if strategy not in out and all(strategy in it["results"] for it in items):
            out[strategy] = {it["id"]: it["results"][strategy][METRIC] for it in items}
    return out


def _paired(values: Mapping[str, Mapping[str, float]], a: str, b: str) -> dict[str, Any]:
    ids = sorted(set(values[a]) & set(values[b]))
    first = [values[a][i] for i in ids]
    return paired_difference(first, [values[b][i] for i in ids]).to_json()


def retrievals_needed(tune: Mapping[str, Any]) -> dict[str, Any]:
    """The MDE a decision from ``n`` retrievals would have, from the probe items' per-item
    differences of the tune's guard pair (its best rival minus the default), at 95%."""
    best = tune["decision"]["best"]
    default = "default"
    if best is None or best == default:
        return {"pair": None, "mde": {}}
    diffs = [
        it["results"][best][METRIC] - it["results"][default][METRIC]
        for it in tune["items"]
        if best in it["results"] and default in it["results"]
    ]
    sd = float(np.std(diffs, ddof=1))
    mde = {str(n): MDE_FACTOR * sd / float(np.sqrt(n)) for n in RETRIEVAL_COUNTS}
    return {"pair": [best, default], "sd": sd, "n": len(diffs), "mde": mde}


def judge(cell: Cell, *, run: bool) -> dict[str, Any]:
    """Step 4: one cell's decisions and comparisons on the labelled evaluation items (``run``:
    score a decision no column holds; else such a cell is not judged)."""
    free, labelled = _report(cell.dir), _report(cell.labelled_dir)
    if cell.refusal.is_file():  # the labelled tune is not run for such a cell unless it exists
        refused = cell.refusal.read_text(encoding="utf-8").strip()
        chosen = None if labelled is None else _chosen(labelled)
        return {"decisions": {"label-free": None, "labelled": chosen}, "refused": refused}
    if free is None or labelled is None or "decision" not in free:
        raise ValueError(f"{cell.name}: its tunes have not run")
    columns = {"label-free": _column(free, False, cell), "labelled": _column(labelled, True, cell)}
    report = _report(cell.eval_report.parent)
    values = {} if report is None else _values(report)
    missing = {
        name: (cell.dir if name == "label-free" else cell.labelled_dir) / "tuned.json"
        for name, column in columns.items()
        if column is None or column not in values
    }
    reused = not missing
    if missing and not run and _report(cell.dir / "eval") is None:
        raise ValueError(f"{cell.name}: {sorted(missing)} need bookend eval --config")
    if missing:
        values |= _values(read_json(judging_eval(cell, missing)))
    for name, column in columns.items():
        # bookend eval names a --config NAME strategy bookend-NAME
        values[name] = values[f"bookend-{name}" if name in missing else str(column)]
    fixed = [o for o in FIXED_ORDERS if o in values]
    best_fixed = max(fixed, key=lambda o: float(np.mean(list(values[o].values()))))
    versus_labelled = _paired(values, "label-free", "labelled")
    dry = json.loads((cell.dir / "dry-run.json").read_text(encoding="utf-8"))
    return {
        "decisions": {"label-free": _chosen(free), "labelled": _chosen(labelled)},
        "dtypes": {
            "label-free": free["settings"]["dtype"],
            "labelled": labelled["settings"]["dtype"],
        },
        "columns": {name: (name if name in missing else c) for name, c in columns.items()},
        "reused_eval_scores": reused,
        "probes": free["n_judged"],
        "means": {
            name: float(np.mean(list(values[name].values())))
            for name in ("label-free", "labelled", CURRENT, best_fixed)
            if name in values
        },
        "label_free_minus_labelled": versus_labelled,
        "label_free_minus_current": _paired(values, "label-free", CURRENT),
        "best_fixed": best_fixed,
        "label_free_minus_best_fixed": _paired(values, "label-free", best_fixed),
        "measurably_behind": versus_labelled["verdict"] == "worse",
        "retrievals_needed": retrievals_needed(free),
        "cost": {"dry_run": dry, "run": free["timing"]},
    }


def _points(d: Mapping[str, Any]) -> str:
    mark = {"better": " ▲", "worse": " ▼"}.get(str(d["verdict"]), "")
    low, high = 100 * d["ci_low"], 100 * d["ci_high"]
    return f"{100 * d['diff']:+.1f} [{low:+.1f}, {high:+.1f}]{mark} (MDE {100 * d['mde']:.1f})"


def markdown(judged: Mapping[str, Mapping[str, Any]]) -> str:
    """The cells as the table of ``bench/RESULTS.md``."""
    lines = [
        "| cell | label-free decision | labelled decision | label-free minus labelled "
        "| minus the retriever's order | minus the best fixed order | behind? "
        "| MDE at 30 / 60 / 120 retrievals | dry run: requests, prompt tokens |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, c in judged.items():
        if "refused" in c:
            refused = re.split(NO_PROBES + r"[^:]*: ", c["refused"])[-1]
            lines.append(
                f"| {name} | none: {refused} | {c['decisions']['labelled'] or 'not run'} "
                "| — | — | — | — | — | — |"
            )
            continue
        mde = c["retrievals_needed"]["mde"]
        needed = " / ".join(f"{100 * mde[str(n)]:.1f}" for n in RETRIEVAL_COUNTS) if mde else "—"
        dry = c["cost"]["dry_run"]
        lines.append(
            f"| {name} | {c['decisions']['label-free']} | {c['decisions']['labelled']} "
            f"| {_points(c['label_free_minus_labelled'])} "
            f"| {_points(c['label_free_minus_current'])} "
            f"| {_points(c['label_free_minus_best_fixed'])} ({c['best_fixed']}) "
            f"| {'yes' if c['measurably_behind'] else 'no'} | {needed} "
            f"| {dry['requests']:,}, {dry['prompt_tokens']:,} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=sorted(MODELS), default="smollm2")
    parser.add_argument(
        "--probes",
        choices=("self-answer", "codes"),
        default="self-answer",
        help="the probe design of the label-free tunes (bench/tune-probes/DESIGN/CELL)",
    )
    parser.add_argument("--cells", nargs="+", help="cell names (default: all of the model's)")
    parser.add_argument("--judge-only", action="store_true", help="run no model")
    parser.add_argument("--json", type=Path, help="write the judged cells here")
    args = parser.parse_args(argv)
    every = cells(args.model, args.probes)
    chosen = [c for c in every if args.cells is None or c.name in args.cells]
    if args.cells is not None and len(chosen) != len(args.cells):
        known = [c.name for c in every]
        parser.error(f"--cells must be drawn from {known}, got {args.cells}")
    judged: dict[str, Any] = {}
    for cell in chosen:
        if not args.judge_only:
            with running(cell):
                label_free_tune(cell)
                if not cell.refusal.is_file():  # without probes there is nothing to compare
                    labelled_tune(cell)
        try:
            judged[cell.name] = judge(cell, run=not args.judge_only)
        except ValueError as exc:
            print(f"not judged: {exc}", file=sys.stderr)
    if args.json and judged:
        args.json.write_text(json.dumps(judged, indent=1) + "\n", encoding="utf-8")
    print(markdown(judged))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
