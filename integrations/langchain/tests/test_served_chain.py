"""Recording where users deploy: a real gunicorn server, its app preloaded in the master and two
forked workers (threaded), serving the LangChain chain of ``served_chain.py``; 500 concurrent
requests, each with its own question, then a graceful shutdown (SIGTERM). The workers write their
records while they serve (within seconds of the last response, not only at exit), and the file
then holds every request's retrieval exactly once, with its question, and the master's own
start-up call once, none counted as unrecorded (issue 48 §2). Loopback only; nothing leaves the
machine. About 5 seconds, so it runs in ``make check`` too.

``pytest -s`` prints the records per second it served (``bench/RESULTS.md``, "Recording where
users deploy").
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from bookend_rag.retrievals import read_retrievals

HERE = Path(__file__).resolve().parent
REQUESTS = 500
CLIENTS = 32  # concurrent connections, many more than the workers' threads: requests queue
WORKERS = 2
START_TIMEOUT = 30.0  # seconds for gunicorn to answer (it imports LangChain twice over: master)
STOP_TIMEOUT = 30.0  # seconds for the graceful shutdown (gunicorn's own bound is 20)
REQUEST_TIMEOUT = 30.0
WRITE_TIMEOUT = 10.0  # seconds for the records to reach the file while the server runs
#: The question of the call the app makes at start-up, in the master, before it forks.
STARTUP = "start-up check: is the chain ready?"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _get(url: str, timeout: float) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as response:  # loopback only
        body: bytes = response.read()
        return body


def _tail(log: Path) -> str:
    return log.read_text(encoding="utf-8", errors="replace")[-3000:] if log.exists() else ""


def _wait_until_it_answers(server: subprocess.Popen[bytes], url: str, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"gunicorn exited ({server.returncode}) before answering:\n{_tail(log)}")
        try:
            if _get(f"{url}/ready", timeout=1.0) == b"ok":
                return
        except OSError:  # not listening yet
            time.sleep(0.1)
    pytest.fail(f"gunicorn did not answer {url} within {START_TIMEOUT:.0f} s:\n{_tail(log)}")


def _wait_for_lines(path: Path, lines: int, timeout: float) -> int:
    """The number of whole lines in ``path`` once it holds ``lines``, or after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        held = path.read_bytes().count(b"\n") if path.exists() else 0
        if held >= lines or time.monotonic() > deadline:
            return held
        time.sleep(0.05)


def _stop(server: subprocess.Popen[bytes]) -> None:
    """SIGKILL the server's process group (master and workers) if it is still running."""
    if server.poll() is None:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(STOP_TIMEOUT)


def test_every_request_of_a_forked_server_is_recorded_once_with_its_question(
    tmp_path: Path,
) -> None:
    records = tmp_path / "retrievals.jsonl"
    log = tmp_path / "gunicorn.log"
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    command = [
        sys.executable, "-m", "gunicorn",
        "--preload", "--workers", str(WORKERS), "--worker-class", "gthread", "--threads", "4",
        "--bind", f"127.0.0.1:{port}", "--graceful-timeout", "20",
        "--pythonpath", str(HERE), "served_chain:app",
    ]  # fmt: skip
    env = os.environ | {"BOOKEND_SERVED_RECORDS": str(records), "BOOKEND_SERVED_STARTUP": STARTUP}
    env.pop("BOOKEND_RECORD", None)  # the switch that turns every recorder off
    questions = [f"question {i}: when did station {i % 60} open?" for i in range(REQUESTS)]
    with log.open("wb") as out:
        # Its own session: the finally below can end the master and its workers together.
        server = subprocess.Popen(
            command, cwd=tmp_path, env=env, stdout=out, stderr=out, start_new_session=True
        )
    try:
        _wait_until_it_answers(server, url, log)

        def ask(question: str) -> Any:
            return json.loads(_get(f"{url}/?{urlencode({'q': question})}", REQUEST_TIMEOUT))

        started = time.perf_counter()
        with ThreadPoolExecutor(CLIENTS) as pool:
            answers = list(pool.map(ask, questions))
        served = time.perf_counter() - started
        # A long-running worker writes as it goes (its writer runs within the recorder's
        # interval of a second), not only when it stops: one that never writes loses
        # everything to a SIGKILL and drops every call past its bounded buffer.
        written = _wait_for_lines(records, REQUESTS + 1, WRITE_TIMEOUT)
        on_disk = time.perf_counter() - started
        server.send_signal(signal.SIGTERM)  # gunicorn's graceful shutdown
        try:
            server.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            pytest.fail(f"gunicorn did not stop within {STOP_TIMEOUT:.0f} s of SIGTERM")
    finally:
        _stop(server)
    assert server.returncode == 0, _tail(log)
    assert [a["question"] for a in answers] == questions
    pids = Counter(a["pid"] for a in answers)
    assert len(pids) == WORKERS, f"the requests reached {len(pids)} worker(s): {dict(pids)}"

    kept = list(read_retrievals(records))
    counts = Counter(r.question for r in kept)
    expected = Counter([*questions, STARTUP])
    missing, twice = expected - counts, counts - expected
    unrecorded = sum(getattr(r, "unrecorded", 0) for r in kept)  # schema 2 counts its losses
    assert (not missing, not twice, written, unrecorded) == (True, True, REQUESTS + 1, 0), (
        f"while serving, {written} of {REQUESTS + 1} records reached the file within "
        f"{WRITE_TIMEOUT:.0f} s of the last response; after SIGTERM {len(kept)} records for "
        f"{REQUESTS} requests and the master's start-up call: {sum(missing.values())} calls not "
        f"recorded (e.g. {sorted(missing)[:2]}), {sum(twice.values())} extra (e.g. "
        f"{sorted(twice)[:2]}), {unrecorded} counted as unrecorded; requests per worker "
        f"{sorted(pids.values())}"
    )
    print(
        f"\n{REQUESTS} requests, {WORKERS} forked workers (gthread, 4 threads each), "
        f"{CLIENTS} clients: served in {served:.2f} s ({REQUESTS / served:.0f} requests a second); "
        f"every record on disk {on_disk:.2f} s after the first request "
        f"({(REQUESTS + 1) / on_disk:.0f} records a second)"
    )
