"""README's "Architecture" holds: a placement setting, a weight rule, a strategy and a scorer
backend are each added in at most two files of the library, and a fourth framework adapter in none.

Each of the first tests copies ``src/`` and ``lab/src/`` (the core's and the lab's packages) to
one temporary tree, adds a toy there the way the README says (a setting: its field, with how the
placement shortcuts treat it, in ``config.py`` and the code that uses it; a rule: its class and
its registry entry in ``weighing.py``; a strategy: its class and its registry entry in
``placement/strategies.py``; a backend: its module in ``bookend_rag_lab/models/`` and its
``register`` call in ``bookend_rag_lab/models/backends.py``), counts the files that differ from
the original trees, and runs the toy through the public entry points in a fresh interpreter whose
``bookend_rag`` and ``bookend_rag_lab`` are the copied ones. The adapter is a
``FrameworkAdapter`` subclass in this file, recording under its own source.
"""

from __future__ import annotations

import filecmp
import os
import shutil
import subprocess
import sys
import warnings
from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import Any

import pytest

from bookend_rag.adapters import FrameworkAdapter
from bookend_rag.recorder import QUESTIONLESS_TOLD_AFTER, RecorderWarning, as_recorder
from bookend_rag.retrievals import read_retrievals

ROOT = Path(__file__).resolve().parents[2]
#: The core's packages and the lab's, copied into one tree.
SOURCES = (ROOT / "src", ROOT / "lab" / "src")

TOY_RULE = '''

class HalfRule(WeightRule):
    """``half``: ``N · (F(e) - F(s)) / (l_i + lbar) · 2``: a chunk's length counts half."""

    name = "half"
    description = "influence per token, a chunk's length counted half"

    def divisors(
        self, lengths: FloatArray, mean: float, profile: InfluenceProfile
    ) -> tuple[FloatArray, FloatArray | None]:
        """``(l_i + lbar) / 2``, no point masses apart."""
        return (lengths + mean) / 2, None

'''

#: A fixed pattern: the most relevant chunk last, the least relevant first.
TOY_STRATEGY = '''

class BestLastStrategy(PatternStrategy):
    """``best_last``: the relevance order reversed, the most relevant chunk last."""

    name = "best_last"
    tune_candidate = True

    @staticmethod
    def slot_ranks(k: int) -> IntArray:
        """``k - 1, ..., 1, 0``."""
        return front_to_back_ranks(k)[::-1]

'''

#: A setting that moves the order, declared as a new setting should be: the shortcuts place
#: only with its default.
TOY_SETTING = """    reverse: Annotated[bool, Shortcuts.DEFAULT_ONLY] = Field(
        default=False, description="Place the chunks in the reverse of the chosen order."
    )

"""

TOY_SETTING_USE = """    if config.reverse:
        local = local[::-1]
"""

TOY_SCORER = '''"""A toy backend: the gold answer is likelier the earlier its document stands."""

from collections.abc import Sequence

from bookend_rag_lab.models.cache import CallCache
from bookend_rag_lab.models.scorer import Capabilities, Continuations, Prompt


class EarlyScorer:
    capabilities = Capabilities("toy-early")

    def __init__(self, cache: CallCache) -> None:
        self.model_id = "toy-early"
        self.calls = 0
        self.cache = cache

    def token_length(self, text: str) -> int:
        return len(text.split())

    def is_cached(self, prompt: Prompt, continuations: Sequence[str]) -> bool:
        return False

    def score(self, prompt: Prompt, continuations: Sequence[str]) -> Continuations:
        self.calls += 1
        text = str(prompt)
        found = [text.find(c) for c in continuations]
        logprob = tuple(-float(i if i >= 0 else len(text)) / 100 for i in found)
        return Continuations(logprob, tuple(lp == max(logprob) for lp in logprob))

    def close(self) -> None:
        pass
'''

TOY_REGISTRATION = """
from bookend_rag_lab.models.toy import EarlyScorer  # noqa: E402

register(
    Backend(
        "toy",
        EarlyScorer.capabilities,
        lambda args: False,
        _no_options,
        lambda spec, cache, say: EarlyScorer(cache),
    )
)
"""


def _copy(tmp_path: Path) -> Path:
    tree = tmp_path / "src"
    for source in SOURCES:
        ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
        shutil.copytree(source, tree, ignore=ignore, dirs_exist_ok=True)
    return tree


def _changed(tree: Path) -> set[str]:
    """The files of ``tree`` that are new or differ from ``src/`` and ``lab/src/``."""
    changed: set[str] = set()
    for path in tree.rglob("*.py"):
        relative = path.relative_to(tree)
        originals = [source / relative for source in SOURCES if (source / relative).exists()]
        if not originals or not filecmp.cmp(path, originals[0], shallow=False):
            changed.add(relative.as_posix())
    return changed


def _run(tree: Path, code: str) -> str:
    done = _call(tree, code)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _call(tree: Path, code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )


def _edit(path: Path, anchor: str, before: str = "", after: str = "") -> None:
    """Put ``before`` and ``after`` around the one ``anchor`` of the file at ``path``."""
    text = path.read_text(encoding="utf-8")
    assert text.count(anchor) == 1, anchor
    path.write_text(text.replace(anchor, before + anchor + after), encoding="utf-8")


