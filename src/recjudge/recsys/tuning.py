"""Hyper-parameter search with Optuna's TPE sampler (seeded), objective Recall_acc@10 on the validation chunk.

Tokutake et al. ran 100 trials per recommender per fold.  ``tune`` takes the trial budget as an argument; the
lists' configuration records the budget of each recommender, and the chapter tabulates it with the chosen values
(``tuned_values``).

``tune_shared`` runs the same search as one Optuna study kept in a shared storage (a journal file, or a database URL
such as ``sqlite:///tuning.db`` or ``postgresql://host/db``): any number of worker processes, on one machine or many,
take trials from it until it holds the budget of COMPLETE trials, and a run that was killed resumes where it stopped.
A worker records a heartbeat while its trial runs; a RUNNING trial whose heartbeat is older than the grace period
(its worker was killed) is marked FAIL by the next worker that looks, and its parameters are queued once more
(Optuna's ``RetryHeartbeatStaleTrialCallback``), so the trial is neither lost nor counted.  A worker stopped cleanly
(Ctrl-C, SIGTERM) does the same for its own trial at once, so a resumed study does not wait for the heartbeat to go
stale; and a queued retry is run even when other trials have filled the budget meanwhile.  ``RDBStorage`` has the
heartbeat built in; Optuna's ``JournalStorage`` has none (up to 5.0 at least), so ``JournalHeartbeatStorage`` adds
it through Optuna's heartbeat interface (as named since Optuna 4.9), keeping the beat as a trial system attribute
(the clocks of the machines sharing a journal file must agree to within the grace period).

When the storage stops answering (a database server stopped mid-study), the study ends with one ``StorageError``
naming it (never its password), and every trial finished before is kept there for the next run.
"""

from __future__ import annotations

import logging
import multiprocessing
import re
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable
from urllib.parse import unquote

import pandas as pd

from .metrics import recall_at_k
from .models import Recommender, in_order, make
from .split import Fold

with warnings.catch_warnings():
    # optuna imports tqdm.auto, which warns in a notebook kernel without ipywidgets; no progress bar is shown here
    warnings.simplefilter("ignore")
    import optuna
    from optuna.storages._heartbeat import BaseHeartbeat
    from optuna.trial import TrialState

#: name -> parameter -> ("int" | "float" | "log", low, high)
SEARCH_SPACE: dict[str, dict[str, tuple[str, float, float]]] = {
    "BPRMF": {"k": ("int", 16, 128), "learning_rate": ("log", 1e-3, 1e-1), "lambda_reg": ("log", 1e-4, 1e-1)},
    "SASRec": {"embedding_dim": ("int", 16, 64), "learning_rate": ("log", 1e-4, 1e-2), "dropout": ("float", 0.0, 0.5)},
    "KFN": {"k": ("int", 5, 200)},
    "KFN + popularity": {"k": ("int", 5, 200), "pop_weight": ("float", 0.0, 1.0)},
    "ItemKNN": {"k": ("int", 5, 400)},
    "UAUM": {"dim": ("int", 16, 64), "lr": ("log", 1e-3, 3e-2), "beta": ("float", 0.0, 1.0)},
    "DESR": {"dim": ("int", 16, 64), "lr": ("log", 1e-3, 3e-2), "gamma": ("float", 0.0, 1.0)},
    "PURS": {"dim": ("int", 16, 64), "lr": ("log", 1e-3, 3e-2), "alpha": ("float", 0.0, 2.0)},
    "Popularity": {},
    "Random": {},
}


