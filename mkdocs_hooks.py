"""mkdocs hooks: the documentation pages that other files of the repository already hold.

* ``results/*.md``: one page per ``##`` section of ``bench/RESULTS.md``, which stays the single
  record the benchmarks and the code refer to (no copy to keep in step);
* ``guides/langchain.md``, ``guides/llama-index.md``, ``guides/haystack.md``: the adapters'
  READMEs, which their package pages on the index show too;
* ``figures/*.png``: drawn from the committed reports under ``bench/`` at every build (no model
  runs), straight into the built site, so a figure is never older than its report and none is
  committed by hand;
* the numbers in the pages' prose: ``{{ report: PATH | FORMAT }}`` is read from the same
  reports (:func:`evidence`; :func:`fill`), and ``{{ report: orders_table }}`` is the table of
  every order against the retriever's own, ``{{ report: label_free_table }}`` that of the
  label-free cells.

Links that point outside the site (a benchmark's JSON, a report) become the repository path in
code type; images are copied in. A page that shows an image the site does not hold fails the build.
Plain Python, offline: nothing is fetched.
"""

from __future__ import annotations

import math
import re
import tempfile
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urljoin

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from bookend_rag_lab.runfiles import read_json

ROOT = Path(__file__).resolve().parent
RESULTS = ROOT / "bench" / "RESULTS.md"
GUIDES = {
    "guides/langchain.md": ("LangChain", ROOT / "integrations" / "langchain" / "README.md"),
    "guides/llama-index.md": ("LlamaIndex", ROOT / "integrations" / "llama_index" / "README.md"),
    "guides/haystack.md": ("Haystack", ROOT / "integrations" / "haystack" / "README.md"),
}
_LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)")
BENCH = ROOT / "bench"

#: The cells of "Does it help?": id -> (model, row label, eval report, the column of tune's
#: choice: a ``bookend tune`` directory whose decision names it, or a report column).
CELLS: dict[str, tuple[str, str, str, str | None]] = {
    f"{suite}-{model}-k{k}{chat}": (
        name,
        f"{label}, K = {k}" + (", chat" if chat else ""),
        f"{'eval-chat' if chat else 'eval'}/{report}/report.json",
        "bookend-in-user-prompt" if chat else (f"tune/{suite}-{model}-k{k}" if tuned else None),
    )
    for model, name in (("smollm2", "SmolLM2-135M"), ("gemma3", "Gemma 3 270M"))
    for suite, label, k, chat, report, tuned in (
        ("records", "records", 10, "", f"records-{model}-k10", True),
        ("nq", "NQ", 10, "", f"nq-{model}-k10", True),
        ("nq", "NQ", 20, "", f"nq-{model}-k20", True),
        ("hard", "hard", 10, "", f"{model}-k10", True),
        ("lookup", "lookups", 10, "", f"lookup-{model}-k10", False),
        ("records", "records", 10, "-chat", f"records-{model}-k10", True),
        ("hard", "hard", 10, "-chat", f"hard-{model}-k10", True),
    )
}
# Qwen2.5-Coder (issue 49) is scored on the evaluation items that judge its label-free cells
# (60 per prompt), whose columns hold both of its tunes' decisions; it has no row where it has no
# such run.
CELLS |= {
    f"{suite}-qwen25-k10{chat}": (
        "Qwen2.5-Coder-0.5B",
        f"{label}, K = 10" + (", chat" if chat else ""),
        f"tune-probes/self-answer/{suite}-{prompt}-qwen25/eval/report.json",
        "bookend-labelled" if chat else f"tune/{suite}-qwen25-k10",
    )
    for suite, label in (("records", "records"), ("nq", "NQ"))
    for prompt, chat in (("bookend", ""), ("chat", "-chat"))
}

#: Short names of the frameworks' patterns in the table.
FRAMEWORK_NAMES = {"langchain": "LC", "llamaindex": "LI", "haystack": "HS"}

