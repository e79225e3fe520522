"""A student adapts a chapter as the page "Adapt a chapter" (book/adapt_chapter.md) says: copies it under a new name,
adds it to the run plan and the table of contents, sets parameters, runs it with ``recjudge run --only NAME`` and
sees it in the book; the checkout stays clean for everything else.

The copy is of the surprise chapter (no LLM, embedded data), at a cut scale (parameters of the run plan entry), in a
temporary project pointed at by RECJUDGE_HOME, so that the repository is only read."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from recjudge.compendium import labels

REPOSITORY = Path(__file__).resolve().parents[1]
ORIGINAL = "normalised_surprise"
COPY = "my_surprise"
#: The scale of the copy's run: a few instances, one interval, one user, one item model (the chapter's cells still
#: all run; the numbers are not the chapter's).
CUT_SCALE = ("{EXP1_SEEDS: 5, GAP_SIZES: [6], GAP_INSTANCES: 2, MAX_INTERVALS: 1, MAX_USERS_PER_INTERVAL: 1, "
             "MODELS: [U], P_EPOCHS: 1}")


def plan(copy_parameters: str) -> str:
    return (f"runs:\n  - name: {ORIGINAL}\n    notebook: notebooks/{ORIGINAL}.md\n"
            f"    datasets: [movielens-latest-small]\n"
            f"  - name: {COPY}\n    notebook: notebooks/{COPY}.md\n    parameters: {copy_parameters}\n"
            f"    datasets: [movielens-latest-small]\n")


def recjudge(project: Path, *arguments: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "RECJUDGE_HOME": str(project),
                   "PYTHONPATH": os.pathsep.join([str(REPOSITORY / "src"), os.environ.get("PYTHONPATH", "")])}
    environment.pop("RECJUDGE_DATA_MIRROR", None)  # the embedded sample: the same data everywhere
    environment.pop("RECJUDGE_RESULTS", None)
    return subprocess.run([sys.executable, "-m", "recjudge", *arguments], cwd=project, env=environment,
                          capture_output=True, text=True, timeout=600)


def snapshot(folder: Path) -> dict[str, str]:
    return {path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in folder.rglob("*") if path.is_file() and not path.is_symlink()
            and "data" not in path.relative_to(folder).parts[:1]}


def git_status() -> str | None:
    if not (REPOSITORY / ".git").exists() or shutil.which("git") is None:
        return None
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=REPOSITORY,
                          capture_output=True, text=True, check=True).stdout


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """What a student's checkout holds for this path: the package's marker, the embedded sample, the original
    chapter, the copy (made with cp, nothing edited), and the run plan and table of contents with both."""
    shutil.copy(REPOSITORY / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "sample").symlink_to(REPOSITORY / "data" / "sample", target_is_directory=True)
    (tmp_path / "notebooks").mkdir()
    shutil.copy(REPOSITORY / "notebooks" / f"{ORIGINAL}.md", tmp_path / "notebooks" / f"{ORIGINAL}.md")
    shutil.copy(REPOSITORY / "notebooks" / f"{ORIGINAL}.md", tmp_path / "notebooks" / f"{COPY}.md")
    (tmp_path / "runplan.yaml").write_text(plan(CUT_SCALE))
    (tmp_path / "_toc.yml").write_text(
        "format: jb-book\nroot: book/intro\nparts:\n  - caption: III. Surprise\n    numbered: true\n    chapters:\n"
        f"      - file: book/notebooks/{ORIGINAL}\n      - file: book/notebooks/{COPY}\n")
    return tmp_path


def test_a_student_copies_a_chapter_runs_it_and_only_its_own_files_appear(project: Path) -> None:
    repository_before = git_status()
    before = snapshot(project)

    finished = recjudge(project, "run", "--only", COPY)
    assert finished.returncode == 0, finished.stdout + finished.stderr

    # Only the copy's outputs appeared; nothing the student had was changed.
    after = snapshot(project)
    assert {path: digest for path, digest in after.items() if path in before} == before
    new = sorted(set(after) - set(before))
    assert f"book/notebooks/{COPY}.ipynb" in new
    assert any(path.startswith(f"results/{COPY}/") for path in new)
    unexpected = [path for path in new if not path.startswith((f"book/notebooks/{COPY}.ipynb", f"results/{COPY}/",
                                                               ".runplan-cache/"))]
    assert unexpected == []
    assert git_status() == repository_before

    # The copy ran under its own name, with the student's parameters, never editing NOTEBOOK.
    executed = nbformat.read(project / "book" / "notebooks" / f"{COPY}.ipynb", as_version=4)
    namespace: dict = {}
    for cell in executed.cells:
        if "injected-parameters" in cell.metadata.get("tags", []):
            exec(cell.source, namespace)  # noqa: S102 - papermill's own cell of literals
    assert namespace["NOTEBOOK"] == COPY and namespace["MAX_USERS_PER_INTERVAL"] == 1
    assert not (project / "results" / ORIGINAL).exists()

    # Its figure labels, as the book reads them, are its own: none is one of the original chapter's.
    original = json.loads(_as_notebook(project / "notebooks" / f"{ORIGINAL}.md"))
    original_labels = labels.defined_labels(labels.relabel(original, ORIGINAL))
    copy_labels = labels.defined_labels(labels.relabel(json.loads(nbformat.writes(executed)), COPY))
    assert "fig-greedy-ratio" in original_labels
    assert len(copy_labels) == len(original_labels) and not set(copy_labels) & set(original_labels)
    assert f"fig-{COPY}-greedy-ratio" in copy_labels

    # A number given as text is refused before anything runs, naming the parameter and the type it must have.
    (project / "runplan.yaml").write_text(plan('{N_SAMPLED: "20"}'))
    refused = recjudge(project, "run", "--only", COPY)
    assert refused.returncode == 2
    assert "parameter 'N_SAMPLED': '20' is str" in refused.stderr
    assert "a whole number (int)" in refused.stderr
    # ... and a text outside the values the notebook declares, naming them.
    (project / "runplan.yaml").write_text(plan("{DATASET: 10m}"))
    refused = recjudge(project, "run", "--only", COPY, "--list")
    assert refused.returncode == 2
    assert "'DATASET': '10m' is not one of the values the notebook allows: 'latest-small', '100k', '1m'" in \
        refused.stderr


def _as_notebook(path: Path) -> str:
    from recjudge.compendium.runplan import read_source_notebook

    return nbformat.writes(read_source_notebook(path))


# ---------------------------------------------------------------------------------------------------------------
# The book gives each run of a chapter its own labels (recjudge.compendium.sphinx_extension's source-read hook)


def chapter(name: str) -> nbformat.NotebookNode:
    """A chapter whose own run is ``name``: a table labelled ``tbl-demo`` and a reference to it."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_markdown_cell(f"# Chapter {name}\n\nSee {{numref}}`tbl-demo`."),
        nbformat.v4.new_code_cell(f'NOTEBOOK = "{name}"', metadata={"tags": ["parameters"]}),
        nbformat.v4.new_markdown_cell("```{list-table} Demo\n:name: tbl-demo\n\n* - a\n  - b\n```"),
    ]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.metadata["language_info"] = {"name": "python"}
    return notebook