def _suggest(trial, space: dict[str, tuple[str, float, float]]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name, (kind, low, high) in space.items():
        if kind == "int":
            values[name] = trial.suggest_int(name, int(low), int(high))
        elif kind == "log":
            values[name] = trial.suggest_float(name, low, high, log=True)
        elif kind == "float":
            values[name] = trial.suggest_float(name, low, high)
        else:
            raise ValueError(f"unknown search kind {kind!r} for {name}")
    return values


def tune(name: str, fold: Fold, n_trials: int, seed: int = 0, base: dict[str, Any] | None = None
         ) -> tuple[dict[str, Any], float, Recommender]:
    """Best parameters (merged over ``base``), their validation Recall_acc@10 after ``n_trials`` TPE trials, and the
    model fitted with them (kept from its trial, so that lists need no second fit).  Optuna's TPE samples its first
    ten trials at random (``n_startup_trials``), so a budget of ten or fewer is a seeded random search."""
    base = dict(base or {})
    space = SEARCH_SPACE.get(name, {})
    users = sorted(fold.valid["user_id"].unique())
    best: dict[str, Any] = {}

    def fitted(params: dict[str, Any]) -> tuple[float, Recommender]:
        model = make(name, seed=seed, **params).fit(fold.train)
        return recall_at_k(model.recommend(users, 10), fold.valid, 10), model

    def objective(trial) -> float:
        recall, model = fitted({**base, **_suggest(trial, space)})
        if not best or recall > best["recall"]:
            best.update(recall=recall, model=model)
        return recall

    if not space or n_trials < 1:
        recall, model = fitted(base)
        return base, recall, model
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=seed))
    study.optimize(objective, n_trials=n_trials)
    return {**base, **study.best_params}, float(study.best_value), best["model"]


def tuned_values(config: dict[str, Any], valid_recall: pd.Series, order: list[str]) -> pd.DataFrame:
    """One row per recommender (in ``order``, then any other) and fold: its TPE trials (those completed when the lists
    record them, else the budget), the chosen values as text and the validation Recall_acc@10 of its committed lists
    (``valid_recall`` indexed by recommender and fold).
    ``config`` is the lists' configuration as ``lists.load_lists`` returns it."""
    rows = []
    for fold, by_name in config["params"].items():
        for name, params in by_name.items():
            # the trials the study really completed where the lists record them (a resumed study may hold more)
            done = config.get("tuning", {}).get(fold, {}).get(name, {}).get("trials_complete", config["trials"][name])
            rows.append({"recommender": name, "fold": int(fold), "trials": int(done),
                         "parameters": ", ".join(f"{p}={v:.3g}" if isinstance(v, float) else f"{p}={v}"
                                                 for p, v in sorted(params.items())) or "–",
                         "valid_recall10": float(valid_recall.get((name, int(fold)), float("nan")))})
    table = pd.DataFrame(rows)
    rank = {name: i for i, name in enumerate(in_order(table["recommender"], order))}
    return table.sort_values(["recommender", "fold"], key=lambda c: c.map(rank) if c.name == "recommender" else c,
                             kind="stable").reset_index(drop=True)


# ------------------------------------------------------------------ a study shared by many workers
#: the trial system attribute holding a journal-file worker's last heartbeat (seconds since the epoch)
HEARTBEAT_ATTR = "recjudge:heartbeat"


class JournalHeartbeatStorage(optuna.storages.JournalStorage, BaseHeartbeat):
    """Optuna's journal-file storage with the heartbeat that ``RDBStorage`` has: the optimise loop fails the RUNNING
    trials whose last beat is older than ``grace_period`` seconds (default twice the interval) and hands them to
    ``heartbeat_stale_trial_callback``."""

    def __init__(self, path: str | Path, heartbeat_interval: int = 60, grace_period: int | None = None,
                 heartbeat_stale_trial_callback: Callable | None = None) -> None:
        path = str(path)
        super().__init__(optuna.storages.journal.JournalFileBackend(
            path, lock_obj=optuna.storages.journal.JournalFileOpenLock(path)))
        self.heartbeat_interval = heartbeat_interval
        self.grace_period = grace_period or 2 * heartbeat_interval
        self.heartbeat_stale_trial_callback = heartbeat_stale_trial_callback

    def record_heartbeat(self, trial_id: int) -> None:
        self.set_trial_system_attr(trial_id, HEARTBEAT_ATTR, time.time())

    def _get_stale_trial_ids(self, study_id: int) -> list[int]:
        now = time.time()
        stale = []
        for trial in self.get_all_trials(study_id, deepcopy=False, states=(TrialState.RUNNING,)):
            # A retried trial inherits its predecessor's attributes, so its own start counts as a beat too.
            last = max(float(trial.system_attrs.get(HEARTBEAT_ATTR, 0.0)),
                       trial.datetime_start.timestamp() if trial.datetime_start else 0.0)
            if now - last > self.grace_period:
                stale.append(trial._trial_id)
        return stale

    def get_heartbeat_interval(self) -> int | None:
        return self.heartbeat_interval

    def get_heartbeat_stale_trial_callback(self) -> Callable | None:
        return self.heartbeat_stale_trial_callback