#: The position-influence figure: model -> (its measured reports by prompt, its preset name).
INFLUENCE: dict[str, tuple[dict[str, str], str]] = {
    name: (
        {
            "bookend's prompt": f"eval/records-{model}-k10/report.json",
            "chat prompt": f"eval-chat/records-{model}-k10/report.json",
        },
        preset,
    )
    for model, name, preset in (
        ("smollm2", "SmolLM2-135M", "smollm2-135m"),
        ("gemma3", "Gemma 3 270M", "gemma-3-270m"),
    )
}
INFLUENCE["Qwen2.5-Coder-0.5B"] = (
    {
        prompt: CELLS[f"records-qwen25-k10{chat}"][2]
        for prompt, chat in (("bookend's prompt", ""), ("chat prompt", "-chat"))
    },
    "qwen2.5-coder-0.5b",
)

#: The label-free cells' judgements (``bench/label_free.py``), one file per model.
LABEL_FREE = ("label_free.json", "label_free_gemma3.json", "label_free_qwen25.json")
#: How a label-free cell's name (``SUITE-PROMPT-MODEL``) reads in the tune guide's table.
LABEL_FREE_NAMES = {
    "records": "records",
    "hard": "hard",
    "nq": "NQ",
    "squad": "SQuAD",
    "bookend": "bookend's prompt",
    "chat": "chat prompt",
    "smollm2": "SmolLM2-135M",
    "gemma3": "Gemma 3 270M",
    "qwen25": "Qwen2.5-Coder-0.5B",
}
#: Assumed hosted prices, dollars per million prompt tokens, at which the tune guide prices a
#: label-free decision.
PRICES = (0.15, 3.0)

#: The tune guide's figure: the ``bookend tune`` run it shows.
TUNE_FIGURE = "tune/nq-gemma3-k20"
_IMAGE_SUFFIXES = (".png", ".svg", ".jpg")


def results_sections() -> list[tuple[str, str, str]]:
    """``(slug, title, markdown)`` per ``##`` section of ``bench/RESULTS.md``, the preface first
    (slug ``index``)."""
    text = RESULTS.read_text(encoding="utf-8")
    parts = re.split(r"^## ", text, flags=re.M)
    preface = parts[0].replace("# Benchmark results", "# Results", 1)
    out = [("index", "Overview", preface)]
    for part in parts[1:]:
        title, _, body = part.partition("\n")
        name = re.sub(r"\s*\(.*$", "", title).replace("`", "").strip()
        slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
        # Each page's headings move up a level: the section is the page.
        body = re.sub(r"^#(#+) ", r"\1 ", body, flags=re.M)
        out.append((slug, name, f"# {title}\n{body}"))
    return out


