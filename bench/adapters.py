"""Adapter overhead: each bookend adapter against its framework's own reorderer, in one process.

For K documents (default 20) of unequal length with scores, the per-call time of

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


def corpus(k: int) -> tuple[list[str], list[float]]:
    """K texts of 30 to 130 words (deterministic) and descending similarity-like scores."""
    words = " ".join(d["text"] for d in load_demo_corpus().documents).split()
    texts = []
    for i in range(k):
        n = 30 + (37 * i) % 101
        start = (97 * i) % (len(words) - n)
        texts.append(" ".join(words[start : start + n]))
    scores = [0.9 - 0.6 * i / max(k - 1, 1) for i in range(k)]
    return texts, scores


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


def frameworks(k: int) -> dict[str, dict[str, Call]]:
    """Per framework, the candidates to time, all over the same documents."""
    texts, scores = corpus(k)

    pairs = list(zip(texts, scores, strict=True))
    lc_docs = [LangChainDocument(t, metadata={"score": s}) for t, s in pairs]
    lc_reorder = LangChainReorder()
    lc_lambda = RunnableLambda(lc_reorder.transform_documents)
    lc_bookend = BookendReorder()
    lc_alternate = BookendReorder(strategy="alternate")
    lc_core = bookend_rag.Bookend(text=lambda d: d.page_content)
    langchain: dict[str, Call] = {
        "framework": lambda: lc_reorder.transform_documents(lc_docs),
        "adapter": lambda: lc_bookend.transform_documents(lc_docs),
        "adapter invoke": lambda: lc_bookend.invoke(lc_docs),
        # What any Runnable pays per invoke (callback manager, run tree): the framework's
        # reorderer wrapped in a RunnableLambda, to compare "adapter invoke" against.
        "framework invoke": lambda: lc_lambda.invoke(lc_docs),
        "adapter alternate": lambda: lc_alternate.transform_documents(lc_docs),
        "core": lambda: lc_core.place(lc_docs, scores),
    }

    li_nodes = [NodeWithScore(node=TextNode(text=t), score=s) for t, s in pairs]
    li_reorder = LlamaIndexReorder()
    li_bookend = BookendNodePostprocessor()
    li_alternate = BookendNodePostprocessor(strategy="alternate")
    li_core = bookend_rag.Bookend(text=lambda n: n.node.get_content(metadata_mode=MetadataMode.LLM))
    llama_index: dict[str, Call] = {
        "framework": lambda: li_reorder.postprocess_nodes(li_nodes),
        "adapter": lambda: li_bookend.postprocess_nodes(li_nodes),
        "adapter alternate": lambda: li_alternate.postprocess_nodes(li_nodes),
        "core": lambda: li_core.place(li_nodes, scores),
    }

    hs_docs = [HaystackDocument(content=t, score=s) for t, s in pairs]
    hs_ranker = LostInTheMiddleRanker()
    hs_bookend = BookendRanker()
    hs_alternate = BookendRanker(strategy="alternate")
    hs_core = bookend_rag.Bookend(text=lambda d: d.content)
    haystack: dict[str, Call] = {
        "framework": lambda: hs_ranker.run(documents=hs_docs),
        "adapter": lambda: hs_bookend.run(documents=hs_docs),
        "adapter alternate": lambda: hs_alternate.run(documents=hs_docs),
        "core": lambda: hs_core.place(hs_docs, scores),
    }
    return {"LangChain": langchain, "LlamaIndex": llama_index, "Haystack": haystack}


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