#: Database URLs without a driver, read as the dialect of the driver the lock holds (pyproject's [postgres] extra).
_DEFAULT_DRIVERS = {"postgresql": "postgresql+psycopg2"}
#: The module each locked driver imports, and the package that provides it.
_DRIVER_PACKAGES = {"postgresql+psycopg2": ("psycopg2", "psycopg2 (package psycopg2-binary)")}
_CREATE_ATTEMPTS = 5


class StorageError(ValueError):
    """A shared storage that cannot be opened, or that stopped answering; the message names it (``storage_label``)."""


#: A password in a database URL: ``scheme://user:PASSWORD@host`` (up to the last ``@``) and libpq's query parameters.
_URL_PASSWORD = re.compile(r"(://[^/?#:@]*:)([^/?#]*)(@)")
_QUERY_PASSWORD = re.compile(r"([?&](?:password|sslpassword)=)([^&#]*)", re.IGNORECASE)


def storage_label(url: str) -> str:
    """``url`` as a message shows it: its password (``user:password@``, ``?password=``) replaced by ``***``."""
    return _QUERY_PASSWORD.sub(r"\1***", _URL_PASSWORD.sub(r"\1***\3", url))


def _without_password(text: str, url: str) -> str:
    """``text`` (what a database library said about ``url``) with the URL's password replaced by ``***``."""
    for pattern in (_URL_PASSWORD, _QUERY_PASSWORD):
        for match in pattern.finditer(url):
            for secret in {match.group(2), unquote(match.group(2))} - {""}:
                text = text.replace(secret, "***")
    return text


class _StorageFallbackFilter(logging.Filter):
    """Drops Optuna's warning that a database query failed and it falls back to a slower one: when the database has
    gone, that query fails too, and the one StorageError that names the storage says what happened."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Caught an error from sqlalchemy")


def _quiet_fallbacks() -> None:
    """Install :class:`_StorageFallbackFilter` on Optuna's logger once."""
    logger = logging.getLogger("optuna")
    if not any(isinstance(existing, _StorageFallbackFilter) for existing in logger.filters):
        logger.addFilter(_StorageFallbackFilter())
    for handler in logger.handlers:  # Optuna logs through its own handler, where a logger's filter does not reach
        if not any(isinstance(existing, _StorageFallbackFilter) for existing in handler.filters):
            handler.addFilter(_StorageFallbackFilter())