def _rewrite(markdown: str, base: Path, images: dict[str, Path], page_dir: str) -> str:
    """Links relative to ``base`` that leave the site become repository paths; images are kept
    (recorded in ``images`` under the page's folder)."""

    def replace(match: re.Match[str]) -> str:
        bang, text, target = match.groups()
        if re.match(r"[a-z]+:|#", target):
            return match.group(0)
        path = (base / target.split("#")[0]).resolve()
        if bang and path.suffix in _IMAGE_SUFFIXES and path.is_file():
            images[f"{page_dir}/{target}"] = path
            return match.group(0)
        if path == ROOT / "README.md":
            return f"[{text}](../index.md)"
        where = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else target
        return f"{text} (`{where}`)" if text.strip("`") != where else f"`{where}`"

    return _LINK.sub(replace, markdown)


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Fill the nav's "Results" entry with a page per section of ``bench/RESULTS.md``; read the
    reports afresh (``mkdocs serve`` rebuilds in one process)."""
    evidence.cache_clear()
    pages = [{title: f"results/{slug}.md"} for slug, title, _ in results_sections()]
    for entry in config.nav or []:
        if isinstance(entry, dict) and "Results" in entry:
            entry["Results"] = pages
    return config


def _read(path: str | Path) -> Any:
    """The JSON at ``path`` under ``bench/`` (a report there is kept as ``report.json.xz``)."""
    return read_json(BENCH / path)


@cache
def evidence() -> dict[str, Any]:
    """The numbers the pages may show, by name: ``cell.CELL.ORDER`` (each order against the
    retriever's own in a cell of :data:`CELLS`; ``items.fewest`` and ``items.most``: their
    numbers of items), ``tune.RUN``, ``tune-chat.RUN`` and ``decision-time.RUN`` (the
    ``bookend tune`` reports), ``matrix`` (``bench/default_matrix.json``, its ranking as
    ``matrix.worst.CANDIDATE``), ``tuned_cells`` and ``prompt_cells`` (their JSON),
    ``label_free`` (:func:`label_free`) and ``label_free_codes`` (the code probes' cell). Read
    once per build (:func:`on_config` clears it)."""
    from bookend_rag_lab.report.evidence import against_current

    cells = {}
    for cell, (_, _, report, tuned) in CELLS.items():
        if tuned is not None and tuned.startswith("tune/"):
            tuned = _read(f"{tuned}/report.json")["decision"]["chosen"]
        cells[cell] = against_current(_read(report), tuned=tuned)
    matrix = _read("default_matrix.json")
    matrix["worst"] = {row["candidate"]: row for row in matrix["minimax"]}
    n = [c["current"]["n"] for c in cells.values()]
    out: dict[str, Any] = {"cell": cells, "items": {"fewest": min(n), "most": max(n)}}
    out["matrix"] = matrix
    for folder in ("tune", "tune-chat", "decision-time"):
        out[folder] = {d.name: _read(d / "report.json") for d in sorted((BENCH / folder).iterdir())}
    for name in ("tuned_cells", "prompt_cells"):
        out[name] = _read(f"{name}.json")
    out["label_free"] = label_free()
    out["label_free_codes"] = _read("label_free_codes.json")
    return out


def _span(values: list[float]) -> dict[str, float]:
    return {"low": min(values), "high": max(values)}


#: The smallest difference a label-free decision should be able to detect (points of the gold
#: answer's probability, as a fraction), at which the guides recommend a number of retrievals: an
#: assumption, stated where it is used, like :data:`PRICES`.
TARGET_MDE = 0.05
#: The numbers of retrievals whose MDE the label-free runs state (``retrievals_needed.mde``).
RETRIEVALS = ("30", "60", "120")


def _moved(decisions: Mapping[str, str]) -> str:
    """Which tunes left the default: ``kept`` (neither), ``labels`` (only the labelled one),
    ``probes`` (only the label-free one), ``same`` (both, to one order) or ``apart`` (both, to
    different orders)."""
    free, labelled = decisions["label-free"] != "default", decisions["labelled"] != "default"
    if free and labelled:
        return "same" if decisions["label-free"] == decisions["labelled"] else "apart"
    return "probes" if free else "labels" if labelled else "kept"


def label_free() -> dict[str, Any]:
    """The label-free cells (:data:`LABEL_FREE`) as ``cells.CELL`` and their summary: how many
    there are (``cells_count``), gave probes (``decided``), made the labelled decision
    (``same``), another within the noise of it (``within_noise``) or were measurably behind it
    (``behind``); which tunes left the default (``moved.WHO``: :func:`_moved`, a count per
    kind); the range over the cells of the MDE a decision has from 30, 60 and 120
    retrievals (``mde.N.low``, ``.high``), how many cells detect :data:`TARGET_MDE` at each
    (``detects.N``), the recommended number (``recommended``: the fewest of :data:`RETRIEVALS`
    at which three cells in four do) and the most any cell needs for it (``needed_most``, from
    the MDE's fall as one over the square root of the retrievals, rounded up to tens); and of a
    decision's cost from its dry run (``requests``, ``prompt_tokens``, and dollars at each of
    :data:`PRICES` as ``dollars.PRICE``)."""
    cells = {name: c for f in LABEL_FREE for name, c in _read(f).items()}
    decided = [c for c in cells.values() if "refused" not in c]
    mde = [c["retrievals_needed"]["mde"] for c in decided if c["retrievals_needed"]["mde"]]
    dry = [c["cost"]["dry_run"] for c in decided]
    tokens = [d["prompt_tokens"] for d in dry]
    same = sum(c["decisions"]["label-free"] == c["decisions"]["labelled"] for c in decided)
    behind = sum(bool(c["measurably_behind"]) for c in decided)
    moved = {who: 0 for who in ("kept", "labels", "probes", "same", "apart")}
    for c in decided:
        moved[_moved(c["decisions"])] += 1
    detects = {n: sum(m[n] <= TARGET_MDE for m in mde) for n in RETRIEVALS}
    enough = [n for n in RETRIEVALS if 4 * detects[n] >= 3 * len(mde)]
    last = RETRIEVALS[-1]
    needed = max(int(last) * (m[last] / TARGET_MDE) ** 2 for m in mde)
    return {
        "cells": cells,
        "cells_count": len(cells),
        "decided": len(decided),
        "same": same,
        "within_noise": len(decided) - same - behind,
        "behind": behind,
        "moved": moved,
        "mde": {n: _span([m[n] for m in mde]) for n in RETRIEVALS},
        "target_mde": TARGET_MDE,
        "detects": detects,
        "recommended": int(enough[0]) if enough else None,
        "needed_most": 10 * math.ceil(needed / 10),
        "requests": _span([d["requests"] for d in dry]),
        "prompt_tokens": _span(tokens),
        "dollars": {f"{p:g}": _span([t * p / 1e6 for t in tokens]) for p in PRICES},
    }


#: How each kind of :func:`_moved` reads in the label-free table.
MOVED = {
    "kept": "both kept it",
    "labels": "the labels moved ({labelled}), the probes kept it",
    "probes": "the probes moved ({free}), the labels kept it",
    "same": "both moved ({free})",
    "apart": "both moved: the probes to {free}, the labels to {labelled}",
}


def label_free_table() -> str:
    """Markdown: per label-free cell, which of the two tunes left the default, both decisions,
    the label-free one minus the labelled one and minus the retriever's order (points with the
    paired 95% interval and the MDE; bold where the label-free decision is measurably behind), or
    why the cell gave no probe."""
    lines = [
        "| suite, prompt, model | the default | label-free / labelled | label-free minus labelled "
        "| minus your order | minus the best fixed order |",
        "|---|---|---|---|---|---|",
    ]
    for name, c in evidence()["label_free"]["cells"].items():
        where = _cell_name(name)
        if "refused" in c:
            refused = "no probe: tune refused (the model did not answer)"
            lines.append(f"| {where} | {refused} | — | — | — | — |")
            continue
        free, labelled = c["decisions"]["label-free"], c["decisions"]["labelled"]
        behind = c["label_free_minus_labelled"]
        versus = f"{_points(behind)} (MDE {100 * behind['mde']:.1f})"
        if c["measurably_behind"]:
            versus = f"**{versus}**"
        best = f"{_points(c['label_free_minus_best_fixed'])} ({c['best_fixed']})"
        default = MOVED[_moved(c["decisions"])].format(free=free, labelled=labelled)
        lines.append(
            f"| {where} | {default} | {free} / {labelled} "
            f"| {versus if free != labelled else 'the same'} "
            f"| {_points(c['label_free_minus_current'])} | {best} |"
        )
    return "\n".join(lines)


def _cell_name(name: str) -> str:
    return ", ".join(LABEL_FREE_NAMES[part] for part in name.split("-"))


def label_free_moves() -> str:
    """Markdown: in how many label-free cells each tune left the default, naming the cells where
    either moved (:func:`_moved`; the tune guide and ``bench/RESULTS.md``, "Label-free tuning",
    show the same sentence)."""
    lf = evidence()["label_free"]
    moved = lf["moved"]
    where: dict[str, list[str]] = {}
    for name, c in lf["cells"].items():
        if "refused" not in c:
            who = _moved(c["decisions"])
            free, labelled = c["decisions"]["label-free"], c["decisions"]["labelled"]
            apart = f": the probes {free}, the labels {labelled}" if who == "apart" else ""
            where.setdefault(who, []).append(_cell_name(name) + apart)

    def named(who: str) -> str:
        return f"{moved[who]} ({'; '.join(where[who])})" if moved[who] else "none"

    agreed = "all of them" if moved["kept"] == lf["same"] else f"{moved['kept']} of them"
    return (
        f"Of the {lf['decided']} cells that gave probes, the probes made the labelled decision in "
        f"{lf['same']}, in {agreed} by both tunes keeping the default. The labels moved and the "
        f"probes kept the default in {named('labels')}; both moved, to different orders, in "
        f"{named('apart')}; both to the same order in {named('same')}; the probes alone in "
        f"{named('probes')}."
    )


def label_free_retrievals() -> str:
    """Markdown: the recommended number of retrievals and why, from :func:`label_free` (the tune
    guide and ``bench/RESULTS.md``, "Label-free tuning", show the same sentence)."""
    lf = evidence()["label_free"]
    mde, detects, first, *rest = lf["mde"], lf["detects"], *RETRIEVALS
    spans = [f"{100 * mde[n]['low']:.1f} to {100 * mde[n]['high']:.1f}" for n in RETRIEVALS]
    then = " and ".join(f"{span} from {n}" for span, n in zip(spans[1:], rest, strict=True))
    counts = " and ".join(f"{detects[n]} at {n}" for n in rest)
    return (
        f"**Record at least {lf['recommended']} retrievals with their questions.** From the "
        f"self-answer probes' spread in the {lf['decided']} cells that gave probes, the MDE of a "
        f"decision (80% power, 95%) is {spans[0]} points from {first} retrievals, {then}. A "
        f"difference of {100 * lf['target_mde']:.0f} points (assumed: the least worth moving "
        f"for) is detected in {detects[first]} of the {lf['decided']} cells at {first} "
        f"retrievals, {counts}: {lf['recommended']} is the fewest at which three cells in four "
        f"detect it, and the widest spread measured needs about {lf['needed_most']:,}."
    )


def label_free_cost() -> str:
    """Markdown: what a label-free decision costs on a hosted API, from the cells' dry runs
    (:func:`label_free`; the tune guide and ``bench/RESULTS.md``, "Label-free tuning", show the
    same sentence)."""
    lf = evidence()["label_free"]
    requests, tokens, dollars = lf["requests"], lf["prompt_tokens"], lf["dollars"]
    priced = [
        f"${dollars[f'{p:g}']['low']:.2f} to ${dollars[f'{p:g}']['high']:.2f} at an assumed "
        f"${p:g} per million prompt tokens"
        for p in PRICES
    ]
    return (
        f"**What a decision costs on a hosted API.** `--dry-run` on 60 retrievals at K = 10 "
        f"states at most {requests['low']:,} to {requests['high']:,} requests (one short "
        f"generation per document, then the scoring calls) and {tokens['low']:,} to "
        f"{tokens['high']:,} prompt tokens in the {lf['decided']} cells that gave probes: "
        f"{priced[0]} ({priced[1]}); assumed prices, not quoted from a price list."
    )


def _diff(v: Any) -> float:
    """A number, or a paired difference's ``diff``."""
    return float(v["diff"] if isinstance(v, Mapping) else v)


