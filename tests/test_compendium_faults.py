"""Faults of the book's plumbing: names that leave results/, run-plan values papermill cannot inject, runs that are
interrupted or run twice at once, and Ctrl-C."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest
from child_process import default_sigint
from runplan_project import write_notebook, write_plan

from recjudge.compendium import runplan
from recjudge.compendium.results import save_table
from recjudge.compendium.runplan import Run, RunPlanError, load_runplan


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project holding one tiny notebook, its results and store under tmp_path."""
    root = tmp_path / "project"
    write_notebook(root / "notebooks" / "tiny.ipynb", "print('result', value * 2)")
    monkeypatch.setenv("RECJUDGE_HOME", str(root))
    monkeypatch.setenv("RECJUDGE_RESULTS", str(root / "results"))
    return root


@pytest.mark.parametrize("name", ["..", ".", ".hidden", "../x", "a/b", "/etc"])
def test_save_table_refuses_names_that_are_no_plain_file_name(name, tmp_path, monkeypatch):
    monkeypatch.setenv("RECJUDGE_RESULTS", str(tmp_path / "results"))
    for notebook, table in ((name, "table"), ("chapter", name)):
        with pytest.raises(ValueError, match="plain file name"):
            save_table(pd.DataFrame({"a": [1]}), notebook, table)
    assert not any(tmp_path.rglob("*.csv"))


@pytest.mark.parametrize("value, problem", [
    ("2024-01-01", "a YAML date value"),
    ("!!set {a: null}", "a YAML set value"),
    ("!!binary aGVsbG8=", "a YAML bytes value"),
    ("[1, 2024-01-01]", "a YAML date value"),
    ("{1: a}", "a mapping whose keys are not all strings"),
    (".inf", "inf is not a finite number"),
])
def test_run_plan_values_papermill_cannot_inject_are_refused_by_name(project, value, problem):
    write_plan(project, "runs:\n  - name: tiny\n    notebook: notebooks/tiny.ipynb\n"
                        f"    parameters:\n      value: {value}\n")
    with pytest.raises(RunPlanError, match=rf"run #1 .*'tiny'.*'parameters', 'value': {problem}"):
        load_runplan(root=project, known_datasets=set())


def test_run_plan_values_papermill_can_inject_are_kept(project):
    write_notebook(project / "notebooks" / "tiny.ipynb", "print('result', value)", parameters="value = {}")
    write_plan(project, "runs:\n  - name: tiny\n    notebook: notebooks/tiny.ipynb\n"
                        "    parameters:\n      value: {a: [1, 2.5, 'x', null, true]}\n")
    (run,) = load_runplan(root=project, known_datasets=set())
    assert run.parameters == {"value": {"a": [1, 2.5, "x", None, True]}}


def test_an_interrupted_run_leaves_no_temporary_notebook_and_two_runs_never_share_one(project, monkeypatch):
    import papermill

    seen = []

    def interrupted(source, output, **kwargs):
        seen.append(Path(output))
        assert Path(output).exists()
        raise KeyboardInterrupt

    monkeypatch.setattr(papermill, "execute_notebook", interrupted)
    run = Run("tiny", "notebooks/tiny.ipynb", {"value": 2})
    output = run.output_path(project)
    for _ in range(2):
        with pytest.raises(KeyboardInterrupt):
            runplan.execute_notebook(run, project, output, project / "failed.ipynb")
    assert len(set(seen)) == 2, "two runs of one chapter wrote to the same temporary notebook"
    assert not any(output.parent.glob(".*")), sorted(p.name for p in output.parent.iterdir())
    assert not output.exists()


CHILD = textwrap.dedent("""
    import sys, time, types
    from recjudge import cli
    slow = types.ModuleType("slow")
    slow.add_arguments = lambda parser: None
    def run_command(args):
        print("READY", flush=True)
        time.sleep(60)
        return 0
    slow.run_command = run_command
    sys.modules["slow"] = slow
    cli.SUBCOMMANDS["slow"] = ("slow", "a command that waits")
    sys.exit(cli.main(["slow"]))
""")


def test_ctrl_c_ends_a_command_with_one_line_and_status_130():
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=default_sigint)
    assert child.stdout.readline().strip() == "READY"
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=60)
    assert child.returncode == 130, err
    assert "Traceback" not in err and err.strip() == "recjudge slow: interrupted"
