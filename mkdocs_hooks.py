"""mkdocs hooks: the documentation pages that other files of the repository already hold.

* ``results/*.md``: one page per ``##`` section of ``bench/RESULTS.md``, which stays the single
  record the benchmarks and the code refer to (no copy to keep in step);
* ``guides/langchain.md``, ``guides/llama-index.md``, ``guides/haystack.md``: the adapters'
  READMEs, which their package pages on the index show too.

Links that point outside the site (a benchmark's JSON, a report) become the repository path in
code type; images are copied in. Plain Python, offline: nothing is fetched.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent
RESULTS = ROOT / "bench" / "RESULTS.md"
GUIDES = {
    "guides/langchain.md": ("LangChain", ROOT / "integrations" / "langchain" / "README.md"),
    "guides/llama-index.md": ("LlamaIndex", ROOT / "integrations" / "llama_index" / "README.md"),
    "guides/haystack.md": ("Haystack", ROOT / "integrations" / "haystack" / "README.md"),
}
_LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)")
_IMAGE_SUFFIXES = (".png", ".svg", ".jpg")


def results_sections() -> list[tuple[str, str, str]]:
    """``(slug, title, markdown)`` per ``##`` section of ``bench/RESULTS.md``, the preface first
    (slug ``index``)."""
    text = RESULTS.read_text(encoding="utf-8")
    parts = re.split(r"^## ", text, flags=re.M)
    preface = parts[0].replace("# Benchmark results", "# Results", 1)
    out = [("index", "Overview", preface)]
    for part in parts[1:]:
        title, _, body = part.partition("\n")
        name = re.sub(r"\s*\(.*$", "", title).replace("`", "").strip()
        slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
        # Each page's headings move up a level: the section is the page.
        body = re.sub(r"^#(#+) ", r"\1 ", body, flags=re.M)
        out.append((slug, name, f"# {title}\n{body}"))
    return out


def _rewrite(markdown: str, base: Path, images: dict[str, Path], page_dir: str) -> str:
    """Links relative to ``base`` that leave the site become repository paths; images are kept
    (recorded in ``images`` under the page's folder)."""

    def replace(match: re.Match[str]) -> str:
        bang, text, target = match.groups()
        if re.match(r"[a-z]+:|#", target):
            return match.group(0)
        path = (base / target.split("#")[0]).resolve()
        if bang and path.suffix in _IMAGE_SUFFIXES and path.is_file():
            images[f"{page_dir}/{target}"] = path
            return match.group(0)
        if path == ROOT / "README.md":
            return f"[{text}](../index.md)"
        where = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else target
        return f"{text} (`{where}`)" if text.strip("`") != where else f"`{where}`"

    return _LINK.sub(replace, markdown)


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Fill the nav's "Results" entry with a page per section of ``bench/RESULTS.md``."""
    pages = [{title: f"results/{slug}.md"} for slug, title, _ in results_sections()]
    for entry in config.nav or []:
        if isinstance(entry, dict) and "Results" in entry:
            entry["Results"] = pages
    return config


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the generated pages (and the images they show)."""
    images: dict[str, Path] = {}
    for slug, _, markdown in results_sections():
        content = _rewrite(markdown, RESULTS.parent, images, "results")
        files.append(File.generated(config, f"results/{slug}.md", content=content))
    for uri, (_, readme) in GUIDES.items():
        content = _rewrite(readme.read_text(encoding="utf-8"), readme.parent, images, "guides")
        files.append(File.generated(config, uri, content=content))
    for uri, path in images.items():
        files.append(File.generated(config, uri, abs_src_path=str(path)))
    return files


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """Pages are used as they are."""
    return markdown
