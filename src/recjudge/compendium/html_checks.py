"""Checks of a built book's HTML: ``index.html`` exists, no static file is an unrendered Jinja template, no page or
stylesheet fetches anything from another host (the book must work offline), and no page shows a folder of the
machine that built it or a warning printed into it (``machine_traces``; publishing checks the published chapter
sources the same way), and no page's text shows a missing number as Python prints it, "nan" (``missing_numbers``:
an undefined statistic is said in words, a number nobody measured is left out).

:func:`check_built_book` runs them all on a build (``recjudge book``, a variant's and a preview's book alike).
"""

from __future__ import annotations

import html.parser
import re
import sys
from pathlib import Path
from typing import Iterable

from recjudge.compendium.toc import BookError

#: Where ``jupyter-book build`` writes the committed book's site.
HTML_DIR = Path("_build") / "html"

# Elements and attributes through which a page makes the browser fetch something.
_FETCHING_ATTRIBUTES = {
    "script": ("src",), "link": ("href",), "img": ("src", "srcset"), "iframe": ("src",), "source": ("src", "srcset"),
    "audio": ("src",), "video": ("src", "poster"), "embed": ("src",), "object": ("data",), "track": ("src",),
    "input": ("src",),
}
_EXTERNAL = re.compile(r"^\s*(?:[a-z][a-z0-9+.-]*:)?//", re.IGNORECASE)
_URL_IN_CODE = re.compile(r"(?:https?:)?//[A-Za-z0-9.-]+\.[A-Za-z]{2,}[^\s\"'<>)]*")
_CSS_EXTERNAL = re.compile(r"(?:@import\s+(?:url\()?|url\()\s*[\"']?((?:https?:)?//[^\"')\s]+)", re.IGNORECASE)


