"""Recording from a Haystack pipeline (issue 48): the README's pipeline gives the ranker the
query, so each record carries its question; a serialised recorder path loads on a machine
without its directory; a recorder object that cannot be serialised is said to be dropped."""

from __future__ import annotations

import os
import re
import stat
import warnings
from pathlib import Path
from typing import Any

import pytest
from haystack import Document, Pipeline
from haystack_integrations.components.rankers.bookend import BookendRanker

from bookend_rag.recorder import RecorderWarning, RetrievalRecorder, as_recorder
from bookend_rag.retrievals import read_retrievals

README = Path(__file__).resolve().parents[1] / "README.md"


class Calls:
    """A recorder object of the user's (a queue, say): it keeps the calls it is given."""

    def __init__(self) -> None:
        self.calls: list[Any] = []

    def record(self, call: Any) -> None:
        self.calls.append(call)


def test_the_readme_pipeline_gives_the_ranker_the_query(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The README's pipeline run, as written, with a recorder on its ranker: the record has the
    query (it had none: the query went to the retriever and the prompt builder only)."""
    block = re.findall(r"^```python\n(.*?)^```", README.read_text(encoding="utf-8"), re.S | re.M)[0]
    run = re.search(r"^result = pipeline\.run\(.*?\)$", block, re.M | re.S)
    assert run is not None, "the README's pipeline has no `result = pipeline.run(...)`"
    namespace: dict[str, Any] = {"__name__": "__readme__"}
    monkeypatch.setattr("builtins.print", lambda *args, **kwargs: None)
    exec(compile(block, str(README), "exec"), namespace)
    recorder = RetrievalRecorder(tmp_path / "records.jsonl")
    namespace["pipeline"].get_component("ranker").recorder = recorder
    exec(compile(run.group(0), str(README), "exec"), namespace)
    recorder.flush()
    assert [r.question for r in read_retrievals(recorder.path)] == [namespace["query"]]


def _pipeline(recorder: Any) -> Pipeline:
    pipeline = Pipeline()
    pipeline.add_component("ranker", BookendRanker(recorder=recorder))
    return pipeline


def test_a_recorder_path_loads_where_its_directory_is_missing(tmp_path: Path) -> None:
    """A pipeline saved on one machine loads on another without the recorded directory: the
    directory is made (owner only), and the loaded ranker records there."""
    path = tmp_path / "here" / "records.jsonl"
    path.parent.mkdir()
    saved = _pipeline(str(path)).dumps()
    elsewhere = tmp_path / "elsewhere" / "logs" / "records.jsonl"
    loaded = Pipeline.loads(saved.replace(str(path), str(elsewhere)))
    assert elsewhere.parent.is_dir()
    assert stat.S_IMODE(elsewhere.parent.stat().st_mode) & 0o077 == 0
    docs = [Document(content=f"passage {i}", score=s) for i, s in enumerate([0.2, 0.9])]
    loaded.run({"ranker": {"documents": docs, "query": "why?"}})
    as_recorder(elsewhere).flush()  # type: ignore[union-attr]
    assert [r.question for r in read_retrievals(elsewhere)] == ["why?"]


def test_a_directory_that_cannot_be_made_is_one_line(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    data = BookendRanker().to_dict()
    data["init_parameters"]["recorder"] = os.fspath(blocked / "logs" / "records.jsonl")
    with pytest.raises(
        ValueError, match=r"^recorder='.*records\.jsonl': its directory cannot be made"
    ) as exc:
        BookendRanker.from_dict(data)
    assert "\n" not in str(exc.value)
    assert "init_parameters.recorder" in str(exc.value)


@pytest.mark.parametrize("kind", ["object", "RetrievalRecorder"])
def test_a_recorder_object_is_not_dropped_without_a_word(kind: str, tmp_path: Path) -> None:
    recorder = Calls() if kind == "object" else RetrievalRecorder(tmp_path / "records.jsonl")
    pipeline = _pipeline(recorder)
    with pytest.warns(
        RecorderWarning, match=r"recorder=.* is an object and is not serialised"
    ) as w:
        data = pipeline.to_dict()
    assert data["components"]["ranker"]["init_parameters"]["recorder"] is None
    assert w[0].filename == __file__  # the caller's line, not Haystack's
    fix = f"recorder={str(tmp_path / 'records.jsonl')!r}" if kind != "object" else "a path"
    assert str(w[0].message).endswith(f"give the ranker {fix} to serialise it")


def test_a_path_or_no_recorder_serialises_without_a_warning(tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for recorder in (None, str(tmp_path / "r.jsonl"), tmp_path / "r.jsonl"):
            data = BookendRanker(recorder=recorder).to_dict()
            assert data["init_parameters"]["recorder"] == (
                None if recorder is None else os.fspath(recorder)
            )
