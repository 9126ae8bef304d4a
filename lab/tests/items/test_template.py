"""The prompt templates items render into: the user's Jinja2 text or chat template, a framework's
prompt object, and bookend's own; spans, hashes, the sandbox and one-line refusals."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bookend_rag
from bookend_rag_lab.experiments.setup import templated, warn_on_other_models
from bookend_rag_lab.items.item import Item, items_sha256
from bookend_rag_lab.items.template import (
    BOOKEND_PROMPT,
    JinjaTemplate,
    flat_text,
    framework_template,
    load_template,
    render_prompt,
    template_of,
)
from bookend_rag_lab.models.scorer import ChatPrompt, answer_text

DOCS = ["Paris is in France.", "Rome is in Italy.", "Bern is in Switzerland."]
QUESTION = "Where is Rome?"

TEXT = (
    "Context:\n{% for doc in documents %}[{{ doc.slot }}] {{ doc.content }}\n{% endfor %}"
    "Q: {{ question }}\nA:"
)
CHAT = [
    {"role": "system", "content": "Answer from the records only."},
    {
        "role": "user",
        "content": '{"records": [{% for d in documents %}"{{ d }}"{% if not loop.last %}, '
        "{% endif %}{% endfor %}]}\nQuestion: {{ question }}",
    },
]


def _spans_hold_documents(prompt: str | ChatPrompt, spans: list[tuple[int, int]]) -> list[str]:
    text = flat_text(prompt)
    return [text[a:b] for a, b in spans]


def test_a_text_template_renders_the_documents_in_order_with_their_spans() -> None:
    template = JinjaTemplate(TEXT, name="qa")
    prompt, spans = template.render(DOCS, QUESTION)
    assert prompt == (
        "Context:\n[1] Paris is in France.\n[2] Rome is in Italy.\n[3] Bern is in Switzerland.\n"
        "Q: Where is Rome?\nA:"
    )
    assert _spans_hold_documents(prompt, spans) == DOCS
    assert answer_text(prompt, "Italy") == " Italy"
    assert not template.chat


def test_a_chat_file_renders_messages_the_answer_opens_the_assistant_turn(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(CHAT), encoding="utf-8")
    template = load_template(path)
    prompt, spans = template.render(DOCS[::-1], QUESTION)
    assert isinstance(prompt, ChatPrompt)
    assert [role for role, _ in prompt.messages] == ["system", "user"]
    assert prompt.messages[1][1].startswith('{"records": ["Bern is in Switzerland.", ')
    assert _spans_hold_documents(prompt, spans) == DOCS[::-1]
    assert answer_text(prompt, "Italy") == "Italy"
    assert template.chat
    assert template.to_json()["source"] == CHAT


def test_bookend_prompt_is_render_prompt() -> None:
    assert BOOKEND_PROMPT.render(DOCS, QUESTION, "It is") == render_prompt(DOCS, QUESTION, "It is")
    assert template_of(None) is BOOKEND_PROMPT


def test_the_hash_follows_what_the_template_renders() -> None:
    assert JinjaTemplate(TEXT).sha256 == JinjaTemplate(TEXT, name="other name").sha256
    assert JinjaTemplate(TEXT).sha256 != JinjaTemplate(TEXT.replace("Q:", "Question:")).sha256
    assert JinjaTemplate(TEXT).sha256 != BOOKEND_PROMPT.sha256


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("{{ question }}", "must use documents"),
        ("{% for d in documents %}{{ d }}{% endfor %}", "must use question"),
        ("{% for d in documents %}{{ d }}{% endfor %}{{ question", "does not parse"),
        ("{% for d in documents %}{{ d }}{{ d }}{% endfor %}{{ question }}", "exactly once"),
        ("{% for d in documents %}{{ d }}{% endfor %}{{ question }}{{ missing }}", "fails"),
    ],
)
def test_a_bad_template_is_refused_in_one_line(source: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as caught:
        JinjaTemplate(source, name="t")
    assert "\n" not in str(caught.value)


def test_a_json_template_escapes_the_documents_and_keeps_their_spans() -> None:
    source = (
        '{"docs": [{% for d in documents %}{{ d | tojson }}{% if not loop.last %}, {% endif %}'
        '{% endfor %}], "q": {{ question | tojson }}}'
    )
    documents = ['He said "Rome".', "Bern\\Zurich", "Zürich <b> & 'Genève'"]
    prompt, spans = JinjaTemplate(source).render(documents, QUESTION)
    assert isinstance(prompt, str)
    assert json.loads(prompt)["docs"] == documents
    assert [prompt[a:b] for a, b in spans] == [
        r"He said \"Rome\".",
        r"Bern\\Zurich",
        r"Z\u00fcrich \u003cb\u003e \u0026 \u0027Gen\u00e8ve\u0027",
    ]
    with pytest.raises(ValueError, match="exactly once and unchanged"):
        JinjaTemplate("{% for d in documents %}{{ d | upper }}{% endfor %}{{ question }}")


def test_templates_render_in_the_sandbox() -> None:
    escape = (
        "{% for d in documents %}{{ d }}{% endfor %}{{ question }}"
        "{{ ''.__class__.__mro__[1].__subclasses__() }}"
    )
    with pytest.raises(ValueError, match="fails to render: SecurityError"):
        JinjaTemplate(escape)
    mutate = "{% for d in documents %}{{ d }}{% endfor %}{{ question }}{{ documents.append(1) }}"
    with pytest.raises(ValueError, match="fails to render: SecurityError"):
        JinjaTemplate(mutate)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "is not JSON"),
        (json.dumps([{"role": "wizard", "content": "{{ documents }}{{ question }}"}]), "roles"),
        (json.dumps([{"role": "user", "content": 3}]), "chat messages"),
        (json.dumps([{"role": "assistant", "content": "{{ documents }}{{ question }}"}]), "last"),
    ],
)
def test_a_bad_chat_file_is_refused_naming_it(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "chat.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        load_template(path)
    with pytest.raises(ValueError, match="does not exist"):
        load_template(tmp_path / "missing.j2")


printable = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=30
)


USER_TEMPLATES = (JinjaTemplate(TEXT), JinjaTemplate([(m["role"], m["content"]) for m in CHAT]))


@settings(max_examples=60, deadline=None)
@given(documents=st.lists(printable, min_size=2, max_size=8), question=printable)
def test_spans_hold_each_document_for_any_text(documents: list[str], question: str) -> None:
    # (bookend's own prompt spans each "Document k: ..." block, render_prompt's convention.)
    for template in USER_TEMPLATES:
        prompt, spans = template.render(documents, question)
        assert _spans_hold_documents(prompt, spans) == documents
        assert spans == sorted(spans)


def test_items_keep_their_identity_under_a_template() -> None:
    item = Item("1", QUESTION, tuple(DOCS), "Italy", gold=1)
    template = JinjaTemplate(TEXT)
    (rendered,) = templated([item], template)
    assert rendered == item
    assert items_sha256([rendered]) == items_sha256([item])
    assert rendered.prompt((1, 0, 2)) == template.render([DOCS[1], DOCS[0], DOCS[2]], QUESTION)[0]
    assert templated([item], BOOKEND_PROMPT)[0].prompt() == item.prompt()


def test_a_tuned_config_judged_in_another_prompt_warns() -> None:
    config = bookend_rag.PlacementConfig()
    template = JinjaTemplate(TEXT, name="qa.j2")
    tuned_here = bookend_rag.TunedConfig(
        config, {"model": "m", "template": "qa.j2", "template_sha256": template.sha256}
    )
    tuned_before = bookend_rag.TunedConfig(config, {"model": "m"})
    scorer = _NamedScorer()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_on_other_models([tuned_here, tuned_before, config], scorer, template)
    assert len(caught) == 1
    assert "bookend's own prompt" in str(caught[0].message)
    assert "qa.j2" in str(caught[0].message)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_on_other_models([tuned_before], scorer)
    assert caught == []


class _NamedScorer:
    model_id = "m"
    calls = 0


def test_langchain_prompts_render_through_langchain() -> None:
    from langchain_core.prompts import ChatPromptTemplate, PromptTemplate

    text = framework_template(
        PromptTemplate.from_template("Context:\n{context}\n\nQuestion: {question}\nAnswer:")
    )
    prompt, spans = text.render(DOCS, QUESTION)
    assert prompt == "Context:\n" + "\n\n".join(DOCS) + f"\n\nQuestion: {QUESTION}\nAnswer:"
    assert _spans_hold_documents(prompt, spans) == DOCS
    chat = framework_template(
        ChatPromptTemplate.from_messages(
            [("system", "Use the context."), ("human", "{context}\n\n{question}")]
        ),
        format_documents=lambda docs: "\n".join(f"- {d}" for d in docs),
    )
    prompt, spans = chat.render(DOCS, QUESTION)
    assert isinstance(prompt, ChatPrompt)
    assert prompt.messages == (
        ("system", "Use the context."),
        ("user", "- " + "\n- ".join(DOCS) + f"\n\n{QUESTION}"),
    )
    assert _spans_hold_documents(prompt, spans) == DOCS
    with pytest.raises(ValueError, match="none of the usual documents variables"):
        framework_template(PromptTemplate.from_template("{passages} {question}"))
    assert (
        framework_template(
            PromptTemplate.from_template("{passages} {question}"), documents_variable="passages"
        ).render(DOCS, QUESTION)[0]
        == "\n\n".join(DOCS) + f" {QUESTION}"
    )
    # A variable bookend does not fill fails LangChain's own render, said in one line at once.
    with pytest.raises(ValueError, match="fails to render") as refused:
        framework_template(PromptTemplate.from_template("{tone}: {context} {question}"))
    message = str(refused.value)
    assert message.startswith("prompt langchain_core.PromptTemplate fails to render: KeyError: ")
    assert "missing variables {'tone'}" in message
    assert "\n" not in message


def test_llama_index_prompts_render_through_llama_index() -> None:
    from llama_index.core.prompts import PromptTemplate

    template = framework_template(
        PromptTemplate("Context information:\n{context_str}\nQuery: {query_str}\nAnswer: ")
    )
    prompt, spans = template.render(DOCS, QUESTION)
    assert prompt == "Context information:\n" + "\n\n".join(DOCS) + (
        f"\nQuery: {QUESTION}\nAnswer: "
    )
    assert _spans_hold_documents(prompt, spans) == DOCS


def test_haystack_builders_render_through_haystack() -> None:
    from haystack.components.builders import ChatPromptBuilder, PromptBuilder
    from haystack.dataclasses import ChatMessage

    source = "{% for doc in documents %}{{ doc.content }}\n{% endfor %}Question: {{ question }}"
    builder = framework_template(PromptBuilder(template=source))
    prompt, spans = builder.render(DOCS, QUESTION)
    assert prompt == "".join(d + "\n" for d in DOCS) + f"Question: {QUESTION}"
    assert _spans_hold_documents(prompt, spans) == DOCS
    assert builder.sha256 == JinjaTemplate(source).sha256
    chat = framework_template(
        ChatPromptBuilder(
            template=[ChatMessage.from_system("Be brief."), ChatMessage.from_user(source)]
        )
    )
    prompt, spans = chat.render(DOCS, QUESTION)
    assert isinstance(prompt, ChatPrompt)
    assert prompt.messages[0] == ("system", "Be brief.")
    assert _spans_hold_documents(prompt, spans) == DOCS


def test_an_object_of_no_framework_is_refused() -> None:
    with pytest.raises(ValueError, match="LangChain, LlamaIndex or Haystack prompt object"):
        template_of(42)


def test_the_answer_follows_a_space_unless_the_text_ends_in_white_space() -> None:
    assert answer_text("Answer:", "Rome") == " Rome"
    assert answer_text("<start_of_turn>model\n", "Rome") == "Rome"
    assert answer_text(ChatPrompt((("user", "Where?"),)), "Rome") == "Rome"
    turn = JinjaTemplate(
        "<start_of_turn>user\n{% for d in documents %}{{ d }}\n{% endfor %}{{ question }}"
        "<end_of_turn>\n<start_of_turn>model\n"
    )
    prompt, _ = turn.render(DOCS, QUESTION)
    assert isinstance(prompt, str)
    assert prompt.endswith("model\n")
    assert answer_text(prompt, "Italy") == "Italy"
