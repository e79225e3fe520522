"""recjudge.recsys.tuning with a shared Optuna storage: worker processes sharing a journal file (or a SQLite
database) finish one study with every trial recorded once, a worker killed mid-trial leaves the study resumable, and
the lists come from the study's best trial.  The objectives are cheap stand-ins, or ItemKNN on a tiny synthetic
fold."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import optuna
import pandas as pd
import pytest
from optuna.trial import TrialState

from recjudge.recsys import lists as recsys_lists
from recjudge.recsys import split, tuning
from recjudge.recsys.models import RECOMMENDERS

ROOT = Path(__file__).resolve().parents[1]


def quick_objective(trial: optuna.Trial) -> float:
    """A stand-in for fitting a recommender: a float parameter (so repeated draws would show), a short pause (so that
    two workers overlap) and the worker's process id."""
    x = trial.suggest_float("x", 0.0, 1.0)
    trial.set_user_attr("pid", os.getpid())
    time.sleep(0.2)
    return -(x - 0.3) ** 2


def storages(tmp_path: Path) -> dict[str, str]:
    return {"journal": str(tmp_path / "study.log"), "sqlite": f"sqlite:///{tmp_path / 'study.db'}"}


def complete_params(study: optuna.Study) -> list[float]:
    return [t.params["x"] for t in study.get_trials(states=(TrialState.COMPLETE,))]


@pytest.mark.parametrize("kind", ["journal", "sqlite"])
def test_two_workers_finish_one_study_with_every_trial_recorded_once(tmp_path, kind):
    url = storages(tmp_path)[kind]
    study = tuning.optimize_shared(url, "shared", 8, quick_objective, n_workers=2, heartbeat_interval=5)
    trials = optuna.load_study(study_name="shared", storage=tuning.open_storage(url)).get_trials()
    assert [t.number for t in trials] == list(range(8))
    assert [t.state for t in trials] == [TrialState.COMPLETE] * 8
    assert len(set(complete_params(study))) == 8                      # no trial drawn or run twice
    assert len({t.user_attrs["pid"] for t in trials}) == 2            # both workers took trials
    again = tuning.optimize_shared(url, "shared", 8, quick_objective, n_workers=2, heartbeat_interval=5)
    assert len(again.get_trials()) == 8                               # a finished study runs nothing more