def open_storage(url: str, heartbeat_interval: int = 60, grace_period: int | None = None
                 ) -> optuna.storages.BaseStorage:
    """The shared storage ``url`` names, with heartbeats every ``heartbeat_interval`` seconds and a killed worker's
    trial retried once: a database URL (``dialect[+driver]://...``, e.g. ``sqlite:///tuning.db``) opens Optuna's
    ``RDBStorage``; anything else is the path of a journal file (created when absent, in an existing folder).
    StorageError (a ValueError) naming the storage, without its password, when the URL is malformed, its database
    driver is not installed, the database cannot be opened, or the journal's folder does not exist."""
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning, module="optuna")
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning, module=__name__)
    # Heartbeats are Optuna's, driven here by ask and tell so that a trial is asked for only within the budget.
    warnings.filterwarnings("ignore", message="Heartbeat of storage is supposed to be used with Study.optimize")
    _quiet_fallbacks()
    retry = optuna.storages.RetryHeartbeatStaleTrialCallback(max_retry=1)
    if "://" in url:
        import sqlalchemy.engine
        import sqlalchemy.exc

        shown = storage_label(url)
        try:
            parsed = sqlalchemy.engine.make_url(url)
        except (sqlalchemy.exc.ArgumentError, ValueError) as error:  # ValueError: a port that is not a number
            raise StorageError(f"storage {shown!r} is not a database URL ({_without_password(str(error), url)}); give "
                               "e.g. sqlite:///tuning.db, postgresql://user@host/db or the path of a journal "
                               "file") from None
        if parsed.drivername in _DEFAULT_DRIVERS:  # postgresql:// is read as the locked driver's dialect
            parsed = parsed.set(drivername=_DEFAULT_DRIVERS[parsed.drivername])
        driver = _DRIVER_PACKAGES.get(parsed.drivername)
        try:
            parsed.get_dialect()
            if driver:
                __import__(driver[0])
        except ImportError:
            raise StorageError(f"storage {shown!r} needs the database driver {driver[1]}, which is not installed: "
                               f"`make setup` installs it (the lock's [postgres] extra), or "
                               f"`.venv/bin/pip install -e '.[postgres]'`") from None
        except (sqlalchemy.exc.NoSuchModuleError, ImportError) as error:
            raise StorageError(f"storage {shown!r} is not a database URL this environment can open "
                               f"({_without_password(str(error), url)}); give e.g. sqlite:///tuning.db, "
                               "postgresql://user@host/db (with its driver installed) or the path of a journal "
                               "file") from None
        if parsed.get_backend_name() == "sqlite":
            database = parsed.database or ""
            if database in ("", ":memory:") or database.startswith("file::memory:"):
                raise StorageError(f"storage {shown!r} names no database file (an in-memory database is not shared "
                                   "between workers and is lost when they stop): give e.g. sqlite:///tuning.db")
            _check_writable_file(Path(database).expanduser(), url)
        # Workers starting at once on a fresh database race to create Optuna's tables: the loser's IntegrityError
        # (or a lock timeout) goes away once the winner has committed them, so it tries again a few times.
        for attempt in range(_CREATE_ATTEMPTS):
            try:
                return optuna.storages.RDBStorage(
                    parsed.render_as_string(hide_password=False), heartbeat_interval=heartbeat_interval,
                    grace_period=grace_period, heartbeat_stale_trial_callback=retry)
            except (sqlalchemy.exc.IntegrityError, sqlalchemy.exc.InternalError, sqlalchemy.exc.ProgrammingError
                    ) as error:  # a unique type or table name the winner created meanwhile
                if attempt + 1 == _CREATE_ATTEMPTS:
                    raise StorageError(f"storage {shown!r}: cannot create Optuna's tables ({_reason(error, url)})"
                                       ) from None
                time.sleep(0.2 * (attempt + 1))
            except Exception as error:   # the database itself refused (no such folder, host, user...)
                raise StorageError(f"storage {shown!r}: cannot open the database ({_reason(error, url)})") from None
    path = Path(url).expanduser()
    _check_writable_file(path, url)
    return JournalHeartbeatStorage(path, heartbeat_interval, grace_period, heartbeat_stale_trial_callback=retry)


def _check_writable_file(path: Path, url: str) -> None:
    """StorageError naming ``url`` unless ``path`` is a file that can be written (made when absent, in an existing
    folder): checked before Optuna opens it, which would fail with a traceback, or only in a worker."""
    shown = storage_label(url)
    if not path.parent.is_dir():
        raise StorageError(f"storage {shown!r}: the folder {str(path.parent)!r} does not exist (a database URL looks "
                           f"like sqlite:///tuning.db)")
    if path.is_dir():
        raise StorageError(f"storage {shown!r} is a folder: give a file in it, e.g. {str(path / 'tuning.log')!r}")
    try:
        with path.open("ab"):
            pass
    except OSError as error:
        raise StorageError(f"storage {shown!r}: cannot write {str(path)!r} ({error.strerror or error})") from None


