"""The papers' printed numbers have one home: recjudge.papers, one CSV per table named after the paper's key in the
bibliography, each citing its source."""

import re
from pathlib import Path

import pytest

from recjudge import papers

ROOT = Path(__file__).resolve().parents[1]


def bibliography_keys() -> set[str]:
    return set(re.findall(r"@\w+\{([^,]+),", (ROOT / "book" / "references.bib").read_text(encoding="utf-8")))


def paper_key(name: str) -> str | None:
    """The bibliography key a table's name starts with (``<key>_<table>``), or None."""
    return next((key for key in bibliography_keys() if name.startswith(key + "_")), None)


@pytest.mark.parametrize("name", papers.names())
def test_each_table_is_named_after_a_cited_paper_and_says_where_it_comes_from(name):
    key = paper_key(name)
    assert key is not None, f"{name}: its name does not start with a key of book/references.bib"
    table = name.removeprefix(key + "_")
    assert re.fullmatch(r"table\d+|tables\d+_\d+|g_distribution", table), name
    assert re.search(r"Table \d|section \d", papers.citation(name)), f"{name}: its comment cites no table or section"
    frame = papers.table(name)
    assert len(frame) > 0 and not frame.columns.str.startswith("Unnamed").any()


def test_every_paper_has_its_numbers_here_and_no_paper_csv_lives_elsewhere():
    keys = {paper_key(name) for name in papers.names()}
    assert {"kang2025serendipity", "tokutake2025framework", "zhang2024explanations", "lima_limits_to_surprise",
            "khirbat2024metamorphic"} <= keys
    strays = [p.relative_to(ROOT) for p in (ROOT / "src" / "recjudge").rglob("*.csv") if p.parent != papers.FOLDER]
    assert not strays, f"paper numbers outside recjudge.papers: {strays}"


def test_a_cell_reads_as_written_and_an_unknown_table_is_named():
    interaction_types = papers.table("kang2025serendipity_tables4_5")
    assert "NA" in set(interaction_types["method"])  # Kang et al.'s "no auxiliary data" row, not a missing value
    with pytest.raises(KeyError, match="no paper table 'kang2025serendipity_table9'; held: "):
        papers.table("kang2025serendipity_table9")


def test_the_papers_package_imports_nothing_from_recjudge():
    source = (papers.FOLDER / "__init__.py").read_text(encoding="utf-8")
    assert not re.search(r"^\s*(from|import) recjudge", source, flags=re.M)
