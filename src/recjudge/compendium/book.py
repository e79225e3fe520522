"""``recjudge book``: build the Jupyter Book (1.x) from the executed notebooks, offline, and check the result.

Steps, each timed:

1. **MathJax**: the book serves MathJax from its own ``_static/mathjax/`` folder, never from a CDN. The version is
   pinned in ``package.json`` / ``package-lock.json`` (npm package ``mathjax``); ``make setup`` installs it once
   (``recjudge book --vendor-only``, the one book step that needs the network) with ``npm ci`` into a temporary
   folder and copies its browser bundle (``es5/``) to ``vendor/mathjax/`` (git-ignored), which
   ``_config.yml`` adds to the static path. A stamp holding the lockfile's integrity makes the step a no-op
   afterwards, so later builds need no network. Without npm, the same tarball is taken from the npm registry and
   verified against the lockfile's sha512 integrity.
2. **Table of contents**: every run of the run plan must be a chapter of ``_toc.yml`` and every notebook chapter a
   run, and each executed notebook must exist (``recjudge run`` writes them).
3. **Build**: ``jupyter-book build . --warningiserror --keep-going`` (notebook execution is off in ``_config.yml``).
4. **Checks**: ``_build/html/index.html`` exists and no page or stylesheet loads anything from another host; the
   build is recorded in ``_build/html/build-info.json`` (commit, profile, judges, each dataset's status).
5. **Publish** (``--publish DEST``, ``make publish``): ``recjudge.compendium.publish`` puts the built site online.

``recjudge book --variant NAME`` (or the run's ``--judge``/``--profile``) takes the same steps for a variant of the
book: its sources are staged by ``recjudge.compendium.variant_book`` and built into ``_build/variants/NAME/html``;
the committed book's ``_build/html`` is not touched.

The module is also a Sphinx extension (``_config.yml``: ``sphinx.extra_extensions``): :func:`setup` removes the
Thebe loader that Jupyter Book always installs (it points the page at unpkg.com; the book has no live kernels).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import html.parser
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import yaml

from recjudge.compendium.toc import NOTEBOOK_CHAPTERS, TOC_FILE, BookError, toc_files
from recjudge.paths import project_root

MATHJAX_PACKAGE = "mathjax"
VENDOR_DIR = Path("vendor")
MATHJAX_DIR = VENDOR_DIR / "mathjax"
#: The MathJax component the book loads (``_config.yml``: ``mathjax_path: mathjax/tex-chtml.js``).
MATHJAX_ENTRY = "tex-chtml.js"
STAMP_FILE = ".installed-from"
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


# --------------------------------------------------------------------------------------------------------------------
# MathJax


def _locked_mathjax(root: Path) -> tuple[str, str]:
    """(version, integrity) of MathJax as pinned in package-lock.json."""
    lock_path = root / "package-lock.json"
    try:
        lock = json.loads(lock_path.read_text(encoding="utf-8"))
        entry = lock["packages"][f"node_modules/{MATHJAX_PACKAGE}"]
        return entry["version"], entry["integrity"]
    except (OSError, ValueError, KeyError) as error:
        raise BookError(f"{lock_path}: cannot read the pinned {MATHJAX_PACKAGE} version and integrity ({error})") \
            from error


def ensure_mathjax(root: Path | None = None, *, log=print) -> Path:
    """Make ``vendor/mathjax/`` hold the pinned MathJax browser bundle; return that folder. Idempotent and offline
    once installed."""
    root = Path(root) if root is not None else project_root()
    version, integrity = _locked_mathjax(root)
    target = root / MATHJAX_DIR
    stamp = f"{MATHJAX_PACKAGE}@{version} {integrity}"
    stamp_path = target / STAMP_FILE
    if (target / MATHJAX_ENTRY).is_file() and stamp_path.is_file() and stamp_path.read_text().strip() == stamp:
        log(f"[book] MathJax {version} already vendored in {MATHJAX_DIR}/")
        return target
    with tempfile.TemporaryDirectory(prefix="recjudge-mathjax-") as work:
        work_dir = Path(work)
        if shutil.which("npm"):
            package_dir = _npm_ci(root, work_dir)
            how = "npm ci"
        else:
            package_dir = _registry_tarball(version, integrity, work_dir)
            how = "npm registry tarball (npm not found)"
        bundle = package_dir / "es5"
        if not (bundle / MATHJAX_ENTRY).is_file():
            raise BookError(f"{MATHJAX_PACKAGE}@{version} has no es5/{MATHJAX_ENTRY}: is the pinned version a 3.x?")
        staging = target.with_name(target.name + ".partial")
        shutil.rmtree(staging, ignore_errors=True)
        shutil.copytree(bundle, staging)
        for extra in ("LICENSE", "package.json"):
            if (package_dir / extra).is_file():
                shutil.copy2(package_dir / extra, staging / extra)
        (staging / STAMP_FILE).write_text(stamp + "\n")
        shutil.rmtree(target, ignore_errors=True)
        os.replace(staging, target)
    log(f"[book] MathJax {version} vendored in {MATHJAX_DIR}/ ({how})")
    return target


def _npm_ci(root: Path, work_dir: Path) -> Path:
    for name in ("package.json", "package-lock.json"):
        shutil.copy2(root / name, work_dir / name)
    command = ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"]
    result = subprocess.run(command, cwd=work_dir, capture_output=True, text=True)
    if result.returncode != 0:
        raise BookError(f"`{' '.join(command)}` failed (exit {result.returncode}); MathJax cannot be vendored "
                        "(run `make setup` where the npm registry can be reached):\n"
                        f"{result.stderr.strip()[-2000:]}")
    return work_dir / "node_modules" / MATHJAX_PACKAGE


def _registry_tarball(version: str, integrity: str, work_dir: Path) -> Path:
    registry = os.environ.get("npm_config_registry", "https://registry.npmjs.org").rstrip("/")
    url = f"{registry}/{MATHJAX_PACKAGE}/-/{MATHJAX_PACKAGE}-{version}.tgz"
    algorithm, _, expected = integrity.partition("-")
    try:
        with urllib.request.urlopen(url, timeout=120) as response:
            payload = response.read()
    except OSError as error:
        raise BookError(f"cannot download {url} ({error}); install npm or vendor MathJax by hand") from error
    got = base64.b64encode(hashlib.new(algorithm, payload).digest()).decode()
    if got != expected:
        raise BookError(f"{url}: {algorithm} integrity mismatch with package-lock.json (expected {expected}, "
                        f"got {got})")
    with tarfile.open(fileobj=io.BytesIO(payload), mode="r:gz") as archive:
        archive.extractall(work_dir, filter="data")
    return work_dir / "package"


# --------------------------------------------------------------------------------------------------------------------
# Table of contents against the run plan


def check_toc_against_runplan(root: Path) -> list[str]:
    """Problems between ``_toc.yml`` and the run plan: runs missing from the toc, notebook chapters that no run
    produces, and executed notebooks not written yet. Empty when all is consistent."""
    from recjudge.compendium.runplan import load_runplan

    runs = load_runplan(root=root)
    chapters = [entry.removesuffix(".ipynb") for entry in toc_files(root / TOC_FILE)]
    notebook_chapters = {entry for entry in chapters if entry.startswith(NOTEBOOK_CHAPTERS)}
    outputs = {f"{NOTEBOOK_CHAPTERS}{run.name}": run for run in runs}
    problems = [f"run {run.name!r} of runplan.yaml is not in {TOC_FILE} (add `- file: {key}`)"
                for key, run in outputs.items() if key not in notebook_chapters]
    problems += [f"{TOC_FILE} lists {entry} but no run of runplan.yaml is named "
                 f"{entry.removeprefix(NOTEBOOK_CHAPTERS)!r}"
                 for entry in sorted(notebook_chapters - set(outputs))]
    problems += [f"{run.output_path(root).relative_to(root)} does not exist: run `make run` (recjudge run) first"
                 for run in runs if not run.output_path(root).is_file()]
    return problems


# --------------------------------------------------------------------------------------------------------------------
# External resources in the built HTML


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


# --------------------------------------------------------------------------------------------------------------------
# Sphinx extension


def _is_thebe_loader(script: object) -> bool:
    filename = str(getattr(script, "filename", "") or "")
    body = str(getattr(script, "attributes", {}).get("body", ""))
    return filename.endswith("sphinx-thebe.js") or "THEBE_JS_URL" in body


def _drop_thebe(app, pagename, templatename, context, doctree) -> None:  # noqa: ANN001 (Sphinx event signature)
    scripts = context.get("script_files")
    if scripts:
        context["script_files"] = [script for script in scripts if not _is_thebe_loader(script)]


#: The bibliography style of the book (``bibtex_default_style`` in _config.yml): labels in the list read like the
#: author-year citations in the text ("Kang et al., 2025"), entries sorted by author and year.
BIBLIOGRAPHY_STYLE = "recjudge_author_year"


def author_year_label(entry) -> str:  # noqa: ANN001 (a pybtex Entry)
    """ "Kang et al., 2025", "Lima and Peres, 2018": the label of one bibliography entry, as cited in the text."""
    persons = entry.persons.get("author") or entry.persons.get("editor") or []
    surnames = [" ".join(person.last_names).replace("{", "").replace("}", "") for person in persons]
    if not surnames:
        names = entry.fields.get("organization") or entry.fields.get("title", entry.key)
        names = str(names).replace("{", "").replace("}", "")
    elif len(surnames) == 1:
        names = surnames[0]
    elif len(surnames) == 2:
        names = f"{surnames[0]} and {surnames[1]}"
    else:
        names = f"{surnames[0]} et al."
    return f"{names}, {entry.fields.get('year', 'n.d.')}"


def _register_bibliography_style() -> None:
    from collections import Counter

    from pybtex.plugin import register_plugin
    from pybtex.style.formatting.unsrt import Style as UnsrtStyle
    from pybtex.style.labels import BaseLabelStyle

    class AuthorYearLabels(BaseLabelStyle):
        def format_labels(self, sorted_entries):  # noqa: ANN001, ANN201 (pybtex's interface)
            labels = [author_year_label(entry) for entry in sorted_entries]
            counts, seen = Counter(labels), Counter()
            for label in labels:  # the same authors and year twice: 2020a, 2020b
                if counts[label] > 1:
                    seen[label] += 1
                    label = f"{label}{'abcdefghijklmnopqrstuvwxyz'[seen[label] - 1]}"
                yield label

    class AuthorYearStyle(UnsrtStyle):
        default_label_style = BIBLIOGRAPHY_STYLE
        default_sorting_style = "author_year_title"

    register_plugin("pybtex.style.labels", BIBLIOGRAPHY_STYLE, AuthorYearLabels, force=True)
    register_plugin("pybtex.style.formatting", BIBLIOGRAPHY_STYLE, AuthorYearStyle, force=True)
    _register_reference_style()


def _register_reference_style() -> None:
    """The citations in the text (``bibtex_reference_style``): sphinxcontrib-bibtex's author-year style with the
    year as the reference list labels it, so that two works of the same authors and year are cited as 2023a and
    2023b, as listed, not both as 2023."""
    from dataclasses import dataclass

    from pybtex.richtext import Text
    from sphinxcontrib.bibtex.plugin import register_plugin
    from sphinxcontrib.bibtex.style.referencing.author_year import AuthorYearReferenceStyle
    from sphinxcontrib.bibtex.style.referencing.basic_author_year import (
        BasicAuthorYearParentheticalReferenceStyle,
        BasicAuthorYearTextualReferenceStyle,
    )
    from sphinxcontrib.bibtex.style.template import join, join2, node, post_text, pre_text, reference

    @node
    def listed_year(children, data):  # noqa: ANN001, ANN202 (pybtex's template interface)
        """The year of the entry's label in the reference list ("Kang et al., 2025a" -> "2025a")."""
        assert not children
        return Text(data["formatted_entry"].label.rsplit(", ", 1)[-1])

    @dataclass
    class Parenthetical(BasicAuthorYearParentheticalReferenceStyle):
        def inner(self, role_name: str):  # noqa: ANN202 (pybtex's template interface)
            return join2(sep1=self.pre_text_sep, sep2=self.post_text_sep)[
                pre_text,
                reference[join(sep=self.author_year_sep)[
                    self.person.author_or_editor_or_title(full="s" in role_name), listed_year]],
                post_text,
            ]

    @dataclass
    class Textual(BasicAuthorYearTextualReferenceStyle):
        def inner(self, role_name: str):  # noqa: ANN202 (pybtex's template interface)
            return join(sep=self.text_reference_sep)[
                self.person.author_or_editor_or_title(full="s" in role_name),
                join[self.bracket.left,
                     join2(sep1=self.pre_text_sep, sep2=self.post_text_sep)[pre_text, reference[listed_year],
                                                                            post_text],
                     self.bracket.right],
            ]

    @dataclass
    class ListedYearStyle(AuthorYearReferenceStyle):
        def __post_init__(self) -> None:
            super().__post_init__()
            for position, style in enumerate(self.styles):
                own = {BasicAuthorYearParentheticalReferenceStyle: Parenthetical,
                       BasicAuthorYearTextualReferenceStyle: Textual}.get(type(style))
                if own is not None:
                    self.styles[position] = own(**{name: getattr(style, name)
                                                   for name in style.__dataclass_fields__})
                    self.role_style.update((role, self.styles[position]) for role in own.role_names(style))

    register_plugin("sphinxcontrib.bibtex.style.referencing", BIBLIOGRAPHY_STYLE, ListedYearStyle, force=True)