def _reason(error: BaseException, url: str) -> str:
    """What a storage error says at its root (the database library's own first line), without the URL's password:
    Optuna's wrapper blames "invalid data in the commit" for any failed commit, a server that stopped included."""
    root = error
    while root.__cause__ is not None or root.__context__ is not None:
        root = root.__cause__ or root.__context__
    lines = str(root).strip().splitlines()
    return f"{type(root).__name__}: {_without_password(lines[0] if lines else '', url).strip()}"


def _storage_errors() -> tuple[type[BaseException], ...]:
    """What Optuna's storages raise when the storage fails (Optuna wraps any failed commit of a database as
    StorageInternalError; a journal file raises OSError)."""
    import sqlalchemy.exc

    return optuna.exceptions.StorageInternalError, sqlalchemy.exc.DBAPIError, OSError


def _lost_connection(error: BaseException) -> bool:
    """True when ``error`` (one of ``_storage_errors``) says the storage is gone rather than that it refused."""
    import sqlalchemy.exc

    cause = error.__cause__ if isinstance(error, optuna.exceptions.StorageInternalError) else error
    return isinstance(error, OSError) or isinstance(cause, (sqlalchemy.exc.OperationalError,
                                                            sqlalchemy.exc.InterfaceError)) or bool(
        getattr(cause, "connection_invalidated", False))


@contextmanager
def _answering(url: str) -> Iterator[None]:
    """Storage calls on ``url``: a storage that stops answering (a database server stopped, a journal's disk gone) or
    fails becomes one StorageError that names it and says that the finished trials are kept."""
    try:
        yield
    except _storage_errors() as error:
        what = "stopped answering" if _lost_connection(error) else "failed"
        raise StorageError(f"storage {storage_label(url)!r} {what} ({_reason(error, url)}); every trial finished "
                           "before is kept there: run the same command again, once it answers, to resume") from None


def storage_kind(url: str | None) -> str:
    """What kind of storage ``url`` is, for the record a study leaves ("memory", "journal", or the database's backend,
    e.g. "sqlite" or "postgresql"): never the URL itself, which may hold a user, a password, a host or a path."""
    if not url:
        return "memory"
    if "://" not in url:
        return "journal"
    import sqlalchemy.engine

    return sqlalchemy.engine.make_url(url).get_backend_name()


def trial_counts(storage_url: str, name: str) -> dict[str, int]:
    """How many trials the study ``name`` in the shared storage holds, by outcome ("complete", "failed": a killed or
    stopped worker's trial, retried); a study resumed with another budget may hold more or fewer than asked."""
    storage = open_storage(storage_url)
    with _answering(storage_url):
        trials = optuna.load_study(study_name=name, storage=storage).get_trials(deepcopy=False)
    return {"complete": sum(t.state == TrialState.COMPLETE for t in trials),
            "failed": sum(t.state == TrialState.FAIL for t in trials)}


def study_name(dataset: str, name: str, fold: int) -> str:
    """The study of one recommender on one fold of one dataset, the same for every worker."""
    return f"recjudge/{dataset}/{name}/fold{fold}"


def _beat(storage: BaseHeartbeat, trial_id: int, interval: float, stop: threading.Event) -> None:
    while True:
        try:
            storage.record_heartbeat(trial_id)
        except _storage_errors():
            pass  # the storage is not answering: the worker's next call names it; a beat missed meanwhile is no harm
        if stop.wait(interval):
            return


