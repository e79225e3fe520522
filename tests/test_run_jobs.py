"""`recjudge run --jobs N`: independent runs at once, a page after the runs whose tables it reads, the same outputs
as an execution in order, and a failure handled as in order."""

from __future__ import annotations

import argparse
from pathlib import Path

import nbformat
import pytest

from recjudge.compendium import runplan
from recjudge.compendium.kernels import (
    OPENBLAS_THREAD_SOURCES,
    OPENBLAS_THREADS,
    SHARED_THREAD_VARIABLES,
    thread_share_environment,
)
from recjudge.compendium.runplan import Run, RunFailedError, execute_plan, executed_content

#: Seconds a barrier notebook waits for the other run before it fails (generous: the machine may be busy).
BARRIER_SECONDS = 300

BARRIER = f"""
import time
from pathlib import Path

Path(folder, me).write_text("here")
deadline = time.monotonic() + {BARRIER_SECONDS}
while not Path(folder, other).exists():
    if time.monotonic() > deadline:
        raise TimeoutError(f"{{me}}: {{other}} never started beside it")
    time.sleep(0.05)
Path("results", me).mkdir(parents=True, exist_ok=True)
Path("results", me, "table.csv").write_text(f"run,value\\n{{me}},1\\n")
"""

SUMMARY = """
from pathlib import Path

rows = [Path("results", name, "table.csv").read_text().splitlines()[1] for name in reads]
Path("results", "summary").mkdir(parents=True, exist_ok=True)
Path("results", "summary", "table.csv").write_text("run,value\\n" + "\\n".join(rows) + "\\n")
print(rows)
"""

WAITS = f"""
import time
from pathlib import Path

deadline = time.monotonic() + {BARRIER_SECONDS}
while not Path(path).exists():
    if time.monotonic() > deadline:
        raise TimeoutError(f"{{path}} never appeared")
    time.sleep(0.05)
Path("results", name).mkdir(parents=True, exist_ok=True)
Path("results", name, "table.csv").write_text("run,value\\nwaits,1\\n")
"""

#: The thread settings a kernel sees, in this order.
SEEN_THREADS = (*SHARED_THREAD_VARIABLES, OPENBLAS_THREADS)
THREADS = f"""
import os
from pathlib import Path

Path("results", name).mkdir(parents=True, exist_ok=True)
Path("results", name, "threads.txt").write_text(repr([os.environ.get(variable) for variable in {SEEN_THREADS!r}]))
"""

#: Numbers that exercise BLAS and a seeded generator, printed and written: the same whichever way the runs went.
NUMERIC = """
import numpy as np
import pandas as pd
from pathlib import Path

generator = np.random.default_rng(seed)
matrix = generator.normal(size=(200, 200))
values = np.linalg.solve(matrix @ matrix.T + np.eye(200), generator.normal(size=200))
table = pd.DataFrame({"i": range(5), "x": values[:5], "norm": np.linalg.norm(values)})
Path("results", name).mkdir(parents=True, exist_ok=True)
table.to_csv(Path("results", name, "table.csv"), index=False, float_format="%.17g")
table
"""


def write_notebook(path: Path, body: str, parameters: str) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(parameters, metadata={"tags": ["parameters"]}),
                      nbformat.v4.new_code_cell(body)]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, path)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    (root / "src" / "recjudge").mkdir(parents=True)
    (root / "src" / "recjudge" / "module.py").write_text("ANSWER = 1\n")
    (root / "data" / "llm").mkdir(parents=True)
    write_notebook(root / "notebooks" / "barrier.ipynb", BARRIER, "folder = ''\nme = ''\nother = ''")
    write_notebook(root / "notebooks" / "summary.ipynb", SUMMARY, "reads = []")
    write_notebook(root / "notebooks" / "numeric.ipynb", NUMERIC, "seed = 0\nname = ''")
    monkeypatch.setenv("RECJUDGE_HOME", str(root))
    monkeypatch.setenv("RECJUDGE_STORE", str(root / "data" / "llm"))
    monkeypatch.setenv("RECJUDGE_RESULTS", str(root / "results"))
    return root


def barrier_runs(root: Path) -> list[Run]:
    folder = str(root / "barrier")
    (root / "barrier").mkdir(exist_ok=True)
    return [Run("left", "notebooks/barrier.ipynb", {"folder": folder, "me": "left", "other": "right"}),
            Run("right", "notebooks/barrier.ipynb", {"folder": folder, "me": "right", "other": "left"})]


