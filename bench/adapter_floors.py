"""What an adapter must read, timed part by part: the floors under issue 39 §2's adapter targets.

An adapter's own cost (``bench/adapters.py``: its call less ``reorder`` on the same texts and
scores) is mostly reading, through the framework's objects, what the documented behaviour needs:
each document's score and a check of its type. The framework's own reorderer reads none of it
(LangChain's reverses a list). Here each read is timed alone on the documents of
:func:`adapters.corpus`, beside the framework's reorderer and the adapter's whole read, with
:func:`adapters.per_call` (this thread's CPU time, the best of five autoranged batches)::

    OMP_NUM_THREADS=1 .venv/bin/python bench/adapter_floors.py --k 20
    OMP_NUM_THREADS=1 .venv/bin/python bench/adapter_floors.py --k 1000
"""

from __future__ import annotations

import argparse
import operator
import warnings
from collections.abc import Sequence
from itertools import repeat

from adapters import Call, corpus, per_call

# langchain-community warns on import that it is being sunset; its reorderer is still the baseline.
warnings.filterwarnings("ignore", category=DeprecationWarning)

from haystack import Document as HaystackDocument  # noqa: E402
from haystack.components.rankers import LostInTheMiddleRanker  # noqa: E402
from haystack_integrations.components.rankers.bookend import ranker as bookend_ranker  # noqa: E402
from langchain_bookend import BookendReorder  # noqa: E402
from langchain_community.document_transformers import LongContextReorder  # noqa: E402
from langchain_core.documents import Document as LangChainDocument  # noqa: E402

_METADATA = operator.attrgetter("metadata")
_CONTENT = operator.attrgetter("content")
_ID = operator.attrgetter("id")
_SCORE = operator.attrgetter("score")


def langchain(k: int) -> dict[str, Call]:
    """LangChain: its reorderer, the adapter's score read and each part of it."""
    texts, scores = corpus(k)
    docs = [LangChainDocument(t, metadata={"score": s}) for t, s in zip(texts, scores, strict=True)]
    metadatas = list(map(_METADATA, docs))
    reorderer = LongContextReorder()
    adapter = BookendReorder()
    return {
        "LongContextReorder.transform_documents": lambda: reorderer.transform_documents(docs),
        "adapter: every score read and checked": lambda: adapter.scores(docs),
        "  each document's metadata": lambda: list(map(_METADATA, docs)),
        "  one score key (dict.get mapped)": lambda: list(
            map(dict.get, metadatas, repeat("score"))
        ),
        "  the documents' types counted": lambda: list(map(type, docs)).count(LangChainDocument),
    }


def haystack(k: int) -> dict[str, Call]:
    """Haystack: its ranker, the adapter's input check and each read in it."""
    texts, scores = corpus(k)
    docs = [HaystackDocument(content=t, score=s) for t, s in zip(texts, scores, strict=True)]
    ranker = LostInTheMiddleRanker()
    return {
        "LostInTheMiddleRanker.run": lambda: ranker.run(documents=docs),
        "adapter: the input check (contents, ids, scores)": lambda: bookend_ranker._check_documents(
            docs
        ),
        "  contents": lambda: list(map(_CONTENT, docs)),
        "  ids": lambda: list(map(_ID, docs)),
        "  scores": lambda: list(map(_SCORE, docs)),
        "  the documents' types counted": lambda: list(map(type, docs)).count(HaystackDocument),
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Time each part and print it in microseconds per call."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=20, help="documents per call (default 20)")
    args = parser.parse_args(argv)
    print(f"K = {args.k}, per call (thread CPU time)")
    for name, parts in (("LangChain", langchain(args.k)), ("Haystack", haystack(args.k))):
        print(name)
        for label, call in parts.items():
            print(f"  {label:<52} {per_call(call) * 1e6:>9.2f} us")


if __name__ == "__main__":
    main()
