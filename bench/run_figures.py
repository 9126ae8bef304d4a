"""Draw the figures of the runs under ``bench/`` beside their reports, as each run drew them: an
eval run's ``position_curve.png`` and ``strategies.png``, a tune run's ``tune.png``.

The repository does not keep them (``.gitignore``): each is drawn from its committed report
(``report.json.xz``), with no model run.

Usage (from the repository root; ``make evidence-figures``)::

    .venv/bin/python bench/run_figures.py [FOLDER ...]
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from bookend_rag_lab.report.figures import candidate_means, position_curve, strategy_comparison
from bookend_rag_lab.runfiles import SUFFIX, read_json

BENCH = Path(__file__).resolve().parent


def draw(report_path: Path) -> list[Path]:
    """The figures of the run whose report is ``report_path`` (plain or compressed), drawn beside
    it; a tune report is told by its ``decision``."""
    report = read_json(report_path)
    where = report_path.parent
    if "decision" in report:
        return [candidate_means(report, where / "tune.png")]
    return [
        position_curve(report, where / "position_curve.png"),
        strategy_comparison(report, where / "strategies.png"),
    ]


def reports(folders: Sequence[Path]) -> list[Path]:
    """The ``report.json`` of every run under ``folders``, plain or compressed."""
    found = {p for folder in folders for p in folder.rglob("report.json*")}
    return sorted({p.with_name("report.json") for p in found if p.suffix in (".json", SUFFIX)})


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="*", type=Path, default=[BENCH], help="default: bench/")
    args = parser.parse_args(argv)
    for report in reports(args.folders):
        for figure in draw(report):
            print(figure)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