def doomed_objective(marker: Path):
    def objective(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", 0.0, 1.0)
        if trial.number == 2:
            marker.write_text(str(x))
            time.sleep(120)                                           # killed here
        return quick_objective(trial)
    return objective


@pytest.mark.parametrize("kind", ["journal", "sqlite"])
def test_a_worker_killed_mid_trial_leaves_the_study_resumable(tmp_path, kind):
    url, marker = storages(tmp_path)[kind], tmp_path / "in-trial-2"
    optuna.create_study(study_name="killed", storage=tuning.open_storage(url), direction="maximize")
    worker = multiprocessing.get_context("fork").Process(
        target=tuning.run_worker, args=(url, "killed", 6, doomed_objective(marker), 1, 2))
    worker.start()
    for _ in range(600):
        if marker.exists():
            break
        time.sleep(0.05)
    assert marker.exists(), "the first worker never reached trial 2"
    os.kill(worker.pid, signal.SIGKILL)
    worker.join()
    storage = tuning.open_storage(url)
    before = optuna.load_study(study_name="killed", storage=storage).get_trials()
    assert [t.state for t in before] == [TrialState.COMPLETE, TrialState.COMPLETE, TrialState.RUNNING]

    done_here = tuning.run_worker(url, "killed", 6, quick_objective, heartbeat_interval=1, grace_period=2, poll=0.2)
    trials = optuna.load_study(study_name="killed", storage=tuning.open_storage(url)).get_trials()
    states = [t.state for t in trials]
    assert states.count(TrialState.COMPLETE) == 6 and done_here == 4
    assert trials[2].state == TrialState.FAIL                         # the killed trial: failed, not counted
    assert states.count(TrialState.RUNNING) == 0 and len(trials) == 7
    retried = [t for t in trials if optuna.storages.RetryHeartbeatStaleTrialCallback.retried_trial_number(t) == 2]
    assert len(retried) == 1 and retried[0].state == TrialState.COMPLETE
    assert retried[0].params == trials[2].params                      # its values were tried again, once
    study = optuna.load_study(study_name="killed", storage=tuning.open_storage(url))
    assert len(set(complete_params(study))) == 6                      # no COMPLETE trial repeated


def tiny_fold() -> split.Fold:
    """Synthetic: 30 users in two taste groups over 20 items; two users' next items are the validation targets."""
    rows = [(user, (user % 2) * 10 + (user + step) % 10, user * 6 + step) for user in range(30) for step in range(6)]
    train = pd.DataFrame(rows, columns=["user_id", "item_id", "timestamp"])
    valid = pd.DataFrame({"user_id": [0, 1], "item_id": [9, 19], "timestamp": [999, 999]})
    return split.Fold(0, train, valid, valid.assign(timestamp=1000))


def test_lists_come_from_the_best_trial_of_the_shared_study(tmp_path):
    fold, url = tiny_fold(), str(tmp_path / "lists.log")
    lists, config = recsys_lists.tune_and_produce([fold], {"ItemKNN": 4, "Popularity": 0}, k=5, storage=url,
                                                  n_workers=2, dataset="synthetic")
    study = optuna.load_study(study_name=tuning.study_name("synthetic", "ItemKNN", 0),
                              storage=tuning.open_storage(url))
    assert [t.state for t in study.get_trials()].count(TrialState.COMPLETE) == 4
    assert config["params"]["0"]["ItemKNN"] == {**RECOMMENDERS["ItemKNN"].defaults, **study.best_params}
    again = recsys_lists.produce_lists([fold], config["params"]["0"], k=5)
    assert lists.reset_index(drop=True).equals(again.reset_index(drop=True))


def test_a_bad_storage_is_named(tmp_path):
    with pytest.raises(ValueError, match="storage 'postgres://h/db' is not a database URL"):
        tuning.open_storage("postgres://h/db")                        # SQLAlchemy's name is postgresql
    with pytest.raises(ValueError, match="does not exist"):
        tuning.open_storage(str(tmp_path / "no-such-folder" / "study.log"))
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "recsys_lists.py"), "latest-small", "--storage",
                          str(tmp_path / "missing" / "s.log")], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    assert run.returncode == 2 and "--storage: storage" in run.stderr and "does not exist" in run.stderr


def _script_with_storage(storage: str, tmp_path: Path, **environment: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "recsys_lists.py"), "latest-small", "--storage",
                           storage], capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(ROOT / "src"), **environment})


def test_a_folder_a_read_only_folder_or_an_in_memory_database_is_refused_in_one_line(tmp_path):
    """`--storage` given a folder, a file in a folder that cannot be written, or `sqlite:///` (no database file): one
    line naming the storage, before any study starts, never a traceback."""
    read_only = tmp_path / "read-only"
    read_only.mkdir()
    read_only.chmod(0o555)
    try:
        cases = {str(tmp_path): "is a folder", "sqlite:///": "names no database file",
                 str(read_only / "s.log"): "cannot write"}
        if os.access(read_only, os.W_OK) and Path("/sys").is_dir():  # root writes anywhere but in sysfs
            cases.pop(str(read_only / "s.log"))
            cases["/sys/recjudge-tuning.log"] = "cannot write"
        for storage, why in cases.items():
            with pytest.raises(ValueError, match=why):
                tuning.open_storage(storage)
            run = _script_with_storage(storage, tmp_path)
            assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
            assert f"--storage: storage {storage!r}" in run.stderr and why in run.stderr
    finally:
        read_only.chmod(0o755)


@pytest.mark.parametrize(("option", "value", "least"), [("--trials", "-3", 1), ("--trials", "0", 1)])
def test_a_count_below_its_least_value_is_refused_before_anything_runs(tmp_path, option, value, least):
    # --slow-trials (at least 0: the PyTorch models' defaults) and --workers are read the same way
    # (recjudge.settings.whole_number). The storage's missing folder stops a run that accepted the value before it
    # loads any data.
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "recsys_lists.py"), "latest-small", option, value,
                          "--storage", str(tmp_path / "missing" / "s.log")], capture_output=True, text=True,
                         cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    assert f"argument {option}: must be a whole number of at least {least}, got '{value}'" in run.stderr


def test_a_missing_temporary_folder_is_named_in_one_line(tmp_path):
    run = _script_with_storage(str(tmp_path / "s.log"), tmp_path, TMPDIR=str(tmp_path / "no-such-tmp"))
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    assert f"TMPDIR={tmp_path / 'no-such-tmp'} is not a folder that exists" in run.stderr