def test_two_runs_of_one_chapter_build_with_warnings_as_errors_each_citing_its_own_table(tmp_path: Path) -> None:
    folder = tmp_path / "book" / "notebooks"
    folder.mkdir(parents=True)
    nbformat.write(chapter("demo"), folder / "demo.ipynb")
    nbformat.write(chapter("demo"), folder / "demo_copy.ipynb")  # the copy, as cp made it
    (tmp_path / "index.md").write_text("# Book\n\n```{toctree}\nbook/notebooks/demo\nbook/notebooks/demo_copy\n```\n")
    (tmp_path / "conf.py").write_text('extensions = ["myst_nb", "recjudge.compendium.sphinx_extension"]\n'
                                      'nb_execution_mode = "off"\nnumfig = True\n')
    built = subprocess.run([sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", str(tmp_path),
                            str(tmp_path / "_build")], capture_output=True, text=True, timeout=300,
                           env={**os.environ, "PYTHONPATH": str(REPOSITORY / "src")})
    assert built.returncode == 0, built.stderr
    original = (tmp_path / "_build" / "book" / "notebooks" / "demo.html").read_text()
    copy = (tmp_path / "_build" / "book" / "notebooks" / "demo_copy.html").read_text()
    assert 'id="tbl-demo"' in original and 'href="#tbl-demo"' in original  # the chapter's own run: as written
    assert 'id="tbl-demo-copy-demo"' in copy and 'href="#tbl-demo-copy-demo"' in copy
    assert 'id="tbl-demo"' not in copy