def _register(module: Path, toy: str, registry: str, last: str, instance: str) -> None:
    """Add the class ``toy`` to ``module`` before its ``registry`` comment, and ``instance`` to the
    registry after ``last``, the last entry bookend ships."""
    _edit(module, registry, before=toy.lstrip("\n") + "\n")
    _edit(module, last, after=f", {instance}")


def test_a_setting_that_moves_the_order_is_added_in_two_files(tmp_path: Path) -> None:
    """The shortcuts (a few chunks, and placing by rank above 64) do not ignore it: every call
    with it set places on the array path, which reads it."""
    tree = _copy(tmp_path)
    config = tree / "bookend_rag" / "config.py"
    _edit(config, '    @field_validator("model", mode="before")', before=TOY_SETTING)
    local = "    local, repeated = _arrange("
    array_path = tree / "bookend_rag" / "place" / "array_path.py"
    text = array_path.read_text(encoding="utf-8")
    line = text[text.index(local) : text.index("\n", text.index(local)) + 1]
    _edit(array_path, line, after=TOY_SETTING_USE)
    assert _changed(tree) == {"bookend_rag/config.py", "bookend_rag/place/array_path.py"}
    out = _run(
        tree,
        "import bookend_rag as b\n"
        "from bookend_rag.cli import build_parser\n"
        "for k in (5, 20, 64, 65, 1000):\n"
        "    texts, scores = [f'chunk {i}' for i in range(k)], [k - i for i in range(k)]\n"
        "    print(b.reorder(texts, scores).order == tuple(range(k)),"
        " b.reorder(texts, scores, reverse=True).order == tuple(range(k))[::-1],"
        " b.Bookend(reverse=True).place(texts).order == tuple(range(k))[::-1])\n"
        "print(build_parser().parse_args(['reorder', '--reverse']).reverse)\n",
    )
    assert out.splitlines() == ["True True True"] * 5 + ["True"]


def test_a_setting_without_its_shortcut_declaration_is_refused_at_import(tmp_path: Path) -> None:
    tree = _copy(tmp_path)
    undeclared = TOY_SETTING.replace("Annotated[bool, Shortcuts.DEFAULT_ONLY]", "bool")
    _edit(tree / "bookend_rag" / "config.py", '    @field_validator("model"', before=undeclared)
    done = _call(tree, "import bookend_rag")
    assert done.returncode != 0
    assert (
        "TypeError: PlacementConfig.reverse must declare how the placement shortcuts treat it"
        in done.stderr
    )


def test_a_weight_rule_is_added_in_one_file(tmp_path: Path) -> None:
    tree = _copy(tmp_path)
    weighing = tree / "bookend_rag" / "weighing.py"
    _register(
        weighing, TOY_RULE, "#: Every rule ``weight_rule=`` takes", "DensityRule()", "HalfRule()"
    )
    assert _changed(tree) == {"bookend_rag/weighing.py"}
    out = _run(
        tree,
        "import bookend_rag as b\n"
        "from bookend_rag.cli import build_parser\n"
        "p = b.reorder(['a', 'b', 'c', 'd'], [4, 3, 2, 1], lengths=[10, 400, 30, 50],"
        " weight_rule='half')\n"
        "print(p.weight_rule)\n"
        "print(p.explain())\n"
        "print(build_parser().parse_args(['reorder', '--weight-rule', 'half']).weight_rule)\n",
    )
    lines = out.splitlines()
    assert lines[0] == "half"
    assert "a chunk's length counted half" in out
    assert lines[-1] == "half"


def test_a_scorer_backend_is_added_in_two_files(tmp_path: Path) -> None:
    tree = _copy(tmp_path)
    (tree / "bookend_rag_lab" / "models" / "toy.py").write_text(TOY_SCORER, encoding="utf-8")
    backends = tree / "bookend_rag_lab" / "models" / "backends.py"
    backends.write_text(backends.read_text(encoding="utf-8") + TOY_REGISTRATION, encoding="utf-8")
    assert _changed(tree) == {"bookend_rag_lab/models/toy.py", "bookend_rag_lab/models/backends.py"}
    out = _run(
        tree,
        "from bookend_rag_lab.experiments.evaluate import evaluate\n"
        "from bookend_rag_lab.experiments.runspec import RunSpec\n"
        "from bookend_rag_lab.items.hard import hard_items\n"
        "from bookend_rag_lab.models.backends import ScorerSpec\n"
        "run = RunSpec(hard_items(4, 3, seed=0), retrievers=['bm25'])\n"
        "result = evaluate(run, ScorerSpec('toy'), theory='smollm2-135m', progress=False)\n"
        "print(result.report['model'], result.calls)\n"
        "print(sorted(result.report['strategies']))\n",
    )
    model, calls = out.splitlines()[0].split()
    assert model == "toy-early"
    assert int(calls) > 0
    assert "retrieval" in out.splitlines()[1]


