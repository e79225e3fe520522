"""A book of a few chapters (`recjudge book --only NAME`): only the named runs and the runs whose tables they read
are executed, every other chapter is a page marked "Not run in this build", and nothing tracked is written (a tiny
project of fake chapters; the execution and the Jupyter Book build are replaced by stand-ins)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from recjudge.cli import main
from recjudge.compendium import book as book_module
from recjudge.compendium import runplan
from recjudge.compendium.preview_book import PreviewBookError, runs_needed, stage_preview_book
from recjudge.compendium.runplan import Run
from recjudge.compendium.variant_book import NOTE_CELL_ID

TOC = """format: jb-book
root: book/intro
chapters:
  - file: book/notebooks/tables
  - file: book/notebooks/reader
  - file: book/notebooks/my_copy
  - file: book/notebooks/other
"""
CONFIG = """title: "recjudge"
sphinx:
  config:
    html_static_path: [vendor, book/_static]
"""
RUNS = [Run("tables", "notebooks/tables.md"), Run("reader", "notebooks/reader.md", results_of=("tables",)),
        Run("my_copy", "notebooks/my_copy.md"), Run("other", "notebooks/other.md", variant="synthetic")]


def executed(path: Path, title: str) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_markdown_cell(f"# {title}\n\nExecuted.")]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, path)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    (root / "book" / "_static").mkdir(parents=True)
    (root / "book" / "intro.md").write_text("# The book\n")
    (root / "_toc.yml").write_text(TOC)
    (root / "_config.yml").write_text(CONFIG)
    (root / "notebooks").mkdir()
    for run in RUNS:
        (root / run.notebook).write_text(f"---\njupytext: {{}}\n---\n\n# Title of {run.name}\n\nProse.\n")
    (root / "results" / "my_copy").mkdir(parents=True)
    (root / "results" / "my_copy" / "table.csv").write_text("x\n1\n")
    monkeypatch.setenv("RECJUDGE_HOME", str(root))
    monkeypatch.delenv("RECJUDGE_RESULTS", raising=False)
    monkeypatch.chdir(root)
    return root


def test_a_preview_runs_the_named_chapters_and_the_ones_whose_tables_they_read():
    assert [run.name for run in runs_needed(RUNS, ["reader"])] == ["tables", "reader"]
    assert [run.name for run in runs_needed(RUNS, ["my_copy"])] == ["my_copy"]
    with pytest.raises(PreviewBookError, match="--only nope: no such run in runplan.yaml"):
        runs_needed(RUNS, ["nope"])


def test_a_preview_shows_the_named_chapter_and_marks_every_other_not_run(project: Path):
    executed(project / "book" / "notebooks" / "my_copy.ipynb", "My copy")
    executed(project / "book" / "notebooks" / "tables.ipynb", "Tables")  # executed earlier, not asked for now
    source = stage_preview_book(project, RUNS, ["my_copy"])
    assert source == project / "_build" / "preview" / "source"
    pages = {run.name: nbformat.read(source / "book" / "notebooks" / f"{run.name}.ipynb", as_version=4)
             for run in RUNS}
    assert pages["my_copy"].cells[0].source == "# My copy\n\nExecuted."
    for name in ("tables", "reader", "other"):
        cells = pages[name].cells
        assert cells[0].source.startswith(f"# Title of {name}") and cells[1]["id"] == NOTE_CELL_ID
        assert "Not run in this build" in cells[1].source and "recjudge book --only my_copy" in cells[1].source
    assert pages["other"].cells[0].source == "# Title of other (synthetic)"  # a variant's title differs
    assert (source / "_toc.yml").read_text() == TOC
    assert (source / "results" / "my_copy" / "table.csv").read_text() == "x\n1\n"
    assert "only my_copy" in (source / "_config.yml").read_text()
    assert (project / "_build" / "preview" / "html").resolve() == (source / "_build" / "html").resolve()
    with pytest.raises(PreviewBookError, match="not in _toc.yml"):
        stage_preview_book(project, [*RUNS, Run("unlisted", "notebooks/other.md")], ["unlisted"])


def test_recjudge_book_only_executes_only_what_the_chapter_needs_and_builds_the_preview(
        project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture):
    executed_runs, built = [], []

    def fake_execute(runs, root, **_):
        for run in runs:
            executed_runs.append(run.name)
            executed(run.output_path(root), run.name)
        return []

    def fake_build(root: Path, *, all_pages: bool = False, source: Path | None = None) -> None:
        built.append(source)
        (source / "_build" / "html").mkdir(parents=True, exist_ok=True)
        (source / "_build" / "html" / "index.html").write_text("<html>preview</html>")

    monkeypatch.setattr(runplan, "load_runplan", lambda root: RUNS)
    monkeypatch.setattr(runplan, "execute_plan", fake_execute)
    monkeypatch.setattr(book_module, "build_html", fake_build)
    monkeypatch.setattr(book_module, "ensure_mathjax", lambda root: root / "vendor" / "mathjax")
    assert main(["book", "--only", "reader"]) == 0
    assert executed_runs == ["tables", "reader"]
    assert built == [project / "_build" / "preview" / "source"]
    assert "built a preview of reader" in capsys.readouterr().out
    assert not (project / "_build" / "html").exists()  # the whole book's build is untouched
    assert main(["book", "--only", "reader", "--publish", "folder:/tmp/x"]) == 2
    assert "--only builds a preview" in capsys.readouterr().err
