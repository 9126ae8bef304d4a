"""The site's numbers come from the committed reports: a sample of them, recomputed here straight
from the reports' per-item values, is what the pages show; the pages that answer "does it help?"
type no number by hand; a number the reports do not hold, or an image the site does not hold,
fails the build."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from mkdocs.exceptions import PluginError

import mkdocs_hooks as hooks
from bookend_rag_lab.runfiles import read_json

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _report(path: str) -> dict[str, Any]:
    data: dict[str, Any] = read_json(ROOT / "bench" / path)
    return data


def _column(report: dict[str, Any], name: str) -> np.ndarray:
    return np.array([it["results"][name]["candidate_prob"] for it in report["items"]])


def _page(name: str) -> str:
    return hooks.fill((DOCS / name).read_text(encoding="utf-8"), name)


@pytest.mark.parametrize(
    ("cell", "report", "default"),
    [
        ("records-smollm2-k10", "eval/records-smollm2-k10/report.json", "bookend-hard-slots"),
        ("nq-smollm2-k20", "eval/nq-smollm2-k20/report.json", "bookend-default"),
        ("records-gemma3-k10", "eval/records-gemma3-k10/report.json", "bookend-theory"),
    ],
)
def test_the_table_shows_each_cells_numbers_from_its_report(
    cell: str, report: str, default: str
) -> None:
    data = _report(report)
    current = _column(data, "retrieval")
    gain = 100 * float(np.mean(_column(data, default) - current))
    label = hooks.CELLS[cell][1]
    row = next(
        line for line in hooks.orders_table().splitlines() if line.startswith(f"| {label} |")
    )
    model_columns = 3 * list(dict.fromkeys(m for m, *_ in hooks.CELLS.values())).index(
        hooks.CELLS[cell][0]
    )
    yours, bookend, _ = [c.strip() for c in row.strip("|").split("|")[1:]][
        model_columns : model_columns + 3
    ]
    assert yours == f"{100 * current.mean():.1f}%"
    assert bookend.split(" / ")[0].strip("*") == f"{gain:+.1f}"


def test_the_prose_shows_the_reports_numbers() -> None:
    page = _page("does-it-help.md")
    nq = _report("eval/nq-smollm2-k10/report.json")
    gain = np.mean(_column(nq, "bookend-hard-slots") - _column(nq, "retrieval"))
    assert f"{100 * gain:+.1f} on NQ" in page
    hard = _report("eval/smollm2-k10/report.json")
    loss = np.mean(_column(hard, "bookend-hard-slots") - _column(hard, "retrieval"))
    assert loss < 0
    assert f"the default is {100 * -loss:.1f} points behind your\norder" in page
    worst = {r["candidate"]: r for r in _report("default_matrix.json")["minimax"]}
    assert f"{100 * worst['langchain']['worst_loss']:.1f} for LangChain's" in page
    tune = _report("tune/nq-gemma3-k20/report.json")["decision"]
    assert f"Here `{tune['chosen']}`" in _page("guides/tune.md")
    assert f"{100 * tune['guard']['mde']:.1f} points" in _page("guides/tune.md")


@pytest.mark.parametrize("name", ["does-it-help.md", "index.md"])
def test_the_evidence_pages_type_no_number_by_hand(name: str) -> None:
    text = (DOCS / name).read_text(encoding="utf-8")
    text = re.sub(r"```.*?```", "", text, flags=re.S)  # code: no measurement
    text = re.sub(r"\{\{ report:[^}]*\}\}", "", text)
    text = text.replace("95% ", "")  # the intervals' confidence level, not a measurement
    for model in {model for model, *_ in hooks.CELLS.values()}:  # "Qwen2.5-Coder-0.5B"
        text = text.replace(model, "")
    typed = re.findall(r"\d+\.\d+|\d+\s*%|[+-]\d+ points", text)
    assert typed == []


def test_does_it_help_says_first_what_bookend_does_for_a_model_it_has_not_measured() -> None:
    text = (DOCS / "does-it-help.md").read_text(encoding="utf-8")
    first_screen = text.split("![", 1)[0]  # before the figure
    said = " ".join(first_screen.split())
    assert "For a model bookend has not measured" in said
    assert "your retriever's own order" in said
    assert "neither gains nor loses" in said


def test_every_placeholder_of_the_pages_is_filled() -> None:
    for path in DOCS.rglob("*.md"):
        page = _page(str(path.relative_to(DOCS)))
        assert hooks.PLACEHOLDER.search(page) is None, path


def test_a_number_the_reports_do_not_hold_fails_the_build() -> None:
    with pytest.raises(PluginError, match=r"no 'nq-nobody-k10'"):
        hooks.fill("{{ report: cell.nq-nobody-k10.default | ci }}", "page.md")
    with pytest.raises(PluginError, match="format must be one of"):
        hooks.fill("{{ report: cell.nq-smollm2-k10.default | percent }}", "page.md")
    with pytest.raises(PluginError, match="cannot format"):
        hooks.fill("{{ report: cell.nq-smollm2-k10 | signed }}", "page.md")
    # The prompt templates' Jinja2 on the pages is left alone.
    assert hooks.fill("{{ doc.slot }}") == "{{ doc.slot }}"


def test_an_image_the_site_does_not_hold_fails_the_build() -> None:
    page: Any = SimpleNamespace(url="concepts/theory/", file=SimpleNamespace(src_uri="t.md"))
    files: Any = [SimpleNamespace(dest_uri="figures/where-models-read.png")]
    shown = '<p><img alt="x" src="../../figures/where-models-read.png"></p>'
    assert hooks.on_page_content(shown, page=page, files=files) == shown
    with pytest.raises(PluginError, match=r"figures/missing\.png"):
        hooks.on_page_content('<img src="../../figures/missing.png">', page=page, files=files)


def test_the_label_free_table_shows_each_cells_judgement_from_its_report() -> None:
    judged = {name: c for f in hooks.LABEL_FREE for name, c in _report(f).items()}
    rows = hooks.label_free_table().splitlines()[2:]
    assert len(rows) == len(judged)
    for row, (name, cell) in zip(rows, judged.items(), strict=True):
        values = [v.strip() for v in row.strip("|").split("|")]
        assert values[0] == ", ".join(hooks.LABEL_FREE_NAMES[p] for p in name.split("-"))
        if "refused" in cell:
            assert values[1].startswith("no probe")
            continue
        assert values[2] == f"{cell['decisions']['label-free']} / {cell['decisions']['labelled']}"
        current = cell["label_free_minus_current"]
        assert values[4] == f"{100 * current['diff']:+.1f} [{100 * current['ci_low']:+.1f}, " + (
            f"{100 * current['ci_high']:+.1f}]"
        )
        assert values[3].startswith("**") == bool(cell["measurably_behind"])
        free, labelled = (cell["decisions"][d] != "default" for d in ("label-free", "labelled"))
        assert values[1].startswith("both kept") == (not free and not labelled)
        assert ("the probes kept it" in values[1]) == (labelled and not free)


def test_the_label_free_summary_says_which_tune_left_the_default() -> None:
    judged = {name: c for f in hooks.LABEL_FREE for name, c in _report(f).items()}
    decided = [c["decisions"] for c in judged.values() if "refused" not in c]
    moved = hooks.evidence()["label_free"]["moved"]
    assert moved["kept"] == sum(d["label-free"] == d["labelled"] == "default" for d in decided)
    assert sum(moved.values()) == len(decided)
    assert moved["kept"] + moved["same"] == hooks.evidence()["label_free"]["same"]


def test_the_recommended_number_of_retrievals_follows_from_the_mde() -> None:
    lf = hooks.evidence()["label_free"]
    mde = [c["retrievals_needed"]["mde"] for c in lf["cells"].values() if "refused" not in c]
    n = lf["recommended"]
    assert 4 * sum(m[str(n)] <= hooks.TARGET_MDE for m in mde) >= 3 * len(mde)
    fewer = [r for r in hooks.RETRIEVALS if int(r) < n]
    assert all(4 * sum(m[r] <= hooks.TARGET_MDE for m in mde) < 3 * len(mde) for r in fewer)
    assert f"Record at least {n} retrievals" in _page("guides/tune.md")


@pytest.mark.parametrize(
    "sentence", ["label_free_moves", "label_free_retrievals", "label_free_cost"]
)
def test_the_tune_guide_and_the_results_state_the_label_free_figures_from_one_source(
    sentence: str,
) -> None:
    generated = " ".join(hooks.TABLES[sentence]().split())
    assert generated in " ".join(_page("guides/tune.md").split())
    results = (ROOT / "bench" / "RESULTS.md").read_text(encoding="utf-8")
    section = results.split("## Label-free tuning")[1].split("\n## ")[0]
    assert generated in " ".join(section.split()), f"bench/RESULTS.md: copy {generated!r}"


def test_the_label_free_section_types_no_number_by_hand() -> None:
    text = (DOCS / "guides" / "tune.md").read_text(encoding="utf-8")
    section = text.split("### How good a proxy")[1]
    assert "{{ report: label_free_cost }}" in section
    cost = hooks.label_free_cost()
    assert all(f"assumed ${price:g} per million" in cost for price in hooks.PRICES)
    section = re.sub(r"\{\{ report:[^}]*\}\}", "", section)
    section = re.sub(r"`[^`]*`", "", section)  # commands and paths
    section = re.sub(r"95%|80% power|assumed \$[\d.]+", "", section)  # levels and prices assumed
    typed = re.findall(r"\d+\.\d+|\d+\s*%|\d+ (?:to \d+ )?points|\$\d", section)
    assert typed == []