def pid_recording_objective(marker: Path):
    """Trial 2 records its worker's process id and waits there (to be killed); every other trial is quick."""
    def objective(trial: optuna.Trial) -> float:
        trial.suggest_float("x", 0.0, 1.0)
        if trial.number == 2:
            marker.write_text(str(os.getpid()))
            time.sleep(120)
        return quick_objective(trial)
    return objective


def test_a_study_completed_without_a_killed_worker_is_no_failure(tmp_path):
    # One of two workers is killed mid-trial; the other takes its trial over and completes the study: its lists can
    # be written, so the run is not reported as failed.
    import threading

    url, marker = str(tmp_path / "study.log"), tmp_path / "in-trial-2"

    def kill_the_worker_in_trial_2() -> None:
        for _ in range(1200):
            if marker.exists() and marker.read_text():
                os.kill(int(marker.read_text()), signal.SIGKILL)
                return
            time.sleep(0.05)

    killer = threading.Thread(target=kill_the_worker_in_trial_2)
    killer.start()
    study = tuning.optimize_shared(url, "survived", 6, pid_recording_objective(marker), n_workers=2,
                                   heartbeat_interval=1, grace_period=2)
    killer.join()
    assert [t.state for t in study.get_trials()].count(TrialState.COMPLETE) == 6


STOPPED_TUNING = """
import sys
from recjudge.recsys import tuning
from recjudge.stopping import stops_cleanly

def objective(trial):
    import os, time
    from pathlib import Path
    trial.suggest_float("x", 0.0, 1.0)
    Path(sys.argv[2], str(os.getpid())).write_text("")
    time.sleep(120)
    return 0.0

with stops_cleanly():
    tuning.optimize_shared(sys.argv[1], "stopped", 4, objective, n_workers=2, heartbeat_interval=1)
"""


