"""The built book publishes no unrendered template: the themes ship the Jinja macros their layouts import
(``webpack-macros.html``) in their static folders, which Sphinx copies as they are; the build leaves them out and
the check of a built book refuses them."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from recjudge.compendium import html_checks, sphinx_extension
from recjudge.compendium.toc import BookError


def theme_macros() -> list[Path]:
    import pydata_sphinx_theme
    import sphinx_book_theme

    found = [path for module in (pydata_sphinx_theme, sphinx_book_theme)
             for path in Path(module.__file__).parent.rglob("*webpack-macros.html")]
    assert found, "the themes no longer ship their macros as static files"
    return found


@pytest.fixture
def built(tmp_path: Path) -> Path:
    static = tmp_path / "_static"
    static.mkdir()
    (tmp_path / "index.html").write_text("<html><body>{{ not a template in a page's text }}</body></html>")
    (static / "recjudge.css").write_text("body {}\n")
    for macro in theme_macros():
        shutil.copyfile(macro, static / macro.name)
    return tmp_path


def test_the_themes_macros_are_found_as_unrendered_templates(built: Path):
    names = sorted(path.name for path in html_checks.template_sources(built))
    assert names == sorted(path.name for path in theme_macros())
    assert all("pathto(" in (built / "_static" / name).read_text() for name in names)
    with pytest.raises(BookError, match="unrendered template"):
        html_checks.check_built_book(built.parent, built)


def test_the_build_leaves_the_themes_macros_out(built: Path):
    app = SimpleNamespace(builder=SimpleNamespace(format="html"), outdir=str(built))
    sphinx_extension._drop_template_sources(app, None)
    assert html_checks.template_sources(built) == []
    assert (built / "_static" / "recjudge.css").is_file() and (built / "index.html").is_file()
    html_checks.check_built_book(built.parent, built)


def test_a_page_links_each_stylesheet_with_one_suffix_on_a_first_build_and_a_rebuild(tmp_path: Path):
    """Sphinx suffixes a stylesheet's link with its checksum (``?v=...``) read from the output folder when the page is
    written; MyST-NB copied its stylesheet there only when the build ended, so a first build's pages linked it bare and
    a rebuilt page with the suffix: an incremental rebuild of the same commit published a new commit that differed by
    that suffix alone."""
    import re

    sphinx_app = pytest.importorskip("sphinx.application")
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text("extensions = ['myst_nb', 'recjudge.compendium.sphinx_extension']\n",
                                 encoding="utf-8")
    (src / "index.md").write_text("# Book\n\n```{toctree}\nchapter\n```\n", encoding="utf-8")
    (src / "chapter.md").write_text("# Chapter\n\nText.\n", encoding="utf-8")
    out = tmp_path / "out"

    def build() -> dict[str, list[str]]:
        sphinx_app.Sphinx(str(src), str(src), str(out), str(tmp_path / "doctrees"), "html", status=None,
                          warning=None).build()
        return {page: re.findall(r'href="(_static/mystnb\.[^"]+)"', (out / page).read_text(encoding="utf-8"))
                for page in ("index.html", "chapter.html")}

    first = build()
    assert all(len(links) == 1 and "?v=" in links[0] for links in first.values()), first
    (src / "chapter.md").write_text("# Chapter\n\nText, revised.\n", encoding="utf-8")
    assert build() == first


def test_a_page_showing_a_folder_of_the_machine_or_a_warning_is_refused(built: Path):
    """A matplotlib UserWarning with the builder's source path was on a variant's page: the check of a built book
    names the page and what it shows."""
    from recjudge.paths import project_root

    sphinx_extension._drop_template_sources(SimpleNamespace(builder=SimpleNamespace(format="html"),
                                                            outdir=str(built)), None)
    root = project_root()
    page = built / "book" / "notebooks" / "chapter.html"
    page.parent.mkdir(parents=True)
    page.write_text(f"<html><body><pre>{root}/src/recjudge/serendipity/ground_truth.py:799: UserWarning: Tight "
                    "layout not applied</pre></body></html>")
    with pytest.raises(BookError, match="book/notebooks/chapter.html: a folder of this machine") as caught:
        html_checks.check_built_book(root, built)
    assert "a warning printed into it (UserWarning: Tight layout not applied)" in str(caught.value)
    page.write_text("<html><body><p>Write it to <code>/tmp/my_chapter.ipynb</code>.</p></body></html>")
    html_checks.check_built_book(root, built)


def test_a_page_typesetting_a_missing_number_is_refused_and_the_word_nan_in_prose_or_code_is_not(
        built: Path, capsys: pytest.CaptureFixture[str]):
    """A variant's pages printed "NA reaches nan% [nan, nan]" and "the best is nan with nan" where the book's own judge
    had answered nothing: the check of a built book names the page and the words around each."""
    sphinx_extension._drop_template_sources(SimpleNamespace(builder=SimpleNamespace(format="html"),
                                                            outdir=str(built)), None)
    page = built / "book" / "notebooks" / "chapter.html"
    page.parent.mkdir(parents=True)
    for shown in ("NA reaches nan% [nan, nan]", "the best is nan with nan.", "from 4.1% to undefined% for all 7",
                  "reaches 5.0% [undefined, 3.0]"):
        page.write_text(f"<html><body><p>{shown}</p></body></html>")
        with pytest.raises(BookError, match="book/notebooks/chapter.html: …") as caught:
            html_checks.check_built_book(built.parent, built)
        assert "missing number(s) on the pages are typeset as numbers" in str(caught.value)
    # a reader's book (a variant's, a preview's) is built all the same, the pages named in a warning
    html_checks.check_built_book(built.parent, built, readers_book=True)
    assert "[book] warning: 1 missing number(s)" in capsys.readouterr().err
    page.write_text("<html><body><p>An unreadable score is NaN, never a silent default; Pearson is undefined "
                    "(the scores do not vary); a nanny; nanoseconds.</p><pre>x = float('nan'); y = np.nan</pre>"
                    "<p><code>nan</code></p></body></html>")
    html_checks.check_built_book(built.parent, built)
