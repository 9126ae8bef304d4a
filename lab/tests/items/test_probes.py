"""Probe items from recorded retrievals: the answer known by construction, the user's text kept.

The invariants are checked on generated retrievals (hypothesis): unique codes with distinct first
letters (and single tokens where a tokenizer is given), each occurring once in the prompt; a
naming phrase that only the named document holds; every document the recorded text followed by
its statement alone; the same seed giving the same items. Each skip reason is checked on a
retrieval built to trigger it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from bookend_rag.retrievals import RecordedDocument, RetrievalRecord, read_retrievals
from bookend_rag_lab.items.codes import (
    CODE_WORDS,
    MAX_DOCUMENTS,
    MAX_WORDS,
    MIN_WORDS,
    SKIP_REASONS,
    probe_items,
    statement,
)
from bookend_rag_lab.items.item import Item
from bookend_rag_lab.items.probes import PROBE_FAMILY
from bookend_rag_lab.items.template import (
    BOOKEND_PROMPT,
    JinjaTemplate,
    PromptTemplate,
    flat_text,
)
from bookend_rag_lab.models.scorer import answer_text

_QUESTION = re.compile(r'that (begins|contains) "(.*)"\? Answer with the code alone\.$', re.S)

#: Words of the generated documents: plain words, code words in both cases (which the codes must
#: then avoid) and one word that holds a code word inside it.
_VOCABULARY = ["the", "river", "stone", "north", "of", "1998", "Apple", "falcon", "tigers", "x"]

_CHAT = JinjaTemplate(
    [
        ("system", "Answer from the documents. Never say zebra."),
        ("user", "{% for d in documents %}[{{ d.slot }}] {{ d }}\n{% endfor %}Q: {{ question }}"),
    ],
    name="chat",
)


def _record(texts: Sequence[str], scores: Sequence[float | None] | None = None) -> RetrievalRecord:
    given = scores or [None] * len(texts)
    documents = [RecordedDocument(text=t, score=s) for t, s in zip(texts, given, strict=True)]
    return RetrievalRecord(question="q?", documents=documents)


def _normal(text: str) -> str:
    return " ".join(text.casefold().split())


def _short_words(text: str) -> int:
    """A tokenizer of the tests: code words of at most six letters (after an optional space) are
    one token, anything else one token per character."""
    word = text.removeprefix(" ")
    return 1 if word in CODE_WORDS and len(word) <= 6 else len(text)


texts = st.lists(st.sampled_from(_VOCABULARY), max_size=14).map(" ".join)
retrievals = st.lists(
    st.tuples(
        st.lists(texts, min_size=2, max_size=12),
        st.booleans(),
        st.lists(st.integers(-3, 3), min_size=12, max_size=12),
    ).map(lambda r: _record(r[0], [float(s) for s in r[2][: len(r[0])]] if r[1] else None)),
    min_size=1,
    max_size=4,
)


def _check_probe(item: Item, record: RetrievalRecord, template: PromptTemplate, lead: str) -> None:
    originals = [d.text for d in record.documents]
    codes = item.candidates
    assert codes is not None
    assert item.gold is not None
    # Unique codes, distinct first letters, the answer the named document's code.
    assert len(set(codes)) == len(codes) == len(originals)
    assert len({c[0] for c in codes}) == len(codes)
    assert item.answer == codes[item.gold]
    # The user's text untouched but for the inserted statement.
    for text, document, code in zip(originals, item.documents, codes, strict=True):
        assert document.startswith(text)
        assert document[len(text) :].lstrip("\n") == statement(code)
    # Each code occurs once in the whole prompt, in its own statement.
    rendered = item.with_template(template).prompt()
    for code in codes:
        assert flat_text(rendered).casefold().count(code) == 1, code
        assert answer_text(rendered, code) == lead + code
    # The named document is the retriever's first, and the phrase names it alone.
    scores = item.scores
    assert scores is not None
    assert item.gold == min(range(len(scores)), key=lambda i: (-scores[i], i))
    found = _QUESTION.search(item.question)
    assert found is not None
    phrase = _normal(found.group(2))
    holders = [i for i, d in enumerate(item.documents) if phrase in _normal(d)]
    assert holders == [item.gold]
    if found.group(1) == "begins":
        assert _normal(originals[item.gold]).startswith(phrase)
    assert len(phrase.split()) >= min(MIN_WORDS, len(originals[item.gold].split()))


@settings(max_examples=150, deadline=None)
@given(records=retrievals, seed=st.integers(0, 3), chat=st.booleans())
def test_every_probe_keeps_its_invariants(
    records: list[RetrievalRecord], seed: int, chat: bool
) -> None:
    template: PromptTemplate = _CHAT if chat else BOOKEND_PROMPT
    probes = probe_items(records, seed=seed, template=template, token_length=_short_words)
    lead = "" if chat else " "
    assert probes.records == len(records)
    built = {int(item.item_id.split(":")[1]) for item in probes.items}
    skipped = {n for numbers in probes.skipped.values() for n in numbers}
    assert built.isdisjoint(skipped)
    assert built | skipped == set(range(1, len(records) + 1))
    for item in probes.items:
        record = records[int(item.item_id.split(":")[1]) - 1]
        _check_probe(item, record, template, lead)
        assert item.family == PROBE_FAMILY
        # Single tokens under the tokenizer given, so one next-token distribution scores them.
        assert all(_short_words(lead + code) == 1 for code in item.continuations)
        if any(d.score is None for d in record.documents):
            assert item.scores == tuple(1.0 / (i + 1) for i in range(len(item.documents)))
        else:
            assert item.scores == tuple(d.score for d in record.documents)
    # Deterministic given the seed; another seed draws other codes.
    again = probe_items(records, seed=seed, template=template, token_length=_short_words)
    assert again == probes


def test_another_seed_draws_other_codes() -> None:
    record = _record([f"passage number {i} of the river" for i in range(8)])
    codes = {probe_items([record], seed=s).items[0].candidates for s in range(5)}
    assert len(codes) == 5


def test_the_users_file_is_only_read(tmp_path: Path) -> None:
    path = tmp_path / "retrievals.jsonl"
    records = [_record(["alpha beta gamma delta", "beta gamma delta epsilon"], [0.3, 0.9])] * 3
    path.write_text("".join(r.to_json_line() + "\n" for r in records), encoding="utf-8")
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    probes = probe_items(read_retrievals(path), seed=1)
    assert len(probes.items) == 3
    assert probes.items[0].gold == 1
    assert probes.items[0].question.startswith('What is the code of the document that begins "beta')
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_each_reason_to_skip_is_counted_with_the_retrievals_it_names() -> None:
    records = [
        _record(["a lone document"]),  # 1: few
        _record([f"document {i}" for i in range(MAX_DOCUMENTS + 1)]),  # 2: many
        _record(["   ", "a second document here"], [0.9, 0.1]),  # 3: empty
        _record(["the same text", "the same text", "other"], [0.5, 0.4, 0.1]),  # 4: duplicate
        _record(["one two three four five six", "seven eight nine ten eleven twelve"]),  # 5: kept
        _record(["the shorter text", "it holds the shorter text and more"]),  # 6: duplicate
    ]
    probes = probe_items(records)
    assert probes.skipped == {"few": [1], "many": [2], "empty": [3], "duplicate": [4, 6]}
    assert [item.item_id for item in probes.items] == ["retrieval:5"]
    assert probes.unscored == [5]
    summary = probes.summary()
    assert summary.startswith("1 codes probe from 6 retrievals; 1 skipped: fewer than 2 documents")
    assert f"2 skipped: {SKIP_REASONS['duplicate']}" in summary
    assert probes.to_json()["skipped"][SKIP_REASONS["many"]] == [2]


def test_a_shared_opening_is_passed_over_for_a_phrase_inside_the_document() -> None:
    # Chunks of one page, each opening with the page's title, longer than a phrase may be.
    title = "Title: The History of the Northern Railway Company and Its Branch Lines, 1850-1990."
    assert len(title.split()) > MAX_WORDS
    record = _record(
        [f"{title} It opened in 1850 with two engines.", f"{title} It closed in 1962."],
        [0.2, 0.8],
    )
    item = probe_items([record]).items[0]
    assert item.gold == 1
    assert 'that contains "' in item.question
    # The shortest run of words the other chunk lacks (four), the first of those.
    assert item.question.split('"')[1] == "Lines, 1850-1990. It closed"


def test_the_code_words_are_plain_and_none_holds_another() -> None:
    assert all(re.fullmatch("[a-z]+", word) for word in CODE_WORDS)
    assert len(set(CODE_WORDS)) == len(CODE_WORDS)
    assert [(a, b) for a in CODE_WORDS for b in CODE_WORDS if a != b and a in b] == []
    assert MAX_DOCUMENTS == 26


def test_codes_avoid_the_documents_and_the_template() -> None:
    # Every code word of the letter a is in the text, and zebra in the chat's system message.
    words = [w for w in CODE_WORDS if w[0] == "a"]
    record = _record([" ".join(words).upper(), "second document, longer than four words"])
    for seed in range(10):
        codes = probe_items([record], seed=seed, template=_CHAT).items[0].continuations
        assert not {c[0] for c in codes} & {"a"}
        assert "zebra" not in codes


def test_too_few_code_words_free_of_the_text_skips_the_retrieval() -> None:
    everything = " ".join(CODE_WORDS)
    record = _record([everything, "a second document of words"])
    assert probe_items([record]).skipped == {"codes": [1]}


def test_a_tokenizer_without_single_token_codes_gets_longer_ones_counted() -> None:
    record = _record(["one two three four five", "six seven eight nine ten"])
    probes = probe_items([record], token_length=len)
    assert probes.multi_token == [1]
    assert "1 with codes of several tokens" in probes.summary()
    assert probe_items([record], token_length=_short_words).multi_token == []


def test_a_prompt_beyond_the_models_context_is_skipped() -> None:
    record = _record(["word " * 200, "another short document of words"])
    kept = probe_items([record], token_length=_short_words, context=10_000)
    assert len(kept.items) == 1
    prompt = kept.items[0].prompt()
    assert isinstance(prompt, str)
    needed = len(prompt) + 1  # _short_words counts the prompt by characters, the answer as one
    assert len(probe_items([record], token_length=_short_words, context=needed).items) == 1
    cut = probe_items([record], token_length=_short_words, context=needed - 1)
    assert cut.skipped == {"context": [1]}
    assert cut.context == needed - 1
