"""A tuning study on PostgreSQL through Optuna's RDB storage, against a real server started here (``postgres_url``
in conftest.py): ``postgresql://`` URLs work with the locked driver, a missing driver is named, and workers starting
at once on a fresh database do not fail."""

from __future__ import annotations

import multiprocessing
import sys

import pytest

optuna = pytest.importorskip("optuna")
from recjudge.recsys import tuning  # noqa: E402


def test_a_postgresql_url_without_a_driver_opens_with_the_locked_one(postgres_url: str) -> None:
    storage = tuning.open_storage(postgres_url)
    assert storage.engine.dialect.driver == "psycopg2"


def test_a_missing_driver_is_named(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg2", None)  # as if not installed
    with pytest.raises(ValueError, match=r"needs the database driver psycopg2 \(package psycopg2-binary\).*"
                                         r"make setup"):
        tuning.open_storage("postgresql://user@localhost/optuna")


def _start_a_study(url: str, name: str, barrier, results) -> None:
    barrier.wait()  # every worker opens the fresh database at the same instant
    try:
        study = tuning.create_study(tuning.open_storage(url), name)
        results.put(("ok", study.study_name))
    except Exception as error:  # reported to the test, which names it
        results.put(("failed", f"{type(error).__name__}: {error}"))


def test_workers_starting_at_once_on_a_fresh_database_all_start(postgres_url: str) -> None:
    fresh = postgres_url.replace("/optuna?", "/postgres?")  # a database whose tables no worker has created yet
    context = multiprocessing.get_context("fork")
    barrier, results = context.Barrier(4), context.Queue()
    workers = [context.Process(target=_start_a_study, args=(fresh, "recjudge/race", barrier, results))
               for _ in range(4)]
    for worker in workers:
        worker.start()
    outcomes = [results.get(timeout=120) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
    assert outcomes == [("ok", "recjudge/race")] * 4
    assert len(optuna.get_all_study_summaries(tuning.open_storage(fresh))) == 1


def test_two_workers_complete_the_budget_with_no_failed_trial(postgres_url: str) -> None:
    study = tuning.optimize_shared(postgres_url, "recjudge/two-workers", 6,
                                   lambda trial: trial.suggest_float("x", 0, 1), n_workers=2)
    states = [trial.state for trial in study.get_trials(deepcopy=False)]
    # on a database, workers asking at the same instant may each add one trial beyond the budget (run_worker)
    assert 6 <= states.count(optuna.trial.TrialState.COMPLETE) <= 6 + 2
    assert optuna.trial.TrialState.FAIL not in states


SERVER_STOPS_MIDWAY = """
import sys
import time

from recjudge.recsys import tuning

tuning.optuna.logging.set_verbosity(tuning.optuna.logging.WARNING)  # as tune_shared does


def objective(trial):
    x = trial.suggest_float("x", 0.0, 1.0)
    time.sleep(0.3)
    return x

try:
    tuning.optimize_shared(sys.argv[1], "server-stops", 200, objective, n_workers=2, heartbeat_interval=1)
except (tuning.StorageError, tuning.TuningError) as error:
    print(error, file=sys.stderr)
    sys.exit(1)
"""


def test_a_server_stopped_mid_study_is_one_message_and_the_finished_trials_are_kept(postgres_server, tmp_path) -> None:
    import subprocess
    import time
    from pathlib import Path

    script = tmp_path / "tune.py"
    script.write_text(SERVER_STOPS_MIDWAY)
    url = postgres_server.url
    command = subprocess.Popen([sys.executable, str(script), url], stderr=subprocess.PIPE, text=True,
                               env={**__import__("os").environ,
                                    "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")})
    try:
        deadline, complete = time.monotonic() + 240, 0
        while complete < 4:
            assert command.poll() is None and time.monotonic() < deadline, command.communicate()
            time.sleep(0.5)
            try:
                study = optuna.load_study(study_name="server-stops", storage=tuning.open_storage(url))
            except KeyError:  # not created yet
                continue
            complete = [t.state for t in study.get_trials()].count(optuna.trial.TrialState.COMPLETE)
        postgres_server.stop()
        _, err = command.communicate(timeout=120)
    finally:
        if command.poll() is None:
            command.kill()
    assert command.returncode == 1 and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert "stopped answering" in err and f"storage {url!r}" in err and "invalid data in the commit" not in err
    postgres_server.start()
    study = optuna.load_study(study_name="server-stops", storage=tuning.open_storage(url))
    assert [t.state for t in study.get_trials()].count(optuna.trial.TrialState.COMPLETE) >= complete


def test_a_password_is_never_shown_in_a_storage_error() -> None:
    # A server that refuses (nothing listens on port 1), and a URL SQLAlchemy cannot read: the messages name the
    # storage with its password hidden.
    for url in ("postgresql://alice:PW-s3cret@127.0.0.1:1/optuna",
                "postgresql://alice@127.0.0.1:1/optuna?password=PW-s3cret",
                "postgresql://alice:PW-s3cret@127.0.0.1:port/optuna"):
        with pytest.raises(ValueError) as caught:
            tuning.open_storage(url)
        assert "PW-s3cret" not in str(caught.value) and "alice" in str(caught.value), caught.value
    assert tuning.storage_label("postgresql://alice:PW%2Fs3cret@host/db?password=x&sslmode=require") == \
        "postgresql://alice:***@host/db?password=***&sslmode=require"