def run_worker(storage_url: str, name: str, n_trials: int, objective: Callable[[optuna.Trial], float],
               heartbeat_interval: int = 60, grace_period: int | None = None, poll: float = 1.0) -> int:
    """Take trials of the study ``name`` in the shared storage until it holds ``n_trials`` COMPLETE trials and no
    queued retry; the number this worker completed.  A trial starts only while COMPLETE and RUNNING trials fall short
    of the budget (on a journal file the check and the trial's creation are one step under a lock, so workers never
    overshoot; on a database, workers asking at the same instant may add up to one extra trial each), or to run a
    failed trial's values queued once more (WAITING), which is run even when fresh trials filled the budget meanwhile,
    so that no trial is lost.  While the budget is covered by running trials the worker waits (looking every ``poll``
    seconds), so that it can take over the trial of a worker that dies.  Stopped (Ctrl-C, SIGTERM) while its trial
    runs, the worker marks it FAIL and queues its values again before the stop goes on.  StorageError when the
    storage stops answering."""
    storage = open_storage(storage_url, heartbeat_interval, grace_period)
    with _answering(storage_url):
        study = optuna.load_study(study_name=name, storage=storage,
                                  sampler=optuna.samplers.TPESampler(constant_liar=True))
    reserve = (optuna.storages.journal.JournalFileOpenLock(f"{storage_url}.ask")
               if isinstance(storage, JournalHeartbeatStorage) else None)
    done_here = 0
    while True:
        with _answering(storage_url):
            optuna.storages.fail_stale_trials(study)
            if reserve:
                reserve.acquire()
            try:
                states = [t.state for t in study.get_trials(deepcopy=False)]
                complete, running = states.count(TrialState.COMPLETE), states.count(TrialState.RUNNING)
                queued = TrialState.WAITING in states
                trial = study.ask() if queued or complete + running < n_trials else None
            finally:
                if reserve:
                    reserve.release()
        if trial is None:
            if complete >= n_trials:
                return done_here
            time.sleep(poll)
            continue
        stop = threading.Event()
        beat = threading.Thread(target=_beat, args=(storage, trial._trial_id, heartbeat_interval, stop), daemon=True)
        beat.start()
        try:
            value = objective(trial)
        except BaseException as error:
            stop.set()
            beat.join()
            _fail(study, storage, trial, queue_again=isinstance(error, KeyboardInterrupt))
            raise
        stop.set()
        beat.join()
        # A worker stalled beyond the grace period finds its trial already failed (and retried elsewhere): not counted.
        with _answering(storage_url):
            done_here += study.tell(trial, value, skip_if_finished=True).state == TrialState.COMPLETE


def _fail(study: optuna.Study, storage: optuna.storages.BaseStorage, trial: optuna.Trial, queue_again: bool) -> None:
    """Mark the trial this worker holds FAIL, its values queued again when ``queue_again`` (a stop, not the trial's
    own error).  A trial another worker already failed as stale (and queued) is left as it is; a storage that does not
    answer is left alone (the trial's heartbeat stops, so it is failed and retried as stale once the storage is
    back)."""
    try:
        held = storage.get_trial(trial._trial_id).state == TrialState.RUNNING
        study.tell(trial, state=TrialState.FAIL, skip_if_finished=True)
        if held and queue_again:  # a stop is not the trial's fault: queued again each time (a dead worker's, once)
            retry = optuna.storages.RetryHeartbeatStaleTrialCallback(max_retry=None)
            retry(study, storage.get_trial(trial._trial_id))
    except _storage_errors():
        pass


def optimize_shared(storage_url: str, name: str, n_trials: int, objective: Callable[[optuna.Trial], float],
                    n_workers: int = 1, heartbeat_interval: int = 60, grace_period: int | None = None) -> optuna.Study:
    """Create (or load) the maximising study ``name`` in the shared storage and run ``n_workers`` worker processes on
    it (forked, so ``objective`` may be a closure) until it holds ``n_trials`` COMPLETE trials; the study.  More
    workers may join from other machines with ``run_worker`` on the same URL.  StorageError (one message, however
    many workers met it) when the storage stops answering."""
    storage = open_storage(storage_url, heartbeat_interval, grace_period)
    with _answering(storage_url):
        study = create_study(storage, name)
    args = (storage_url, name, n_trials, objective, heartbeat_interval, grace_period)
    if n_workers <= 1:
        run_worker(*args)
        return study
    workers = [multiprocessing.get_context("fork").Process(target=_worker, args=args) for _ in range(n_workers)]
    try:
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    finally:  # Ctrl-C or SIGTERM (recjudge.stopping.Terminated) here: no worker outlives this process
        for worker in workers:
            if worker.is_alive():
                worker.terminate()  # it fails its trial and queues it again (_worker), then exits
        for worker in workers:
            if worker.pid is not None:
                worker.join(timeout=_WORKER_GRACE)
                if worker.is_alive():
                    worker.kill()
                    worker.join()
    failed = [w.exitcode for w in workers if w.exitcode != 0]
    with _answering(storage_url):  # a storage that stopped answering the workers is named here, once
        complete = sum(t.state == TrialState.COMPLETE for t in study.get_trials(deepcopy=False))
    # A worker that died (killed, out of memory) matters only if the others could not complete the study without it.
    if failed and complete < n_trials:
        lost = f" ({_STORAGE_LOST}: the storage stopped answering)" if _STORAGE_LOST in failed else ""
        raise TuningError(f"{len(failed)} of {n_workers} tuning workers of study {name!r} failed (exit codes "
                          f"{failed}{lost}) with {complete} of {n_trials} trials complete; the study keeps every "
                          "finished trial, run again to resume")
    return study


