"""The appendix pages' figures are numbered under their letter (Fig. A.1), not 1, 2 like a chapter's."""

import re

import pytest

from recjudge.compendium.appendix_numbers import lettered


def test_a_pages_figures_are_lettered_in_their_order_and_a_second_pass_changes_nothing():
    numbers = {"figure": {"fig-b": (7,), "fig-a": (6,)}, "table": {"t": (3,)}}
    once = lettered(numbers, "B")
    assert once == {"figure": {"fig-a": ("B", 1), "fig-b": ("B", 2)}, "table": {"t": ("B", 1)}}
    assert lettered(once, "B") == once


def test_a_built_appendix_page_reads_fig_a_1_and_a_chapter_keeps_its_number(tmp_path):
    sphinx_app = pytest.importorskip("sphinx.application")
    src = tmp_path / "src"
    (src / "book").mkdir(parents=True)
    (src / "conf.py").write_text("extensions = ['recjudge.compendium.appendix_numbers']\nnumfig = True\n",
                                 encoding="utf-8")
    (src / "_toc.yml").write_text("format: jb-book\nroot: index\nparts:\n"
                                  "  - caption: I\n    numbered: true\n    chapters:\n      - file: book/chapter\n"
                                  "  - caption: 'Appendix: synthetic'\n    chapters:\n      - file: book/demo\n",
                                  encoding="utf-8")
    (src / "index.rst").write_text("Book\n====\n\n.. toctree::\n   :numbered:\n\n   book/chapter\n\n"
                                   ".. toctree::\n\n   book/demo\n", encoding="utf-8")
    figure = ".. figure:: x.png\n   :name: {name}\n\n   A caption.\n\n"
    (src / "book" / "chapter.rst").write_text("Chapter\n=======\n\n" + figure.format(name="fig-c"),
                                              encoding="utf-8")
    (src / "book" / "demo.rst").write_text("Demo\n====\n\n" + figure.format(name="fig-d1")
                                           + figure.format(name="fig-d2") + "See :numref:`fig-d2`.\n",
                                           encoding="utf-8")
    out = tmp_path / "out"
    app = sphinx_app.Sphinx(str(src), str(src), str(out), str(tmp_path / "doctrees"), "html", status=None,
                            warning=None, freshenv=True)
    app.build()
    demo = (out / "book" / "demo.html").read_text(encoding="utf-8")
    chapter = (out / "book" / "chapter.html").read_text(encoding="utf-8")
    assert re.findall(r"Fig\. ([A-Z0-9.]+)", demo) == ["A.1", "A.2", "A.2"]  # two captions and the reference
    assert "Fig. 1.1" in chapter


def test_an_extensions_code_change_makes_sphinx_rebuild_every_page(tmp_path):
    # Sphinx re-reads only changed pages unless an extension's env_version changes: each of the book's extensions
    # derives it from its own source, so a page never keeps what an older version of the extension wrote.
    from unittest import mock

    from recjudge.compendium import appendix_numbers, sphinx_extension

    first, second = tmp_path / "a.py", tmp_path / "b.py"
    first.write_text("X = 1\n")
    second.write_text("X = 2\n")
    version = sphinx_extension.source_version
    assert version(first) != version(second) and version(first) == version(first)
    for extension in (sphinx_extension, appendix_numbers):
        assert extension.setup(mock.MagicMock())["env_version"] == version(extension.__file__)
