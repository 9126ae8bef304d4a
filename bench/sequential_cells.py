"""Issue 49 §3: the committed tune cells decided again by the sequential tune, and what each cost.

Each committed ``bookend tune`` cell under ``bench/`` whose call log is committed
(``calls.jsonl.xz``: the labelled tunes in the chat prompt, the SQuAD tunes and every label-free
tune) is run again by
today's ``bookend tune`` with its defaults: it races the fixed candidates (no slot measurement
unless ``--measure-blocks``) and stops as soon as the decision is settled
(``bookend_rag_lab.decision.settled``), with the same items, model, precision and prompt as the
report records. The run reads a copy of the cell's committed call log, so only the calls the
committed run had not made run the model; its report still counts every
scoring request it asked, cached or not (``timing.requests``, ``timing.request_tokens``): what the
decision costs on a cold cache. Its report goes to ``bench/tune-seq/CELL/``. The calls it made
are not kept (the committed log stays what the committed run made, which the table counts), so a
run from scratch makes them again; with the reports in place the script reads them and runs no
model.

Per cell, today's cost against the committed run's: scoring requests (the scoring calls of the
committed call log) and prompt tokens (the committed report's, when that run made every call
itself; else its requests times the new run's tokens per request, marked ``≈``); the two
decisions; and when they differ, the difference between them on the cell's evaluation items
(the columns of the cell's ``bookend eval`` report, paired over its items, with the MDE), as
``bench/label_free.py`` judges.

Usage (from the repository root; resumable, a cell already decided is read back)::

    OMP_NUM_THREADS=1 .venv/bin/python bench/sequential_cells.py --json bench/sequential_cells.json
    .venv/bin/python bench/sequential_cells.py --judge-only --json bench/sequential_cells.json
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from bookend_rag_lab.runfiles import compressed, compressed_text, read_json, read_text, stored

ROOT = Path(__file__).resolve().parent.parent
BOOKEND = str(Path(sys.executable).parent / "bookend")
#: Where the committed tunes with a committed call log live.
TOPS = ("tune", "tune-chat", "tune-probes/self-answer")
#: The models of the committed cells, by their theory spec's name.
MODELS = ("smollm2", "gemma-3")
#: The named weights by the theory spec a report records.
WEIGHTS = {"smollm2": "smollm2", "gemma-3": "gemma3-270m", "qwen2.5-coder": "qwen2.5-coder-0.5b"}


def committed_cells() -> list[Path]:
    """The tune directories of SmolLM2 and Gemma 3 that have both a report and a committed
    (compressed) call log."""
    found = []
    for top in TOPS:
        for directory in sorted((ROOT / "bench" / top).iterdir()):
            if not (
                stored(directory / "report.json")
                and compressed(directory / "calls.jsonl").is_file()
            ):
                continue
            if read_json(directory / "report.json")["settings"]["theory"].startswith(MODELS):
                found.append(directory)
    return found


def cell_name(directory: Path) -> str:
    return str(directory.relative_to(ROOT / "bench")).replace("/", "--")


def command(directory: Path, report: Mapping[str, Any], out: Path, cache: Path) -> list[str]:
    """``bookend tune`` on the cell's items, model, precision and prompt, with the call log
    ``cache``."""
    settings = report["settings"]
    weights = next(w for key, w in WEIGHTS.items() if settings["theory"].startswith(key))
    args = [BOOKEND, "tune", "--weights", weights, "--dtype", settings["dtype"], "--threads", "1"]
    template = settings["template"]["name"]
    if template != "bookend":
        args += ["--template", template]
    if settings["items"] == "probes":
        source = settings["source"]
        records = ROOT / source["retrievals"]
        if not records.is_file():  # kept compressed: tune reads them plain
            records.write_text(read_text(records), encoding="utf-8")
        args += ["--retrievals", source["retrievals"], "--probes", source["design"]]
    else:
        args += ["--suite", settings["suite"], "--docs", str(settings["k"])]
        args += ["--items", str(settings["n_items"]), "--split", settings["split"]]
    return [*args, "--cache", str(cache), "--no-progress", "--out", str(out)]


def committed_requests(directory: Path) -> int:
    """The scoring calls in the cell's committed call log (its rows with log-probabilities; the
    probes' answers have none): every scoring request of the committed run, and of the earlier
    runs it resumed."""
    rows = compressed_text(directory / "calls.jsonl").splitlines()
    return sum(1 for line in rows if json.loads(line).get("generated") is None)


def _label_free() -> ModuleType:
    """``bench/label_free.py`` as a module: its reading of eval reports and its columns."""
    sys.path.insert(0, str(ROOT / "bench"))
    import label_free

    return label_free


def _columns(decision: str, committed: str, labelled: bool, chat: bool) -> list[str]:
    """The eval columns that may hold a decision: a fixed order's own column; the committed
    decision also as the config a judging run scored it under."""
    lf = _label_free()
    found = [lf.TUNE_TO_CANDIDATE.get(decision, decision)] if decision in lf.FIXED_BY_RULE else []
    if decision == committed:
        found += [lf.LABELLED_CHAT_COLUMN] if labelled and chat else []
        found += ["bookend-labelled" if labelled else "bookend-label-free"]
    return found


def judged_difference(
    directory: Path, report: Mapping[str, Any], new: str, old: str
) -> dict[str, Any] | None:
    """The new decision minus the committed one on the cell's evaluation items (paired bootstrap,
    MDE), from the first committed eval report that scores both (the suite's own ``bookend
    eval``, else the one ``bench/label_free.py`` ran for the cell); ``None`` when none does."""
    lf = _label_free()
    settings = report["settings"]
    chat = settings["template"]["name"] != "bookend"
    labelled = settings["items"] != "probes"
    model = "gemma3" if settings["theory"].startswith("gemma") else "smollm2"
    suite = directory.name.split("-")[0]
    cell = lf.Cell(suite, "chat" if chat else "bookend", model)
    for where in (cell.eval_report, cell.dir / "eval" / "report.json"):
        if not stored(where):
            continue
        values = lf._values(read_json(where))
        a = next((c for c in _columns(new, old, labelled, chat) if c in values), None)
        b = next((c for c in _columns(old, old, labelled, chat) if c in values), None)
        if a is not None and b is not None:
            return {
                "columns": [a, b],
                "report": str(where.relative_to(ROOT)),
                **lf._paired(values, a, b),
            }
    return None


def run_cell(directory: Path, *, run: bool) -> dict[str, Any] | None:
    """Decide the cell again (unless ``run`` is false or it is decided) and compare."""
    old = read_json(directory / "report.json")
    out = ROOT / "bench" / "tune-seq" / cell_name(directory)
    if not stored(out / "report.json"):
        if not run:
            return None
        log = Path(tempfile.gettempdir()) / f"bookend-seq-{cell_name(directory)}.log"
        with tempfile.TemporaryDirectory() as scratch, log.open("a", encoding="utf-8") as err:
            cache = Path(scratch) / "calls.jsonl"
            shutil.copyfile(compressed(directory / "calls.jsonl"), compressed(cache))
            args = command(directory, old, out, cache)
            print("+", " ".join(args), file=sys.stderr, flush=True)
            done = subprocess.run(
                args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err, check=False
            )
        if done.returncode != 0:
            raise SystemExit(f"exit {done.returncode}: {' '.join(args)} (see {log})")
    new = read_json(out / "report.json")
    t_old, t_new = old["timing"], new["timing"]
    # A run that made every call itself reports them and their tokens; for a resumed one (or
    # one from before tokens were counted) the call log counts the calls and the tokens are
    # its calls at the new run's tokens per request.
    logged = committed_requests(directory)
    exact = bool(t_old.get("prompt_tokens")) and t_old["model_calls"] == logged
    requests_old = logged
    per_request = t_new["request_tokens"] / max(t_new["requests"], 1)
    tokens_old = int(t_old["prompt_tokens"]) if exact else round(requests_old * per_request)
    chosen_old, chosen_new = old["decision"]["chosen"], new["decision"]["chosen"]
    judged = None
    if chosen_old != chosen_new:
        judged = judged_difference(directory, old, chosen_new, chosen_old)
    return {
        "cell": str(directory.relative_to(ROOT)),
        "before": {
            "requests": requests_old,
            "prompt_tokens": tokens_old,
            "tokens_exact": bool(exact),
            "chosen": chosen_old,
            "n_judged": old["n_judged"],
        },
        "after": {
            "requests": t_new["requests"],
            "prompt_tokens": t_new["request_tokens"],
            "model_calls": t_new["model_calls"],
            "chosen": chosen_new,
            "n_judged": new["n_judged"],
            "stopped": new["stopped"],
            "settled": new.get("settled"),
            "guard": new["decision"]["guard"],
        },
        "same_decision": chosen_old == chosen_new,
        "new_minus_old_on_evaluation": judged,
    }


def markdown(rows: Sequence[Mapping[str, Any]]) -> str:
    lines = [
        "| cell | requests before → after | prompt tokens before → after | decision before → after "
        "| items judged, why it stopped |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        b, a = r["before"], r["after"]
        approx = "" if b["tokens_exact"] else "≈"
        tokens = f"{approx}{b['prompt_tokens']:,} → {a['prompt_tokens']:,}"
        decision = f"{b['chosen']} → {a['chosen']}"
        if not r["same_decision"]:
            d = r["new_minus_old_on_evaluation"]
            decision += (
                " (not judged)"
                if d is None
                else f" ({100 * d['diff']:+.1f} [{100 * d['ci_low']:+.1f}, "
                f"{100 * d['ci_high']:+.1f}] points on evaluation items, MDE {100 * d['mde']:.1f})"
            )
        why = a["settled"] if a["stopped"] == "settled" else f"{a['stopped']}"
        lines.append(
            f"| {r['cell']} | {b['requests']:,} → {a['requests']:,} "
            f"({a['requests'] / b['requests']:.2f}) | {tokens} "
            f"({a['prompt_tokens'] / max(b['prompt_tokens'], 1):.2f}) | {decision} "
            f"| {a['n_judged']} of {b['n_judged']}: {why} |"
        )
    req = sum(r["after"]["requests"] for r in rows) / sum(r["before"]["requests"] for r in rows)
    tok = sum(r["after"]["prompt_tokens"] for r in rows) / sum(
        r["before"]["prompt_tokens"] for r in rows
    )
    same = sum(r["same_decision"] for r in rows)
    lines.append(
        f"\nOver the {len(rows)} cells: requests {req:.2f} of before, prompt tokens {tok:.2f}; "
        f"the same decision in {same} of {len(rows)}."
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, required=True)
    parser.add_argument("--judge-only", action="store_true", help="run no model")
    parser.add_argument("--cells", nargs="*", help="only these cell directories")
    args = parser.parse_args(argv)
    todo = [ROOT / c for c in args.cells] if args.cells else committed_cells()
    rows, waiting = [], []
    for directory in todo:
        row = run_cell(directory, run=not args.judge_only)
        if row is None:
            waiting.append(str(directory.relative_to(ROOT)))
        else:
            rows.append(row)
    if rows:
        print(markdown(rows))
    if waiting:
        print(f"not decided yet: {', '.join(waiting)}")
    args.json.write_text(
        json.dumps({"cells": rows, "waiting": waiting}, indent=1) + "\n", encoding="utf-8"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