def _publish_results(app, exception) -> None:  # noqa: ANN001 (Sphinx event signature)
    """Copy the result tables (``results/**/*.csv``) beside the pages, so that every "Full table" note links to
    the CSV it names."""
    if exception is not None or app.builder.format != "html":
        return
    source = Path(app.srcdir) / "results"
    for csv in sorted(source.rglob("*.csv")):
        target = Path(app.outdir) / "results" / csv.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(csv, target)


#: Jinja syntax that a published file must not hold: a template that was copied, not rendered.
_JINJA = re.compile(r"\{\{.*?\}\}|\{%.*?%\}", re.DOTALL)


def template_sources(html_dir: Path) -> list[Path]:
    """Files under ``_static/`` of a built site that are Jinja templates, not pages: the themes ship the macros
    their layouts import (``webpack-macros.html``, ``sbt-webpack-macros.html``, with ``{{ pathto(...) }}``) in their
    static folders, and Sphinx copies a static file as it is (only a ``*_t`` file is rendered)."""
    static = Path(html_dir) / "_static"
    return sorted(path for path in static.rglob("*.html") if _JINJA.search(path.read_text(encoding="utf-8",
                                                                                             errors="replace")))


def _drop_template_sources(app, exception) -> None:  # noqa: ANN001 (Sphinx event signature)
    """Remove the themes' template sources from the built ``_static/`` (``template_sources``): no page links them,
    and a reader who opened one would see unrendered ``{{ pathto(...) }}``."""
    if exception is not None or app.builder.format != "html":
        return
    for path in template_sources(Path(app.outdir)):
        path.unlink()


