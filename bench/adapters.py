"""Adapter overhead: each bookend adapter against its framework's own reorderer, in one process.

For K documents (default 20) of unequal length with scores, new ones on every call (64 lists in
turn, 4 of 1000 documents: :func:`draws_for`; the same for every candidate), the per-call time of

* the framework's reorderer: LangChain ``LongContextReorder`` (langchain-community), LlamaIndex
  ``LongContextReorder`` and Haystack ``LostInTheMiddleRanker``;
* the bookend adapter with the default ``strategy="bookend"`` (the optimal order for the model);
* the same adapter with ``strategy="alternate"`` (the framework's pattern, through bookend);
* the bare core, ``bookend_rag.Bookend().place`` on the same objects: adapter / core is what the
  adapter itself costs; and ``bookend_rag.reorder`` on the same texts and scores (strings);
* a component of that kind that does nothing (LangChain: a ``RunnableLambda`` returning its input,
  through ``invoke``; LlamaIndex: a postprocessor returning its nodes, through
  ``postprocess_nodes``): what the framework spends around any such component;
* for LangChain, the Runnable path (``invoke``) of the adapter and of the framework's reorderer
  wrapped in a ``RunnableLambda``: the per-invoke cost every Runnable pays;
* the adapter with the retrieval recorder on (``recorder=``, a file in a temporary folder): its
  cost on the caller's path (the writer thread's serialisation is timed apart, below);
* the adapter and the core on the same lists with one score missing (``missing_scores``'
  default): the note each call sends, through ``warnings`` (Python's default filter: shown once)
  and the ``bookend_rag`` logger (no handler configured).

A second table gives each adapter's own cost (:func:`own_costs`, issue 39 §2): its call less the
framework's machinery (what the framework spends around its own reorderer in the same position)
and less ``reorder`` on the same texts and scores, beside that reorderer's own cost.

A third table times the one path out of the core alone (:func:`bookend_rag.outlet.deliver`),
with no note, with one note and with the recorder, and the writer thread's work per record.

Rounds interleave the candidates; each figure is the median over rounds of the best-of-autorange
per-call CPU time of this thread (``time.thread_time``: time the process waits for a core does not
count, nor a wait for the interpreter lock); ``--wall`` times by the wall clock instead, where a
call's wait for the lock while a recorder's writer thread works does count. Setup (from the
repository root)::

    pip install -r bench/requirements.txt
    python bench/adapters.py            # --k 20 --rounds 7
"""

from __future__ import annotations

import argparse
import itertools
import platform
import statistics
import tempfile
import time
import timeit
import warnings
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import bookend_rag
from bookend_rag.corpus import load_demo_corpus
from bookend_rag.outlet import deliver
from bookend_rag.recorder import RecorderWarning, Retrieval, RetrievalRecorder

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
    from llama_index.core.postprocessor.types import BaseNodePostprocessor
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


def per_call(fn: Call, clock: Callable[[], float] = time.thread_time) -> float:
    """Seconds per call: the best of five autoranged batches, timed by ``clock``: by default this
    thread's CPU clock, so that other processes on a busy machine do not count (nor does a wait
    for the interpreter lock held by another thread: ``--wall`` counts it)."""
    timer = timeit.Timer(fn, timer=clock)
    number, _ = timer.autorange()
    return min(timer.repeat(repeat=5, number=number)) / number


def measure(
    candidates: dict[str, Call], rounds: int, clock: Callable[[], float] = time.thread_time
) -> dict[str, float]:
    """Median per-call seconds of each candidate, the candidates interleaved within each round."""
    samples: dict[str, list[float]] = {name: [] for name in candidates}
    for _ in range(rounds):
        for name, fn in candidates.items():
            samples[name].append(per_call(fn, clock))
    return {name: statistics.median(values) for name, values in samples.items()}


#: Where the recorders of a run write (bounded: 8 MiB and one backup per file).
RECORDS = Path(tempfile.mkdtemp(prefix="bookend-bench-"))


#: Every recorder a run made, so that the run can say whether each kept every call.
RECORDERS: list[RetrievalRecorder] = []


