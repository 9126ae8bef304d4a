"""Does the prompt matter? Each cell's decision made in bookend's prompt and in the user's prompt,
both judged on evaluation items rendered in the user's prompt.

A cell names the ``bookend tune`` run in bookend's completion prompt, the one in the second
prompt (``--template``), and the ``bookend eval`` report of the evaluation split rendered in that
second prompt, which scores both tuned configs as ``--config in-bookend-prompt=...`` and
``--config in-user-prompt=...`` (strategies ``bookend-in-bookend-prompt`` and
``bookend-in-user-prompt``) beside the retriever's order and the frameworks'. Per cell: the two
choices, whether they differ, and the paired difference (bootstrap interval over items) on the
gold answer's probability among the candidates: deciding in the user's prompt minus deciding in
bookend's (what deciding in the wrong prompt costs), and each against the retriever's order.

Usage::

    .venv/bin/python bench/prompt_cells.py --json bench/prompt_cells.json \
        CELL=TUNE_BOOKEND_DIR:TUNE_USER_DIR:EVAL_REPORT.json [...]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from bookend_rag_lab.runfiles import read_json
from bookend_rag_lab.stats import paired_difference

METRIC = "candidate_prob"
IN_BOOKEND, IN_USER, RETRIEVAL = "bookend-in-bookend-prompt", "bookend-in-user-prompt", "retrieval"


def _chosen(tune_dir: Path) -> str:
    report = read_json(tune_dir / "report.json")
    return str(report["decision"]["chosen"])


def _values(report: dict[str, Any], strategy: str) -> np.ndarray:
    return np.asarray([it["results"][strategy][METRIC] for it in report["items"]])


def cell(tune_bookend: Path, tune_user: Path, eval_report: Path) -> dict[str, Any]:
    """One cell's decisions and their paired differences in the user's prompt."""
    report = read_json(eval_report)
    values = {s: _values(report, s) for s in (IN_BOOKEND, IN_USER, RETRIEVAL)}

    def versus(a: str, b: str) -> dict[str, Any]:
        return paired_difference(values[a], values[b]).to_json()

    return {
        "chosen_in_bookend_prompt": _chosen(tune_bookend),
        "chosen_in_user_prompt": _chosen(tune_user),
        "n": int(values[IN_USER].size),
        "means": {s: float(v.mean()) for s, v in values.items()},
        "user_minus_bookend_decision": versus(IN_USER, IN_BOOKEND),
        "bookend_decision_minus_retrieval": versus(IN_BOOKEND, RETRIEVAL),
        "user_decision_minus_retrieval": versus(IN_USER, RETRIEVAL),
    }


def _points(d: dict[str, Any]) -> str:
    return f"{100 * d['diff']:+.1f} [{100 * d['ci_low']:+.1f}, {100 * d['ci_high']:+.1f}]"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cells", nargs="+", metavar="CELL=TUNE_BOOKEND:TUNE_USER:EVAL")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    out: dict[str, Any] = {}
    for spec in args.cells:
        name, _, paths = spec.partition("=")
        tune_bookend, tune_user, eval_report = (Path(p) for p in paths.split(":"))
        out[name] = cell(tune_bookend, tune_user, eval_report)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(
        "| cell | chosen in bookend's prompt | chosen in the user's | n | user's minus bookend's "
        "decision | bookend's decision minus retrieval | user's decision minus retrieval |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, c in out.items():
        print(
            f"| {name} | {c['chosen_in_bookend_prompt']} | {c['chosen_in_user_prompt']} | {c['n']} "
            f"| {_points(c['user_minus_bookend_decision'])} "
            f"| {_points(c['bookend_decision_minus_retrieval'])} "
            f"| {_points(c['user_decision_minus_retrieval'])} |"
        )
    differ = sum(c["chosen_in_bookend_prompt"] != c["chosen_in_user_prompt"] for c in out.values())
    print(f"\nThe decision differs in {differ} of {len(out)} cells.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