def create_study(storage: optuna.storages.BaseStorage, name: str) -> optuna.Study:
    """Create the maximising study ``name`` in ``storage``, or load it: two machines creating it at the same instant
    race, and the loser (an IntegrityError on the study's unique name) loads the winner's."""
    import sqlalchemy.exc

    for attempt in range(_CREATE_ATTEMPTS):
        try:
            return optuna.create_study(study_name=name, storage=storage, direction="maximize", load_if_exists=True)
        except (sqlalchemy.exc.IntegrityError, optuna.exceptions.DuplicatedStudyError):
            if attempt + 1 == _CREATE_ATTEMPTS:
                raise
            time.sleep(0.2 * (attempt + 1))
    raise AssertionError("unreachable")


class TuningError(RuntimeError):
    """A shared study that its workers could not complete (the message says how far it got)."""


#: A tuning worker's exit status when the storage stopped answering it (its parent says so, once).
_STORAGE_LOST = 3
#: Seconds a stopped worker has to fail its trial and queue it again before its parent kills it.
_WORKER_GRACE = 10.0


def _worker(*args: Any) -> None:
    """A forked tuning worker: ignores Ctrl-C (the parent ends it); on SIGTERM it fails its trial and queues it again
    (``run_worker``), then exits with ``TERMINATED``.  A storage that stops answering ends it quietly with
    ``_STORAGE_LOST``: its parent, which meets the same storage, names it."""
    from recjudge.stopping import TERMINATED, Terminated, worker_stops_cleanly

    worker_stops_cleanly()
    storage_failures = (StorageError, *_storage_errors())
    try:
        run_worker(*args)
    except Terminated:
        sys.exit(TERMINATED)
    except storage_failures:  # also a storage call that failed outside run_worker's own guard (Optuna's loop)
        sys.exit(_STORAGE_LOST)


def tune_shared(name: str, fold: Fold, n_trials: int, storage_url: str, study: str, n_workers: int = 1,
                seed: int = 0, base: dict[str, Any] | None = None, heartbeat_interval: int = 60
                ) -> tuple[dict[str, Any], float, Recommender]:
    """As ``tune``, with the trials in the study ``study`` of a shared storage run by ``n_workers`` processes until it
    holds ``n_trials`` COMPLETE trials; the model is refitted (seeded with ``seed``, as in every trial) with the best
    trial's values.  The workers' samplers are not seeded (the order in which parallel trials finish is not
    reproducible anyway, and equal seeds would make workers draw the same values), so the study, not the seed,
    records what was tried."""
    base = dict(base or {})
    space = SEARCH_SPACE.get(name, {})
    users = sorted(fold.valid["user_id"].unique())
    if not space or n_trials < 1:
        return tune(name, fold, 0, seed=seed, base=base)

    def objective(trial) -> float:
        model = make(name, seed=seed, **{**base, **_suggest(trial, space)}).fit(fold.train)
        return recall_at_k(model.recommend(users, 10), fold.valid, 10)

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    shared = optimize_shared(storage_url, study, n_trials, objective, n_workers, heartbeat_interval)
    with _answering(storage_url):
        best = shared.best_trial
    params = {**base, **best.params}
    return params, float(best.value), make(name, seed=seed, **params).fit(fold.train)
