"""Stale and broken prose (issue 38, 3.11): docstrings and comments wrapped mid-sentence, extras
and suites named as they no longer are, and paths in ``pyproject.toml`` that no longer exist."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: The code whose docstrings and comments are read: the core, the lab, the adapters, the benchmarks.
SOURCES = sorted(
    path
    for folder in ("src", "lab", "integrations", "bench")
    for path in (ROOT / folder).rglob("*.py")
    if "tests" not in path.relative_to(ROOT).parts
)
WIDTH = 100  # ruff's line length
_ITEM = re.compile(r"(?:\d+\.|[-*]) ")


def _prose_blocks(path: Path) -> Iterator[list[tuple[int, str]]]:
    """The lines of each docstring and each run of comment lines of ``path``, numbered; a
    comment's ``#`` (or ``#:``) is blanked out, so its text keeps its column."""
    lines = path.read_text(encoding="utf-8").splitlines()
    for node in ast.walk(ast.parse("\n".join(lines))):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                span = range(value.lineno - 1, value.end_lineno or value.lineno)
                yield _without_code([(i + 1, lines[i].replace('"""', "   ")) for i in span])
    run: list[tuple[int, str]] = []
    for number, line in enumerate(lines, 1):
        if line.lstrip().startswith("#"):
            run.append((number, re.sub(r"#:? ?", lambda m: " " * len(m[0]), line, count=1)))
        else:
            if len(run) > 2:
                yield run
            run = []


def _without_code(block: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """``block`` with the lines of its fenced code blocks blank: code is not wrapped prose."""
    out, fenced = [], False
    for number, line in block:
        fence = line.strip().startswith("```")
        fenced ^= fence
        out.append((number, "" if fenced or fence else line))
    return out


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _continues_at(line: str) -> int:
    """The column where the next line of ``line``'s paragraph starts: a list item's text."""
    item = _ITEM.match(line.lstrip())
    return _indent(line) + (len(item[0]) if item else 0)


def _mid_sentence_breaks(block: list[tuple[int, str]]) -> Iterator[int]:
    """Lines of one or two words between two lines of their paragraph that either the next
    line's first word would have joined, or that fall short of their list item's indent."""
    for (_, before), (number, line), (_, after) in zip(block, block[1:], block[2:], strict=False):
        text, following = line.strip(), after.strip()
        if not (before.strip() and text and following) or len(text.split()) > 2:
            continue
        if before.lstrip().startswith((">>>", "...")) or text.startswith((">>>", "...")):
            continue  # a doctest and its output
        if text.endswith((".", "?", "!")) or (text.endswith(":") and following[0].isupper()):
            continue  # a sentence ends there, and the next line starts another
        if _indent(line) < _continues_at(before) and _ITEM.match(before.lstrip()):
            yield number  # a list item's continuation pulled back to the margin
        elif (
            _indent(line) in {_indent(before), _continues_at(before)}
            and _indent(after) == _indent(line)
            and len(line.rstrip()) + 1 + len(following.split()[0]) <= WIDTH
        ):
            yield number


def test_no_docstring_or_comment_is_wrapped_mid_sentence() -> None:
    """A paragraph reflowed by hand left one or two words on a line of their own
    (``config.py``: "so a setting means the / same / everywhere")."""
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in SOURCES
        for block in _prose_blocks(path)
        for number in _mid_sentence_breaks(block)
    ]
    assert found == []


def test_the_extras_and_suites_are_named_as_they_are() -> None:
    """``validate`` is the lab extra's former name; the lab's summary lists every suite."""
    from bookend_rag_lab.items.suites import SUITES

    pages = [*(ROOT / "docs").rglob("*.md"), *(ROOT / "src").rglob("*.py")]
    pages += (ROOT / "lab" / "src").rglob("*.py")
    for page in pages:
        text = " ".join(page.read_text(encoding="utf-8").split())
        assert not re.search(r"`validate`+ extra", text), page
    import bookend_rag_lab

    summary = " ".join(str(bookend_rag_lab.__doc__).split())
    for name in SUITES:
        assert f"``{name}``" in summary, name


@pytest.mark.parametrize("folder", [ROOT, ROOT / "lab"], ids=["core", "lab"])
def test_the_paths_pyproject_names_exist(folder: Path) -> None:
    """Its comments named test files and folders that had moved (tests/test_cli.py,
    tests/validate/, tests/quality); the lab's name its own, from its folder."""
    text = (folder / "pyproject.toml").read_text(encoding="utf-8")
    for path in re.findall(r"\b((?:lab/)?(?:tests|src|bench|docs)/[\w./-]*\w)", text):
        assert (folder / path).exists(), path