def test_a_stopped_tuning_ends_its_workers(tmp_path):
    import psutil

    pids_folder = tmp_path / "pids"
    pids_folder.mkdir()
    script = tmp_path / "tune.py"
    script.write_text(STOPPED_TUNING)
    command = subprocess.Popen([sys.executable, str(script), str(tmp_path / "study.log"), str(pids_folder)],
                               stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    try:
        for _ in range(1200):
            if len(list(pids_folder.iterdir())) == 2:
                break
            time.sleep(0.05)
        workers = [int(path.name) for path in pids_folder.iterdir()]
        assert len(workers) == 2, command.stderr
        command.send_signal(signal.SIGTERM)
        command.wait(timeout=60)
        survivors = [pid for pid in workers if psutil.pid_exists(pid)
                     and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE]
        assert survivors == []
    finally:
        for pid in [command.pid, *(int(path.name) for path in pids_folder.iterdir())]:
            if psutil.pid_exists(pid):
                os.kill(pid, signal.SIGKILL)


@pytest.fixture(params=["journal", "sqlite", "postgresql"])
def shared_storage(request, tmp_path) -> str:
    """A shared storage of each kind: a journal file, a SQLite file, a throwaway PostgreSQL database."""
    if request.param == "postgresql":
        return request.getfixturevalue("postgres_url")
    return storages(tmp_path)[request.param]


def unique_study(name: str) -> str:
    """A study name no other test uses (a PostgreSQL database is shared by the tests of a module)."""
    return f"{name}-{os.getpid()}-{time.monotonic_ns()}"


def test_a_retry_waiting_after_a_fresh_trial_filled_the_budget_is_still_run(shared_storage):
    # A worker failed a trial and queued its values again just after another worker had asked a fresh trial (the
    # budget then looked open): when the fresh one completes, the budget is full and the retry is still WAITING. Its
    # values are run all the same: no trial is lost.
    name = unique_study("retry")
    storage = tuning.open_storage(shared_storage)
    study = tuning.create_study(storage, name)
    for _ in range(2):
        done = study.ask()
        done.suggest_float("x", 0.0, 1.0)
        study.tell(done, 0.0)
    lost, fresh = study.ask(), study.ask()
    lost.suggest_float("x", 0.0, 1.0)
    fresh.suggest_float("x", 0.0, 1.0)
    study.tell(lost, state=TrialState.FAIL)
    optuna.storages.RetryHeartbeatStaleTrialCallback(max_retry=1)(study, storage.get_trial(lost._trial_id))
    study.tell(fresh, 0.0)
    tuning.run_worker(shared_storage, name, 3, quick_objective, poll=0.2)
    trials = optuna.load_study(study_name=name, storage=tuning.open_storage(shared_storage)).get_trials()
    retried = [t for t in trials if optuna.storages.RetryHeartbeatStaleTrialCallback.retried_trial_number(t) == 2]
    assert [(t.state, t.params) for t in retried] == [(TrialState.COMPLETE, trials[2].params)]
    assert TrialState.WAITING not in [t.state for t in trials]


STOPPED_AT_THE_DEFAULT_HEARTBEAT = """
import sys
from recjudge.recsys import tuning
from recjudge.stopping import TERMINATED, Terminated, stops_cleanly

def objective(trial):
    import os, time
    from pathlib import Path
    trial.suggest_float("x", 0.0, 1.0)
    Path(sys.argv[3], str(os.getpid())).write_text("")
    time.sleep(120)
    return 0.0

try:
    with stops_cleanly():
        tuning.optimize_shared(sys.argv[1], sys.argv[2], 4, objective, n_workers=int(sys.argv[4]))
except Terminated:
    sys.exit(TERMINATED)
"""


@pytest.mark.parametrize("workers", [1, 2])
def test_a_cleanly_stopped_study_holds_no_running_trial_and_resumes_at_once(tmp_path, shared_storage, workers):
    # SIGTERM (or Ctrl-C) while trials run: each worker marks its own trial FAIL and queues its values again before
    # it exits, so the next run neither waits out the heartbeat's grace period (two minutes by default) for trials
    # that look alive nor loses them.
    import psutil

    name, pids_folder = unique_study("stopped"), tmp_path / "pids"
    pids_folder.mkdir()
    script = tmp_path / "tune.py"
    script.write_text(STOPPED_AT_THE_DEFAULT_HEARTBEAT)
    command = subprocess.Popen([sys.executable, str(script), shared_storage, name, str(pids_folder), str(workers)],
                               stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    try:
        for _ in range(1200):
            if len(list(pids_folder.iterdir())) == workers:
                break
            time.sleep(0.05)
        assert len(list(pids_folder.iterdir())) == workers, command.stderr
        command.send_signal(signal.SIGTERM)
        _, err = command.communicate(timeout=60)
        assert command.returncode == 143 and "Traceback" not in err, err
    finally:
        for pid in [command.pid, *(int(path.name) for path in pids_folder.iterdir())]:
            if psutil.pid_exists(pid):
                os.kill(pid, signal.SIGKILL)
    trials = optuna.load_study(study_name=name, storage=tuning.open_storage(shared_storage)).get_trials()
    stopped = [t for t in trials if t.state == TrialState.FAIL]
    assert [t.state for t in trials].count(TrialState.RUNNING) == 0 and len(stopped) == workers
    waiting = [t for t in trials if t.state == TrialState.WAITING]
    assert sorted(optuna.storages.RetryHeartbeatStaleTrialCallback.retried_trial_number(t) for t in waiting) == \
        sorted(t.number for t in stopped)
    start = time.monotonic()
    tuning.run_worker(shared_storage, name, 4, quick_objective, poll=0.2)     # the default heartbeat: 60 s
    assert time.monotonic() - start < 60
    trials = optuna.load_study(study_name=name, storage=tuning.open_storage(shared_storage)).get_trials()
    assert [t.state for t in trials].count(TrialState.COMPLETE) == 4
    retried = {optuna.storages.RetryHeartbeatStaleTrialCallback.retried_trial_number(t): t.params for t in trials
               if t.state == TrialState.COMPLETE and t.system_attrs.get("failed_trial") is not None}
    assert retried == {t.number: t.params for t in stopped}                  # each stopped trial's values, run again


def test_optunas_fallback_warning_for_a_gone_database_is_not_shown_beside_the_one_message(tmp_path: Path) -> None:
    # When the database has gone, Optuna warns that a query failed and it falls back to another, which fails too;
    # the one StorageError names the storage, so that warning is dropped and every other one of Optuna's kept.
    import logging

    tuning.open_storage(str(tmp_path / "journal.log"))
    filters = logging.getLogger("optuna").filters
    records = [logging.LogRecord("optuna", logging.WARNING, __file__, 1, message, (), None)
               for message in ("Caught an error from sqlalchemy: (psycopg2.OperationalError) x", "another warning")]
    assert [r.getMessage() for r in records if all(f.filter(r) for f in filters)] == ["another warning"]
