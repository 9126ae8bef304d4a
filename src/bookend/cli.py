"""The ``bookend`` command line: ``demo``, ``profile``, ``reorder``, ``presets`` (and, with the
``validate`` extra, ``validate`` and ``calibrate``)."""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bookend.corpus import load_demo_corpus
from bookend.evaluation.cli import register as register_eval
from bookend.placement import STRATEGIES
from bookend.plot import matplotlib_available, plot_placement
from bookend.profile import Layout, TheoryProfile, available_profile_presets, resolve_profile
from bookend.reorder import DEFAULT_MODEL, Bookend
from bookend.spec import available_presets
from bookend.theory import components
from bookend.validate.cli import register as register_validate

__all__ = ["build_parser", "main"]

_WORD = re.compile(r"[a-z0-9]+")
_STOPWORDS = frozenset(
    "a an and are as at be by does for from how in is it its of on or so the to was what which "
    "with".split()
)


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOPWORDS]


def _model_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model",
        default=DEFAULT_MODEL,
        help="preset name (see `bookend presets`), published curve such as "
        f"liu2023:gpt-3.5-turbo, or a profile JSON path (default: {DEFAULT_MODEL})",
    )


def _layout_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--prefix-tokens", type=int, default=0, help="tokens before the chunks (default: 0)"
    )
    parser.add_argument(
        "--suffix-tokens",
        type=int,
        default=0,
        help="tokens after the chunks; 0 means the chunks fill the analysed sequence and the "
        "final chunk holds the Recency Delta (default: 0)",
    )


def _cmd_demo(args: argparse.Namespace) -> int:
    from rank_bm25 import BM25Okapi

    corpus = load_demo_corpus()
    docs = corpus.documents
    bm25 = BM25Okapi([_words(d["title"] + " " + d["text"]) for d in docs])
    scores = np.asarray(bm25.get_scores(_words(corpus.query)))
    top = np.argsort(-scores, kind="stable")[: args.k]
    retrieved = [docs[i] for i in top]
    top_scores = [float(scores[i]) for i in top]

    placer: Bookend[dict[str, str]] = Bookend(args.model, text="text")
    placement = placer.place(retrieved, top_scores)
    titles = [d["title"] for d in retrieved]
    print(f"query: {corpus.query}")
    print(f"retrieved {len(retrieved)} of {len(docs)} passages with BM25 (rank-bm25)\n")
    print(placement.explain(previews=titles))
    print("\nprompt order:")
    for slot, doc in enumerate(placement.items):
        print(f"  {slot}. {doc['title']}")
    if args.plot != "none":
        if matplotlib_available():
            path = plot_placement(placement, args.plot, labels=titles)
            print(f"\ninfluence plot written to {path}")
        else:
            print("\n(matplotlib not installed: no plot; pip install 'bookend[plot]')")
    return 0


def _cmd_profile(args: argparse.Namespace) -> int:
    profile = resolve_profile(args.model)
    layout = Layout(prefix_tokens=args.prefix_tokens, suffix_tokens=args.suffix_tokens)
    lengths = np.full(args.k, float(args.chunk_tokens))
    weights = profile.chunk_weights(lengths, layout)
    report: dict[str, Any] = {
        "profile": profile.name,
        "layout": layout.to_dict(),
        "chunk_tokens": args.chunk_tokens,
        "slot_weights": weights.tolist(),
    }
    if isinstance(profile, TheoryProfile):
        comp = components(profile.spec.depth, profile.spec.alpha)
        report["components"] = {
            "recency_delta": comp.recency_delta,
            "primacy_mass_first_10pct": comp.primacy_mass,
            "dead_zone": comp.dead_zone,
            "dead_zone_mass": comp.dead_zone_mass,
        }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"profile: {profile.name}")
        print(
            f"layout: prefix={layout.prefix_tokens} suffix={layout.suffix_tokens} tokens, "
            f"{args.k} chunks of {args.chunk_tokens} tokens"
        )
        if "components" in report:
            c = report["components"]
            zone = c["dead_zone"]
            zone_text = "none" if zone is None else f"[{zone[0]:.3f}, 1) of the sequence"
            print(
                f"recency delta (final token): {c['recency_delta']:.4f}; primacy mass in the "
                f"first 10%: {c['primacy_mass_first_10pct']:.4f}; dead zone: {zone_text} "
                f"holding {c['dead_zone_mass']:.4f} of the influence"
            )
        print(f"\n{'slot':>4}  {'weight':>7}")
        peak = float(weights.max())
        for slot, w in enumerate(weights):
            bar = "#" * max(1, round(40 * w / peak))
            print(f"{slot:>4}  {w:7.3f}  {bar}")
    if args.plot:
        plot_placement(None, args.plot, profile=profile, n_slots=args.k, layout=layout)
        print(f"plot written to {args.plot}", file=sys.stderr)
    return 0


