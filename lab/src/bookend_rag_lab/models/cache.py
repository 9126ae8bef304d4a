"""The call cache: model-call results keyed by (model id, prompt, continuations), resumable.

A row holds ``logprob`` and ``greedy`` lists, and ``generated`` (the generated text) for the
results of a generation-only backend; rows without it (every row written before it existed) read
as results with ``generated=None``, so old cache files keep working.

Results live in memory and, when a path is given, in an append-only JSONL file written as each call
finishes, so an interrupted run resumes where it stopped: a torn last line is dropped (that call is
made again) and later rows start on a fresh line. A file kept compressed beside it
(:mod:`bookend_rag_lab.runfiles`: ``calls.jsonl.xz``) is read first, and new rows go to the plain
file.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from bookend_rag.retrievals import json_lines
from bookend_rag_lab.models.scorer import Continuations, Prompt, prompt_key
from bookend_rag_lab.runfiles import compressed_text, stored

__all__ = ["CallCache", "call_key", "generation_key"]


def call_key(model_id: str, prompt: Prompt, continuations: Sequence[str]) -> str:
    """The cache key of one model call: the SHA-256 of ``[model_id, prompt, continuations]``
    (a chat prompt as its :func:`~bookend_rag_lab.models.scorer.prompt_key`)."""
    text = json.dumps([model_id, prompt_key(prompt), list(continuations)], ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def generation_key(model_id: str, prompt: Prompt, max_tokens: int) -> str:
    """The cache key of one generation (a greedy answer of at most ``max_tokens`` tokens, stored
    as a result with ``generated`` and no log-probabilities): apart from every scoring call's,
    since the model id it hashes names the kind of call."""
    return call_key(f"{model_id}|generate:max_tokens={max_tokens}", prompt, [])


class CallCache:
    """Model-call results in memory, mirrored to an append-only JSONL file when ``path`` is set."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = None if path is None else Path(path)
        self._results: dict[str, Continuations] = {}
        if self.path is not None and stored(self.path):
            # A log kept compressed (bench/) holds the earlier calls; new ones go to the plain file.
            text = self.path.read_text(encoding="utf-8") if self.path.is_file() else ""
            if text and not text.endswith("\n"):  # a torn last line: new rows start afresh
                with self.path.open("a", encoding="utf-8") as handle:
                    handle.write("\n")
            lines = [*compressed_text(self.path).splitlines(), *text.splitlines()]
            for line in json_lines(lines):
                if line.error is not None:
                    continue  # a line cut short by an interrupted run: that call is redone
                try:
                    row = line.value
                    generated = row.get("generated")
                    if generated is not None and not isinstance(generated, str):
                        raise TypeError("generated must be text")
                    self._results[row["key"]] = Continuations(
                        tuple(map(float, row["logprob"])),
                        tuple(map(bool, row["greedy"])),
                        generated,
                    )
                except (KeyError, TypeError, AttributeError):
                    continue  # cut short yet JSON (a number, a list): redone too

    def __len__(self) -> int:
        return len(self._results)

    def get(self, key: str) -> Continuations | None:
        """The stored result, or ``None``."""
        return self._results.get(key)

    def put(self, key: str, result: Continuations) -> None:
        """Store a result (and append it to the file)."""
        self._results[key] = result
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            row: dict[str, object] = {
                "key": key,
                "logprob": list(result.logprob),
                "greedy": list(result.greedy),
            }
            if result.generated is not None:
                row["generated"] = result.generated
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(row) + "\n")