def _points(d: Mapping[str, Any]) -> str:
    return f"{100 * d['diff']:+.1f} [{100 * d['ci_low']:+.1f}, {100 * d['ci_high']:+.1f}]"


#: ``{{ report: PATH | FORMAT }}``: how a number is written.
FORMATS: dict[str, Callable[[Any], str]] = {
    "pct": lambda v: f"{100 * v:.1f}%",  # a probability as a percentage
    "pts": lambda v: f"{100 * abs(_diff(v)):.1f}",  # a difference in points, unsigned
    "signed": lambda v: f"{100 * _diff(v):+.1f}",  # the same, signed
    "ci": _points,  # a paired difference in points with its 95% interval
    "count": lambda v: str(len(v)),
    "minutes": lambda v: f"{v / 60:.1f}",  # seconds as minutes
    "thousands": lambda v: f"{v:,}",  # a count with thousands separators
    "usd": lambda v: f"${v:.2f}",
    "text": str,
}
# "report:" keeps the placeholders apart from the Jinja2 of the prompt templates the pages show.
PLACEHOLDER = re.compile(r"\{\{\s*report:\s*([\w.\-]+)\s*(?:\|\s*(\w+)\s*)?\}\}")


def lookup(path: str) -> Any:
    """The value at a dotted ``path`` of :func:`evidence` (a key may hold dots: the longest
    matching key is taken).

    Raises:
        KeyError: no value at ``path`` (the message names the part that is missing).
    """
    value: Any = evidence()
    rest = path
    while rest:
        if not isinstance(value, Mapping):
            raise KeyError(f"{path!r}: {rest!r} is below a {type(value).__name__}")
        key = next(
            (
                k
                for k in sorted(value, key=len, reverse=True)
                if rest == k or rest.startswith(f"{k}.")
            ),
            None,
        )
        if key is None:
            raise KeyError(f"{path!r}: no {rest.split('.')[0]!r} (there are {sorted(value)[:12]})")
        value, rest = value[key], rest[len(key) + 1 :]
    return value