class _FetchCollector(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._code_tag: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value and name in _FETCHING_ATTRIBUTES.get(tag, ()):
                candidates = [part.split()[0] for part in value.split(",") if part.strip()] \
                    if name == "srcset" else [value]
                self.found += [f"<{tag} {name}={url.strip()}>" for url in candidates if _EXTERNAL.match(url)]
            if name == "style" and value:
                self.found += [f"<{tag} style=url({url})>" for url in _CSS_EXTERNAL.findall(value)]
        if tag in ("script", "style"):
            self._code_tag = tag

    def handle_endtag(self, tag: str) -> None:
        if tag == self._code_tag:
            self._code_tag = None

    def handle_data(self, data: str) -> None:
        # A URL inside an inline script or style block is how loaders (require.js, MathJax configuration, web fonts)
        # reach other hosts; plain links in the text (<a href>) are not fetched and are allowed.
        if self._code_tag:
            self.found += [f"inline <{self._code_tag}>: {url}" for url in _URL_IN_CODE.findall(data)]


def external_resource_urls(html_dir: Path) -> list[str]:
    """Every reference by which a built page or stylesheet would fetch from another host, as ``"file: what"``
    strings (empty = the book is self-contained). Hyperlinks (``<a href>``) are not fetches and are not reported."""
    html_dir = Path(html_dir)
    problems: list[str] = []
    for page in sorted(html_dir.rglob("*.html")):
        collector = _FetchCollector()
        collector.feed(page.read_text(encoding="utf-8", errors="replace"))
        problems += [f"{page.relative_to(html_dir)}: {item}" for item in collector.found]
    for sheet in sorted(html_dir.rglob("*.css")):
        text = sheet.read_text(encoding="utf-8", errors="replace")
        problems += [f"{sheet.relative_to(html_dir)}: url({url})" for url in _CSS_EXTERNAL.findall(text)]
    return problems



#: Jinja syntax that a published file must not hold: a template that was copied, not rendered.
_JINJA = re.compile(r"\{\{.*?\}\}|\{%.*?%\}", re.DOTALL)


def template_sources(html_dir: Path) -> list[Path]:
    """Files under ``_static/`` of a built site that are Jinja templates, not pages: the themes ship the macros
    their layouts import (``webpack-macros.html``, ``sbt-webpack-macros.html``, with ``{{ pathto(...) }}``) in their
    static folders, and Sphinx copies a static file as it is (only a ``*_t`` file is rendered)."""
    static = Path(html_dir) / "_static"
    return sorted(path for path in static.rglob("*.html") if _JINJA.search(path.read_text(encoding="utf-8",
                                                                                             errors="replace")))


#: A warning as Python prints it (``warnings.formatwarning``): "<file>:<line>: <Category>: <message>".
_PRINTED_WARNING = re.compile(r":\d+: (\w*Warning): ([^\n<\\\"]*)")


def machine_folders(root: Path) -> list[str]:
    """The folders of the machine that a published page must not name: the project's, the Python environment's and
    the home folder (each as given and resolved, longest first)."""
    folders = {str(Path(root)), str(Path(root).resolve()), sys.prefix, str(Path(sys.prefix).resolve()),
               str(Path.home())}
    return sorted((folder for folder in folders if len(folder) > 1), key=len, reverse=True)


def machine_traces(files: Iterable[Path], base: Path, folders: Iterable[str]) -> list[str]:
    """What ``files`` (pages, or published chapter sources) show of the machine that built them, one
    ``"file: what"`` line each: a path inside one of ``folders`` (``machine_folders``), or a warning printed into
    the page (a chapter's kernel keeps its warnings off the page: ``compendium.kernels``)."""
    folders = list(folders)
    found = []
    for path in sorted(files):
        text = Path(path).read_text(encoding="utf-8", errors="replace")
        name = Path(path).relative_to(base).as_posix()
        found += [f"{name}: a folder of this machine ({folder})" for folder in folders if f"{folder}/" in text]
        found += [f"{name}: a warning printed into it ({category}: {message.strip()[:120]})"
                  for category, message in _PRINTED_WARNING.findall(text)]
    return found


def name_as_shown(html_dir: Path, name: str, prefix_length: int = 12) -> tuple[list[str], list[str]]:
    """Where a built book shows ``name`` (a reader's judge's label): the pages whose visible text holds it as written,
    and the pages whose text holds its first ``prefix_length`` characters but not the whole name (a name a page
    mangled: escaped, cut or read as markup). Both lists hold paths relative to ``html_dir``."""
    from bs4 import BeautifulSoup

    showing, mangled = [], []
    for page in sorted(Path(html_dir).rglob("*.html")):
        text = " ".join(BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser").get_text(" ").split())
        relative = str(page.relative_to(html_dir))
        if name in text:
            showing.append(relative)
        elif name[:prefix_length] in text:
            mangled.append(relative)
    return showing, mangled


#: A missing number as Python formats it ("nan", "nan%", "[nan, nan]"), standing alone ("NaN" in prose is a word),
#: or the word prose gives it (``pages.UNDEFINED``) typeset as a number: with a unit or as an interval's end.
_MISSING_NUMBER = re.compile(r"(?<![\w.'\"-])nan(?![\w'\"(-])|undefined ?%|\[undefined|undefined\]")


class _TextCollector(html.parser.HTMLParser):
    """The text a reader reads: outside code, scripts and styles."""

    _SKIPPED = {"script", "style", "pre", "code"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._depth = 0

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag in self._SKIPPED:
            self._depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIPPED and self._depth:
            self._depth -= 1

    def handle_data(self, data: str) -> None:
        if not self._depth:
            self.parts.append(data)


def missing_numbers(html_dir: Path) -> list[str]:
    """Each missing number a page's text shows as one ("nan", "undefined%"), as "page: …its context…"."""
    found = []
    for page in sorted(html_dir.rglob("*.html")):
        collector = _TextCollector()
        collector.feed(page.read_text(encoding="utf-8", errors="replace"))
        text = " ".join(" ".join(collector.parts).split())
        found += [f"{page.relative_to(html_dir)}: …{text[max(0, hit.start() - 60):hit.end() + 20]}…"
                  for hit in _MISSING_NUMBER.finditer(text)]
    return found


def check_built_book(root: Path, html_dir: Path | None = None, *, readers_book: bool = False) -> None:
    """``index.html`` exists in ``html_dir`` (default: the committed book's ``_build/html``), no static file is an
    unrendered template (``template_sources``), no page shows a folder of this machine or a warning
    (``machine_traces``) or a missing number as "nan" (``missing_numbers``) and no page or stylesheet fetches from
    another host. In a reader's book (``readers_book``: a variant's or a preview's) a missing number is a warning
    naming its pages, not an error: the reader's judgments are built into a book all the same (CI's judged variant
    fails on it, ``.ci/run``)."""
    html_dir = html_dir or root / HTML_DIR
    index = html_dir / "index.html"
    if not index.is_file():
        raise BookError(f"{index} was not written: the build did not produce the book")
    templates = template_sources(html_dir)
    if templates:
        raise BookError(f"the built book publishes {len(templates)} unrendered template(s) (Jinja syntax in a static "
                        "file): " + ", ".join(str(path.relative_to(html_dir)) for path in templates))
    traces = machine_traces(html_dir.rglob("*.html"), html_dir, machine_folders(root))
    if traces:
        listing = "\n  ".join(traces[:20]) + ("\n  ..." if len(traces) > 20 else "")
        raise BookError(f"{len(traces)} page(s) would publish what belongs to this machine, not to the book (handle "
                        f"a warning where it arises; print no folder):\n  {listing}")
    missing = missing_numbers(html_dir)
    if missing:
        listing = "\n  ".join(missing[:20]) + ("\n  ..." if len(missing) > 20 else "")
        message = (f"{len(missing)} missing number(s) on the pages are typeset as numbers (say an undefined "
                   f"statistic in words, leave out a number nobody measured):\n  {listing}")
        if not readers_book:
            raise BookError(message)
        print(f"[book] warning: {message}", file=sys.stderr)
    external = external_resource_urls(html_dir)
    if external:
        listing = "\n  ".join(external[:40]) + ("\n  ..." if len(external) > 40 else "")
        raise BookError(f"the built book fetches {len(external)} resource(s) from other hosts (it must work "
                        f"offline):\n  {listing}")
