"""Issue 18's targets: each ``bookend tune`` choice, judged on the disjoint evaluation split.

A cell pairs a tune run (on a suite's ``calibration`` split) with the ``bookend eval`` report of
the same suite, model and K on the ``evaluation`` split. The tune's chosen candidate is read from
its ``report.json`` and found among the eval report's columns (named as in
``bench/default_matrix.py``: tune's ``alternate`` is Haystack's pattern; a profile measured on the
tune's own items is no eval column, and the cell then needs ``bookend eval --config
tuned=TUNED.json``, which this script says). Its per-item values are paired with every other
column (bootstrap interval on the gold answer's probability among the candidates), and the
targets are scored:

- (a) the tuned config is never significantly behind a fixed pattern or the default;
- (b) it is significantly ahead of LangChain's, LlamaIndex's and Haystack's patterns and of a
  random shuffle (the issue asks this in at least half the cells);
- (c) when it keeps the default, the tune's MDE.

Usage::

    .venv/bin/python bench/tuned_cells.py CELL=TUNE_DIR:EVAL_REPORT.json [...]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from default_matrix import per_item, points

from bookend_rag_lab.report.evidence import TUNE_TO_CANDIDATE
from bookend_rag_lab.runfiles import read_json
from bookend_rag_lab.stats import paired_difference

#: the rivals of target (b)
FRAMEWORKS_AND_RANDOM = ("langchain", "llamaindex", "haystack", "random")


def judge(tune: dict[str, Any], report: dict[str, Any]) -> dict[str, Any]:
    """The chosen column's paired differences with every other column, and the targets."""
    decision = tune["decision"]
    chosen = TUNE_TO_CANDIDATE.get(decision["chosen"], decision["chosen"])
    values = per_item(report, "candidate_prob")
    if chosen not in values:
        raise SystemExit(
            f"{chosen!r} is no column of the eval report: run bookend eval --config "
            "tuned=TUNED.json on the evaluation split"
        )
    versus = {
        rival: paired_difference(values[chosen], vals).to_json()
        for rival, vals in values.items()
        if rival != chosen
    }
    return {
        "chosen": chosen,
        "switched": decision["switched"],
        # no guard when no candidate scored differently from the default
        "tune_mde": None if decision["guard"] is None else decision["guard"]["mde"],
        "mean": float(values[chosen].mean()),
        "versus": versus,
        "a_never_behind": all(d["verdict"] != "worse" for d in versus.values()),
        "b_ahead_of_frameworks_and_random": all(
            versus[r]["verdict"] == "better" for r in FRAMEWORKS_AND_RANDOM if r in versus
        ),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cells", nargs="+", metavar="CELL=TUNE_DIR:EVAL_REPORT")
    parser.add_argument("--json", help="write the judged cells here")
    args = parser.parse_args(argv)
    judged: dict[str, dict[str, Any]] = {}
    for spec in args.cells:
        cell, sep, paths = spec.partition("=")
        tune_dir, colon, report = paths.partition(":")
        if not sep or not colon:
            parser.error(f"cells must be CELL=TUNE_DIR:EVAL_REPORT, got {spec!r}")
        tune = read_json(Path(tune_dir) / "report.json")
        judged[cell] = judge(tune, read_json(report))
    rivals_head = " | ".join(f"vs {r}" for r in FRAMEWORKS_AND_RANDOM)
    print(f"| cell | tuned choice | on evaluation | {rivals_head} | (a) | (b) |")
    print("|---|---|---|" + "---|" * len(FRAMEWORKS_AND_RANDOM) + "---|---|")
    for cell, j in judged.items():
        mde = "no rival differed" if j["tune_mde"] is None else f"MDE {100 * j['tune_mde']:.1f}"
        choice = j["chosen"] + ("" if j["switched"] else f" (kept; {mde})")
        rivals = " | ".join(points(j["versus"][r]) for r in FRAMEWORKS_AND_RANDOM)
        a = "met" if j["a_never_behind"] else "not met"
        b = "met" if j["b_ahead_of_frameworks_and_random"] else "not met"
        print(f"| {cell} | {choice} | {100 * j['mean']:.1f}% | {rivals} | {a} | {b} |")
    if args.json:
        Path(args.json).write_text(json.dumps(judged, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