def orders_table() -> str:
    """Markdown: per row of :data:`CELLS` and per model the retriever's order's score, and the
    difference from it of bookend's default and tune's choice (``default / tuned``) and of the
    best framework pattern, in points (bold where the 95% interval excludes 0; the figure draws
    the intervals)."""
    from bookend_rag_lab.report.evidence import strongest

    def diff(entry: Mapping[str, Any] | None) -> str:
        if entry is None:
            return "—"
        text = f"{100 * entry['diff']:+.1f}"
        return f"**{text}**" if entry["verdict"] != "no difference" else text

    rows: dict[str, dict[str, list[str]]] = {}
    models: list[str] = []
    for cell, (model, label, _, _) in CELLS.items():
        c = evidence()["cell"][cell]
        best = strongest(c, tuple(FRAMEWORK_NAMES))
        models += [model] if model not in models else []
        rows.setdefault(label, {})[model] = [
            FORMATS["pct"](c["current"]["mean"]), f"{diff(c['default'])} / {diff(c.get('tuned'))}",
            f"{diff(c[best])} {FRAMEWORK_NAMES[best]}",
        ]  # fmt: skip
    head = " | ".join(f"{m}: yours | bookend | best framework" for m in models)
    lines = [f"| cell | {head} |", "|---" * (1 + 3 * len(models)) + "|"]
    for label, by_model in rows.items():
        values = [v for m in models for v in by_model.get(m, ["not measured", "—", "—"])]
        lines.append(f"| {label} | " + " | ".join(values) + " |")
    return "\n".join(lines)


