"""Model names as users type them: every name resolves, with a notice where bookend knows nothing.

A Hugging Face id, a vLLM served name, an Ollama tag or a GGUF file name of a known architecture
gets the theory profile of its depth; a closed API model and any other name get the default
order (that of ``model=None``) with a ``UserWarning`` once per process per name and the same line
in ``Placement.notes``; only a clear misspelling of a preset raises, naming the preset meant.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bookend_rag
from bookend_rag import Bookend, ModelSpec, TheoryProfile, available_presets, reorder
from bookend_rag.profiles import io
from bookend_rag.profiles.io import model_notice, profile_ref
from bookend_rag.spec import (
    DEFAULT_PRESET,
    normalise_model_name,
    preset_key,
    resolve_model_name,
)

CHUNKS = ["alpha " * 30, "beta " * 10, "gamma " * 20, "delta " * 5, "epsilon " * 15]
SCORES = [0.2, 0.9, 0.4, 0.7, 0.1]
DEFAULT = "default"

# (name as typed, the preset it is, its depth), or DEFAULT for a name bookend knows no
# architecture for. Depths are the num_hidden_layers of each model's published config.json.
NAMES: list[tuple[str, str, int | None]] = [
    # Hugging Face ids, as vLLM serves them
    ("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b", 32),
    ("Llama-3.3-70B-Instruct", "llama-3.3-70b", 80),
    ("meta-llama/Llama-3.2-1B-Instruct", "llama-3.2-1b", 16),
    ("meta-llama/Llama-3.1-405B-Instruct-FP8", "llama-3.1-405b", 126),
    ("Qwen/Qwen2.5-7B-Instruct", "qwen2.5-7b", 28),
    ("Qwen/Qwen2.5-72B-Instruct-AWQ", "qwen2.5-72b", 80),
    ("Qwen/Qwen3-8B", "qwen3-8b", 36),
    ("Qwen/Qwen3-30B-A3B", "qwen3-30b-a3b", 48),
    ("Qwen/Qwen3-235B-A22B", "qwen3-235b-a22b", 94),
    ("mistralai/Mistral-7B-Instruct-v0.3", "mistral-7b", 32),
    ("mistralai/Mistral-Nemo-Instruct-2407", "mistral-nemo-12b", 40),
    ("mistralai/Mistral-Small-24B-Instruct-2501", "mistral-small-24b", 40),
    ("mistralai/Mixtral-8x22B-Instruct-v0.1", "mixtral-8x22b", 56),
    ("google/gemma-2-27b-it", "gemma-2-27b", 46),
    ("google/gemma-3-12b-it", "gemma-3-12b", 48),
    ("microsoft/Phi-3-small-8k-instruct", "phi-3-small-8k", 32),
    ("microsoft/Phi-3.5-mini-instruct", "phi-3.5-mini", 32),
    ("microsoft/phi-4", "phi-4", 40),
    ("microsoft/Phi-4-mini-instruct", "phi-4-mini", 32),
    ("deepseek-ai/DeepSeek-V3", "deepseek-v3", 61),
    ("deepseek-ai/DeepSeek-R1", "deepseek-r1", 61),
    ("deepseek-ai/DeepSeek-R1-Distill-Qwen-14B", "deepseek-r1-distill-qwen-14b", 48),
    ("deepseek-ai/DeepSeek-R1-Distill-Llama-70B", "deepseek-r1-distill-llama-70b", 80),
    ("allenai/OLMo-2-1124-13B-Instruct", "olmo-2-13b", 40),
    ("HuggingFaceTB/SmolLM2-360M-Instruct", "smollm2-360m", 32),
    ("openai-community/gpt2-medium", "gpt2-medium", 24),
    # suffixes and files
    ("Meta-Llama-3-8B-Instruct", "llama-3-8b", 32),
    ("Llama-3.1-8B-Instruct-bf16", "llama-3.1-8b", 32),
    ("Qwen2.5-7B-Instruct-GGUF", "qwen2.5-7b", 28),
    ("gemma-3-27b-it-q4_k_m.gguf", "gemma-3-27b", 62),
    ("/models/Phi-3-mini-4k-instruct.Q4_K_M.gguf", "phi-3-mini-4k", 32),
    ("hf.co/bartowski/Llama-3.2-3B-Instruct-GGUF:Q4_K_M", "llama-3.2-3b", 28),
    ("gemma-3-270m", "gemma-3-270m", 18),
    ("gemma3-270m", "gemma-3-270m", 18),
    # Ollama tags
    ("llama3.1:8b", "llama-3.1-8b", 32),
    ("llama3.2:3b-instruct-q4_K_M", "llama-3.2-3b", 28),
    ("llama3.3:70b", "llama-3.3-70b", 80),
    ("qwen2.5:7b", "qwen2.5-7b", 28),
    ("qwen3:8b", "qwen3-8b", 36),
    ("qwen3:0.6b", "qwen3-0.6b", 28),
    ("gemma3:27b", "gemma-3-27b", 62),
    ("gemma3:270m", "gemma-3-270m", 18),
    ("gemma2:2b", "gemma-2-2b", 26),
    ("mistral:7b", "mistral-7b", 32),
    ("mixtral:8x7b", "mixtral-8x7b", 32),
    ("phi4:14b", "phi-4", 40),
    ("phi3:mini", "phi-3-mini-4k", 32),
    ("deepseek-r1:7b", "deepseek-r1-distill-qwen-7b", 28),
    ("deepseek-r1:70b", "deepseek-r1-distill-llama-70b", 80),
    ("smollm2:135m", "smollm2-135m", 30),
    ("olmo2:7b", "olmo-2-7b", 32),
    ("llama3.1:latest", "llama-3.1-8b", 32),  # Ollama's default tag of llama3.1 is the 8B
    # closed API models, also as LiteLLM writes them, and names bookend does not know
    ("gpt-4o", DEFAULT, None),
    ("gpt-4o-mini", DEFAULT, None),
    ("gpt-4.1-nano", DEFAULT, None),
    ("gpt-5", DEFAULT, None),
    ("o1", DEFAULT, None),
    ("o3-mini", DEFAULT, None),
    ("o4-mini", DEFAULT, None),
    ("claude-3-5-sonnet-20241022", DEFAULT, None),
    ("claude-sonnet-4-5", DEFAULT, None),
    ("gemini-2.5-pro", DEFAULT, None),
    ("openai/gpt-4o", DEFAULT, None),
    ("anthropic/claude-3-5-sonnet-20241022", DEFAULT, None),
    ("gemini/gemini-1.5-pro", DEFAULT, None),
    ("my-finetune-v2", DEFAULT, None),
    ("llama-3.1-13b", DEFAULT, None),  # no such size: not a misspelling of another one
]

CLOSED = {"gpt", "o", "claude", "gemini"}


@pytest.fixture(autouse=True)
def _fresh_notices() -> Iterator[None]:
    """Each test starts with no name noticed (the once-per-process registry)."""
    io._reset_notices()
    yield
    io._reset_notices()


def _numbers(normal: str) -> list[str]:
    return [t for t in normal.split("-") if t[0].isdigit()]


def _preset_numbers(key: str) -> list[list[str]]:
    """The numbers of each spelling of a preset: its key, Hugging Face id and aliases."""
    from bookend_rag.datafiles import load_data_json

    entry = load_data_json("presets.json")["presets"][key]
    spellings = (key, entry["hf_id"], *entry.get("aliases", ()))
    return [_numbers(normalise_model_name(s)) for s in spellings]


def _family(key: str) -> str:
    """The letters a preset key starts with: ``llama``, ``qwen``, ``gpt`` ..."""
    return re.match(r"[a-z]+", key).group()  # type: ignore[union-attr]


@pytest.mark.parametrize(("name", "preset", "depth"), NAMES)
def test_names_users_type_resolve(name: str, preset: str, depth: int | None) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        placer: Bookend[str] = Bookend(name)
        placement = placer.place(CHUNKS, SCORES)
    resolved = resolve_model_name(name)
    if preset == DEFAULT:
        assert resolved.preset is None
        assert placer.profile == Bookend().profile  # the default order, as with no model named
        assert placement.order == reorder(CHUNKS, SCORES).order
        notice = resolved.notice
        assert notice is not None
        assert name in notice
        assert "default order" in notice
        assert placement.notes == (notice,)
        assert f"note: {notice}" in placement.explain()
        assert [str(w.message) for w in caught] == [notice]
        assert all(w.category is UserWarning for w in caught)
        if _family(resolved.normal) in CLOSED:
            assert resolved.closed is not None
            assert "closed API model" in notice
    else:
        assert (resolved.preset, preset_key(name)) == (preset, preset)
        assert ModelSpec.preset(name).depth == depth
        if preset in bookend_rag.measured_models():  # its measured profile, by any of its names
            assert placer.profile == Bookend(preset).profile
        else:
            assert isinstance(placer.profile, TheoryProfile)
            assert placer.profile.spec.depth == depth
            assert placer.profile == TheoryProfile(ModelSpec.preset(preset))
        assert placement.notes == ()
        assert caught == []


def test_the_table_is_long_and_every_preset_is_reachable() -> None:
    assert len(NAMES) >= 25
    assert len(available_presets()) >= 70
    for key in available_presets():
        assert preset_key(key) == key
        assert resolve_model_name(key.upper()).preset == key


@pytest.mark.parametrize(
    "name",
    ["gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-5-mini", "o1-preview", "o3", "openai/gpt-4o",
     "chatgpt-4o-latest", "gpt-3.5-turbo", "claude-3-opus-20240229", "gemini-1.5-flash"],
)  # fmt: skip
def test_closed_models_never_suggest_an_open_preset(name: str) -> None:
    resolved = resolve_model_name(name)
    assert (resolved.preset, resolved.closed is not None) == (None, True)
    with pytest.raises(ValueError, match="closed API model") as info:
        ModelSpec.preset(name)  # strict: a spec needs a depth
    assert "did you mean" not in str(info.value)
    assert "gpt2" not in str(info.value)


@pytest.mark.parametrize(
    ("typo", "meant"),
    [
        ("lama-3.1-8b", "llama-3.1-8b"),
        ("meta-llama/Lllama-3.1-8B-Instruct", "llama-3.1-8b"),
        ("gwen2.5-7b", "qwen2.5-7b"),
        ("mistrall-7b", "mistral-7b"),
        ("gemam-2-9b", "gemma-2-9b"),
        ("gtp2-xl", "gpt2-xl"),
    ],
)
def test_a_clear_misspelling_raises_naming_the_preset_of_its_family(typo: str, meant: str) -> None:
    for call in (resolve_model_name, ModelSpec.preset, profile_ref, Bookend):
        with pytest.raises(ValueError, match=rf"did you mean '{re.escape(meant)}'") as info:
            call(typo)
        suggested = re.findall(r"'([^']+)'", str(info.value).split("did you mean", 1)[1])
        assert suggested
        assert all(_family(s) == _family(meant) for s in suggested)


@pytest.mark.parametrize("name", ["", "   ", "!!!", "/"])
def test_a_name_without_letters_or_digits_raises(name: str) -> None:
    with pytest.raises(ValueError, match="holds no letter or digit"):
        resolve_model_name(name)


def test_the_notice_warns_once_per_process_per_name() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            reorder(CHUNKS, SCORES, model="gpt-4o")
            Bookend("gpt-4o", strategy="relevance").place(CHUNKS, SCORES)
        reorder(CHUNKS, SCORES, model="claude-3-5-haiku")
        placement = reorder(CHUNKS, SCORES, model="gpt-4o", budget=500)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 2
    assert "'gpt-4o' (a closed API model)" in messages[0]
    assert "'claude-3-5-haiku'" in messages[1]
    assert caught[0].filename == __file__  # the warning names the caller's line
    assert placement.notes == (model_notice("gpt-4o"),)  # the note stays on every placement
    io._reset_notices()
    with pytest.warns(UserWarning, match="'gpt-4o'"):
        Bookend("gpt-4o")


def test_known_models_and_other_references_have_no_notice() -> None:
    assert model_notice("llama-3.1-8b") is None
    assert model_notice("HuggingFaceTB/SmolLM2-135M-Instruct") is None  # measured
    assert model_notice("liu2023:gpt-3.5-turbo") is None  # a published curve of an API model
    assert model_notice("profile.json") is None
    assert model_notice(ModelSpec(depth=12)) is None
    assert model_notice("lama-3.1-8b") is None  # raises where it is resolved, never here


def test_a_measured_model_keeps_its_profile_by_its_ollama_tag() -> None:
    assert Bookend("smollm2:135m").profile == Bookend("smollm2-135m").profile
    assert not isinstance(Bookend("smollm2:135m").profile, TheoryProfile)


def test_normal_forms() -> None:
    assert normalise_model_name("meta-llama/Llama-3.1-8B-Instruct") == "llama-3.1-8-b"
    assert normalise_model_name("llama3.1:8b") == normalise_model_name("Llama 3.1 8B")
    assert normalise_model_name("gemma3-270m") == normalise_model_name("gemma-3-270m")
    assert normalise_model_name("openai/gpt-4o") == normalise_model_name("gpt-4o") == "gpt-4-o"
    assert normalise_model_name("Mistral-7B-Instruct-v0.3.IQ4_XS.gguf") == "mistral-7-b"
    assert normalise_model_name("smollm2_135m") == "smollm-2-135-m"
    assert normalise_model_name("") == ""


def test_no_two_presets_share_a_spelling() -> None:
    from bookend_rag.datafiles import load_data_json

    owner: dict[str, str] = {}
    for key, entry in load_data_json("presets.json")["presets"].items():
        for spelling in (key, entry["hf_id"], *entry.get("aliases", ())):
            normal = normalise_model_name(spelling)
            assert owner.setdefault(normal, key) == key, (spelling, key, owner[normal])
            assert resolve_model_name(spelling).preset == key


def test_the_default_preset_is_the_default_model() -> None:
    assert bookend_rag.DEFAULT_MODEL == DEFAULT_PRESET
    with pytest.warns(UserWarning, match="'some-new-model': placed with the default order"):
        assert Bookend("some-new-model").profile == Bookend(DEFAULT_PRESET).profile


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40))
def test_resolution_raises_only_for_the_documented_cases(name: str) -> None:
    """The contract: a name resolves unless it holds no letter or digit, or it is a clear
    misspelling of a preset; then the preset meant has the same numbers, in the same places."""
    try:
        resolved = resolve_model_name(name)
    except ValueError as exc:
        message = str(exc)
        normal = normalise_model_name(name)
        if not normal:
            assert "holds no letter or digit" in message
            return
        assert "did you mean" in message
        meant = re.findall(r"'([^']+)'", message.split("did you mean", 1)[1])
        assert meant
        assert all(_numbers(normal) in _preset_numbers(m) for m in meant)
        return
    assert resolved.normal == normalise_model_name(name)
    assert (resolved.preset is None) == (resolved.notice is not None)
    if resolved.preset is not None:
        assert resolved.preset in available_presets()


@settings(max_examples=100, deadline=None)
@given(st.from_regex(r"[a-z]{1,8}(-[a-z0-9.]{1,6}){0,3}", fullmatch=True))
def test_model_references_resolve_without_raising_except_for_typos(name: str) -> None:
    try:
        resolve_model_name(name)
    except ValueError:
        with pytest.raises(ValueError, match="did you mean"):
            profile_ref(name)
        return
    assert profile_ref(name) == name
