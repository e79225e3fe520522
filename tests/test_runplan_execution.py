"""Executing the plan with papermill (``runplan.execution``; a real kernel, tiny notebooks): skipped when unchanged,
failures named, the run's name and values given to the page."""

from __future__ import annotations

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
