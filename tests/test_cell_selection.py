"""Chapters whose data are absent: cells tagged needs:NAME are left out and a box says what is missing."""

import nbformat
import pytest

from recjudge.compendium import cell_selection as data_needed
from recjudge.compendium.cell_selection import DATA_NEEDED_TAG, notebook_for_available_data


def notebook() -> nbformat.NotebookNode:
    cells = [nbformat.v4.new_markdown_cell("# Title"),
             nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["parameters"]}),
             nbformat.v4.new_code_cell("study = load()", metadata={"tags": ["needs:serendipity-2018"]}),
             nbformat.v4.new_markdown_cell("## Method, no data needed"),
             nbformat.v4.new_code_cell("both()", metadata={"tags": ["needs:serendipity-2018",
                                                                     "needs:taobao-serendipity"]}),
             nbformat.v4.new_code_cell("taobao()", metadata={"tags": ["needs:taobao-serendipity"]})]
    return nbformat.v4.new_notebook(cells=cells)


@pytest.fixture
def only_taobao_missing(monkeypatch):
    monkeypatch.setattr(data_needed, "locate", lambda name: None if name == "taobao-serendipity" else object())


def test_nothing_missing_leaves_the_notebook_as_it_is(monkeypatch):
    monkeypatch.setattr(data_needed, "locate", lambda name: object())
    original = notebook()
    reduced, missing = notebook_for_available_data(original, ["serendipity-2018", "taobao-serendipity"])
    assert reduced is original and missing == []


def test_cells_needing_a_missing_dataset_are_left_out_and_a_box_opens_the_chapter(only_taobao_missing):
    reduced, missing = notebook_for_available_data(notebook(), ["serendipity-2018", "taobao-serendipity"])
    assert missing == ["taobao-serendipity"]
    sources = [cell.source for cell in reduced.cells]
    assert "both()" not in sources and "taobao()" not in sources
    assert sources[0] == "# Title" and "study = load()" in sources and "## Method, no data needed" in sources
    box = reduced.cells[1]
    assert box.metadata["tags"] == [DATA_NEEDED_TAG]
    assert "Taobao" in box.source
    assert ("recjudge data fetch taobao-serendipity" in box.source
            or "cannot be downloaded automatically" in box.source)
    assert "Licence:" in box.source and "RECJUDGE_DATA_MIRROR" in box.source
    assert "2 steps" in box.source
    nbformat.validate(reduced)


def test_a_run_that_does_not_declare_the_dataset_keeps_every_cell(only_taobao_missing):
    """The synthetic variant of a chapter declares no mirror dataset: it runs whole."""
    original = notebook()
    reduced, missing = notebook_for_available_data(original, ["serendipity-2018"])
    assert reduced is original and missing == []


def test_every_needs_tag_in_the_notebooks_names_a_registered_dataset():
    from pathlib import Path

    from recjudge.compendium.runplan import NOTEBOOK_SUFFIXES, read_source_notebook
    from recjudge.data.registry import REGISTRY
    for path in sorted((Path(__file__).resolve().parents[1] / "notebooks").iterdir()):
        if path.suffix not in NOTEBOOK_SUFFIXES:
            continue
        for cell in read_source_notebook(path).cells:
            unknown = data_needed.needed_datasets(cell) - set(REGISTRY)
            assert not unknown, f"{path.name}: unknown dataset(s) in needs: tags {sorted(unknown)}"


def test_variant_cells_run_only_in_their_variant():
    from recjudge.compendium.cell_selection import notebook_for_variant

    cells = [nbformat.v4.new_markdown_cell("# The study", metadata={"tags": ["only:default"]}),
             nbformat.v4.new_markdown_cell("# A pipeline demonstration", metadata={"tags": ["only:synthetic"]}),
             nbformat.v4.new_code_cell("shared()"),
             nbformat.v4.new_code_cell("paper_beside_ours()", metadata={"tags": ["only:default", "needs:x"]})]
    original = nbformat.v4.new_notebook(cells=cells)
    default = notebook_for_variant(original, None)
    assert [c.source for c in default.cells] == ["# The study", "shared()", "paper_beside_ours()"]
    synthetic = notebook_for_variant(original, "synthetic")
    assert [c.source for c in synthetic.cells] == ["# A pipeline demonstration", "shared()"]
    untagged = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("shared()")])
    assert notebook_for_variant(untagged, "synthetic") is untagged
