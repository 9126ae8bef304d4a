"""Adapter overhead: each bookend adapter against its framework's own reorderer, in one process.

For K documents (default 20) of unequal length with scores, new ones on every call (64 lists in
turn, 4 of 1000 documents: :func:`draws_for`; the same for every candidate), the per-call time of

* the framework's reorderer: LangChain ``LongContextReorder`` (langchain-community), LlamaIndex
  ``LongContextReorder`` and Haystack ``LostInTheMiddleRanker``;
* the bookend adapter with the default ``strategy="bookend"`` (the optimal order for the model);
* the same adapter with ``strategy="alternate"`` (the framework's pattern, through bookend);
* the bare core, ``bookend_rag.Bookend().place`` on the same objects: adapter / core is what the
  adapter itself costs;
* for LangChain, the Runnable path (``invoke``) of the adapter and of the framework's reorderer
  wrapped in a ``RunnableLambda``: the per-invoke cost every Runnable pays.

Rounds interleave the candidates; each figure is the median over rounds of the best-of-autorange
per-call CPU time of this thread (``time.thread_time``: time the process waits for a core does not
count). Setup (from the repository root)::

    pip install -r bench/requirements.txt
    python bench/adapters.py            # --k 20 --rounds 7
"""

from __future__ import annotations

import argparse
import itertools
import platform
import statistics
import time
import timeit
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import bookend_rag
from bookend_rag.corpus import load_demo_corpus

# langchain-community warns on import that it is being sunset; its reorderer is still the baseline.
warnings.filterwarnings("ignore", category=DeprecationWarning)

try:
    from haystack import Document as HaystackDocument
    from haystack.components.rankers import LostInTheMiddleRanker
    from haystack_integrations.components.rankers.bookend import BookendRanker
    from langchain_bookend import BookendReorder
    from langchain_community.document_transformers import LongContextReorder as LangChainReorder
    from langchain_core.documents import Document as LangChainDocument
    from langchain_core.runnables import RunnableLambda
    from llama_index.core.postprocessor import LongContextReorder as LlamaIndexReorder
    from llama_index.core.schema import MetadataMode, NodeWithScore, TextNode
    from llama_index.postprocessor.bookend import BookendNodePostprocessor
except ImportError as error:  # pragma: no cover - guidance for a bare checkout
    raise SystemExit(
        f"{error}\nInstall the adapters and the baselines first, from the repository root:\n"
        "    pip install -r bench/requirements.txt"
    ) from error

Call = Callable[[], object]


#: Distinct document lists each candidate cycles through: every call places new chunks, as in
#: use, so no cache keyed on the inputs (bookend's slot ranks, the lengths) hits by repetition.
DRAWS = 64

#: Lists of 1000 documents in turn: few enough that a candidate's documents stay in the CPU's
#: caches between its calls, as a retriever's just-made documents are (with 16 lists, every
#: framework's documents alive, bookend's token count, which reads each text, took twice as long
#: while LangChain's reorderer, which reads none, did not move).
DRAWS_AT_1000 = 4


def draws_for(k: int) -> int:
    """How many document lists of ``k`` to take in turn."""
    return DRAWS if k < 1000 else DRAWS_AT_1000


def corpus(k: int, draw: int = 0) -> tuple[list[str], list[float]]:
    """K texts of 30 to 130 words (deterministic; other texts and lengths for each ``draw``) and
    descending similarity-like scores."""
    words = " ".join(d["text"] for d in load_demo_corpus().documents).split()
    texts = []
    for i in range(k):
        j = i + k * draw
        n = 30 + (37 * j) % 101
        start = (97 * j + 13 * draw) % (len(words) - n)
        # The number keeps every text distinct (Haystack's ranker drops duplicate contents).
        texts.append(" ".join(words[start : start + n]) + f" ({j})")
    top = 0.9 - 0.01 * (draw % 10)
    scores = [top - 0.6 * i / max(k - 1, 1) for i in range(k)]
    return texts, scores


def rotating(calls: Sequence[Call]) -> Call:
    """One call that makes each of ``calls`` in turn (the same draw order for every candidate)."""
    turn = itertools.cycle(calls)
    return lambda: next(turn)()


def per_call(fn: Call) -> float:
    """CPU seconds per call: the best of five autoranged batches, timed by this thread's CPU
    clock, so that other processes on a busy machine do not count."""
    timer = timeit.Timer(fn, timer=time.thread_time)
    number, _ = timer.autorange()
    return min(timer.repeat(repeat=5, number=number)) / number


def measure(candidates: dict[str, Call], rounds: int) -> dict[str, float]:
    """Median per-call seconds of each candidate, the candidates interleaved within each round."""
    samples: dict[str, list[float]] = {name: [] for name in candidates}
    for _ in range(rounds):
        for name, fn in candidates.items():
            samples[name].append(per_call(fn))
    return {name: statistics.median(values) for name, values in samples.items()}


