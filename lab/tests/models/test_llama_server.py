"""Where :func:`llama_server_binary` finds llama.cpp's ``llama-server``: the file that the
installed llama-cpp-python distribution's RECORD lists, wherever the wheel put it. Fake
distributions on disk here (no build); the real one is started by the slow tests' ``upstream``."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

import pytest

from bookend_rag_lab.models import llama_server
from bookend_rag_lab.models.llama_server import LlamaCppServer, llama_server_binary


def _installed(monkeypatch: pytest.MonkeyPatch, site: Path, record: list[str]) -> None:
    """Make ``site`` hold a llama-cpp-python distribution whose RECORD lists ``record``."""
    info = site / "llama_cpp_python-0.3.36.dist-info"
    info.mkdir(parents=True)
    (info / "RECORD").write_text("".join(f"{path},,\n" for path in record), encoding="utf-8")

    def distribution(name: str) -> metadata.Distribution:
        assert name == "llama_cpp_python"
        return metadata.PathDistribution(info)

    monkeypatch.setattr(llama_server.metadata, "distribution", distribution)


@pytest.mark.parametrize(
    ("listed", "where"),
    [
        # Installed into the wheel's root (scikit-build-core's default): beside the package.
        ("bin/llama-server", "venv/lib/python3.12/site-packages/bin/llama-server"),
        # Into the wheel's data directory: outside site-packages, where the RECORD path says.
        ("../../../bin/llama-server", "venv/bin/llama-server"),
    ],
)
def test_the_binary_is_the_file_the_record_lists(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, listed: str, where: str
) -> None:
    site = tmp_path / "venv" / "lib" / "python3.12" / "site-packages"
    _installed(
        monkeypatch,
        site,
        ["llama_cpp/__init__.py", "lib/libllama-server-impl.so", listed, "bin/llama-server-x"],
    )
    binary = (tmp_path / where).resolve()
    assert llama_server_binary() == binary
    assert LlamaCppServer("m.gguf", "m", tmp_path / "log").command()[0] == str(binary)


def test_a_build_without_the_binary_names_the_make_target(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _installed(monkeypatch, tmp_path, ["llama_cpp/__init__.py", "llama_cpp/lib/libllama.so"])
    with pytest.raises(RuntimeError, match=r"^llama-server is not installed: .*`make server`"):
        llama_server_binary()


def test_without_llama_cpp_python_names_the_make_target(monkeypatch: pytest.MonkeyPatch) -> None:
    def distribution(name: str) -> metadata.Distribution:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(llama_server.metadata, "distribution", distribution)
    with pytest.raises(RuntimeError, match=r"^llama-server is not installed: .*`make server`"):
        llama_server_binary()