def test_independent_runs_execute_at_once(project: Path) -> None:
    # Each notebook waits until the other has started: only runs executing at the same time both finish.
    messages: list[str] = []
    outcomes = execute_plan(barrier_runs(project), project, log=messages.append, jobs=2)
    assert [(outcome.run.name, outcome.status) for outcome in outcomes] == [("left", "executed"),
                                                                            ("right", "executed")]
    assert (project / "results" / "left" / "table.csv").is_file()
    assert (project / "results" / "right" / "table.csv").is_file()
    # Each run's lines are printed together when it ends, and each names its run.
    assert all(message.startswith(("[run] left:", "[run] right:")) for message in messages)


def test_a_page_that_reads_other_runs_starts_after_them(project: Path) -> None:
    # Three workers for three runs: only the declared dependency (results_of) keeps the summary from starting at once.
    summary = Run("summary", "notebooks/summary.ipynb", {"reads": ["left", "right"]}, results_of=("left", "right"))
    messages: list[str] = []
    outcomes = execute_plan([*barrier_runs(project), summary], project, log=messages.append, jobs=3)
    assert [outcome.status for outcome in outcomes] == ["executed"] * 3
    started = messages.index("[run] summary: started")
    ended = [index for index, message in enumerate(messages)
             if message.startswith(("[run] left: done", "[run] right: done"))]
    assert len(ended) == 2 and max(ended) < started, messages
    assert (project / "results" / "summary" / "table.csv").read_text() == "run,value\nleft,1\nright,1\n"


def test_jobs_2_gives_the_outputs_of_jobs_1(project: Path) -> None:
    runs = [Run(f"numbers{seed}", "notebooks/numeric.ipynb", {"seed": seed, "name": f"numbers{seed}"})
            for seed in range(3)]
    runs.append(Run("summary", "notebooks/summary.ipynb", {"reads": [run.name for run in runs]},
                    results_of=tuple(run.name for run in runs)))

    def outputs() -> dict[str, bytes | str]:
        tables = {str(path.relative_to(project)): path.read_bytes() for path in (project / "results").rglob("*.csv")}
        notebooks = {run.name: executed_content(run.output_path(project)) for run in runs}
        return {**tables, **notebooks}

    execute_plan(runs, project, log=lambda message: None, jobs=1)
    in_order = outputs()
    assert len(in_order) == 2 * len(runs)
    execute_plan(runs, project, force=True, log=lambda message: None, jobs=2)
    assert outputs() == in_order


def test_a_failure_keeps_the_other_runs_work_and_is_raised(project: Path) -> None:
    write_notebook(project / "notebooks" / "broken.ipynb", "raise ValueError('bad column rating_x')", "value = 1")
    # The run beside the broken one ends only once the failure is on record, so the failure is known before a worker
    # is free for the third run.
    failed_copy = project / runplan.CACHE_DIR / "failed" / "broken.ipynb"
    write_notebook(project / "notebooks" / "waits.ipynb", WAITS, "path = ''\nname = ''")
    good = Run("waits", "notebooks/waits.ipynb", {"path": str(failed_copy), "name": "waits"})
    broken = Run("broken", "notebooks/broken.ipynb")
    after = Run("after", "notebooks/numeric.ipynb", {"seed": 2, "name": "after"})
    with pytest.raises(RunFailedError, match=r"run 'broken': notebook notebooks/broken.ipynb failed in cell"):
        execute_plan([good, broken, after], project, log=lambda message: None, jobs=2)
    cache = runplan.RunCache(project / runplan.CACHE_DIR)
    assert cache.load(good) is not None and good.output_path(project).is_file(), "the run beside it is kept"
    assert cache.load(broken) is None and failed_copy.is_file()
    # As in order: no run starts after a failure (the third waited for a free worker).
    assert not after.output_path(project).exists()


def clear_thread_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in {*SHARED_THREAD_VARIABLES, *OPENBLAS_THREAD_SOURCES}:
        monkeypatch.delenv(name, raising=False)


