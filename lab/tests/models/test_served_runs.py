"""The commands a user of a served chat model runs, end to end, on both real servers.

``bookend tune --endpoint URL --chat --template FILE`` against llama-cpp-python's server and
upstream ``llama-server`` (conftest), in a real chat prompt (a system message and the documents as
one JSON object: ``bench/prompts/chat-json-records.json``), and ``bookend eval --no-logprobs``
(generation only) on the same upstream server. The scores themselves are checked against
transformers in test_served_chat.py; here the runs must finish, say what they measured and how,
and record the prompt they measured in.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bookend_rag.cli import main
from bookend_rag_lab.items.template import load_template
from bookend_rag_lab.models.chat import CHAT_CONTINUATION, CHAT_FIRST_TOKEN
from bookend_rag_lab.models.llama_server import LlamaCppServer, LlamaServer

from .conftest import SERVED

#: Every test here runs a real server (make check leaves them out).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
TEMPLATE = ROOT / "bench" / "prompts" / "chat-json-records.json"
EXAMPLE_ITEMS = ROOT / "examples" / "eval_items.jsonl"


@pytest.fixture
def items(tmp_path: Path) -> Path:
    """The example items whose candidates begin with different letters, so different first tokens.

    llama-cpp-python's server scores chats by the answer's first token only (test_served_chat.py):
    candidates sharing one (``1889``, ``1900``) are refused there, in one line.
    """
    lines = EXAMPLE_ITEMS.read_text(encoding="utf-8").splitlines()
    kept = [
        line
        for line in lines
        if len({c[0] for c in json.loads(line).get("candidates", [])})
        == len(json.loads(line).get("candidates", []))
    ]
    assert 5 <= len(kept) < len(lines)
    path = tmp_path / "items.jsonl"
    path.write_text("\n".join(kept) + "\n", encoding="utf-8")
    return path


def _served(url: str) -> list[str]:
    return ["--endpoint", url, "--served-model", SERVED, "--threads", "1", "--no-progress"]


@pytest.mark.parametrize(
    ("which", "method"), [("server", CHAT_FIRST_TOKEN), ("upstream", CHAT_CONTINUATION)]
)
def test_tune_in_the_users_chat_prompt_on_each_real_server(
    which: str, method: str, items: Path, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    running: LlamaServer | LlamaCppServer = request.getfixturevalue(which)
    out = tmp_path / "tuned"
    run = ["--chat", "--template", str(TEMPLATE), "--items-file", str(items), "--max-calls", "24"]
    assert main(["tune", *_served(running.url), *run, "--out", str(out)]) == 0
    doc = json.loads((out / "tuned.json").read_text(encoding="utf-8"))
    settings = doc["provenance"]["settings"]
    assert settings["endpoint"]["method"] == method
    assert settings["endpoint"]["served_model"] == SERVED
    assert settings["template"]["sha256"] == load_template(TEMPLATE).sha256
    assert settings["template"]["chat"] is True
    timing = json.loads((out / "report.json").read_text(encoding="utf-8"))["timing"]
    assert 0 < timing["model_calls"] <= 24
    assert timing["prompt_tokens"] > 0


def test_eval_without_log_probabilities_reports_accuracy_only(
    upstream: LlamaCppServer, items: Path, tmp_path: Path
) -> None:
    out = tmp_path / "eval"
    run = ["--chat", "--no-logprobs", "--max-answer-tokens", "8", "--template", str(TEMPLATE)]
    given = ["--items-file", str(items), "--random-draws", "1", "--no-oracle"]
    assert main(["eval", *_served(upstream.url), *run, *given, "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["settings"]["endpoint"]["method"] == "generation"
    assert "Accuracy only" in (out / "report.md").read_text(encoding="utf-8")
    paired = [cell for cells in report["paired"].values() for cell in cells.values()]
    tested = [cell["p_mcnemar"] for cell in paired if "p_mcnemar" in cell]
    assert tested
    assert all(0 <= p <= 1 for p in tested)
