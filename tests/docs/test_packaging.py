"""The five distributions' metadata: ranges only, the names users install, and the project's own
exact versions kept in constraints.txt, which every install of the Makefile passes to pip."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: import-linter brings tomli
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
PYPROJECTS = [
    ROOT / "pyproject.toml",
    ROOT / "lab" / "pyproject.toml",
    *sorted((ROOT / "integrations").glob("*/pyproject.toml")),
]


def _project(path: Path) -> dict[str, object]:
    with path.open("rb") as f:
        return dict(tomllib.load(f)["project"])


def _requirements(project: dict[str, object]) -> list[str]:
    extras = project.get("optional-dependencies") or {}
    assert isinstance(extras, dict)
    return [*project.get("dependencies", []), *(r for reqs in extras.values() for r in reqs)]  # type: ignore[misc]


@pytest.mark.parametrize("path", PYPROJECTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_exact_pin_in_any_package_metadata(path: Path) -> None:
    pinned = [r for r in _requirements(_project(path)) if re.search(r"===?", r)]
    assert pinned == [], f"{path.relative_to(ROOT)} pins {pinned}: declare a range"


def test_the_core_is_installed_as_bookend_rag_and_the_lab_and_adapters_depend_on_it() -> None:
    # `bookend` on the package index is another project, which also installs a top-level
    # `bookend` package.
    core = _project(ROOT / "pyproject.toml")
    assert core["name"] == "bookend-rag"
    for path in PYPROJECTS[1:]:
        deps = _project(path)["dependencies"]
        assert isinstance(deps, list)
        assert any(d.startswith("bookend-rag>=") for d in deps), path
        assert not any(re.match(r"bookend\b(?!-)", d) for d in deps), path


def test_the_lab_extra_installs_the_lab() -> None:
    extras = _project(ROOT / "pyproject.toml")["optional-dependencies"]
    assert isinstance(extras, dict)
    lab = _project(ROOT / "lab" / "pyproject.toml")
    assert lab["name"] == "bookend-rag-lab"
    assert [r.split(">=")[0] for r in extras["lab"]] == [lab["name"]]
    assert any(r.startswith("torch>=") for r in lab["dependencies"])  # type: ignore[attr-defined]
    assert extras["validate"] == ["bookend-rag[lab]"]  # the former name still installs it


def test_the_core_declares_no_entry_point_of_the_lab() -> None:
    # The lab registers its subcommands and names itself (lab/pyproject.toml), so that installing
    # it is what adds them; the core only reads the groups.
    assert "entry-points" not in _project(ROOT / "pyproject.toml")
    groups = _project(ROOT / "lab" / "pyproject.toml")["entry-points"]
    assert isinstance(groups, dict)
    assert set(groups) == {"bookend_rag.commands", "bookend_rag.exports"}


def test_the_makefile_installs_through_the_constraints_file() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    constraints = (ROOT / "constraints.txt").read_text(encoding="utf-8")
    assert re.search(r"^torch==\S+$", constraints, re.M)
    assert "INSTALL := $(PIP) install -c constraints.txt" in makefile
    bare = [
        line.strip()
        for line in makefile.splitlines()
        if re.search(r"pip\)? install", line, re.I) and "-c constraints.txt" not in line
    ]
    assert bare == ["$(PIP) install --quiet --upgrade pip"]