def test_each_kernel_gets_its_share_of_the_threads_but_openblas_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_thread_settings(monkeypatch)
    assert thread_share_environment(2, cpus=8) == {**dict.fromkeys(SHARED_THREAD_VARIABLES, "4"),
                                                   OPENBLAS_THREADS: "8"}
    assert thread_share_environment(3, cpus=2) == {**dict.fromkeys(SHARED_THREAD_VARIABLES, "1"),
                                                   OPENBLAS_THREADS: "2"}
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    # The caller's setting stands, and OpenBLAS follows it as it would alone.
    assert thread_share_environment(2, cpus=8) == {"MKL_NUM_THREADS": "4", "RECJUDGE_LOCAL_THREADS": "4"}


def test_a_kernel_started_with_jobs_sees_its_share(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clear_thread_settings(monkeypatch)
    write_notebook(project / "notebooks" / "threads.ipynb", THREADS, "name = ''")
    runs = [Run(name, "notebooks/threads.ipynb", {"name": name}) for name in ("one", "two")]
    execute_plan(runs, project, log=lambda message: None, jobs=2)
    expected = thread_share_environment(2)
    for name in ("one", "two"):
        seen = (project / "results" / name / "threads.txt").read_text()
        assert seen == repr([expected[variable] for variable in SEEN_THREADS])


@pytest.mark.parametrize("value", ["0", "-1", "two"])
def test_jobs_must_be_a_positive_whole_number(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser()
    runplan.add_arguments(parser)
    with pytest.raises(SystemExit):
        parser.parse_args(["--jobs", value])
    assert "--jobs: must be a whole number of at least 1" in capsys.readouterr().err
    assert parser.parse_args(["--jobs", "2"]).jobs == 2


#: A run that records its kernel's and its worker's process ids, waits, then writes a file: written only if it outlives
#: a `recjudge run` that was stopped meanwhile.
LINGERS = """
import os
import time
from pathlib import Path

Path(folder, name + ".pids").write_text(f"{os.getpid()} {os.getppid()}")
time.sleep(float(wait))
Path(folder, name + ".late").write_text("written after recjudge run ended")
"""


def alive(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.mark.parametrize(("stop", "jobs"), [("SIGTERM", 2), ("SIGINT", 2), ("SIGTERM", 1)])
def test_a_stopped_run_ends_its_workers_and_their_kernels_and_says_so_in_one_line(
        project: Path, stop: str, jobs: int) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    pytest.importorskip("psutil")
    folder = project / "lingering"
    folder.mkdir()
    write_notebook(project / "notebooks" / "lingers.ipynb", LINGERS, "folder = ''\nname = ''\nwait = 0")
    (project / "runplan.yaml").write_text("runs:\n" + "".join(
        f"  - name: {name}\n    notebook: notebooks/lingers.ipynb\n"
        f"    parameters: {{folder: '{folder}', name: {name}, wait: 8}}\n" for name in ("first", "second")[:jobs]))
    # Its own session, as a command in a terminal: Ctrl-C goes to its whole process group, the workers included.
    command = subprocess.Popen([sys.executable, "-m", "recjudge", "run", "--jobs", str(jobs)], cwd=project, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    pids: list[int] = []
    try:
        deadline = time.monotonic() + 240
        while len(list(folder.glob("*.pids"))) < jobs:
            assert command.poll() is None, command.communicate()
            assert time.monotonic() < deadline, "the two runs never started"
            time.sleep(0.1)
        pids = [int(pid) for path in folder.glob("*.pids") for pid in path.read_text().split()]
        if stop == "SIGINT":
            os.killpg(command.pid, signal.SIGINT)                  # Ctrl-C
        else:
            command.send_signal(signal.SIGTERM)                     # kill PID
        _, err = command.communicate(timeout=60)
        assert command.returncode == (143 if stop == "SIGTERM" else 130), err
        assert err.strip().splitlines()[-1] == f"recjudge run: {'terminated' if stop == 'SIGTERM' else 'interrupted'}"
        # (kernels talk over IPC sockets in their own folders: no port to lose to another process as they start)
        assert "Traceback" not in err, err
        deadline = time.monotonic() + 10
        while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert [pid for pid in pids if alive(pid)] == []            # no worker, no kernel outlives the command
        # nor a run's private files (its notebook being written, its selected cells) beside the outputs
        assert sorted(str(path.relative_to(project)) for path in project.rglob(".*.ipynb")) == []
        time.sleep(10)                                              # past the runs' wait: nothing was written after
        assert list(folder.glob("*.late")) == []
    finally:
        for pid in [command.pid, *pids]:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
