"""How closely a served model's ``bookend eval`` report matches the in-process one.

Both reports must come from the same items and settings (``bookend eval --quick`` once with
``--endpoint`` and once with ``--weights`` on the same GGUF file, the same ``--theory``). Per
scored prompt (item and strategy; the averaged ``random`` entry left out) this compares the order,
the gold log-probability and the accuracy, then prints every strategy's mean of the primary
metric side by side. From the repository root::

    python bench/endpoint_agreement.py bench/eval/served-smollm2-quick/report.json \\
        bench/eval/local-smollm2-quick/report.json
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from bookend_rag_lab.runfiles import read_json


def _read(path: str) -> dict[str, Any]:
    report: dict[str, Any] = read_json(path)
    return report


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("served", help="report.json of the --endpoint run")
    parser.add_argument("local", help="report.json of the in-process run")
    args = parser.parse_args(argv)
    served, local = _read(args.served), _read(args.local)
    pairs = [
        (mine, row_l["results"][name])
        for row_s, row_l in zip(served["items"], local["items"], strict=True)
        for name, mine in row_s["results"].items()
        if name != "random"
    ]
    same_order = all(mine["order"] == theirs["order"] for mine, theirs in pairs)
    gap = np.array([abs(mine["gold_logprob"] - theirs["gold_logprob"]) for mine, theirs in pairs])
    agree = np.mean([mine["accuracy"] == theirs["accuracy"] for mine, theirs in pairs])
    print(f"{len(pairs)} scored prompts; the same orders: {same_order}")
    print(
        f"|gold log-prob gap|: mean {gap.mean():.3f}, median {np.median(gap):.3f}, "
        f"max {gap.max():.3f} nats; the same accuracy (argmax of the candidates) on {agree:.1%}"
    )
    print(f"served: {served['settings']['endpoint']}")
    primary = served["primary_metric"]
    print(f"\n{'strategy':<22} {'served':>8} {'in process':>11}   ({primary})")
    for name, figures in served["strategies"].items():
        theirs = local["strategies"][name][primary]["mean"]
        print(f"{name:<22} {figures[primary]['mean']:>8.3f} {theirs:>11.3f}")


if __name__ == "__main__":
    main()