def repository_buttons(book_config: dict, theme_options: dict) -> dict:
    """``theme_options`` with the repository and download buttons when the book's ``_config.yml`` names its
    repository (``repository.url``), and without them when it does not. (``sphinx.config.html_theme_options`` in
    ``_config.yml`` replaces what Jupyter Book derives from ``repository:``, hence this step.)"""
    repository = book_config.get("repository") or {}
    url = str(repository.get("url") or "").strip()
    options = {**theme_options, "use_repository_button": bool(url), "use_download_button": bool(url)}
    if url:
        options.update(repository_url=url, path_to_docs=str(repository.get("path_to_book") or ""),
                       repository_branch=str(repository.get("branch") or "main"))
    return options


def _set_repository_buttons(app, config) -> None:  # noqa: ANN001 (Sphinx event signature)
    try:
        book_config = yaml.safe_load((Path(app.srcdir) / "_config.yml").read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return
    config.html_theme_options = repository_buttons(book_config, dict(config.html_theme_options or {}))


def _relabel_run(app, docname: str, source: list[str]) -> None:  # noqa: ANN001 (Sphinx event signature)
    """An executed chapter's labels are its run's (``recjudge.compendium.labels``): a copied chapter's figures do
    not collide with its original's."""
    if docname.startswith(NOTEBOOK_CHAPTERS) and str(app.env.doc2path(docname)).endswith(".ipynb"):
        from recjudge.compendium.labels import relabel_notebook_text

        source[0] = relabel_notebook_text(source[0], docname[len(NOTEBOOK_CHAPTERS):])


def setup(app) -> dict[str, bool]:  # noqa: ANN001 (Sphinx application)
    """Sphinx entry point: drop the Thebe loader (a remote script) from every page; publish the result tables beside
    the pages and leave the themes' template sources out; register the bibliography's author-year label style; show
    the repository and download buttons when ``_config.yml`` names the repository; give each executed chapter its
    run's labels."""
    app.connect("config-inited", _set_repository_buttons)
    app.connect("source-read", _relabel_run)
    app.connect("html-page-context", _drop_thebe, priority=900)
    app.connect("build-finished", _publish_results)
    app.connect("build-finished", _drop_template_sources)
    _register_bibliography_style()
    return {"parallel_read_safe": True, "parallel_write_safe": True}


# --------------------------------------------------------------------------------------------------------------------
# Build


def _jupyter_book_command() -> list[str]:
    script = Path(sys.executable).parent / "jupyter-book"
    if script.is_file():
        return [str(script)]
    found = shutil.which("jupyter-book")
    if not found:
        raise BookError("jupyter-book is not installed: run `make setup` (pip install -e '.[book]')")
    return [found]


def build_html(root: Path, *, all_pages: bool = False, source: Path | None = None) -> None:
    """``jupyter-book build`` of ``source`` (default: the project root, the committed book) into
    ``<source>/_build/html``; a variant's book is built from its own staged source folder (``variant_book``)."""
    command = [*_jupyter_book_command(), "build", str(source or root), "--builder", "html", "--warningiserror",
               "--keep-going"]
    if all_pages:
        command.append("--all")
    result = subprocess.run(command, cwd=root)
    if result.returncode != 0:
        raise BookError(f"`jupyter-book build` failed (exit {result.returncode}): see the warnings above "
                        "(warnings are errors)")


def check_built_book(root: Path, html_dir: Path | None = None) -> None:
    """``index.html`` exists in ``html_dir`` (default: the committed book's ``_build/html``), no static file is an
    unrendered template (``template_sources``) and no page or stylesheet fetches from another host."""
    html_dir = html_dir or root / HTML_DIR
    index = html_dir / "index.html"
    if not index.is_file():
        raise BookError(f"{index} was not written: the build did not produce the book")
    templates = template_sources(html_dir)
    if templates:
        raise BookError(f"the built book publishes {len(templates)} unrendered template(s) (Jinja syntax in a static "
                        "file): " + ", ".join(str(path.relative_to(html_dir)) for path in templates))
    external = external_resource_urls(html_dir)
    if external:
        listing = "\n  ".join(external[:40]) + ("\n  ..." if len(external) > 40 else "")
        raise BookError(f"the built book fetches {len(external)} resource(s) from other hosts (it must work "
                        f"offline):\n  {listing}")


@contextmanager
def _phase(name: str, timings: dict[str, float]) -> Iterator[None]:
    started = time.perf_counter()
    try:
        yield
    finally:
        timings[name] = time.perf_counter() - started


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--all", action="store_true", help="rebuild every page, not only the changed ones")
    parser.add_argument("--check-only", action="store_true",
                        help="only check an existing build (_build/html) for index.html and external resources")
    parser.add_argument("--only", action="append", metavar="NAME",
                        help="a preview of a few chapters (repeatable): execute only the runs NAME of runplan.yaml "
                             "(and those whose tables they read, each skipped when unchanged) and build "
                             "_build/preview/html, every other chapter marked 'Not run in this build'; not publishable")
    variant = parser.add_argument_group(
        "a variant's book", "build the book of a variant that `recjudge run --judge ... --profile ...` executed into "
        "variants/NAME/, as _build/variants/NAME/html (the committed book and results are not touched); name it, "
        "or give the same --judge/--profile as the run")
    variant.add_argument("--variant", metavar="NAME", help="a folder of variants/ (e.g. openai-gpt-4o-mini-smoke)")
    variant.add_argument("--judge", action="append", metavar="SPEC",
                         help="the run's --judge (repeatable): the variant is named from the judges and the profile")
    variant.add_argument("--profile", default=None, metavar="NAME", help="the run's --profile")
    publish = parser.add_argument_group(
        "publishing", "after the build (or, with --check-only, an existing build), publish the book for readers "
        "(recjudge.compendium.publish): a partial book (a Data needed box, a chapter not run, a checkout that is not "
        "clean, a build older than the last commit) is refused unless --allow-partial")
    publish.add_argument("--publish", metavar="DEST",
                         help="a git remote (e.g. origin; a URL or a repository's path) whose branch --branch gets the "
                              "site through ghp-import, or folder:PATH, a folder for any static host; a variant's book "
                              "goes to variants/NAME/ of it")
    publish.add_argument("--branch", default=None, metavar="NAME", help="the branch of a git DEST (default gh-pages)")
    publish.add_argument("--allow-partial", action="store_true", help="publish a partial book anyway (it says so)")
    parser.add_argument("--vendor-only", action="store_true",
                        help="only vendor the pinned MathJax into vendor/mathjax (the one step that needs the npm "
                             "registry; `make setup` runs it so that later builds work offline)")


def run_command(args: argparse.Namespace) -> int:
    root = project_root()
    timings: dict[str, float] = {}
    try:
        from recjudge.compendium.variant_book import VariantBookError, variant_from_arguments

        variant = variant_from_arguments(root, args.variant, args.judge or [], args.profile)
    except VariantBookError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if getattr(args, "only", None):
        clashing = [option for option, given in (("--variant/--judge/--profile", variant is not None),
                                                 ("--publish", getattr(args, "publish", None)),
                                                 ("--check-only", args.check_only), ("--vendor-only", args.vendor_only))
                    if given]
        if clashing:
            print(f"error: --only builds a preview of a few chapters, which {clashing[0]} does not take",
                  file=sys.stderr)
            return 2
        return _build_preview(root, args.only, args, timings)
    destination = None
    if getattr(args, "publish", None) and not args.vendor_only:
        from recjudge.compendium.publish import ALLOW_HINT, Destination, PublishError, not_clean

        try:
            destination = Destination.parse(args.publish, args.branch)
        except PublishError as error:
            print(f"recjudge book: {error}", file=sys.stderr)
            return 2
        if not args.allow_partial and not args.check_only:  # refused before a long build rather than after it
            try:
                early = not_clean(root)
            except PublishError as error:
                early = str(error)
            if early:
                print(f"recjudge book: not published: {early} ({ALLOW_HINT})", file=sys.stderr)
                return 1
    if variant is not None and not args.vendor_only:
        status = _build_variant(root, variant, args, timings)
        return status or _publish(root, variant.html_dir(root), destination, args, variant.name)
    try:
        if args.vendor_only:
            ensure_mathjax(root)
            return 0
        if not args.check_only:
            with _phase("mathjax", timings):
                ensure_mathjax(root)
            with _phase("toc", timings):
                problems = check_toc_against_runplan(root)
                if problems:
                    raise BookError("the table of contents does not match the run plan:\n  " + "\n  ".join(problems))
            with _phase("jupyter-book build", timings):
                _forget_build(root / HTML_DIR)
                build_html(root, all_pages=args.all)
        with _phase("checks", timings):
            check_built_book(root)
            if not args.check_only:
                _record_build(root, root / HTML_DIR)
    except BookError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    finally:
        _print_timings(timings)
    done = "checked the existing build" if args.check_only else "built"
    print(f"[book] {done} {root / HTML_DIR / 'index.html'} (self-contained: no external scripts or stylesheets)")
    return _publish(root, root / HTML_DIR, destination, args)


def _forget_build(html_dir: Path) -> None:
    """Remove the last build's record before a build: a build that fails leaves none, so its pages cannot be
    published as a whole book (``recjudge book --check-only --publish``)."""
    from recjudge.compendium.publish import BUILD_INFO

    (html_dir / BUILD_INFO).unlink(missing_ok=True)


def _record_build(root: Path, html_dir: Path, profile: str | None = None, judges: tuple[str, ...] = (),
                  variant: str | None = None) -> None:
    """``build-info.json`` in the built site: the commit, profile, judges and data it was built from (each dataset's
    status), and for the committed book which sources each chapter was executed from (read when the book is
    published)."""
    from recjudge.compendium.publish import PublishError, dataset_statuses, write_build_info
    from recjudge.compendium.runplan import DEFAULT_PROFILE, RunPlanError, executed_from, load_runplan

    try:
        chapters = None if variant else executed_from(load_runplan(root=root), root)
        write_build_info(html_dir, root, profile=profile or DEFAULT_PROFILE, judges=judges,
                         data=dataset_statuses(root), variant=variant, chapters=chapters)
    except (PublishError, RunPlanError, OSError, ValueError) as error:  # e.g. no git checkout: not publishable
        print(f"[book] no build record ({error})", file=sys.stderr)


def _publish(root: Path, html_dir: Path, destination, args: argparse.Namespace,  # noqa: ANN001
             variant: str | None = None) -> int:
    """Publish the built site when ``--publish`` asked for it (``recjudge.compendium.publish``)."""
    if destination is None:
        return 0
    from recjudge.compendium.publish import PublishError, publish

    try:
        publish(html_dir, root, destination, allow_partial=args.allow_partial, variant=variant)
    except PublishError as error:
        print("\n".join(f"recjudge book: {line}" for line in str(error).splitlines()), file=sys.stderr)
        return 1
    return 0


def _print_timings(timings: dict[str, float]) -> None:
    if timings:
        print("[book] timings: " + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in timings.items()))


