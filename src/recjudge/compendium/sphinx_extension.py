"""The book's Sphinx extension (``_config.yml``: ``sphinx.extra_extensions``), connected by :func:`setup`.

It removes the Thebe loader that Jupyter Book always installs (it points the page at unpkg.com; the book has no live
kernels), writes MyST-NB's stylesheet before the pages (so that each page links it with the same checksum), publishes
the result tables beside the pages and leaves the themes' template sources out, registers the bibliography's
author-year styles, shows the repository buttons when ``_config.yml`` names the repository, and gives each executed
chapter its run's labels.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

import yaml

from recjudge.compendium.html_checks import template_sources
from recjudge.compendium.toc import NOTEBOOK_CHAPTERS


def _is_thebe_loader(script: object) -> bool:
    filename = str(getattr(script, "filename", "") or "")
    body = str(getattr(script, "attributes", {}).get("body", ""))
    return filename.endswith("sphinx-thebe.js") or "THEBE_JS_URL" in body


def _drop_thebe(app, pagename, templatename, context, doctree) -> None:  # noqa: ANN001 (Sphinx event signature)
    scripts = context.get("script_files")
    if scripts:
        context["script_files"] = [script for script in scripts if not _is_thebe_loader(script)]


#: docutils writes a bibliography as a ``role="list"`` box of ``role="doc-biblioentry"`` entries; ARIA's list holds
#: listitems (and DPUB-ARIA 1.1 deprecates doc-biblioentry), so screen readers and axe-core (aria-required-children)
#: find an empty list. Each entry is a listitem instead.
_BIBLIOGRAPHY_ENTRY_ROLE = re.compile(r'(<div class="citation"[^>]*?) role="doc-biblioentry"')


def bibliography_entries_as_list_items(body: str) -> str:
    """The page's HTML with each bibliography entry of a citation list marked as a list item."""
    return _BIBLIOGRAPHY_ENTRY_ROLE.sub(r'\1 role="listitem"', body)


def _mark_bibliography_entries(app, pagename, templatename, context, doctree) -> None:  # noqa: ANN001 (Sphinx event)
    if "body" in context:
        context["body"] = bibliography_entries_as_list_items(context["body"])


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



def _drop_template_sources(app, exception) -> None:  # noqa: ANN001 (Sphinx event signature)
    """Remove the themes' template sources from the built ``_static/`` (``template_sources``): no page links them,
    and a reader who opened one would see unrendered ``{{ pathto(...) }}``."""
    if exception is not None or app.builder.format != "html":
        return
    for path in template_sources(Path(app.outdir)):
        path.unlink()


def _stylesheets_before_pages(app) -> None:  # noqa: ANN001 (Sphinx event signature)
    """Put MyST-NB's stylesheet into the output folder before any page is written. Sphinx links a stylesheet with
    its checksum (``?v=...``), read from the output folder as each page is written; MyST-NB copies its own only when
    the build ends, so a first build linked it bare and a rebuilt page with the suffix, and an incremental rebuild
    of the same sources published pages differing by that suffix alone."""
    if app.builder.format != "html" or "myst_nb" not in app.extensions:
        return
    from myst_nb.sphinx_ext import add_global_html_resources

    (Path(app.outdir) / "_static").mkdir(parents=True, exist_ok=True)
    add_global_html_resources(app, None)


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


def source_version(path: str | Path) -> int:
    """An extension's ``env_version``, from its own source: Sphinx re-reads only changed pages, so without it a page
    would keep what the extension's old code wrote; a new version makes Sphinx rebuild every page."""
    return int(hashlib.sha256(Path(path).read_bytes()).hexdigest()[:12], 16)


def setup(app) -> dict[str, bool | int]:  # noqa: ANN001 (Sphinx application)
    """Sphinx entry point: drop the Thebe loader (a remote script) from every page; publish the result tables beside
    the pages and leave the themes' template sources out; register the bibliography's author-year label style and mark
its entries as list items; show
    the repository and download buttons when ``_config.yml`` names the repository; give each executed chapter its
    run's labels."""
    app.connect("config-inited", _set_repository_buttons)
    app.connect("builder-inited", _stylesheets_before_pages)
    app.connect("source-read", _relabel_run)
    app.connect("html-page-context", _drop_thebe, priority=900)
    app.connect("html-page-context", _mark_bibliography_entries)
    app.connect("build-finished", _publish_results)
    app.connect("build-finished", _drop_template_sources)
    _register_bibliography_style()
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": source_version(__file__)}