def recorder(name: str, k: int) -> RetrievalRecorder:
    """A recorder writing to ``name`` in :data:`RECORDS`. Its buffer is large: a timing loop
    calls faster than any retriever, faster than the writer thread writes, and a call that finds
    the recorder full is dropped (cheaper than a kept one, so it would flatter the figure; the
    run prints what each recorder dropped). It shrinks as ``k`` grows, so that the calls waiting
    for the writer hold about as many documents at any K: a buffer of 2**14 at K = 1000 (up to
    262,144 waiting calls) took 18.6 GB and the run was killed."""
    buffer = max(256, 2**14 * 20 // k)
    made = RetrievalRecorder(RECORDS / f"{name}.jsonl", max_bytes=2**23, backups=1, buffer=buffer)
    RECORDERS.append(made)
    return made


def recorders_dropped() -> list[str]:
    """Each recorder's calls not recorded during the run (its own warning), after a flush."""
    lines = []
    for made in RECORDERS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            made.flush()
        dropped = [str(w.message) for w in caught if issubclass(w.category, RecorderWarning)]
        lines.append(f"{made.path.name}: " + ("; ".join(dropped) or "every call recorded"))
    return lines


def with_a_gap(scores: list[float]) -> list[float | None]:
    """``scores`` with the second one missing: every call then has a note to send."""
    return [None if i == 1 else s for i, s in enumerate(scores)]


def _unchanged(documents: list[Any]) -> list[Any]:
    return documents


class _Unchanged(BaseNodePostprocessor):
    """A LlamaIndex postprocessor that returns the nodes as they came: what LlamaIndex spends
    around any postprocessor (the instrumentation span its mixin wraps every
    ``_postprocess_nodes`` in)."""

    def _postprocess_nodes(self, nodes: list[Any], query_bundle: Any = None) -> list[Any]:
        return nodes


def frameworks(k: int, draws: int | None = None) -> dict[str, dict[str, Call]]:
    """Per framework, the candidates to time, each over the same ``draws`` document lists."""
    lc_reorder = LangChainReorder()
    lc_lambda = RunnableLambda(lc_reorder.transform_documents)
    lc_bookend = BookendReorder()
    lc_recorded = BookendReorder(recorder=recorder("langchain", k))
    lc_alternate = BookendReorder(strategy="alternate")
    lc_core = bookend_rag.Bookend(text=lambda d: d.page_content)
    lc_noop = RunnableLambda(_unchanged)
    li_reorder = LlamaIndexReorder()
    li_noop = _Unchanged()
    li_bookend = BookendNodePostprocessor()
    li_recorded = BookendNodePostprocessor(recorder=recorder("llama_index", k))
    li_alternate = BookendNodePostprocessor(strategy="alternate")
    li_core = bookend_rag.Bookend(text=lambda n: n.node.get_content(metadata_mode=MetadataMode.LLM))
    hs_ranker = LostInTheMiddleRanker()
    hs_bookend = BookendRanker()
    hs_recorded = BookendRanker(recorder=recorder("haystack", k))
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
        gap = with_a_gap(scores)
        gapped = list(zip(texts, gap, strict=True))
        lc_gap = [LangChainDocument(t, metadata={"score": s}) for t, s in gapped]
        li_gap = [NodeWithScore(node=TextNode(text=t), score=s) for t, s in gapped]
        hs_gap = [HaystackDocument(content=t, score=s) for t, s in gapped]
        # Default arguments bind this draw's lists (a closure would see the last draw's).
        for framework in ("LangChain", "LlamaIndex", "Haystack"):
            add(framework, "reorder", lambda t=texts, s=scores: bookend_rag.reorder(t, s))
        add("LangChain", "framework", lambda d=lc_docs: lc_reorder.transform_documents(d))
        add("LangChain", "adapter", lambda d=lc_docs: lc_bookend.transform_documents(d))
        add("LangChain", "adapter invoke", lambda d=lc_docs: lc_bookend.invoke(d))
        # What any Runnable pays per invoke (callback manager, run tree): the framework's
        # reorderer wrapped in a RunnableLambda, to compare "adapter invoke" against.
        add("LangChain", "framework invoke", lambda d=lc_docs: lc_lambda.invoke(d))
        add("LangChain", "no-op invoke", lambda d=lc_docs: lc_noop.invoke(d))
        add("LangChain", "adapter alternate", lambda d=lc_docs: lc_alternate.transform_documents(d))
        add("LangChain", "core", lambda d=lc_docs, s=scores: lc_core.place(d, s))
        add("LangChain", "adapter recorder", lambda d=lc_docs: lc_recorded.transform_documents(d))
        add("LangChain", "adapter, a note", lambda d=lc_gap: lc_bookend.transform_documents(d))
        add("LangChain", "core, a note", lambda d=lc_gap, s=gap: lc_core.place(d, s))
        add("LlamaIndex", "framework", lambda n=li_nodes: li_reorder.postprocess_nodes(n))
        # A postprocessor that does nothing: what LlamaIndex spends around any (its span).
        add("LlamaIndex", "no-op", lambda n=li_nodes: li_noop.postprocess_nodes(n))
        add("LlamaIndex", "adapter", lambda n=li_nodes: li_bookend.postprocess_nodes(n))
        add("LlamaIndex", "adapter alternate", lambda n=li_nodes: li_alternate.postprocess_nodes(n))
        add("LlamaIndex", "core", lambda n=li_nodes, s=scores: li_core.place(n, s))
        add("LlamaIndex", "adapter recorder", lambda n=li_nodes: li_recorded.postprocess_nodes(n))
        add("LlamaIndex", "adapter, a note", lambda n=li_gap: li_bookend.postprocess_nodes(n))
        add("LlamaIndex", "core, a note", lambda n=li_gap, s=gap: li_core.place(n, s))
        add("Haystack", "framework", lambda d=hs_docs: hs_ranker.run(documents=d))
        add("Haystack", "adapter", lambda d=hs_docs: hs_bookend.run(documents=d))
        add("Haystack", "adapter alternate", lambda d=hs_docs: hs_alternate.run(documents=d))
        add("Haystack", "core", lambda d=hs_docs, s=scores: hs_core.place(d, s))
        add("Haystack", "adapter recorder", lambda d=hs_docs: hs_recorded.run(documents=d))
        add("Haystack", "adapter, a note", lambda d=hs_gap: hs_bookend.run(documents=d))
        add("Haystack", "core, a note", lambda d=hs_gap, s=gap: hs_core.place(d, s))
    return {
        framework: {label: rotating(calls) for label, calls in candidates.items()}
        for framework, candidates in per_draw.items()
    }


def check_same_documents(k: int) -> None:
    """Every candidate returns the K documents it was given (a wrong fast path is no result)."""
    for name, candidates in frameworks(k).items():
        for label, fn in candidates.items():
            out: Any = fn()
            docs: Sequence[object] = (
                out["documents"] if isinstance(out, dict) else getattr(out, "items", out)
            )
            if len(docs) != k:
                raise SystemExit(f"{name} {label} returned {len(docs)} of {k} documents")


#: Per framework, each adapter call, the component of that kind that does nothing (``None``:
#: the call is a plain method, with no machinery around it) and the framework's reorderer in the
#: same position.
OWN_COST: dict[str, tuple[tuple[str, str | None, str], ...]] = {
    "LangChain": (
        ("adapter", None, "framework"),
        ("adapter invoke", "no-op invoke", "framework invoke"),
    ),
    "LlamaIndex": (("adapter", "no-op", "framework"),),
    "Haystack": (("adapter", None, "framework"),),
}


def own_costs(framework: str, times: dict[str, float]) -> list[tuple[str, float, float, float]]:
    """Per adapter call of ``framework``: its own cost, the framework's machinery and the
    reorderer's own cost, in seconds. The machinery is what the framework spends around any
    component of that kind (a component that does nothing, in the same position); the
    reorderer's own cost is its call less that machinery, and the adapter's own cost what is
    left of its call after the machinery and :func:`bookend_rag.reorder` on the same texts and
    scores (issue 39's target: at most the reorderer's own cost)."""
    rows = []
    for adapter, noop, reorderer in OWN_COST[framework]:
        machinery = 0.0 if noop is None else times[noop]
        own = times[adapter] - machinery - times["reorder"]
        rows.append((adapter, own, machinery, times[reorderer] - machinery))
    return rows


def outlet(k: int, draws: int = DRAWS) -> dict[str, Call]:
    """The one path out of the core alone (:func:`bookend_rag.outlet.deliver`), on placements of
    ``k`` strings: without a note, with one, with the recorder; and the writer thread's work for
    one record (:meth:`Retrieval.record` and its JSON line), which leaves the caller's path."""
    placer: bookend_rag.Bookend[str] = bookend_rag.Bookend()
    kept = recorder("outlet", k)
    plain: list[Call] = []
    noted: list[Call] = []
    recorded: list[Call] = []
    written: list[Call] = []
    for draw in range(draws):
        texts, scores = corpus(k, draw)
        placement = placer.place(texts, scores)
        gap = with_a_gap(scores)
        with_note = placer.place(texts, gap)
        common = {"items": texts, "source": "reorder"}
        plain.append(partial(deliver, placement, placer, None, scores=scores, **common))
        noted.append(partial(deliver, with_note, placer, None, scores=gap, **common))
        recorded.append(partial(deliver, placement, placer, kept, scores=scores, **common))
        call = Retrieval(texts, scores, placer.config.model, placement.order, "reorder")
        written.append(lambda c=call: c.record().to_json_line())
    return {  # every deliver call as the core's reorder makes it
        "deliver, no note": rotating(plain),
        "deliver, a note": rotating(noted),
        "deliver, recorder": rotating(recorded),
        "writer, a record": rotating(written),
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Time every framework's candidates and print per-call times and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=20, help="documents per call (default 20)")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (default 7)")
    parser.add_argument(
        "--wall",
        action="store_true",
        help="time by the wall clock, not this thread's CPU time: a call's wait for the "
        "interpreter lock (held by a recorder's writer thread) counts",
    )
    args = parser.parse_args(argv)
    clock = time.perf_counter if args.wall else time.thread_time
    check_same_documents(args.k)
    python = platform.python_version()
    timed = "wall clock" if args.wall else "thread CPU time"
    print(f"K = {args.k}, median of {args.rounds} interleaved rounds, {timed}, python {python}")
    print(f"{'framework':<11} {'candidate':<18} {'per call':>10} {'/ framework':>12} {'/ core':>8}")
    summary: dict[str, list[tuple[str, float, float, float]]] = {}
    for name, candidates in frameworks(args.k).items():
        times = measure(candidates, args.rounds, clock)
        for label, seconds in times.items():
            vs_framework = seconds / times["framework"]
            vs_core = "" if label == "framework" else f"{seconds / times['core']:.2f}x"
            print(
                f"{name:<11} {label:<18} {seconds * 1e6:>8.1f}us {vs_framework:>11.1f}x "
                f"{vs_core:>8}"
            )
        summary[name] = own_costs(name, times)
    print(
        f"\n{'own cost, beyond reorder() and the framework':<44} {'own':>9} {'machinery':>10} "
        f"{'reorderer':>10} {'own / reorderer':>16}"
    )
    for name, rows in summary.items():
        for adapter, own, machinery, reorderer in rows:
            print(
                f"{name + ' ' + adapter:<44} {own * 1e6:>7.1f}us {machinery * 1e6:>8.1f}us "
                f"{reorderer * 1e6:>8.1f}us {own / reorderer:>15.2f}x"
            )
    times = measure(outlet(args.k), args.rounds, clock)
    print(f"\n{'the path out of the core':<30} {'per call':>10} {'/ no note':>10}")
    for label, seconds in times.items():
        ratio = seconds / times["deliver, no note"]
        print(f"{label:<30} {seconds * 1e6:>8.2f}us {ratio:>9.1f}x")
    print("\nthe recorders (a full one drops a call, which is cheaper than keeping it):")
    for line in recorders_dropped():
        print(f"  {line}")


if __name__ == "__main__":
    main()
