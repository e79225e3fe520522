"""Executing the plan with papermill (``runplan.execution``; a real kernel, tiny notebooks): skipped when unchanged,
failures named, the run's name and values given to the page."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import nbformat
import pytest
from runplan_project import make_project, write_notebook, write_plan

from recjudge.compendium import runplan
from recjudge.compendium.runplan import (
    Run,
    RunFailedError,
    RunPlanError,
    execute_plan,
    load_runplan,
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return make_project(tmp_path, monkeypatch)


def test_execute_then_skip_then_rerun_on_store_change(project: Path) -> None:
    run = Run("tiny", "notebooks/tiny.ipynb", {"value": 21})
    messages: list[str] = []
    (first,) = execute_plan([run], project, log=messages.append)
    assert first.status == "executed"
    executed = nbformat.read(run.output_path(project), as_version=4)
    outputs = "".join(output.get("text", "") for cell in executed.cells for output in cell.get("outputs", []))
    assert "result 42" in outputs, "the run's parameter must reach the notebook"
    injected = [cell for cell in executed.cells if "injected-parameters" in cell.metadata.get("tags", [])]
    assert len(injected) == 1 and "remove-cell" not in injected[0].metadata["tags"], "the run's values are shown"
    assert injected[0].source.startswith(runplan.RUN_PARAMETERS_HEADING + "\n")

    (second,) = execute_plan([run], project, log=messages.append)
    assert second.status == "skipped"

    (project / "data" / "llm" / "replies.jsonl").write_text('{"key": "a", "reply": "5"}\n')
    (third,) = execute_plan([run], project, log=messages.append)
    assert third.status == "executed" and "store" in third.reason


def test_failure_names_notebook_and_cell_and_keeps_earlier_runs(project: Path) -> None:
    write_notebook(project / "notebooks" / "broken.ipynb", "raise ValueError('bad column rating_x')")
    good = Run("tiny", "notebooks/tiny.ipynb")
    broken = Run("broken", "notebooks/broken.ipynb")
    broken.output_path(project).parent.mkdir(parents=True, exist_ok=True)
    broken.output_path(project).write_text("last good output")

    with pytest.raises(RunFailedError) as caught:
        execute_plan([good, broken], project, log=lambda message: None)
    message = str(caught.value)
    assert "run 'broken': notebook notebooks/broken.ipynb failed in cell" in message
    assert "ValueError: bad column rating_x" in message
    assert good.output_path(project).is_file()
    assert runplan.RunCache(project / runplan.CACHE_DIR).load(good) is not None, "the successful run is recorded"
    assert broken.output_path(project).read_text() == "last good output", "a failure never replaces the output"
    assert (project / ".runplan-cache" / "failed" / "broken.ipynb").is_file()
    assert runplan.RunCache(project / runplan.CACHE_DIR).load(broken) is None


MYST_NOTEBOOK = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# A chapter written as text

```{code-cell} ipython3
:tags: [parameters]

value = 1  # a parameter = documented
```

Prose between the cells.

```{code-cell} ipython3
print('text result', value * 3)
```
"""


def test_a_myst_text_notebook_is_validated_and_executed(project: Path) -> None:
    (project / "notebooks" / "text.md").write_text(MYST_NOTEBOOK)
    write_plan(project, "runs:\n  - name: text\n    notebook: notebooks/text.md\n    parameters: {value: 5}\n")
    (run,) = load_runplan(project / "runplan.yaml", root=project, known_datasets=set())
    (result,) = execute_plan([run], project, log=lambda message: None)
    assert result.status == "executed"
    executed = nbformat.read(run.output_path(project), as_version=4)
    assert executed.cells[0].source == "# A chapter written as text"
    outputs = "".join(output.get("text", "") for cell in executed.cells for output in cell.get("outputs", []))
    assert "text result 15" in outputs
    assert not list((project / "book" / "notebooks").glob(".*")), "no temporary notebook is left behind"
    write_plan(project, "runs:\n  - name: text\n    notebook: notebooks/text.md\n    parameters: {valeu: 5}\n")
    with pytest.raises(RunPlanError, match=r"\['valeu'\] not in the parameters cell of notebooks/text.md"):
        load_runplan(project / "runplan.yaml", root=project, known_datasets=set())