def _build_variant(root: Path, variant, args: argparse.Namespace, timings: dict[str, float]) -> int:  # noqa: ANN001
    """The book of one variant (``recjudge.compendium.variant_book``): staged under ``_build/variants/<name>/``
    and built there, with the same steps and checks as the committed book."""
    from recjudge.compendium.variant_book import VariantBookError, run_committed_chapters, stage_variant_book

    html = variant.html_dir(root)
    try:
        if not args.check_only:
            with _phase("mathjax", timings):
                ensure_mathjax(root)
            with _phase("committed chapters", timings):  # a fresh clone has executed none
                run_committed_chapters(root, variant)
            with _phase("stage", timings):
                source = stage_variant_book(root, variant)
            with _phase("jupyter-book build", timings):
                _forget_build(html)
                build_html(root, all_pages=args.all, source=source)
        with _phase("checks", timings):
            check_built_book(root, html)
            if not args.check_only:
                _record_build(root, html, variant.profile, tuple(f"{judge.get('provider')}:{judge.get('model')}"
                                                                 for judge in variant.judges), variant.name)
    except (BookError, VariantBookError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    finally:
        _print_timings(timings)
    done = "checked the existing build of" if args.check_only else "built"
    print(f"[book] {done} the book of variant {variant.name}: {html / 'index.html'} (self-contained)")
    return 0


def _build_preview(root: Path, names: list[str], args: argparse.Namespace, timings: dict[str, float]) -> int:
    """The book of a few chapters (``recjudge.compendium.preview_book``): the named runs and what they need are
    executed (each skipped when unchanged), the others marked not run; staged and built under ``_build/preview``."""
    from recjudge.compendium.preview_book import PREVIEW_DIR, PreviewBookError, runs_needed, stage_preview_book
    from recjudge.compendium.runplan import RunFailedError, RunPlanError, execute_plan, load_runplan

    html = root / PREVIEW_DIR / "html"
    try:
        with _phase("mathjax", timings):
            ensure_mathjax(root)
        runs = load_runplan(root=root)
        with _phase("chapters", timings):
            execute_plan(runs_needed(runs, names), root)
        with _phase("stage", timings):
            source = stage_preview_book(root, runs, names)
        with _phase("jupyter-book build", timings):
            build_html(root, all_pages=args.all, source=source)
        with _phase("checks", timings):
            check_built_book(root, html)
    except (BookError, PreviewBookError, RunPlanError, RunFailedError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    finally:
        _print_timings(timings)
    print(f"[book] built a preview of {', '.join(names)}: {html / 'index.html'} (the other chapters are marked "
          "'Not run in this build'; `recjudge book` builds the whole book)")
    return 0
