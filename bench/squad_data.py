"""Convert a SQuAD 2.0-format file into the ``squad`` suite's bundled data (``SQUAD-README.md``).

One JSON object a paragraph, in file order: the article's title (underscores as spaces, as
Wikipedia shows it), the paragraph text, and its answerable questions (``is_impossible`` false),
each with its id and its distinct answer texts in the order the annotators gave them. Unanswerable
questions are dropped, and so is a paragraph left with none. The gzip header carries no file name
and no time, so the same source gives the same bytes.

Usage (from the repository root)::

    .venv/bin/python bench/squad_data.py SQUAD_JSON \
        lab/src/bookend_rag_lab/data/squad2-dev-paragraphs.jsonl.gz
"""

from __future__ import annotations

import argparse
import gzip
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def paragraphs(squad: dict[str, Any]) -> list[dict[str, Any]]:
    """The kept paragraphs of a SQuAD 2.0-format object, as the suite reads them."""
    out = []
    for article in squad["data"]:
        title = article["title"].replace("_", " ")
        for paragraph in article["paragraphs"]:
            questions = [
                {
                    "id": qa["id"],
                    "question": qa["question"],
                    "answers": list(dict.fromkeys(a["text"] for a in qa["answers"])),
                }
                for qa in paragraph["qas"]
                if not qa.get("is_impossible", False) and qa["answers"]
            ]
            if questions:
                out.append({"title": title, "text": paragraph["context"], "questions": questions})
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="a SQuAD 2.0-format JSON file")
    parser.add_argument("out", type=Path, help="the gzipped JSON Lines file to write")
    args = parser.parse_args(argv)
    rows = paragraphs(json.loads(args.source.read_text(encoding="utf-8")))
    lines = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    with (
        args.out.open("wb") as raw,
        gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as z,
    ):
        z.write(lines.encode("utf-8"))
    questions = sum(len(row["questions"]) for row in rows)
    print(f"{len(rows)} paragraphs, {questions} questions -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