def _read_reorder_input(source: str) -> dict[str, Any]:
    text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"input is not JSON ({exc})") from None
    if isinstance(data, list):
        if all(isinstance(c, str) for c in data):
            return {"chunks": data}
        if all(isinstance(c, dict) and "text" in c for c in data):
            out: dict[str, Any] = {"chunks": [c["text"] for c in data]}
            for key, name in (("score", "scores"), ("length", "lengths"), ("source", "sources")):
                if any(key in c for c in data):
                    if not all(key in c for c in data):
                        raise ValueError(f"every chunk needs {key!r} when one has it")
                    out[name] = [c[key] for c in data]
            return out
    if isinstance(data, dict) and isinstance(data.get("chunks"), list):
        return data
    raise ValueError(
        'input must be a list of strings, a list of {"text", "score"?, "length"?, "source"?} '
        'objects, or {"chunks": [...], "scores"?: [...], "lengths"?: [...]}'
    )


def _cmd_reorder(args: argparse.Namespace) -> int:
    data = _read_reorder_input(args.input)
    chunks: list[str] = data["chunks"]
    sources = data.get("sources")
    items = list(range(len(chunks)))
    placer: Bookend[int] = Bookend(
        args.model,
        strategy=args.strategy,
        distance=args.distance,
        budget=args.budget,
        repeat_top=args.repeat_top,
        prefix_tokens=args.prefix_tokens,
        suffix_tokens=args.suffix_tokens,
        text=lambda i: chunks[i],
        source=(lambda i: sources[i]) if sources is not None else None,
    )
    placement = placer.place(items, data.get("scores"), lengths=data.get("lengths"))
    result = placement.to_dict()
    result["chunks"] = [chunks[i] for i in placement.order]
    print(json.dumps(result, indent=2))
    return 0


def _cmd_presets(args: argparse.Namespace) -> int:
    for name in available_presets():
        print(name)
    for name in available_profile_presets():
        print(name)
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``bookend`` command."""
    parser = argparse.ArgumentParser(
        prog="bookend",
        description="Place retrieved chunks where the model reads best.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = sub.add_parser(
        "demo",
        help="retrieve from a bundled corpus with BM25 and place the chunks for a model",
        description="The main job on a bundled default: BM25 retrieval (rank-bm25) over 16 "
        "passages, bookend placement for a preset model, a table of chunk, score, slot and "
        "weight, the objective against retrieval order and the alternate pattern, and the "
        "influence plot as a PNG when matplotlib is installed.",
    )
    _model_arg(demo)
    demo.add_argument("--k", type=int, default=8, help="passages to retrieve (default: 8)")
    demo.add_argument(
        "--plot",
        default="bookend-demo.png",
        help="PNG to write, or 'none' (default: bookend-demo.png)",
    )
    demo.set_defaults(func=_cmd_demo)

    prof = sub.add_parser(
        "profile",
        help="print the slot weights and dead zone of a model for K chunks",
        description="Slot weights (mean influence density per chunk) for K equal chunks, with the "
        "theory's Recency Delta, primacy mass and Dead Zone for theory profiles.",
    )
    _model_arg(prof)
    prof.add_argument("--k", type=int, default=10, help="number of chunks (default: 10)")
    prof.add_argument(
        "--chunk-tokens", type=int, default=200, help="tokens per chunk (default: 200)"
    )
    _layout_args(prof)
    prof.add_argument("--json", action="store_true", help="print JSON instead of a table")
    prof.add_argument("--plot", metavar="PNG", help="also write a plot to this PNG")
    prof.set_defaults(func=_cmd_profile)

    reo = sub.add_parser(
        "reorder",
        help="reorder chunks given as JSON (file or stdin) and print the order as JSON",
        description="Input JSON: a list of strings; or a list of objects with 'text' and "
        "optional 'score', 'length' (tokens) and 'source'; or an object with 'chunks' and "
        "optional 'scores', 'lengths', 'sources'. Output JSON: order (input indices in prompt "
        "order), chunks (in that order), slots, objective, baselines, dropped.",
    )
    reo.add_argument("input", nargs="?", default="-", help="JSON file, or - for stdin")
    _model_arg(reo)
    reo.add_argument("--strategy", choices=STRATEGIES, default="bookend", help="default: bookend")
    reo.add_argument("--distance", action="store_true", help="scores are distances")
    reo.add_argument("--budget", type=int, help="token budget: keep the most relevant that fit")
    reo.add_argument("--repeat-top", action="store_true", help="repeat the top chunk at both ends")
    _layout_args(reo)
    reo.set_defaults(func=_cmd_reorder)

    pre = sub.add_parser("presets", help="list model presets and published curves")
    pre.set_defaults(func=_cmd_presets)

    register_validate(sub)
    register_eval(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code. Errors in input print one line, exit 2."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
    except ValueError as exc:
        print(f"bookend {args.command}: error: {exc}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":
    sys.exit(main())
