"""The reference list's labels read like the author-year citations in the text."""

from pybtex.database import Entry, Person

from recjudge.compendium.book import author_year_label


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

    from recjudge.compendium.book import BIBLIOGRAPHY_STYLE, _register_bibliography_style

    _register_bibliography_style()
    style = find_plugin("pybtex.style.formatting", BIBLIOGRAPHY_STYLE)()
    labels = list(style.format_labels([entry(["Li, Pan", "Chen, Z", "Tuzhilin, A"], "2020"),
                                       entry(["Li, Pan", "Wang, M", "Tuzhilin, A"], "2020")]))
    assert labels == ["Li et al., 2020a", "Li et al., 2020b"]
