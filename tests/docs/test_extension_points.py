"""README's "Architecture" holds: a placement setting, a weight rule and a scorer backend are each
added in at most two files of the library.

Each test copies ``src/`` and ``lab/src/`` (the core's and the lab's packages) to one temporary
tree, adds a toy there the way the README says (a setting: its field, with how the placement
shortcuts treat it, in ``config.py`` and the code that uses it; a rule: its class and its registry
entry in ``weighing.py``; a backend: its module in ``bookend_rag_lab/models/`` and its
``register`` call in ``bookend_rag_lab/models/backends.py``), counts the files that differ from
the original trees, and runs the toy through the public entry points in a fresh interpreter whose
``bookend_rag`` and ``bookend_rag_lab`` are the copied ones.
"""

from __future__ import annotations

import filecmp
import os
import shutil
import subprocess
import sys
from pathlib import Path

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
    text = weighing.read_text(encoding="utf-8")
    registry = "#: Every rule ``weight_rule=`` takes"
    entry = "AnchoredRule(), DensityRule())"
    assert registry in text
    assert entry in text
    text = text.replace(registry, TOY_RULE.lstrip("\n") + "\n" + registry)
    text = text.replace(entry, "AnchoredRule(), DensityRule(), HalfRule())")
    weighing.write_text(text, encoding="utf-8")
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
