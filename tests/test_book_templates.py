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