def frameworks(k: int, draws: int | None = None) -> dict[str, dict[str, Call]]:
    """Per framework, the candidates to time, each over the same ``draws`` document lists."""
    lc_reorder = LangChainReorder()
    lc_lambda = RunnableLambda(lc_reorder.transform_documents)
    lc_bookend = BookendReorder()
    lc_alternate = BookendReorder(strategy="alternate")
    lc_core = bookend_rag.Bookend(text=lambda d: d.page_content)
    li_reorder = LlamaIndexReorder()
    li_bookend = BookendNodePostprocessor()
    li_alternate = BookendNodePostprocessor(strategy="alternate")
    li_core = bookend_rag.Bookend(text=lambda n: n.node.get_content(metadata_mode=MetadataMode.LLM))
    hs_ranker = LostInTheMiddleRanker()
    hs_bookend = BookendRanker()
    hs_alternate = BookendRanker(strategy="alternate")
    hs_core = bookend_rag.Bookend(text=lambda d: d.content)

    per_draw: dict[str, dict[str, list[Call]]] = {}
    draws = draws_for(k) if draws is None else draws

    def add(framework: str, label: str, call: Call) -> None:
        per_draw.setdefault(framework, {}).setdefault(label, []).append(call)

    for draw in range(draws):
        texts, scores = corpus(k, draw)
        pairs = list(zip(texts, scores, strict=True))
        lc_docs = [LangChainDocument(t, metadata={"score": s}) for t, s in pairs]
        li_nodes = [NodeWithScore(node=TextNode(text=t), score=s) for t, s in pairs]
        hs_docs = [HaystackDocument(content=t, score=s) for t, s in pairs]
        # Default arguments bind this draw's lists (a closure would see the last draw's).
        add("LangChain", "framework", lambda d=lc_docs: lc_reorder.transform_documents(d))
        add("LangChain", "adapter", lambda d=lc_docs: lc_bookend.transform_documents(d))
        add("LangChain", "adapter invoke", lambda d=lc_docs: lc_bookend.invoke(d))
        # What any Runnable pays per invoke (callback manager, run tree): the framework's
        # reorderer wrapped in a RunnableLambda, to compare "adapter invoke" against.
        add("LangChain", "framework invoke", lambda d=lc_docs: lc_lambda.invoke(d))
        add("LangChain", "adapter alternate", lambda d=lc_docs: lc_alternate.transform_documents(d))
        add("LangChain", "core", lambda d=lc_docs, s=scores: lc_core.place(d, s))
        add("LlamaIndex", "framework", lambda n=li_nodes: li_reorder.postprocess_nodes(n))
        add("LlamaIndex", "adapter", lambda n=li_nodes: li_bookend.postprocess_nodes(n))
        add("LlamaIndex", "adapter alternate", lambda n=li_nodes: li_alternate.postprocess_nodes(n))
        add("LlamaIndex", "core", lambda n=li_nodes, s=scores: li_core.place(n, s))
        add("Haystack", "framework", lambda d=hs_docs: hs_ranker.run(documents=d))
        add("Haystack", "adapter", lambda d=hs_docs: hs_bookend.run(documents=d))
        add("Haystack", "adapter alternate", lambda d=hs_docs: hs_alternate.run(documents=d))
        add("Haystack", "core", lambda d=hs_docs, s=scores: hs_core.place(d, s))
    return {
        framework: {label: rotating(calls) for label, calls in candidates.items()}
        for framework, candidates in per_draw.items()
    }


def check_same_documents(k: int) -> None:
    """Every candidate returns the K documents it was given (a wrong fast path is no result)."""
    for name, candidates in frameworks(k).items():
        for label, fn in candidates.items():
            out: Any = fn()
            docs: Sequence[object] = out["documents"] if isinstance(out, dict) else out
            if len(docs) != k:
                raise SystemExit(f"{name} {label} returned {len(docs)} of {k} documents")


def main(argv: Sequence[str] | None = None) -> None:
    """Time every framework's candidates and print per-call times and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=20, help="documents per call (default 20)")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (default 7)")
    args = parser.parse_args(argv)
    check_same_documents(args.k)
    python = platform.python_version()
    print(f"K = {args.k}, median of {args.rounds} interleaved rounds, python {python}")
    print(f"{'framework':<11} {'candidate':<18} {'per call':>10} {'/ framework':>12} {'/ core':>8}")
    for name, candidates in frameworks(args.k).items():
        times = measure(candidates, args.rounds)
        for label, seconds in times.items():
            vs_framework = seconds / times["framework"]
            vs_core = "" if label == "framework" else f"{seconds / times['core']:.2f}x"
            print(
                f"{name:<11} {label:<18} {seconds * 1e6:>8.1f}us {vs_framework:>11.1f}x "
                f"{vs_core:>8}"
            )


if __name__ == "__main__":
    main()