def test_a_runs_kernel_is_told_the_runs_name(project: Path) -> None:
    run = Run("copy", "notebooks/copy.ipynb", {}, (), 60)
    assert runplan.Target.book(project).run_environment(run)["RECJUDGE_RUN_NAME"] == "copy"


def test_a_build_records_which_chapters_were_executed_from_other_sources(project: Path) -> None:
    """What `recjudge book` writes into build-info.json (`chapters`) and publishing compares: a chapter whose
    notebook changed after its execution, or that was never executed, does not match its sources."""
    run = Run("tiny", "notebooks/tiny.ipynb", {"value": 21})
    assert runplan.executed_from([run], project)["tiny"]["executed"] is None
    execute_plan([run], project, log=lambda line: None)
    state = runplan.executed_from([run], project)["tiny"]
    assert state["executed"] == state["fingerprint"]
    write_notebook(project / "notebooks" / "tiny.ipynb", "print('result', value * 3)")
    state = runplan.executed_from([run], project)["tiny"]
    assert state["executed"] is not None and state["executed"] != state["fingerprint"]


@pytest.mark.parametrize("parameters_tags, shown", [(["parameters"], True), (["parameters", "remove-cell"], False)])
def test_the_runs_values_are_shown_where_the_page_shows_its_parameters(tmp_path: Path, parameters_tags, shown):
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("value = 1", metadata={"tags": parameters_tags}),
                      nbformat.v4.new_code_cell("# Parameters\nvalue = 21\n",
                                                metadata={"tags": ["injected-parameters"]})]
    path = tmp_path / "executed.ipynb"
    nbformat.write(notebook, path)
    runplan.execution._show_run_parameters(path)
    injected = nbformat.read(path, as_version=4).cells[1]
    assert ("remove-cell" not in injected.metadata["tags"]) is shown
    assert injected.source == f"{runplan.RUN_PARAMETERS_HEADING}\nvalue = 21\n"
    assert injected["id"] == "injected-parameters-0"


