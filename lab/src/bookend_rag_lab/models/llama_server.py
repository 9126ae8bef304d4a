"""llama.cpp's two OpenAI-compatible servers on a loopback port: the real servers of the tests
and of ``bench/endpoint_speed.py``.

- :class:`LlamaServer`: llama-cpp-python's ``python -m llama_cpp.server`` (the ``server-test``
  extra: ``llama-cpp-python[server]``), with ``--logits_all true`` (its log-probabilities need
  it). It renders chats with the GGUF file's own chat template when it names no known format.
- :class:`LlamaCppServer`: llama.cpp's own ``llama-server`` binary, with ``--jinja`` so that it
  renders chats with the GGUF file's own chat template. ``make server`` builds it inside
  llama-cpp-python's build, from the llama.cpp tree that package vendors, so one compile of
  llama.cpp serves both; the binary ships in that package's wheel (:func:`llama_server_binary`).

Both serve one GGUF file on ``127.0.0.1`` under a model alias. Starting waits, within a bounded
time, until ``/v1/models`` answers; stopping terminates the process (killing it when it does not
end). The server's output goes to a log file, whose tail a failed start reports. The two differ in
their command line only (:meth:`ServerProcess.command`).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

import httpx

__all__ = ["LlamaCppServer", "LlamaServer", "ServerProcess", "free_port", "llama_server_binary"]

_S = TypeVar("_S", bound="ServerProcess")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (at the time of asking)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def llama_server_binary() -> Path:
    """The ``llama-server`` binary that the installed llama-cpp-python distribution carries (its
    RECORD lists it: ``make server`` builds it into that wheel; a wheel built without it has none).

    Raises:
        RuntimeError: when llama-cpp-python is not installed, or was built without the binary.
    """
    try:
        files = metadata.distribution("llama_cpp_python").files or []
    except metadata.PackageNotFoundError:
        files = []
    for file in files:
        if file.name == "llama-server":
            return Path(str(file.locate())).resolve()
    raise RuntimeError(
        "llama-server is not installed: build it with `make server` "
        "(llama-cpp-python built with its llama-server)"
    )


class ServerProcess:
    """One server process serving ``model`` as ``alias`` on a loopback port (a subclass says
    how: :meth:`command`).

    Args:
        model: the GGUF file.
        alias: the served model name (``/v1/models``).
        log: where the server's output goes.
        port: the port (default: a free one, kept across restarts).
        n_ctx: the context size in tokens.
        threads: CPU threads of the server (for generation and for prompt batches).
        api_key: a key the server then demands as a bearer token.
    """

    def __init__(
        self,
        model: str | Path,
        alias: str,
        log: str | Path,
        *,
        port: int | None = None,
        n_ctx: int = 4096,
        threads: int = 1,
        api_key: str | None = None,
    ) -> None:
        self.model = Path(model)
        self.alias = alias
        self.log = Path(log)
        self.port = port or free_port()
        self.n_ctx = n_ctx
        self.threads = threads
        self.api_key = api_key
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The OpenAI base URL, ``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def pid(self) -> int:
        """The running server's process id (what a benchmark reads its CPU time by).

        Raises:
            RuntimeError: when the server is not running.
        """
        if self._process is None:
            raise RuntimeError("the server is not running")
        return self._process.pid

    def start(self, wait: float = 180.0) -> str:
        """Start the server and wait until it answers; its base URL.

        Raises:
            RuntimeError: when the process ends, or does not answer within ``wait`` seconds.
        """
        if self._process is not None:
            raise RuntimeError("the server is running already")
        command = self.command()
        env = {**os.environ, "OMP_NUM_THREADS": str(self.threads)}
        with self.log.open("ab") as out:
            self._process = subprocess.Popen(
                command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env
            )
        deadline = time.monotonic() + wait
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                self._process = None
                raise RuntimeError(f"the server ended at start: {self._log_tail()}")
            try:
                if httpx.get(self.url + "/models", headers=headers, timeout=2.0).is_success:
                    return self.url
            except httpx.TransportError:
                pass
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"the server did not answer within {wait} s: {self._log_tail()}")

    def command(self) -> list[str]:
        """The server's command line."""
        raise NotImplementedError

    def stop(self) -> None:
        """Stop the server (terminate, then kill after 10 s); nothing when it is not running."""
        process, self._process = self._process, None
        if process is None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)

    def __enter__(self: _S) -> _S:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _log_tail(self) -> str:
        text = self.log.read_text(encoding="utf-8", errors="replace") if self.log.exists() else ""
        return " | ".join(text.strip().splitlines()[-5:])


class LlamaServer(ServerProcess):
    """llama-cpp-python's ``llama_cpp.server`` (the arguments: :class:`ServerProcess`)."""

    def command(self) -> list[str]:
        """``python -m llama_cpp.server`` on the model, with ``--logits_all true``."""
        command = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(self.model),
            "--model_alias",
            self.alias,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            str(self.n_ctx),
            "--n_threads",
            str(self.threads),
            "--n_threads_batch",
            str(self.threads),
            "--logits_all",
            "true",
        ]
        if self.api_key is not None:
            command += ["--api_key", self.api_key]
        return command


class LlamaCppServer(ServerProcess):
    """llama.cpp's own ``llama-server`` (the arguments: :class:`ServerProcess`), with
    ``--jinja`` (the GGUF file's own chat template) and the binary of :func:`llama_server_binary`
    unless ``binary`` is given."""

    def __init__(self, *args: Any, binary: str | Path | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.binary = None if binary is None else Path(binary)

    def command(self) -> list[str]:
        """``llama-server`` on the model, on one slot (``--parallel 1``)."""
        binary = self.binary or llama_server_binary()
        command = [
            str(binary),
            "--model",
            str(self.model),
            "--alias",
            self.alias,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--ctx-size",
            str(self.n_ctx),
            "--threads",
            str(self.threads),
            "--threads-batch",
            str(self.threads),
            "--parallel",
            "1",
            "--jinja",
        ]
        if self.api_key is not None:
            command += ["--api-key", self.api_key]
        return command
