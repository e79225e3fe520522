"""A newcomer's term is linked to the glossary where a page first uses it, whoever wrote the words."""

import re

import pytest

from recjudge.compendium import glossary_links

GLOSSARY = """Glossary
========

.. glossary::

   BPRMF
      Matrix factorisation ranked by Bayesian personalised ranking.

   L1 distance
      The sum of the absolute differences.
"""


def build(tmp_path, pages: dict[str, str]) -> dict[str, str]:
    sphinx_app = pytest.importorskip("sphinx.application")
    src = tmp_path / "src"
    (src / "book").mkdir(parents=True)
    (src / "conf.py").write_text("extensions = ['recjudge.compendium.glossary_links']\n", encoding="utf-8")
    (src / "index.rst").write_text("Book\n====\n\n.. toctree::\n\n" + "".join(f"   {name}\n" for name in pages)
                                   + "   book/glossary\n", encoding="utf-8")
    (src / "book" / "glossary.rst").write_text(GLOSSARY, encoding="utf-8")
    for name, text in pages.items():
        (src / f"{name}.rst").write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    sphinx_app.Sphinx(str(src), str(src), str(out), str(tmp_path / "doctrees"), "html", status=None, warning=None,
                      freshenv=True).build()
    return {name: (out / f"{name}.html").read_text(encoding="utf-8") for name in [*pages, "book/glossary"]}


def glossary_links_in(html: str) -> list[str]:
    return re.findall(r'<a class="reference internal" href="glossary.html#term-[^"]+"><span class="xref std '
                      r'std-term">([^<]+)</span></a>', html)


def test_the_first_use_in_running_text_is_linked_and_code_headings_and_later_uses_are_not(tmp_path):
    html = build(tmp_path, {"book/chapter": (
        "BPRMF here\n==========\n\n``BPRMF`` as code, then BPRMF in prose, and BPRMF again.\n\n"
        "The closest reading has an L1 distance of 107.\n")})
    assert glossary_links_in(html["book/chapter"]) == ["BPRMF", "L1 distance"]
    assert "<code" in html["book/chapter"] and "BPRMF again" in html["book/chapter"]
    assert glossary_links_in(html["book/glossary"]) == []


def test_a_page_that_links_the_term_first_itself_gets_no_second_link(tmp_path):
    html = build(tmp_path, {"book/chapter": "Chapter\n=======\n\nThe :term:`BPRMF` model, then BPRMF again.\n"})
    assert glossary_links_in(html["book/chapter"]) == ["BPRMF"]


def test_every_linked_term_is_a_glossary_entry():
    from test_glossary import glossary_terms

    assert [term for term in glossary_links.FIRST_USE_LINKED if term.lower() not in glossary_terms()] == []
