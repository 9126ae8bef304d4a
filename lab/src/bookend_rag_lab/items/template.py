"""The prompt an item is rendered into: bookend's own, or the one the user really sends.

A decision about placement is a decision about one (model, prompt, data) triple: the same model
reads the first document best in one prompt and the last in another (bench/RESULTS.md). So eval,
tune and calibrate render each item through a :class:`PromptTemplate`:

- :data:`BOOKEND_PROMPT`: bookend's completion prompt
  (:func:`render_prompt`: "Read the documents and answer the
  question. Document k: ... Question: ... Answer:");
- :class:`JinjaTemplate`: a Jinja2 text template (the engine of Haystack's ``PromptBuilder`` and of
  LangChain's jinja2 templates) that the answer continues after one space, or chat messages whose
  contents are Jinja2 templates, which the model's own chat template renders and whose assistant
  turn the answer opens (:class:`~bookend_rag_lab.models.scorer.ChatPrompt`);
- :class:`FrameworkTemplate`: a LangChain, LlamaIndex or Haystack prompt object, rendered by the
  framework itself (:func:`framework_template`).

Every template receives ``documents`` (the documents in placement order; each is a string that
also answers ``.content``, ``.page_content``, ``.text`` and ``.slot``, its 1-based slot),
``question`` (also as ``query``) and ``answer_prefix`` (the text the answer continues, empty for
most items). Jinja2 templates render in Jinja2's immutable sandbox with undefined variables an
error: a template or a ``tuned.json`` from elsewhere never runs code. A template that names
neither ``documents`` nor ``question``/``query``, or that fails to render, is refused in one line
when it is loaded, before any model call.

A template's :attr:`~PromptTemplate.sha256` is the hash of what it renders for a fixed probe item
(:func:`probe_render`): two templates that render every prompt alike share it, and any change that
reaches a prompt changes it. Reports and ``tuned.json`` record it with the template's name.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

from bookend_rag_lab.models.scorer import ROLES, ChatPrompt, Prompt, prompt_key

__all__ = [
    "BOOKEND_PROMPT",
    "BookendTemplate",
    "Document",
    "FrameworkTemplate",
    "JinjaTemplate",
    "PromptTemplate",
    "Spans",
    "TemplateLike",
    "flat_text",
    "framework_template",
    "load_template",
    "probe_render",
    "render_prompt",
    "template_of",
]

#: The character span ``[start, end)`` of each document in the rendered prompt's text (for a chat
#: prompt, in its messages' contents joined by :data:`CHAT_JOIN`), slot 1 first.
Spans = list[tuple[int, int]]

#: How a chat prompt's message contents are joined into the one text that spans refer to.
CHAT_JOIN = "\n\n"

_PROBE_DOCUMENTS = ('The first "probe" document.', "The second probe document.")
_PROBE_QUESTION = "Which probe document comes first?"


class Document(str):
    """A document as templates see it: its text, which also answers the attribute names the
    frameworks' templates use (``doc.content`` in Haystack, ``doc.page_content`` in LangChain,
    ``doc.text`` in LlamaIndex) and ``doc.slot``, its 1-based slot."""

    slot: int

    def __new__(cls, text: str, slot: int) -> Document:
        made = super().__new__(cls, text)
        made.slot = slot
        return made

    @property
    def content(self) -> str:
        """The text (Haystack's ``Document.content``)."""
        return str(self)

    @property
    def page_content(self) -> str:
        """The text (LangChain's ``Document.page_content``)."""
        return str(self)

    @property
    def text(self) -> str:
        """The text (LlamaIndex's ``TextNode.text``)."""
        return str(self)


class PromptTemplate(Protocol):
    """Renders documents (in placement order) and a question into the prompt a model scores.

    Attributes:
        name: how reports name it (a file path, ``"bookend"``, or the framework object's type).
        sha256: the hash of its probe render (:func:`probe_render`).
        chat: whether it renders chat messages.
    """

    @property
    def name(self) -> str: ...

    @property
    def sha256(self) -> str: ...

    @property
    def chat(self) -> bool: ...

    def prompt(self, documents: Sequence[str], question: str, answer_prefix: str = "") -> Prompt:
        """The prompt alone (one render: what eval and tune score)."""
        ...

    def render(
        self, documents: Sequence[str], question: str, answer_prefix: str = ""
    ) -> tuple[Prompt, Spans]:
        """The prompt and each document's character span (:data:`Spans`; calibrate's fit)."""
        ...

    def to_json(self) -> dict[str, Any]:
        """How reports and ``tuned.json`` record it: ``name``, ``sha256``, ``chat`` and
        ``source`` (a file template's text or messages; ``None`` otherwise)."""
        ...


def flat_text(prompt: Prompt) -> str:
    """The text that :data:`Spans` refer to: the prompt itself, or a chat's message contents
    joined by :data:`CHAT_JOIN`."""
    if isinstance(prompt, ChatPrompt):
        return CHAT_JOIN.join(content for _, content in prompt.messages)
    return prompt


def probe_render(render: Callable[[Sequence[str], str, str], tuple[Prompt, Spans]]) -> Prompt:
    """What a template renders for the fixed probe item (two documents, one question, no answer
    prefix): the input of its hash, and the check that it renders at all."""
    return render(_PROBE_DOCUMENTS, _PROBE_QUESTION, "")[0]


def _sha256(prompt: Prompt) -> str:
    text = json.dumps(prompt_key(prompt), ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _marked(
    render: Callable[[list[str], str, str], Prompt],
    documents: Sequence[str],
    question: str,
    answer_prefix: str,
) -> tuple[Prompt, Spans]:
    """The prompt as the template renders it, and each document's span in it.

    A first render with a unique marker for each document finds where, and in which order, the
    template writes them (each exactly once); the spans are then found in the real render, in
    that order, as the document's text itself or as it reads JSON-escaped (a template that
    writes ``{{ doc | tojson }}``). A template that changes a document's text otherwise has no
    measurable span and is refused.
    """
    markers = [f"bookendmarker{k}x" for k in range(len(documents))]
    written = flat_text(render(markers, question, answer_prefix))
    counts = [written.count(m) for m in markers]
    if counts != [1] * len(markers):
        raise ValueError(
            "the template must write each document exactly once and unchanged (found "
            f"{counts} copies of documents 1..{len(markers)})"
        )
    order = sorted(range(len(markers)), key=lambda k: written.find(markers[k]))
    prompt = render(list(documents), question, answer_prefix)
    text = flat_text(prompt)
    spans: Spans = [(0, 0)] * len(documents)
    at = 0
    for k in order:
        found = [(text.find(form, at), form) for form in _written_forms(documents[k])]
        start, form = min(((i, f) for i, f in found if i >= 0), default=(-1, ""))
        if start < 0:
            raise ValueError(
                f"the template changes the text of document {k + 1} (beyond JSON escaping): "
                "its position in the prompt cannot be measured"
            )
        spans[k] = (start, start + len(form))
        at = start + len(form)
    return prompt, spans


def _written_forms(document: str) -> list[str]:
    """How a template may write a document: as it is, or JSON-escaped (with or without non-ASCII
    escapes, and as Jinja2's ``tojson`` writes it, which also escapes ``<``, ``>``, ``&`` and
    ``'``)."""
    from jinja2.utils import htmlsafe_json_dumps

    forms = [
        document,
        json.dumps(document, ensure_ascii=False)[1:-1],
        json.dumps(document)[1:-1],
        str(htmlsafe_json_dumps(document))[1:-1],
    ]
    return list(dict.fromkeys(forms))


def render_prompt(
    documents: Sequence[str], question: str, answer_prefix: str = ""
) -> tuple[str, list[tuple[int, int]]]:
    """The completion-style prompt and the character span of each ``"Document k: ..."``.

    Instruction, numbered documents in the given order, the question, and ``"Answer:"`` followed
    by ``answer_prefix``; the answer follows as ``" " + answer``. No chat template: base and
    instruction-tuned models both continue it. The documents block is
    ``[spans[0][0], spans[-1][1])``.
    """
    text = "Read the documents and answer the question.\n\n"
    spans = []
    for slot, document in enumerate(documents):
        if slot:
            text += "\n\n"
        start = len(text)
        text += f"Document {slot + 1}: {document}"
        spans.append((start, len(text)))
    answer = f"Answer: {answer_prefix}" if answer_prefix else "Answer:"
    return f"{text}\n\nQuestion: {question}\n{answer}", spans


@dataclass(frozen=True)
class BookendTemplate:
    """bookend's completion prompt (:func:`render_prompt`)."""

    name: str = "bookend"
    chat: bool = False

    @cached_property
    def sha256(self) -> str:
        """The hash of its probe render (computed once)."""
        return _sha256(probe_render(self.render))

    def prompt(self, documents: Sequence[str], question: str, answer_prefix: str = "") -> Prompt:
        """:func:`render_prompt`'s prompt."""
        return self.render(documents, question, answer_prefix)[0]

    def render(
        self, documents: Sequence[str], question: str, answer_prefix: str = ""
    ) -> tuple[Prompt, Spans]:
        """Instruction, ``Document k: ...`` blocks, the question and ``Answer:``."""
        return render_prompt(documents, question, answer_prefix)

    def to_json(self) -> dict[str, Any]:
        """How a report records it: name and hash (its source is bookend's)."""
        return {"name": self.name, "sha256": self.sha256, "chat": False, "source": None}


#: bookend's own completion prompt, the default of every experiment.
BOOKEND_PROMPT = BookendTemplate()


def _environment() -> Any:
    from jinja2 import StrictUndefined
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    # autoescape off: prompts are plain text, not HTML; keep_trailing_newline: a template's last
    # newline is part of the prompt the user sends.
    return ImmutableSandboxedEnvironment(
        undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True
    )


def _variables(documents: Sequence[str], question: str, answer_prefix: str) -> dict[str, Any]:
    docs = [Document(text, k + 1) for k, text in enumerate(documents)]
    return {
        "documents": docs,
        "question": question,
        "query": question,
        "answer_prefix": answer_prefix,
    }


class _MarkedTemplate:
    """A template whose prompt comes from ``_render`` and whose documents' spans are found by
    :func:`_marked`: the shared part of :class:`JinjaTemplate` and :class:`FrameworkTemplate`."""

    _render: Callable[[list[str], str, str], Prompt]

    def prompt(self, documents: Sequence[str], question: str, answer_prefix: str = "") -> Prompt:
        """The rendered prompt."""
        return self._render(list(documents), question, answer_prefix)

    def render(
        self, documents: Sequence[str], question: str, answer_prefix: str = ""
    ) -> tuple[Prompt, Spans]:
        """The rendered prompt and each document's span."""
        return _marked(self._render, documents, question, answer_prefix)

    def _probed(self, what: str) -> Prompt:
        """The probe item's render; any failure of the user's template said in one line."""
        try:
            return probe_render(self.render)
        except ValueError:
            raise
        except Exception as exc:
            # The first line of the framework's own message (a KeyError's str() is its repr).
            detail = str(exc.args[0]) if exc.args else str(exc)
            first = detail.strip().splitlines()[0] if detail.strip() else ""
            raise ValueError(f"{what} fails to render: {type(exc).__name__}: {first}") from None


class JinjaTemplate(_MarkedTemplate):
    """A Jinja2 text template, or chat messages whose contents are Jinja2 templates.

    Args:
        source: the template text, or ``(role, template)`` pairs for chat messages (roles from
            :data:`~bookend_rag_lab.models.scorer.ROLES`, the last one ``"user"``).
        name: how reports name it (default: ``"jinja"``).

    Raises:
        ValueError: (one line) for a template that does not parse, names neither ``documents``
            nor ``question``/``query``, does not write every document exactly once, or fails on
            the probe item.
    """

    def __init__(self, source: str | Sequence[tuple[str, str]], *, name: str = "jinja") -> None:
        from jinja2 import TemplateSyntaxError, meta

        self.name = name
        self.chat = not isinstance(source, str)
        parts = [("user", source)] if isinstance(source, str) else [tuple(m) for m in source]
        self.roles = tuple(str(role) for role, _ in parts)
        self.sources = tuple(str(text) for _, text in parts)
        env = _environment()
        names: set[str] = set()
        try:
            parsed = [env.parse(text) for text in self.sources]
        except TemplateSyntaxError as exc:
            raise ValueError(
                f"template {name!r} does not parse: {exc.message} (line {exc.lineno})"
            ) from None
        for tree in parsed:
            names |= meta.find_undeclared_variables(tree)
        missing = [
            wanted
            for wanted, given in (("documents", {"documents"}), ("question", {"question", "query"}))
            if not names & given
        ]
        if missing:
            raise ValueError(
                f"template {name!r} must use {' and '.join(missing)} (it uses "
                f"{sorted(names) or 'no variables'}): the documents and the question are what "
                "bookend places and asks"
            )
        self._templates = [env.from_string(text) for text in self.sources]
        self.sha256 = _sha256(self._probed(f"template {name!r}"))

    def _render(self, documents: list[str], question: str, answer_prefix: str) -> Prompt:
        values = _variables(documents, question, answer_prefix)
        texts = [str(template.render(**values)) for template in self._templates]
        if not self.chat:
            return texts[0]
        return ChatPrompt(tuple(zip(self.roles, texts, strict=True)))

    def to_json(self) -> dict[str, Any]:
        """How a report records it: name, hash and source."""
        source: Any = (
            [{"role": r, "content": t} for r, t in zip(self.roles, self.sources, strict=True)]
            if self.chat
            else self.sources[0]
        )
        return {"name": self.name, "sha256": self.sha256, "chat": self.chat, "source": source}


def load_template(path: str | Path) -> JinjaTemplate:
    """The template in a file: a ``.json`` file holds chat messages (a list of ``{"role",
    "content"}`` objects, each content a Jinja2 template), any other file one Jinja2 text template.

    Raises:
        ValueError: (one line, naming the path) for a missing file or a malformed template.
    """
    source = Path(path)
    if not source.is_file():
        raise ValueError(f"template file does not exist: template={str(path)!r}")
    text = source.read_text(encoding="utf-8")
    if source.suffix.lower() != ".json":
        return JinjaTemplate(text, name=str(path))
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"template={str(path)!r} is not JSON ({exc.msg})") from None
    if not isinstance(data, list) or not all(
        isinstance(m, dict)
        and m.get("role") in ROLES
        and isinstance(m.get("content"), str)
        and set(m) <= {"role", "content"}
        for m in data
    ):
        raise ValueError(
            f'template={str(path)!r} must be a list of {{"role", "content"}} chat messages '
            f"with roles in {ROLES}"
        )
    if not data or data[-1]["role"] != "user":
        raise ValueError(
            f"template={str(path)!r}: the last chat message must be the user's (the answer opens "
            "the assistant turn after it)"
        )
    return JinjaTemplate([(m["role"], m["content"]) for m in data], name=str(path))


class FrameworkTemplate(_MarkedTemplate):
    """A prompt object of LangChain, LlamaIndex or Haystack, rendered by the framework itself.

    Args:
        render: ``(documents, question, answer_prefix) -> Prompt``, calling the framework object.
        name: the framework object's type, for reports.

    Raises:
        ValueError: (one line) when the object fails on the probe item.
    """

    def __init__(self, render: Callable[[list[str], str, str], Prompt], name: str) -> None:
        self.name = name
        self._render = render
        probe = self._probed(f"prompt {name}")
        self.chat = isinstance(probe, ChatPrompt)
        self.sha256 = _sha256(probe)

    def to_json(self) -> dict[str, Any]:
        """How a report records it: name and hash."""
        return {"name": self.name, "sha256": self.sha256, "chat": self.chat, "source": None}


_ROLE_NAMES = {
    "system": "system",
    "human": "user",
    "user": "user",
    "ai": "assistant",
    "assistant": "assistant",
}


def _chat(messages: Sequence[tuple[Any, Any]]) -> ChatPrompt:
    pairs = []
    for role, content in messages:
        name = str(getattr(role, "value", role)).lower()
        if name not in _ROLE_NAMES or not isinstance(content, str):
            raise ValueError(f"a chat message of role {name!r} cannot be scored")
        pairs.append((_ROLE_NAMES[name], content))
    return ChatPrompt(tuple(pairs))


def _pick(given: str | None, offered: Sequence[str], choices: Sequence[str], what: str) -> str:
    if given is not None:
        if given not in offered:
            raise ValueError(f"{what}={given!r} is not a variable of the prompt ({list(offered)})")
        return given
    found = next((c for c in choices if c in offered), None)
    if found is None:
        raise ValueError(
            f"the prompt has none of the usual {what} variables {list(choices)} (it has "
            f"{list(offered)}): name it with {what}=..."
        )
    return found


def _joined(documents: Sequence[str]) -> str:
    return "\n\n".join(documents)


def framework_template(
    prompt: Any,
    *,
    documents_variable: str | None = None,
    question_variable: str | None = None,
    format_documents: Callable[[Sequence[str]], Any] | None = None,
) -> FrameworkTemplate:
    """A :class:`FrameworkTemplate` of a framework's own prompt object.

    - LangChain ``PromptTemplate``/``ChatPromptTemplate`` (any ``BasePromptTemplate``): invoked
      with the documents (joined by blank lines, or ``format_documents(documents)``) and the
      question; its ``ChatPromptValue`` messages or its text are the prompt. Variables by default:
      ``context``/``documents``/``docs`` and ``question``/``query``/``input``.
    - LlamaIndex ``PromptTemplate``/``ChatPromptTemplate``: ``format`` or ``format_messages``,
      by default with ``context_str`` and ``query_str``.
    - Haystack ``PromptBuilder``/``ChatPromptBuilder``: ``run`` with ``documents`` as Haystack
      ``Document`` objects and ``question`` (or ``query``).

    Raises:
        ValueError: for an object of no known framework, variables it does not have, or a
            render that fails on the probe item.
    """
    module = type(prompt).__module__
    kind = f"{module.split('.')[0]}.{type(prompt).__name__}"
    fmt = format_documents or _joined
    if module.startswith("langchain"):
        offered = list(getattr(prompt, "input_variables", []))
        docs = _pick(documents_variable, offered, ("context", "documents", "docs"), "documents")
        ask = _pick(question_variable, offered, ("question", "query", "input"), "question")

        def render_langchain(documents: list[str], question: str, _prefix: str) -> Prompt:
            value = prompt.invoke({docs: fmt(documents), ask: question})
            if hasattr(value, "messages"):
                return _chat([(m.type, m.content) for m in value.messages])
            text: str = value.to_string()
            return text

        return FrameworkTemplate(render_langchain, kind)
    if module.startswith("llama_index"):
        offered = list(getattr(prompt, "template_vars", []))
        docs = _pick(documents_variable, offered, ("context_str", "context"), "documents")
        ask = _pick(question_variable, offered, ("query_str", "question", "query"), "question")
        is_chat = hasattr(prompt, "message_templates")

        def render_llama_index(documents: list[str], question: str, _prefix: str) -> Prompt:
            values = {docs: fmt(documents), ask: question}
            if is_chat:
                return _chat([(m.role, m.content) for m in prompt.format_messages(**values)])
            return str(prompt.format(**values))

        return FrameworkTemplate(render_llama_index, kind)
    if module.startswith("haystack"):
        from haystack import Document as HaystackDocument

        ask = question_variable or "question"

        def render_haystack(documents: list[str], question: str, _prefix: str) -> Prompt:
            docs = [HaystackDocument(content=text) for text in documents]
            result = prompt.run(documents=docs, **{ask: question})["prompt"]
            if isinstance(result, str):
                return result
            return _chat([(m.role, m.text) for m in result])

        return FrameworkTemplate(render_haystack, kind)
    raise ValueError(
        f"prompt must be a LangChain, LlamaIndex or Haystack prompt object, got {kind}"
    )


#: What experiments take as ``template=``: a template, a file's path, a framework prompt object,
#: or ``None`` for bookend's own prompt.
TemplateLike = Any


def template_of(template: TemplateLike) -> PromptTemplate:
    """The template an experiment renders with: :data:`BOOKEND_PROMPT` for ``None``, a file's
    template for a path (:func:`load_template`), a framework prompt object through
    :func:`framework_template`, or a template as given."""
    if template is None:
        return BOOKEND_PROMPT
    if isinstance(template, (str, Path)):
        return load_template(template)
    if isinstance(template, (BookendTemplate, JinjaTemplate, FrameworkTemplate)):
        chosen: PromptTemplate = template
        return chosen
    return framework_template(template)
