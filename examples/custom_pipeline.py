"""A custom RAG pipeline with the standalone API: retrieve, place, build the prompt.

No framework: BM25 retrieval (rank-bm25) over the bundled corpus, ``bookend_rag.Bookend`` to place
the
chunks, and a plain prompt string. Shows both views of the prompt (DESIGN: where the Recency Delta
lands) and a token budget::

    pip install -e ".[demo]"
    python examples/custom_pipeline.py
"""

from __future__ import annotations

import re

from rank_bm25 import BM25Okapi

import bookend_rag
from bookend_rag.corpus import load_demo_corpus
from bookend_rag.tokens import approx_token_count

SYSTEM = "You answer questions about space telescopes. Use only the context below.\n\n"


def tokenize(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def main() -> None:
    corpus = load_demo_corpus()
    docs = corpus.documents
    bm25 = BM25Okapi([tokenize(d["title"] + " " + d["text"]) for d in docs])
    scores = bm25.get_scores(tokenize(corpus.query))
    top = sorted(range(len(docs)), key=lambda i: -scores[i])[:6]
    retrieved, top_scores = [docs[i] for i in top], [float(scores[i]) for i in top]
    question = f"\n\nQuestion: {corpus.query}\nAnswer:"

    # The bookend view: nothing after the chunks (suffix_tokens=0), so they are the analysed
    # sequence and the last slot holds the Recency Delta.
    placer: bookend_rag.Bookend[dict[str, str]] = bookend_rag.Bookend(
        "qwen2.5-7b", text="text", suffix_tokens=0
    )
    chunks_only = placer.place(retrieved, top_scores)
    print("bookend view (chunks fill the analysed sequence):")
    print(chunks_only.explain(previews=[d["title"] for d in retrieved]))

    # The whole-prompt view: count the system prompt and the question around the chunks.
    whole = bookend_rag.Bookend(
        "qwen2.5-7b",
        text="text",
        prefix_tokens=approx_token_count(SYSTEM),
        suffix_tokens=approx_token_count(question),
        budget=250,
    ).place(retrieved, top_scores)
    print("\nwhole-prompt view with a 250-token budget:")
    print(whole.explain(previews=[d["title"] for d in retrieved]))

    # The prompt has the system text before the chunks and the question after them: the
    # whole-prompt view describes it.
    prompt = SYSTEM + "\n\n".join(d["text"] for d in whole.items) + question
    print(f"\nprompt for the LLM ({len(prompt)} characters), chunks in whole-prompt order:")
    print(prompt)


if __name__ == "__main__":
    main()
