"""llama-cpp-python's OpenAI-compatible server on a loopback port: the real server of the tests
and of ``bench/endpoint_speed.py``.

``python -m llama_cpp.server`` (the ``server-test`` extra: ``llama-cpp-python[server]``) serves one
GGUF file on ``127.0.0.1`` under a model alias, with ``--logits_all true`` (its log-probabilities
need it). Starting waits, within a bounded time, until ``/v1/models`` answers; stopping terminates
the process (killing it when it does not end). The server's output goes to a log file, whose tail
a failed start reports.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

__all__ = ["LlamaServer", "free_port"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (at the time of asking)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class LlamaServer:
    """One ``llama_cpp.server`` process serving ``model`` as ``alias``.

    Args:
        model: the GGUF file.
        alias: the served model name (``/v1/models``).
        log: where the server's output goes.
        port: the port (default: a free one, kept across restarts).
        n_ctx: the context size in tokens.
        threads: CPU threads of the server (its ``--n_threads``).
        api_key: a key the server then demands as a bearer token (``--api_key``).
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

    def start(self, wait: float = 180.0) -> str:
        """Start the server and wait until it answers; its base URL.

        Raises:
            RuntimeError: when the process ends, or does not answer within ``wait`` seconds.
        """
        if self._process is not None:
            raise RuntimeError("the server is running already")
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

    def __enter__(self) -> LlamaServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _log_tail(self) -> str:
        text = self.log.read_text(encoding="utf-8", errors="replace") if self.log.exists() else ""
        return " | ".join(text.strip().splitlines()[-5:])
