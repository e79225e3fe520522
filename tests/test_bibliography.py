"""The reference list's labels read like the author-year citations in the text."""

from pybtex.database import Entry, Person

from recjudge.compendium.sphinx_extension import author_year_label, bibliography_entries_as_list_items


def entry(authors: list[str], year: str | None) -> Entry:
    fields = {"title": "A title"} | ({"year": year} if year else {})
    return Entry("article", fields=fields, persons={"author": [Person(name) for name in authors]})


def test_labels_follow_the_number_of_authors():
    assert author_year_label(entry(["Kang, Li"], "2025")) == "Kang, 2025"
    assert author_year_label(entry(["Harper, F. Maxwell", "Konstan, Joseph A."], "2015")) == "Harper and Konstan, 2015"
    assert author_year_label(entry(["Zhang, Xiaoyu", "Li, Yishan", "Wang, Jiayin"], "2024")) == "Zhang et al., 2024"


def test_missing_year_and_braced_names():
    assert author_year_label(entry(["{de Lima}, Andre Paulino", "Peres, Sarajane"], None)) == "de Lima and Peres, n.d."


def test_style_is_registered_for_sphinxcontrib_bibtex():
    from pybtex.plugin import find_plugin

    from recjudge.compendium.sphinx_extension import BIBLIOGRAPHY_STYLE, _register_bibliography_style

    _register_bibliography_style()
    style = find_plugin("pybtex.style.formatting", BIBLIOGRAPHY_STYLE)()
    labels = list(style.format_labels([entry(["Li, Pan", "Chen, Z", "Tuzhilin, A"], "2020"),
                                       entry(["Li, Pan", "Wang, M", "Tuzhilin, A"], "2020")]))
    assert labels == ["Li et al., 2020a", "Li et al., 2020b"]


def test_two_works_of_the_same_authors_and_year_are_cited_as_listed(tmp_path):
    """In the text as in the reference list: 2023a and 2023b, not 2023 twice (a Sphinx build of one page)."""
    import os
    import re
    import subprocess
    import sys
    from pathlib import Path

    (tmp_path / "refs.bib").write_text(
        "@article{one, author = {Angelopoulos, A. and Bates, S. and Zrnic, T.}, title = {One}, journal = {J}, "
        "year = {2023}}\n@article{two, author = {Angelopoulos, A. and Duchi, J. and Zrnic, T.}, title = {Two}, "
        "journal = {J}, year = {2023}}\n@article{kang, author = {Kang, L.}, title = {Three}, journal = {J}, "
        "year = {2025}}\n")
    (tmp_path / "conf.py").write_text(
        'extensions = ["myst_parser", "sphinxcontrib.bibtex", "recjudge.compendium.sphinx_extension"]\n'
        'bibtex_bibfiles = ["refs.bib"]\nbibtex_reference_style = "recjudge_author_year"\n'
        'bibtex_default_style = "recjudge_author_year"\n')
    (tmp_path / "index.md").write_text("# Page\n\nFirst {cite:p}`one`, second {cite:p}`two`, textual {cite:t}`two`, "
                                       "single {cite:p}`kang`.\n\n```{bibliography}\n```\n")
    source = Path(__file__).resolve().parents[1] / "src"
    built = subprocess.run([sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", str(tmp_path),
                            str(tmp_path / "_build")], capture_output=True, text=True, timeout=300,
                           env={**os.environ, "PYTHONPATH": str(source)})
    assert built.returncode == 0, built.stderr
    text = re.sub(r"<[^>]+>", "", (tmp_path / "_build" / "index.html").read_text())
    assert ("First [Angelopoulos et al., 2023a], second [Angelopoulos et al., 2023b], textual Angelopoulos et al. "
            "[2023b], single [Kang, 2025].") in text


def test_every_entry_of_the_bibliography_has_a_year():
    """A citation never reads "n.d.": every entry of book/references.bib states its year (a preprint its
    submission's)."""
    from pybtex.database import parse_file

    from recjudge.paths import project_root

    entries = parse_file(str(project_root() / "book" / "references.bib")).entries
    undated = [key for key, found in entries.items() if not str(found.fields.get("year", "")).strip().isdigit()]
    assert len(entries) > 10 and undated == []
    assert author_year_label(entries["lima_limits_to_surprise"]).endswith("and Peres, 2018")


def test_bibliography_entries_are_the_items_of_their_list():
    """A citation list (role=list) holds listitems, so that a screen reader announces its entries (axe-core:
    aria-required-children); other roles on the page are left alone."""
    page = ('<div role="list" class="citation-list">\n<div class="citation" id="id7" role="doc-biblioentry">\n'
            '<span class="label">[Kang et al., 2025]</span><p>Li Kang.</p></div>\n</div>'
            '<a role="doc-backlink" href="#id1">Kang et al., 2025</a>')
    marked = bibliography_entries_as_list_items(page)
    assert '<div class="citation" id="id7" role="listitem">' in marked
    assert "doc-biblioentry" not in marked and 'role="doc-backlink"' in marked
