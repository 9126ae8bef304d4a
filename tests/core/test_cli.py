"""The bookend command line."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

import bookend_rag
from bookend_rag import cli
from bookend_rag.cli import build_parser, main


def test_demo_prints_the_placement_and_writes_a_plot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    png = tmp_path / "demo.png"
    assert main(["demo", "--k", "6", "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert "retrieved 6 of 16 passages with BM25" in out
    assert "vs relevance order" in out
    assert "vs alternate order" in out
    assert "prompt order:" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_demo_without_its_extra_names_it_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 38, 3.3: it ended in a traceback (No module named 'rank_bm25')."""
    monkeypatch.setitem(sys.modules, "rank_bm25", None)  # an import of it fails, as uninstalled
    assert main(["demo", "--plot", "none"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "bookend demo: rank-bm25 not installed; install the optional extra: pip install "
        '".[demo]" in a clone of the repository ("bookend-rag[demo]" once it is on the package '
        "index)\n"
    )


@pytest.mark.parametrize("arguments", [["tune", "--help"], ["eval", "--quick", "--docs", "10"]])
def test_a_lab_command_without_the_lab_names_it_in_one_line(
    arguments: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The lab (bookend-rag-lab) registers its commands through an entry point; where it is not
    installed, they still answer, in one line."""
    monkeypatch.setattr(cli, "entry_points", lambda group: [])  # no installed package adds any
    assert main(arguments) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"bookend {arguments[0]}: the lab is not installed; install the lab: pip install ./lab in "
        'a clone of the repository ("bookend-rag[lab]" once it is on the package index)\n'
    )


def test_a_lab_name_without_the_lab_names_it_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bookend_rag, "_exports", lambda: {})  # no installed package exports any
    missing = r"^module 'bookend_rag' has no attribute 'tune'; "
    with pytest.raises(AttributeError, match=missing) as e:
        bookend_rag.tune  # noqa: B018
    assert "pip install ./lab" in str(e.value)
    assert "\n" not in str(e.value)
    assert not hasattr(bookend_rag, "evaluate")  # hasattr still answers


def test_a_reader_that_stops_reading_ends_the_command_quietly() -> None:
    """Issue 38, 3.4: ``bookend reorder - | head -c 10`` ended in a BrokenPipeError traceback. The
    pipe's reading end is closed before the command writes, as ``head`` closes it."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        result = subprocess.run(
            [sys.executable, "-m", "bookend_rag.cli", "reorder", "-"],
            input=json.dumps([f"chunk {i}" for i in range(50)]).encode(),
            stdout=write_end,
            stderr=subprocess.PIPE,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write_end)
    assert result.stderr.decode() == ""
    assert result.returncode == 1


def test_profile_json_and_table(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["profile", "--model", "gpt2", "--k", "5", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert len(report["slot_weights"]) == 5
    assert report["components"]["recency_delta"] == pytest.approx((11 / 12) ** 12)
    png = tmp_path / "p.png"
    assert main(["profile", "--model", "liu2023:claude-1.3", "--k", "4", "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert "liu2023:claude-1.3" in out
    assert png.exists()


def test_reorder_reads_stdin_and_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    chunks = [
        {"text": "alpha " * 10, "score": 0.1, "source": "x"},
        {"text": "beta " * 10, "score": 0.9, "source": "y"},
        {"text": "gamma " * 10, "score": 0.5, "source": "x"},
    ]
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(chunks)))
    assert main(["reorder", "--model", "gpt2"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert sorted(result["order"]) == [0, 1, 2]
    assert result["chunks"] == [chunks[i] for i in result["order"]]  # every field kept
    assert result["order"].index(0) < result["order"].index(2)  # source x keeps its order
    path = tmp_path / "in.json"
    path.write_text(json.dumps({"chunks": ["a", "b"], "scores": [3, 1], "lengths": [5, 5]}))
    assert main(["reorder", str(path), "--strategy", "relevance"]) == 0
    assert json.loads(capsys.readouterr().out)["order"] == [0, 1]
    assert main(["reorder", str(path), "--weight-rule", "mass", "--competition", "0.1"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["weight_rule"], result["competition"]) == ("mass", 0.1)
    assert result["layout"] == {"prefix_tokens": 0, "suffix_tokens": 1}  # the default layout


def _one_line_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run the CLI expecting a usage error: exit 2, one line on stderr, no traceback."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize(
    ("payload", "args", "message"),
    [
        ("not json", [], "input is not JSON"),
        ("[1, 2]", [], "chunks[0]=1 must be a string"),
        ("7", [], "input must be a list of strings"),
        ('{"chunks": ["a"], "scores": [NaN]}', [], "scores must be finite"),
        ('["a", "b"]', ["--budget", "0"], "budget=0"),
        ('{"chunks": ["a", "b", "c"], "scores": 5}', [], "scores must be a list"),
        ('{"chunks": ["a", "b"], "scores": [{"v": 1}, {"v": 2}]}', [], "scores[0]={'v': 1}"),
        ('{"chunks": ["a", "b"], "scores": [[0.1], [0.2]]}', [], "scores[0]=[0.1]"),
        ('{"chunks": ["a", "b"], "scores": ["1", "2"]}', [], "scores[0]='1'"),
        ('{"chunks": ["a", "b"], "lengths": ["5", "5"]}', [], "lengths[0]='5'"),
        ('{"chunks": ["a", "b"], "sources": ["x"]}', [], "sources must have one value per"),
        ('[{"text": "a", "source": ["x"]}, {"text": "b", "source": "y"}]', [], "sources[0]=['x']"),
        ('{"chunks": ["a", "b"], "score": [2, 1]}', [], "unknown key 'score'"),
        ('[{"text": "a", "length": 1}, {"text": "b"}]', [], "every chunk needs 'length'"),
        (
            '[{"text": "a", "score": 1}, {"text": "b"}]',
            ["--missing-scores", "error"],
            "scores[1] is None",
        ),
        ('["a", "b"]', ["--model", "lama-3.1-8b"], "model='lama-3.1-8b'"),
        ('["a", "b"]', ["--prefix-tokens", "-1"], "prefix_tokens=-1"),
        ('["a", "b"]', ["--competition", "-1"], "competition=-1.0"),
    ],
)
def test_reorder_errors_exit_2_with_one_line(
    payload: str,
    args: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(payload))
    assert message in _one_line_error(["reorder", *args], capsys)


def test_reorder_input_file_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = str(tmp_path / "missing.json")
    assert f"input={missing!r} not found" in _one_line_error(["reorder", missing], capsys)
    assert "is a directory" in _one_line_error(["reorder", str(tmp_path)], capsys)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ({"format": "bookend-profile", "version": 1}, "needs 'weights'"),
        ([0.5, 0.2, 0.9], "must be a JSON object"),
        ({"num_hidden_layers": 30, "model_type": "llama"}, "looks like a Hugging Face config"),
    ],
)
def test_bad_profile_files_exit_2(
    content: object, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "profile.json"
    path.write_text(json.dumps(content))
    assert message in _one_line_error(["profile", "--model", str(path)], capsys)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["profile", "--chunk-tokens", "-5"], "--chunk-tokens=-5"),
        (["profile", "--chunk-tokens", "0"], "--chunk-tokens=0"),
        (["profile", "--k", "0"], "--k=0"),
        (["profile", "--k", "-1"], "--k=-1"),
        (["demo", "--k", "-2"], "--k=-2"),
        (["demo", "--plot", "/no/such/folder/demo.png"], "--plot='/no/such/folder/demo.png'"),
        (["profile", "--plot", "/no/such/folder/p.png"], "--plot='/no/such/folder/p.png'"),
        (["profile", "--model", "{depth: 3}"], "--model='{depth: 3}'"),
        (["profile", "--model", '{"depth": 0}'], "depth"),
    ],
)
def test_numbers_and_paths_are_checked(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert message in _one_line_error(argv, capsys)


def test_reorder_keeps_every_field_and_returns_dropped_chunks_whole(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    chunks = [
        {"id": "a", "text": "x " * 40, "score": 0.9, "url": "https://a"},
        {"id": "b", "text": "y " * 40, "score": 0.1, "url": "https://b"},
        {"id": "c", "text": "z " * 40, "score": 0.5, "url": "https://c"},
    ]
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(chunks)))
    assert main(["reorder", "--budget", "45"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["chunks"] == [chunks[0], chunks[2]] or result["chunks"] == [chunks[2], chunks[0]]
    assert result["dropped"] == [chunks[1]]
    assert result["dropped_indices"] == [1]


def test_reorder_drops_lookalikes_and_names_them(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    chunks = [
        {"text": "the code of Harju is EE-37", "score": 0.4},
        {"text": "an unrelated passage about rivers and lakes", "score": 0.5},
        {"text": "the code of Harju is EE-37", "score": 0.9},
    ]
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(chunks)))
    assert main(["reorder", "--drop-lookalikes"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["dropped"] == [chunks[0]]  # the less relevant copy
    assert result["dropped_as_lookalikes"] == [0]
    assert sorted(result["order"]) == [1, 2]


def test_reorder_hints_when_stdin_is_a_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stdin", Terminal('["a", "b"]'))
    assert main(["reorder"]) == 0
    captured = capsys.readouterr()
    assert "reading chunks as JSON from stdin" in captured.err
    assert json.loads(captured.out)["chunks"] in (["a", "b"], ["b", "a"])


def test_reorder_accepts_an_inline_spec_and_instruct_ids(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for model in ('{"depth": 30, "attn_share": 0.05}', "Qwen/Qwen2.5-7B-Instruct"):
        monkeypatch.setattr(sys, "stdin", io.StringIO('["a", "b", "c"]'))
        assert main(["reorder", "--model", model]) == 0
        assert json.loads(capsys.readouterr().out)["profile"].startswith(("ModelSpec", "qwen2.5"))


def test_presets_lists_depth_context_and_source(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["presets"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    assert rows["llama-3.1-8b"].split()[1:4] == ["32", "131072", "meta-llama/Llama-3.1-8B"]
    assert "arXiv 2307.03172" in rows["liu2023:gpt-3.5-turbo"]
    assert "20 docs" in rows["liu2023:gpt-3.5-turbo"]


@pytest.mark.parametrize("command", ["demo", "profile", "reorder", "presets"])
def test_help_is_complete(command: str) -> None:
    sub = build_parser()._subparsers._group_actions[0].choices[command]  # type: ignore[union-attr]
    text = sub.format_help()
    assert "usage: bookend " + command in text
    for action in sub._actions:
        if action.option_strings and action.dest != "help":
            assert action.help, f"{command} {action.option_strings} has no help"


def _options(command: str) -> dict[str, Any]:
    """The options of a subcommand, by the name they are read under."""
    sub = build_parser()._subparsers._group_actions[0].choices[command]  # type: ignore[union-attr]
    return {action.dest: action for action in sub._actions if action.option_strings}


def test_reorder_has_an_option_for_every_setting_made_from_its_field() -> None:
    options = _options("reorder")
    fields = bookend_rag.PlacementConfig.model_fields
    # The one setting left out: reorder places one list and receives no question to count.
    assert set(fields) - set(options) == {"count_question"}
    for name in set(fields) - {"count_question"}:
        action = options[name]
        assert action.option_strings == ["--" + name.replace("_", "-")]
        assert action.default is None  # not given: the --config file's setting, else the default
        assert action.help.split()[:3] == str(fields[name].description).split()[:3], name
    # The values a setting takes, as the config's schema says them: a bad one is argparse's error.
    assert tuple(options["strategy"].choices) == bookend_rag.STRATEGIES
    assert tuple(options["weight_rule"].choices) == bookend_rag.WEIGHT_RULES
    assert (options["top_k"].type, options["competition"].type) == (int, float)


def test_every_reorder_option_reaches_the_placement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers

    words = Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    words.pre_tokenizer = pre_tokenizers.Whitespace()
    words.save(str(tmp_path / "tokenizer.json"))
    # A value other than its default for each setting: (command line, the setting it gives).
    given: dict[str, tuple[list[str], Any]] = {
        "model": (["gpt2"], "gpt2"),
        "strategy": (["relevance"], "relevance"),
        "weight_rule": (["mass"], "mass"),
        "competition": (["0.5"], 0.5),
        "lookalike_threshold": (["0.2"], 0.2),
        "drop_lookalikes": ([], True),
        "distance": ([], True),
        "missing_scores": (["rank"], "rank"),
        "top_k": (["3"], 3),
        "budget": (["60"], 60),
        "repeat_top": ([], True),
        "prefix_tokens": (["40"], 40),
        "suffix_tokens": (["0"], 0),
        "equal_lengths": ([], True),
        "tokenizer": ([str(tmp_path)], str(tmp_path)),
        "exact_max_k": (["3"], 3),
    }
    # --config, --recorder, --question and --record-metadata are no placement settings (the
    # recorder: tests/core/test_recorder.py)
    not_settings = {"help", "config", "recorder", "question", "record_metadata"}
    assert set(given) == set(_options("reorder")) - not_settings  # a new one needs a value
    placed: list[bookend_rag.PlacementConfig] = []

    class Recording(bookend_rag.Bookend[Any]):
        def place(self, *args: Any, **kwargs: Any) -> bookend_rag.Placement[Any]:
            placed.append(self.config)
            return super().place(*args, **kwargs)

    monkeypatch.setattr(cli, "Bookend", Recording)
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(["alpha beta", "gamma", "delta"])))
    argv = [
        arg
        for name, (values, _) in given.items()
        for arg in ("--" + name.replace("_", "-"), *values)
    ]
    args = build_parser().parse_args(["reorder", *argv])
    for name, (_, value) in given.items():  # read as its type: a bad number is argparse's error
        assert type(getattr(args, name)) is type(value), name
    assert main(["reorder", *argv]) == 0
    capsys.readouterr()
    assert placed == [bookend_rag.PlacementConfig(**{n: v for n, (_, v) in given.items()})]


def test_plot_writes_exactly_the_path_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    named = tmp_path / "weights.png"
    assert main(["profile", "--k", "3", "--plot", str(named)]) == 0
    assert named.is_file()
    assert f"plot written to {named}" in capsys.readouterr().err
    bare = tmp_path / "myplot"
    assert main(["profile", "--k", "3", "--plot", str(bare)]) == 0
    assert not bare.exists()
    assert (tmp_path / "myplot.png").is_file()
    assert f"plot written to {tmp_path / 'myplot.png'}" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["profile", "--k", "3"], ["demo", "--k", "3"]])
def test_plot_refuses_a_directory_in_one_line(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*command, "--plot", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"--plot={str(tmp_path)!r} is a directory" in err
    assert not Path(f"{tmp_path}.png").exists()


def test_reorder_takes_top_k_and_a_tokenizer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers

    words = Tokenizer(models.WordLevel({"[UNK]": 0, "alpha": 1}, unk_token="[UNK]"))
    words.pre_tokenizer = pre_tokenizers.Whitespace()
    words.save(str(tmp_path / "tokenizer.json"))
    chunks = json.dumps(["alpha " * 7, "beta", "gamma delta"])
    monkeypatch.setattr(sys, "stdin", io.StringIO(chunks))
    assert main(["reorder", "--top-k", "2", "--tokenizer", str(tmp_path)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["dropped_indices"] == result["dropped_by_top_k"] == [2]
    assert [s["end"] - s["start"] for s in result["slots"]] == [7, 1]  # one token a word
    monkeypatch.setattr(sys, "stdin", io.StringIO(chunks))
    assert main(["reorder", "--tokenizer", str(tmp_path / "none")]) == 2
    assert "tokenizer=" in capsys.readouterr().err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"bookend {bookend_rag.__version__}"


def test_a_profile_file_without_json_suffix_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = bookend_rag.TabulatedProfile(weights=(1.0, 3.0), kind="slot")
    path = tmp_path / "profile"
    path.write_text(json.dumps(table.to_json()))
    assert main(["profile", "--model", str(path), "--k", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["slot_weights"][1] > 1
    path.write_text("not a profile")
    assert main(["profile", "--model", str(path)]) == 2
    err = capsys.readouterr().err
    assert "is not JSON" in err
    assert "unknown preset" not in err


@pytest.mark.parametrize(
    ("model", "depth"), [("llama3.1:8b", 32), ("Qwen/Qwen3-8B", 36), ("gpt-4o", None)]
)
def test_reorder_model_names_resolve_as_in_the_api(
    model: str,
    depth: int | None,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from bookend_rag.profiles import io as profile_io

    profile_io._reset_notices()
    payload = (
        '[{"text": "a", "score": 0.1}, {"text": "b", "score": 0.9}, {"text": "c", "score": 0.5}]'
    )
    monkeypatch.setattr(sys, "stdin", io.StringIO(payload))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["reorder", "--model", model]) == 0
    profile_io._reset_notices()
    result = json.loads(capsys.readouterr().out)
    notice = profile_io.model_notice(model)
    assert [str(w.message) for w in caught] == ([] if notice is None else [notice])
    assert result["notes"] == ([] if notice is None else [notice])
    assert (notice is None) == (depth is not None)
    default = bookend_rag.reorder(["a", "b", "c"], [0.1, 0.9, 0.5])
    if depth is None:
        assert result["order"] == list(default.order)  # the default order, with the notice
        assert result["profile"] == str(default.profile.name)
    else:
        assert f"H={depth}," in result["profile"]
    profile_io._reset_notices()
