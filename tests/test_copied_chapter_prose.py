"""A student's copied chapter run on another dataset: its title is its own (the table of contents never shows two
identical titles, and the page says which line to retitle), and its prose names the dataset its parameters set,
never the original's (README, "Changing a chapter"; book/adapt_chapter.md)."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import nbformat
import pytest

from recjudge.chapters.normalised_surprise import dataset_difference
from recjudge.compendium.labels import titles
from recjudge.compendium.runplan.execution import _title_copy
from recjudge.compendium.runplan.parameters import read_source_notebook
from recjudge.compendium.runplan.run import Run
from recjudge.data import movielens_name

ROOT = Path(__file__).resolve().parents[1]
#: The parameters through which a chapter chooses its MovieLens release.
DATASET_PARAMETERS = ("DATASET", "dataset")


def _executed(project: Path, run: Run) -> nbformat.NotebookNode:
    """The run's notebook as the run leaves it (its execution is not what is tested: its source stands for it)."""
    path = project / "executed.ipynb"
    nbformat.write(read_source_notebook(project / run.notebook), path)
    _title_copy(path, run, project)
    return nbformat.read(path, as_version=4)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "notebooks").mkdir()
    shutil.copy(ROOT / "notebooks" / "normalised_surprise.md", tmp_path / "notebooks" / "normalised_surprise.md")
    shutil.copy(ROOT / "notebooks" / "normalised_surprise.md", tmp_path / "notebooks" / "my_surprise.md")  # README
    return tmp_path


def test_a_copy_that_kept_its_originals_title_is_titled_by_its_run_and_says_which_line_to_edit(project) -> None:
    original = titles(read_source_notebook(project / "notebooks" / "normalised_surprise.md"))
    copy = _executed(project, Run("my_surprise", "notebooks/my_surprise.md", {"DATASET": "100k"}))
    own = _executed(project, Run("normalised_surprise", "notebooks/normalised_surprise.md"))

    assert titles(own) == original  # the original's page is untouched
    assert titles(copy)[0] != original[0] and "my_surprise" in titles(copy)[0]
    line = next(number for number, text in enumerate(
        (project / "notebooks" / "my_surprise.md").read_text().splitlines(), start=1) if text == f"# {original[0]}")
    assert f"edit line {line} of `notebooks/my_surprise.md`" in "".join(
        cell.source for cell in copy.cells if cell.cell_type == "markdown")


def test_a_copy_with_a_title_of_its_own_keeps_it(project) -> None:
    source = project / "notebooks" / "my_surprise.md"
    source.write_text(source.read_text().replace("# Normalised surprise and the limits to surprise",
                                                 "# Surprise on MovieLens 100K", 1))
    copy = _executed(project, Run("my_surprise", "notebooks/my_surprise.md", {"DATASET": "100k"}))
    assert titles(copy)[0] == "Surprise on MovieLens 100K"
    assert "A copy of the chapter" not in "".join(cell.source for cell in copy.cells if cell.cell_type == "markdown")


def _dataset_default(notebook: nbformat.NotebookNode) -> str | None:
    for cell in notebook.cells:
        if cell.cell_type == "code" and "parameters" in cell.metadata.get("tags", []):
            for statement in ast.parse(cell.source).body:
                if isinstance(statement, ast.Assign) and any(
                        getattr(target, "id", None) in DATASET_PARAMETERS for target in statement.targets):
                    return ast.literal_eval(statement.value)
    return None


CHAPTERS_WITH_A_DATASET = [path.stem for path in sorted((ROOT / "notebooks").glob("*.md"))
                           if _dataset_default(read_source_notebook(path))]


def test_some_chapters_choose_their_movielens_release() -> None:
    assert {"normalised_surprise", "recommender_reevaluation", "metamorphic_recommender"} <= set(
        CHAPTERS_WITH_A_DATASET)


@pytest.mark.parametrize("chapter", CHAPTERS_WITH_A_DATASET)
def test_prose_names_the_dataset_only_through_its_parameter(chapter: str) -> None:
    """Prose the run's own data shape (every markdown cell but a section about a named dataset, tagged ``needs:``)
    never types the default dataset's name: a copy run on another release would contradict itself."""
    notebook = read_source_notebook(ROOT / "notebooks" / f"{chapter}.md")
    default_name = movielens_name(_dataset_default(notebook))
    typed = [cell.source for cell in notebook.cells if cell.cell_type == "markdown"
             and not any(tag.startswith("needs:") for tag in cell.metadata.get("tags", []))
             and default_name in cell.source]
    assert typed == []


def test_the_surprise_verdict_names_the_runs_dataset() -> None:
    assert dataset_difference("100k") == "Another dataset (ML-100K, not MovieLens-1M)"
    assert "ml-latest-small" in dataset_difference("latest-small")
    assert "Another dataset" not in dataset_difference("1m")