def test_a_strategy_is_added_in_one_file(tmp_path: Path) -> None:
    """``reorder`` on every path (a few chunks, placing by rank above 64, the array path with
    given lengths), ``explain()``, ``bookend reorder``, the adapters' settings (LangChain's
    ``BookendReorder`` is a ``PlacementConfig``; Haystack's ranker takes it as a keyword) and
    tune's candidates all take it."""
    tree = _copy(tmp_path)
    strategies = tree / "bookend_rag" / "placement" / "strategies.py"
    registry = "#: Every strategy ``strategy=`` takes"
    _register(strategies, TOY_STRATEGY, registry, "RelevanceStrategy()", "BestLastStrategy()")
    assert _changed(tree) == {"bookend_rag/placement/strategies.py"}
    out = _run(
        tree,
        "import bookend_rag as b\n"
        "from bookend_rag.cli import build_parser\n"
        "from bookend_rag_lab.experiments.candidates import fixed_candidates\n"
        "from haystack import Document\n"
        "from haystack_integrations.components.rankers.bookend import BookendRanker\n"
        "from langchain_bookend import BookendReorder\n"
        "from langchain_core.documents import Document as LCDocument\n"
        "for k in (5, 20, 64, 65, 1000):\n"
        "    texts, scores = [f'chunk {i}' for i in range(k)], [k - i for i in range(k)]\n"
        "    best_last = tuple(range(k))[::-1]\n"
        "    print(b.reorder(texts, scores, strategy='best_last').order == best_last,"
        " b.reorder(texts, scores, lengths=[1 + i % 7 for i in range(k)],"
        " strategy='best_last').order == best_last,"
        " b.Bookend(strategy='best_last').place(texts).order == best_last)\n"
        "print(b.reorder(['a', 'b', 'c'], [3, 2, 1], strategy='best_last').explain())\n"
        "print(build_parser().parse_args(['reorder', '--strategy', 'best_last']).strategy)\n"
        "docs = [Document(content=t, score=s) for t, s in (('a', 0.9), ('b', 0.5), ('c', 0.1))]\n"
        "ranked = BookendRanker(strategy='best_last').run(documents=docs)['documents']\n"
        "print('haystack', [d.content for d in ranked])\n"
        "lc = [LCDocument(page_content=t, metadata={'score': s}) for t, s in"
        " (('a', 0.9), ('b', 0.5), ('c', 0.1))]\n"
        "reordered = BookendReorder(strategy='best_last', score_key='score').invoke(lc)\n"
        "print('langchain', [d.page_content for d in reordered])\n"
        "print('candidates', list(fixed_candidates('smollm2-135m', 5)))\n",
    )
    lines = out.splitlines()
    assert lines[:5] == ["True True True"] * 5
    assert "strategy: best_last" in out
    assert "; the best_last strategy fixes the pattern" in out
    assert "haystack ['c', 'b', 'a']" in lines
    assert "langchain ['c', 'b', 'a']" in lines
    candidates = "candidates ['default', 'relevance', 'reversed', 'view', 'alternate', 'langchain'"
    assert f"{candidates}, 'best_last']" in lines
    assert "best_last" in lines  # bookend reorder --strategy best_last


class ToyAdapter(FrameworkAdapter):
    """A fourth framework's adapter, as its own package would write it: items are dicts."""

    record_source = "toy_framework"

    @staticmethod
    def item_text(item: Any) -> str:
        return str(item["text"])

    @staticmethod
    def item_source(item: Any, key: str) -> Hashable | None:
        return item.get(key)  # type: ignore[no-any-return]

    @staticmethod
    def item_metadata(item: Any) -> Mapping[str, Any] | None:
        return {"title": item["text"].upper()}

    def run(self, items: list[dict[str, Any]], question: str | None = None) -> list[Any]:
        scores = [item["score"] for item in items]
        placer = self.placer(question)
        placement = placer.place(items, scores)
        self.deliver(placement, placer, items, scores, question)
        return placement.items


def test_a_fourth_adapter_records_under_its_own_source_without_a_core_edit(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    adapter = ToyAdapter(recorder=path)
    items = [{"text": t, "score": s} for t, s in (("a", 0.2), ("b", 0.9), ("c", 0.5))]
    placed = adapter.run(items, question="Which?")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(QUESTIONLESS_TOLD_AFTER):
            adapter.run(items)
    (told,) = [str(w.message) for w in caught if issubclass(w.category, RecorderWarning)]
    recorder = as_recorder(path)
    assert recorder is not None
    recorder.flush()
    first, *rest = read_retrievals(path)
    assert (first.source, first.question) == ("toy_framework", "Which?")
    assert [first.documents[i].text for i in first.order or ()] == [i["text"] for i in placed]
    assert len(rest) == QUESTIONLESS_TOLD_AFTER
    assert {r.source for r in rest} == {"toy_framework"}
    # Told how to bring the question, in words that fit any adapter.
    assert "pass each call's question to the toy_framework adapter" in told


def test_an_adapter_with_a_source_no_record_could_hold_fails_when_defined() -> None:
    with pytest.raises(TypeError, match=r"Bad: record_source must be a lower-case identifier"):

        class Bad(ToyAdapter):
            record_source = "Toy Framework"
