"""Every Python snippet in the README and in each adapter's README runs as written."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
READMES = [
    ROOT / "README.md",
    ROOT / "integrations" / "langchain" / "README.md",
    ROOT / "integrations" / "llama_index" / "README.md",
    ROOT / "integrations" / "haystack" / "README.md",
]
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _snippets() -> list[tuple[str, str]]:
    return [
        (f"{readme.relative_to(ROOT)}#{i}", code)
        for readme in READMES
        for i, code in enumerate(_BLOCK.findall(readme.read_text(encoding="utf-8")))
    ]


def test_every_readme_has_a_snippet() -> None:
    assert {name.split("#")[0] for name, _ in _snippets()} == {
        str(r.relative_to(ROOT)) for r in READMES
    }


@pytest.mark.parametrize(("name", "code"), _snippets(), ids=[name for name, _ in _snippets()])
def test_snippet_runs_on_its_own(
    name: str, code: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)  # snippets name files relative to the repository root
    monkeypatch.setitem(os.environ, "HF_HUB_OFFLINE", "1")
    exec(compile(code, name, "exec"), {"__name__": "__readme__"})
    capsys.readouterr()