#: ``{{ report: NAME }}`` for a whole table.
TABLES: dict[str, Callable[[], str]] = {
    "orders_table": orders_table,
    "label_free_table": label_free_table,
    "label_free_moves": label_free_moves,
    "label_free_retrievals": label_free_retrievals,
    "label_free_cost": label_free_cost,
}


def fill(markdown: str, where: str = "the page") -> str:
    """``markdown`` with every ``{{ report: PATH | FORMAT }}`` replaced by its number
    (:func:`lookup`, :data:`FORMATS`) and ``{{ report: TABLE }}`` by its table (:data:`TABLES`).

    Raises:
        PluginError: a path with no value, or an unknown format (naming the page and the text).
    """

    def replace(match: re.Match[str]) -> str:
        path, fmt = match.group(1), match.group(2) or "text"
        if path in TABLES:
            return TABLES[path]()
        if fmt not in FORMATS:
            raise PluginError(
                f"{where}: {match.group(0)!r}: format must be one of {sorted(FORMATS)}"
            )
        try:
            value = lookup(path)
        except KeyError as e:
            raise PluginError(f"{where}: {match.group(0)!r}: {e.args[0]}") from None
        try:
            return FORMATS[fmt](value)
        except (TypeError, ValueError, KeyError) as e:
            raise PluginError(f"{where}: {match.group(0)!r} cannot format {value!r}: {e}") from None

    return PLACEHOLDER.sub(replace, markdown)


