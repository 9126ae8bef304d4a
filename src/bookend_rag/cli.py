"""The ``bookend`` command line: ``demo``, ``profile``, ``reorder``, ``presets``, and the
subcommands that installed packages add through the ``bookend_rag.commands`` entry-point group
(:data:`COMMANDS`; the lab, the distribution ``bookend-rag-lab``, registers its measurement
commands there; without it, each of :data:`LAB_COMMANDS` says in one line what to install)."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Collection, Sequence
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from bookend_rag.config import PlacementConfig, validation_message
from bookend_rag.corpus import load_demo_corpus
from bookend_rag.datafiles import load_data_json
from bookend_rag.errors import LAB_HINT
from bookend_rag.layout import Layout
from bookend_rag.outlet import deliver
from bookend_rag.place import Bookend
from bookend_rag.plot import matplotlib_available, plot_file, plot_placement
from bookend_rag.profiles.io import ModelLike, resolve_profile
from bookend_rag.profiles.published import available_profile_presets, published_curves
from bookend_rag.profiles.theoretical import TheoryProfile
from bookend_rag.recorder import RetrievalRecorder
from bookend_rag.spec import available_presets
from bookend_rag.theory import components
from bookend_rag.tuned import load_config
from bookend_rag.version import __version__
from bookend_rag.weighing import chunk_weights

__all__ = ["COMMANDS", "LAB_COMMANDS", "build_parser", "main"]

#: The entry-point group whose members add subcommands: each loads to a callable that takes the
#: ``argparse`` subparsers object. The core reaches them only by this name, so it neither imports
#: nor names the packages that provide them.
COMMANDS = "bookend_rag.commands"

#: The subcommands the lab adds through :data:`COMMANDS`: where the lab is not installed, each
#: still parses and says in one line what to install, instead of argparse's "invalid choice".
LAB_COMMANDS = ("validate", "calibrate", "eval", "tune")

_WORD = re.compile(r"[a-z0-9]+")
_STOPWORDS = frozenset(
    "a an and are as at be by does for from how in is it its of on or so the to was what which "
    "with".split()
)


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOPWORDS]


#: The placement settings ``bookend reorder`` takes as options: all but ``count_question``, as the
#: command places one list and receives no question to count.
_REORDER_SETTINGS = tuple(name for name in PlacementConfig.model_fields if name != "count_question")

#: A word in snake_case: in a setting's description, the name of another setting.
_SNAKE_CASE = re.compile(r"\b[a-z]+(?:_[a-z]+)+\b")


def _setting_options(
    parser: argparse.ArgumentParser, names: Collection[str], *, configurable: bool = False
) -> None:
    """An option for each of the placement settings ``names``, made from its field of
    :class:`~bookend_rag.PlacementConfig`, so a setting reads the same here as in Python: the name
    as ``--kebab-case``, the values it takes (:func:`_option_kind`), the description as the help,
    with the settings it names written as their options, and the default. With ``configurable``
    every default is ``None`` (not given: the ``--config`` file's, else the config's default)."""
    schemas = PlacementConfig.model_json_schema()["properties"]
    for name in names:
        field = PlacementConfig.model_fields[name]
        described = _SNAKE_CASE.sub(
            lambda word: f"--{word[0].replace('_', '-')}" if word[0] in names else word[0],
            str(field.description),
        )
        default = f"the --config file's, else {field.default}" if configurable else field.default
        parser.add_argument(
            f"--{name.replace('_', '-')}",
            default=None if configurable else field.default,
            # argparse formats help with %: a literal one is doubled.
            help=f"{described} (default: {default})".replace("%", "%%"),
            **_option_kind(schemas[name]),
        )


#: The ``add_argument`` type of each kind of number in a JSON schema.
_NUMBER_TYPES = {"integer": int, "number": float}


def _option_kind(schema: dict[str, Any]) -> dict[str, Any]:
    """The ``add_argument`` keywords for the values a setting takes, as its JSON schema says them
    (the names of a ``Literal`` or of the registered weight rules included): the choices of an
    enum, a flag for a boolean, ``type`` for a number; a string (a name, a path, inline JSON)
    needs none. ``None``, where a setting takes it, is the option not given."""
    forms = [form for form in schema.get("anyOf", [schema]) if form.get("type") != "null"]
    if len(forms) != 1:  # a reference of several forms (model): given as a string
        return {}
    form = forms[0]
    if "enum" in form:
        return {"choices": tuple(form["enum"])}
    if form.get("type") == "boolean":
        return {"action": "store_true"}
    if form.get("type") in _NUMBER_TYPES:
        return {"type": _NUMBER_TYPES[form["type"]]}
    return {}


def _model(value: str) -> ModelLike:
    """``--model``: inline JSON (a spec or a profile object) when it starts with ``{``."""
    if not value.lstrip().startswith("{"):
        return value
    try:
        data: dict[str, object] = json.loads(value)
    except json.JSONDecodeError as exc:
        raise ValueError(f"--model={value!r} starts with '{{' but is not JSON ({exc})") from None
    return data


def _positive(option: str, value: int) -> int:
    if value < 1:
        raise ValueError(f"{option} must be a positive integer, got {option}={value}")
    return value


#: What a command that needs the ``demo`` extra says when it is missing (the lab's commands say
#: the same of theirs): from a clone until the packages are published.
_DEMO_HINT = (
    'install the optional extra: pip install ".[demo]" in a clone of the repository '
    '("bookend-rag[demo]" once it is on the package index)'
)


def _cmd_demo(args: argparse.Namespace) -> int:
    try:
        from rank_bm25 import BM25Okapi
    except ImportError:
        print(f"bookend demo: rank-bm25 not installed; {_DEMO_HINT}", file=sys.stderr)
        return 2
    _positive("--k", args.k)
    plot = None if args.plot == "none" else plot_file(args.plot, "--plot")
    placer: Bookend[dict[str, str]] = Bookend(_model(args.model), text="text")
    corpus = load_demo_corpus()
    docs = corpus.documents
    bm25 = BM25Okapi([_words(d["title"] + " " + d["text"]) for d in docs])
    scores = np.asarray(bm25.get_scores(_words(corpus.query)))
    top = np.argsort(-scores, kind="stable")[: args.k]
    retrieved = [docs[i] for i in top]
    top_scores = [float(scores[i]) for i in top]
    placement = placer.place(retrieved, top_scores)
    titles = [d["title"] for d in retrieved]
    print(f"query: {corpus.query}")
    print(f"retrieved {len(retrieved)} of {len(docs)} passages with BM25 (rank-bm25)\n")
    print(placement.explain(previews=titles))
    print("\nprompt order:")
    for slot, doc in enumerate(placement.items):
        print(f"  {slot}. {doc['title']}")
    if plot is not None:
        if matplotlib_available():
            path = plot_placement(placement, plot, labels=titles)
            print(f"\ninfluence plot written to {path}")
        else:
            print("\n(matplotlib not installed: no plot; pip install matplotlib)")
    return 0


def _cmd_profile(args: argparse.Namespace) -> int:
    _positive("--k", args.k)
    _positive("--chunk-tokens", args.chunk_tokens)
    plot = plot_file(args.plot, "--plot") if args.plot else None
    profile = resolve_profile(_model(args.model))
    layout = Layout(prefix_tokens=args.prefix_tokens, suffix_tokens=args.suffix_tokens)
    lengths = np.full(args.k, float(args.chunk_tokens))
    weights = chunk_weights(profile, lengths, layout)
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
    if plot is not None:
        path = plot_placement(None, plot, profile=profile, n_slots=args.k, layout=layout)
        print(f"plot written to {path}", file=sys.stderr)
    return 0


_TOP_KEYS = ("chunks", "scores", "lengths", "sources")
# A chunk object's own field for each top-level list.
_FIELD_OF = {"scores": "score", "lengths": "length", "sources": "source"}
_FORMAT = (
    'input must be a list of strings, a list of {"text", "score"?, "length"?, "source"?, ...} '
    'objects, or {"chunks": [...], "scores"?: [...], "lengths"?: [...], "sources"?: [...]}'
)


def _read_json_input(source: str) -> Any:
    if source == "-":
        if sys.stdin.isatty():
            print(
                "bookend reorder: reading chunks as JSON from stdin; end with Ctrl-D "
                "(or pass a file; `bookend reorder --help` shows the format)",
                file=sys.stderr,
            )
        text = sys.stdin.read()
    else:
        path = Path(source)
        if not path.is_file():
            problem = "is a directory" if path.is_dir() else "not found"
            raise ValueError(f"input={source!r} {problem}")
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"input={source!r} is not UTF-8 text ({exc})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"input is not JSON ({exc})") from None


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _column(name: str, values: object, n: int) -> list[Any]:
    """A top-level per-chunk list, checked: one entry per chunk, each of the right type."""
    if not isinstance(values, list):
        raise ValueError(f"{name} must be a list with one value per chunk ({n}), got {values!r}")
    if len(values) != n:
        raise ValueError(
            f"{name} must have one value per chunk ({n}), got {len(values)}: {values!r}"
        )
    for i, v in enumerate(values):
        if name == "sources":
            ok = v is None or isinstance(v, str | int | float | bool)
            want = "a string, a number or null"
        elif name == "scores":
            ok = v is None or _is_number(v)
            want = "a number or null"
        else:
            ok = _is_number(v)
            want = "a number"
        if not ok:
            raise ValueError(f"{name}[{i}]={v!r} must be {want}")
    return values


def _read_reorder_input(data: Any) -> tuple[list[Any], list[str], dict[str, list[Any]]]:
    """The chunks as given (strings or objects, every field kept), their texts, and the checked
    per-chunk columns (``scores``, ``lengths``, ``sources``) that are present."""
    columns: dict[str, Any] = {}
    if isinstance(data, dict):
        unknown = sorted(set(data) - set(_TOP_KEYS))
        if unknown:
            raise ValueError(
                f"unknown key {unknown[0]!r} in the input object (keys: {', '.join(_TOP_KEYS)})"
            )
        if not isinstance(data.get("chunks"), list):
            raise ValueError(f'the input object needs "chunks", a list; {_FORMAT}')
        chunks = data["chunks"]
        columns = {k: data[k] for k in _TOP_KEYS[1:] if k in data}
    elif isinstance(data, list):
        chunks = data
    else:
        raise ValueError(_FORMAT)
    texts: list[str] = []
    for i, chunk in enumerate(chunks):
        text = chunk.get("text") if isinstance(chunk, dict) else chunk
        if not isinstance(text, str):
            raise ValueError(
                f"chunks[{i}]={chunk!r} must be a string or an object with a 'text' string"
            )
        texts.append(text)
    objects = [c for c in chunks if isinstance(c, dict)]
    for name, field in _FIELD_OF.items():
        present = [field in c for c in objects]
        if not any(present):
            continue
        if name in columns:
            raise ValueError(f"give {name} either as {name!r} or per chunk as {field!r}, not both")
        if name == "scores":  # a chunk without one is a missing score: --missing-scores decides
            columns[name] = [c.get(field) if isinstance(c, dict) else None for c in chunks]
            continue
        if len(objects) < len(chunks) or not all(present):
            raise ValueError(f"every chunk needs {field!r} when one has it")
        columns[name] = [c[field] for c in objects]
    checked = {name: _column(name, values, len(chunks)) for name, values in columns.items()}
    return chunks, texts, checked


def _cmd_reorder(args: argparse.Namespace) -> int:
    # The config is read first: a bad --config is reported before the input is read.
    config = None if args.config is None else load_config(args.config, param="--config")
    chunks, texts, columns = _read_reorder_input(_read_json_input(args.input))
    sources = columns.get("sources")
    # Options given on the command line override the config's settings; the others keep them.
    given = {name: v for name in _REORDER_SETTINGS if (v := getattr(args, name)) is not None}
    if "model" in given:
        given["model"] = _model(given["model"])
    readers: dict[str, Any] = {
        "text": texts.__getitem__,
        "source": None if sources is None else sources.__getitem__,
    }
    placer: Bookend[int] = (
        Bookend(**given, **readers)
        if config is None
        else Bookend.from_config(config, **given, **readers)
    )
    indices, scores = list(range(len(chunks))), columns.get("scores")
    recorder = (
        None
        if args.recorder is None
        else RetrievalRecorder(args.recorder, metadata=args.record_metadata or ())
    )
    placement = placer.place(indices, scores, lengths=columns.get("lengths"))
    # The notes go to the logger and the JSON here, and to stderr as lines of this command's
    # (a warning's "file:line: PlacementNote:" prefix would name bookend's own script).
    notes = deliver(
        placement,
        placer,
        recorder,
        source="cli",
        items=indices,
        scores=scores,
        question=args.question,
        text=texts.__getitem__,
        metadata=lambda i: _other_fields(chunks[i]),
        warn=False,
    )
    if recorder is not None:
        recorder.close()
    for note in notes:
        if note not in placer.notices:  # warned once already (the model, a tuned config)
            print(f"bookend reorder: note: {note}", file=sys.stderr)
    result = placement.to_dict()
    result["chunks"] = [chunks[i] for i in placement.order]
    result["dropped_indices"] = result["dropped"]
    result["dropped"] = [chunks[i] for i in placement.dropped]
    print(json.dumps(result, indent=2))
    return 0


def _other_fields(chunk: Any) -> dict[str, Any] | None:
    """A chunk object's fields besides its text and score (what a record keeps as metadata)."""
    if not isinstance(chunk, dict):
        return None
    return {key: value for key, value in chunk.items() if key not in ("text", "score")}


def _cmd_presets(args: argparse.Namespace) -> int:
    presets = load_data_json("presets.json")["presets"]
    rows = [("name", "depth", "context", "source")]
    for name in available_presets():
        entry = presets[name]
        source = f"{entry['hf_id']} (config.json)"
        rows.append((name, str(entry["depth"]), str(entry["context_length"]), source))
    curves = published_curves()
    for name in available_profile_presets():
        entry = curves[name.split(":", 1)[1]]
        rows.append(
            (name, "-", f"{entry['n_documents']} docs", f"Liu et al. 2023, {entry['source']}")
        )
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        print(f"{row[0]:<{widths[0]}}  {row[1]:>{widths[1]}}  {row[2]:>{widths[2]}}  {row[3]}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``bookend`` command."""
    parser = argparse.ArgumentParser(
        prog="bookend",
        description="Place retrieved chunks where the model reads best.",
    )
    parser.add_argument("--version", action="version", version=f"bookend {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = sub.add_parser(
        "demo",
        help="retrieve from a bundled corpus with BM25 and place the chunks for a model",
        description="The main job on a bundled default: BM25 retrieval (rank-bm25) over 16 "
        "passages, bookend placement for a preset model, a table of chunk, score, slot and "
        "weight, the objective against retrieval order and the alternate pattern, and the "
        "influence plot as a PNG when matplotlib is installed.",
    )
    _setting_options(demo, ["model"])
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
    _setting_options(prof, ["model"])
    prof.add_argument("--k", type=int, default=10, help="number of chunks (default: 10)")
    prof.add_argument(
        "--chunk-tokens", type=int, default=200, help="tokens per chunk (default: 200)"
    )
    _setting_options(prof, ["prefix_tokens", "suffix_tokens"])
    prof.add_argument("--json", action="store_true", help="print JSON instead of a table")
    prof.add_argument("--plot", metavar="PNG", help="also write a plot to this PNG")
    prof.set_defaults(func=_cmd_profile)

    reo = sub.add_parser(
        "reorder",
        help="reorder chunks given as JSON (file or stdin) and print the order as JSON",
        description="Input JSON: a list of strings; or a list of objects with 'text' and "
        "optional 'score', 'length' (tokens) and 'source' (other fields are kept); or an object "
        "with 'chunks' and optional 'scores', 'lengths', 'sources' (other keys are rejected). "
        "Output JSON: chunks (the input chunks, whole, in prompt order), dropped (the chunks the "
        "budget, --top-k or --drop-lookalikes dropped, whole), order and dropped_indices (input "
        "indices), slots, objective, baselines.",
    )
    reo.add_argument("input", nargs="?", default="-", help="JSON file, or - for stdin")
    reo.add_argument(
        "--config",
        metavar="FILE",
        help="every setting from a PlacementConfig JSON file or the tuned.json of `bookend "
        "tune` (its model, strategy, layout ...); the options given here override its settings",
    )
    reo.add_argument(
        "--recorder",
        metavar="FILE",
        help="append the call to this retrieval record file (JSON Lines, schema "
        "bookend-retrievals/2: the chunks with their scores, the model, the order placed; "
        "created with mode 0600; BOOKEND_RECORD=0 turns it off)",
    )
    reo.add_argument(
        "--question",
        metavar="TEXT",
        help="with --recorder, the question the chunks were retrieved for, recorded with the "
        "call (`bookend tune --retrievals` builds probes only from records with a question)",
    )
    reo.add_argument(
        "--record-metadata",
        metavar="KEY",
        nargs="+",
        help="with --recorder, record these fields of each chunk object as its metadata "
        "(default: none)",
    )
    _setting_options(reo, _REORDER_SETTINGS, configurable=True)
    reo.set_defaults(func=_cmd_reorder)

    pre = sub.add_parser(
        "presets", help="list model presets and published curves with depth, context and source"
    )
    pre.set_defaults(func=_cmd_presets)

    for entry in entry_points(group=COMMANDS):
        entry.load()(sub)
    for name in LAB_COMMANDS:
        if name not in sub.choices:
            _without_the_lab(sub, name)
    return parser


def _without_the_lab(sub: Any, name: str) -> None:
    # No character starts an option here ("\0" is never typed), so every argument, --help too,
    # is taken as it comes: the command's one answer is what to install.
    cmd = sub.add_parser(
        name, help="a command of the lab (not installed)", prefix_chars="\0", add_help=False
    )
    cmd.add_argument("arguments", nargs="*")
    cmd.set_defaults(func=lambda args: _say_install_the_lab(name))


def _say_install_the_lab(name: str) -> int:
    print(f"bookend {name}: the lab is not installed; {LAB_HINT}", file=sys.stderr)
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code. Errors in input print one line, exit 2; a
    reader that stops reading the output (``bookend reorder - | head``) ends the command quietly,
    exit 1."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
        sys.stdout.flush()  # here, where a closed pipe is caught, not at the interpreter's exit
    except BrokenPipeError:
        # Python's recipe (the signal module's docs): point stdout at devnull, so that the
        # interpreter's own flush at exit does not fail again on the closed pipe.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except ValidationError as exc:
        print(f"bookend {args.command}: error: {validation_message(exc)}", file=sys.stderr)
        return 2
    except ValueError as exc:
        message = " ".join(str(exc).split())
        print(f"bookend {args.command}: error: {message}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":
    sys.exit(main())