def test_a_runs_kernel_talks_over_local_sockets_not_tcp(project: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """A chapter's kernel is local: it is reached over IPC sockets in a private folder, so no TCP port is opened (no
    "Kernel is running over TCP without encryption" warning, no port another process can take between its choice
    and the kernel's bind) and nothing is left behind."""
    import tempfile

    before = set(Path(tempfile.gettempdir()).glob("recjudge-kernel-*"))
    write_notebook(project / "notebooks" / "transport.ipynb",
                   "from ipykernel.kernelapp import IPKernelApp\n"
                   "print('transport', IPKernelApp.instance().transport)")
    run = Run("transport", "notebooks/transport.ipynb")
    (outcome,) = execute_plan([run], project, log=lambda message: None)
    assert outcome.status == "executed"
    executed = nbformat.read(run.output_path(project), as_version=4)
    outputs = "".join(output.get("text", "") for cell in executed.cells for output in cell.get("outputs", []))
    assert "transport ipc" in outputs
    assert "TCP" not in capfd.readouterr().err
    # Another test worker's kernels may be running beside this one, each in a folder named after its live manager:
    # left behind is a new folder of this process or of a process that has ended.
    from recjudge.llm.serve_local import _alive

    def alive(folder: Path) -> bool:
        pid = int(folder.name.split("-")[2])
        return pid != os.getpid() and _alive(pid)

    new = set(Path(tempfile.gettempdir()).glob("recjudge-kernel-*")) - before
    assert {folder for folder in new if not alive(folder)} == set()


def test_the_socket_folders_of_a_stopped_run_are_removed_by_the_next(project: Path) -> None:
    """A run stopped by a signal cannot shut its kernels down: their socket folders, named after the process that
    managed them, are removed when a later run starts a kernel (a folder of a process still running stays)."""
    import os
    import tempfile

    no_such_process = int(Path("/proc/sys/kernel/pid_max").read_text())  # process ids are below it
    stale = Path(tempfile.mkdtemp(prefix=f"recjudge-kernel-{no_such_process}-"))
    running = Path(tempfile.mkdtemp(prefix=f"recjudge-kernel-{os.getpid()}-"))
    try:
        (outcome,) = execute_plan([Run("tiny", "notebooks/tiny.ipynb")], project, log=lambda message: None)
        assert outcome.status == "executed"
        assert not stale.exists() and running.exists()
    finally:
        for folder in (stale, running):
            if folder.exists():
                folder.rmdir()


def test_a_build_says_what_differs_when_a_chapter_read_other_data(project: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A maintainer who ran the book with the data mirror and built it again in a shell without it was told that
    the chapters "were not executed from the sources" of the commit: what differs is the data they read."""
    from recjudge.compendium.runplan import fingerprints

    monkeypatch.setattr(fingerprints, "dataset_fingerprint",
                        lambda name, hasher: {"file.csv": "sha-of-" + os.environ.get("RECJUDGE_DATA_MIRROR", "none")})
    run = Run("tiny", "notebooks/tiny.ipynb", {"value": 21}, ("serendipity-2018",))
    monkeypatch.setenv("RECJUDGE_DATA_MIRROR", "/the/mirror")
    execute_plan([run], project, log=lambda line: None)
    assert runplan.executed_from([run], project)["tiny"]["differs"] == []
    monkeypatch.delenv("RECJUDGE_DATA_MIRROR")
    assert runplan.executed_from([run], project)["tiny"]["differs"] == ["datasets"]


def test_a_table_edited_after_its_run_is_noticed_and_written_again(project: Path) -> None:
    """A committed results table edited by hand was published as a full book, the page saying one number and its
    download another: the run records each table's hash as it wrote it, a build reports a table that differs, and
    the next `recjudge run` executes the chapter again."""
    write_notebook(project / "notebooks" / "tiny.ipynb",
                   "from recjudge.compendium.results import save_table\nimport pandas as pd\n"
                   "save_table(pd.DataFrame({'r': [value]}), 'tiny', 'table')")
    run = Run("tiny", "notebooks/tiny.ipynb", {"value": 21})
    execute_plan([run], project, log=lambda line: None)
    table = project / "results" / "tiny" / "table.csv"
    assert table.read_text() == "r\n21\n"
    state = runplan.executed_from([run], project)["tiny"]
    assert state["results"] == {"table.csv": hashlib.sha256(b"r\n21\n").hexdigest()}
    assert state["tables_changed"] == []
    table.write_text("r\n99\n")
    assert runplan.executed_from([run], project)["tiny"]["tables_changed"] == ["table.csv"]
    messages: list[str] = []
    (again,) = execute_plan([run], project, log=messages.append)
    assert again.status == "executed" and "tables" in again.reason, messages
    assert table.read_text() == "r\n21\n"
    (unchanged,) = execute_plan([run], project, log=messages.append)
    assert unchanged.status == "skipped"


def test_a_warning_in_a_chapter_is_kept_off_its_page_and_reported_by_the_run(project: Path) -> None:
    """A matplotlib UserWarning, with the builder's source path, was printed into a variant's page and published in
    its sources: a kernel's warnings go to the run's log, and the run names them."""
    write_notebook(project / "notebooks" / "tiny.ipynb",
                   "import warnings\nwarnings.warn('Tight layout not applied', UserWarning)\nprint('result', value)")
    run = Run("tiny", "notebooks/tiny.ipynb", {"value": 21})
    messages: list[str] = []
    execute_plan([run], project, log=messages.append)
    executed = nbformat.read(run.output_path(project), as_version=4)
    outputs = "".join(output.get("text", "") for cell in executed.cells for output in cell.get("outputs", []))
    assert "result 21" in outputs and "Warning" not in outputs and str(project) not in outputs
    said = [line for line in messages if "warning" in line]
    assert len(said) == 1 and "UserWarning: Tight layout not applied" in said[0], messages