def draw_figures(folder: Path) -> dict[str, Path]:
    """Draw the site's figures from the reports into ``folder``; site path -> file."""
    from bookend_rag import ModelSpec, reorder
    from bookend_rag_lab.report.figures import (
        candidate_means,
        order_effects,
        position_influence,
    )

    panels: dict[str, dict[str, Any]] = {}
    for cell, (model, label, _, _) in CELLS.items():
        panels.setdefault(model, {})[label] = evidence()["cell"][cell]
    measured: dict[str, dict[str, Any]] = {}
    theory: dict[str, Any] = {}
    placed: dict[str, list[int]] = {}
    k = 10
    scores = [1.0 - i / k for i in range(k)]  # most relevant first, as a retriever returns them
    chunks, lengths = [f"chunk {i + 1}" for i in range(k)], [100.0] * k  # equal lengths
    for model, (reports, preset) in INFLUENCE.items():
        curves = {
            prompt: _read(r)["position_curve"][str(k)]["candidate_prob"]
            for prompt, r in reports.items()
        }
        measured[model] = curves
        theory[model] = reorder(
            chunks, scores, model=ModelSpec.preset(preset), lengths=lengths
        ).weights
        default = reorder(chunks, scores, model=preset, lengths=lengths)
        placed[f"bookend, {model}"] = [i + 1 for i in default.order]
    first = next(iter(INFLUENCE.values()))[0]
    item = _read(next(iter(first.values())))["items"][0]["results"]
    placed["LangChain, LlamaIndex"] = [i + 1 for i in item["langchain"]["order"]]
    return {
        "figures/does-it-help.png": order_effects(panels, folder / "does-it-help.png"),
        "figures/where-models-read.png": position_influence(
            measured, theory, placed, folder / "where-models-read.png"
        ),
        "figures/tune.png": candidate_means(
            _read(f"{TUNE_FIGURE}/report.json"), folder / "tune.png"
        ),
    }


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the generated pages, the images they show and the figures drawn from the reports."""
    with tempfile.TemporaryDirectory(prefix="bookend-figures-") as folder:
        for uri, path in draw_figures(Path(folder)).items():
            files.append(File.generated(config, uri, content=path.read_bytes()))
    images: dict[str, Path] = {}
    for slug, _, markdown in results_sections():
        content = _rewrite(markdown, RESULTS.parent, images, "results")
        files.append(File.generated(config, f"results/{slug}.md", content=content))
    for uri, (_, readme) in GUIDES.items():
        content = _rewrite(readme.read_text(encoding="utf-8"), readme.parent, images, "guides")
        files.append(File.generated(config, uri, content=content))
    for uri, path in images.items():
        files.append(File.generated(config, uri, abs_src_path=str(path)))
    return files


def on_page_markdown(markdown: str, page: Page, **kwargs: Any) -> str:
    """Fill the page's numbers from the reports (:func:`fill`)."""
    return fill(markdown, page.file.src_uri)


_IMG = re.compile(r"<img\b[^>]*?\bsrc=\"([^\"]+)\"")


def on_page_content(html: str, page: Page, files: Files, **kwargs: Any) -> str:
    """Fail the build for an image the site does not hold (raw HTML included, which mkdocs' own
    link validation does not read)."""
    for src in _IMG.findall(html):
        if re.match(r"[a-z]+:|//", src):
            continue
        uri = unquote(urljoin(page.url, src.split("#")[0]))
        if uri not in {f.dest_uri for f in files}:
            raise PluginError(f"{page.file.src_uri}: the image {src!r} is not in the site ({uri})")
    return html
