"""The built documentation site, opened in a real browser (headless Chromium): every page renders
(a heading and text), every image on it loads, no code block cuts a line off at 1280 px, and no
link inside the site is broken (the page answers 200 and the anchor a link names exists on it).

The site is the one ``BOOKEND_SITE`` names (``make docs`` builds it first), else it is built here
(``mkdocs build --strict``). Chromium is Debian's package (``make browser`` installs it as root);
where there is none the test is skipped and says so.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urlparse

import pytest

import mkdocs_hooks as hooks

ROOT = Path(__file__).resolve().parents[2]
HARNESS = "/__site_check__.html"
RESULT = "/__site_check__.json"

#: Pages that show the figures drawn from the reports, and how many each shows at least.
FIGURES = {"/": 1, "/does-it-help/": 1, "/concepts/theory/": 1, "/guides/tune/": 1}

# Loads each page in a same-origin frame, waits for its images, and posts what it found as JSON
# back to the test's server.
SCRIPT = """
const pages = %s;
async function look(url) {
  const frame = document.createElement("iframe");
  frame.style.width = "1280px";
  frame.style.height = "900px";
  await new Promise((done) => {
    frame.onload = done;
    frame.src = url;
    document.body.append(frame);
  });
  const doc = frame.contentDocument;
  const images = [...doc.querySelectorAll("article img")];
  await Promise.all(images.map((i) => i.complete ? null :
    new Promise((done) => { i.onload = done; i.onerror = done; })));
  const article = doc.querySelector("article");
  const out = {
    status: doc.title,
    h1: (doc.querySelector("article h1") || {}).textContent || "",
    text: article ? article.innerText : "",
    images: images.map((i) => [i.getAttribute("src"), i.complete && i.naturalWidth > 0]),
    links: [...doc.querySelectorAll("a[href]")].map((a) => a.href)
      .filter((h) => h.startsWith(location.origin)),
    ids: [...doc.querySelectorAll("[id]")].map((e) => e.id),
    // Code blocks wider than their box at this width: a line cut off (or only behind a scroll).
    cut: [...doc.querySelectorAll("article pre > code")]
      .filter((c) => c.scrollWidth > c.clientWidth + 1)
      .map((c) => c.textContent.split("\\n").reduce((a, b) => (b.length > a.length ? b : a))),
  };
  frame.remove();
  return out;
}
(async () => {
  const found = {};
  for (const page of pages) found[page] = await look(page);
  const targets = [...new Set(Object.values(found).flatMap((f) => f.links)
    .map((h) => h.split("#")[0]))];
  const status = {};
  for (const t of targets) {
    try { status[t] = (await fetch(t)).status; } catch (e) { status[t] = String(e); }
  }
  return {found, status};
})().catch((e) => ({error: String(e)})).then((result) =>
  fetch("%s", {method: "POST", body: JSON.stringify(result)}));
"""


def _browser() -> str | None:
    return next(
        (p for n in ("chromium", "chromium-browser", "google-chrome") if (p := shutil.which(n))),
        None,
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if os.environ.get("BOOKEND_SITE"):
        built = Path(os.environ["BOOKEND_SITE"]).resolve()
        assert (built / "index.html").is_file(), f"BOOKEND_SITE={built} holds no built site"
        return built
    out = tmp_path_factory.mktemp("site")
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(out)],
        cwd=ROOT,
        check=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    return out


def _pages(site: Path) -> list[str]:
    """Every page of the site as a server path (``/`` for the home page)."""
    return sorted(
        "/"
        + p.parent.relative_to(site).as_posix().removeprefix(".")
        + ("/" if p.parent != site else "")
        for p in site.rglob("index.html")
    )


class Checked:
    """What the harness posted back, and when it did."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.body = b""


@pytest.fixture(scope="module")
def server(site: Path) -> Iterator[tuple[str, Checked]]:
    pages = _pages(site)
    checked = Checked()

    class Handler(SimpleHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path != HARNESS:
                return super().do_GET()
            script = SCRIPT % (json.dumps(pages), RESULT)
            self._answer(200, f"<!doctype html><body><script>{script}</script></body>".encode())
            return None

        def do_POST(self) -> None:
            if self.path != RESULT:
                return self.send_error(404)
            checked.body = self.rfile.read(int(self.headers["Content-Length"]))
            checked.done.set()
            return self._answer(204, b"")

        def _answer(self, code: int, body: bytes) -> None:
            self.send_response(code)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def list_directory(self, path: str | os.PathLike[str]) -> None:
            # A folder without index.html is a missing page, not a listing.
            self.send_error(404)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(site)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", checked
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def seen(server: tuple[str, Checked], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    browser = _browser()
    if browser is None:
        pytest.skip("no Chromium on this machine (`make browser` installs Debian's, as root)")
    url, checked = server
    folder = tmp_path_factory.mktemp("chromium")
    # Offline and quiet: no first-run work and no background requests. The browser runs until
    # the harness has posted its findings, in real time (no virtual time, which can stall).
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--disable-extensions", f"--user-data-dir={folder / 'profile'}"]  # fmt: skip
    with (folder / "stderr.txt").open("w") as stderr:
        browser_run = subprocess.Popen(
            [browser, *flags, url + HARNESS],
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,  # its own process group: it and its helpers end together
        )
        try:
            finished = checked.done.wait(timeout=600)
        finally:
            os.killpg(browser_run.pid, signal.SIGTERM)
            browser_run.wait(timeout=60)
    log = (folder / "stderr.txt").read_text(errors="replace")[-2000:]
    assert finished, f"the browser did not finish the check in 10 minutes: {log}"
    result: dict[str, Any] = json.loads(checked.body)
    assert "error" not in result, f"the check failed in the browser: {result.get('error')}"
    return result


def test_every_page_renders(seen: dict[str, Any], site: Path) -> None:
    found = seen["found"]
    assert set(found) == set(_pages(site))
    assert len(found) > 20
    blank = [page for page, f in found.items() if not f["h1"].strip() or len(f["text"]) < 200]
    assert blank == []
    unfilled = [page for page, f in found.items() if hooks.PLACEHOLDER.search(f["text"])]
    assert unfilled == []


def test_every_image_loads_and_the_figures_are_shown(seen: dict[str, Any]) -> None:
    found = seen["found"]
    broken = [(page, src) for page, f in found.items() for src, ok in f["images"] if not ok]
    assert broken == []
    for page, least in FIGURES.items():
        figures = [src for src, _ in found[page]["images"] if "figures/" in src]
        assert len(figures) >= least, (page, found[page]["images"])


def test_no_code_line_is_cut_off_at_1280_px(seen: dict[str, Any]) -> None:
    cut = {page: f["cut"] for page, f in seen["found"].items() if f["cut"]}
    assert cut == {}, "code blocks wider than the page at 1280 px (longest line of each shown)"


def test_no_link_is_broken(seen: dict[str, Any]) -> None:
    status = {urlparse(u).path: s for u, s in seen["status"].items()}
    assert status, "no link inside the site was followed"
    broken = {path: s for path, s in status.items() if s != 200}
    assert broken == {}
    ids = {page: set(f["ids"]) for page, f in seen["found"].items()}
    missing = []
    for page, f in seen["found"].items():
        for link in f["links"]:
            target, anchor = urldefrag(link)
            path = urlparse(target).path
            if anchor and path in ids and anchor not in ids[path]:
                missing.append((page, link))
    assert missing == []
