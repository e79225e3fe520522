"""Executing the plan's notebooks with papermill: one run at a time or ``--jobs N`` at once, the kernels'
environment, failed runs kept apart, failed judgments counted, and the plan of what would run and why.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ContextManager

from recjudge.compendium.kernels import (
    WARNING_LOG_ENV,
    kernel_arguments,
    local_kernel_manager,
    read_warning_log,
    thread_share_environment,
    use_common_numeric_kernels,
)
from recjudge.compendium.runplan.fingerprints import (
    FileHasher,
    RunCache,
    changed_components,
    fingerprint,
    fingerprint_hash,
)
from recjudge.compendium.runplan.parameters import read_source_notebook
from recjudge.compendium.runplan.run import (
    CACHE_DIR,
    DEFAULT_PROFILE,
    MODE_ENV,
    OUTPUT_DIR,
    Run,
    RunFailedError,
    RunPlanError,
)
from recjudge.paths import RUN_NAME_ENV, results_dir
from recjudge.stopping import own_temporary_file, worker_ends_with_its_children

KERNEL_NAME = "python3"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
#: Exit status of ``recjudge run`` when judgments failed (``--allow-failures``: 0), as ``recjudge judge``'s.
EXIT_FAILED_JUDGMENTS = 4
#: What papermill and the kernel record about an execution rather than its content: timestamps, durations and the
#: private file names of the run (notebook metadata ``papermill``; each cell's ``execution`` and ``papermill``).
_EXECUTION_RECORDS = ("papermill", "execution")


@dataclass
class RunOutcome:
    run: Run
    status: str  # "executed" | "skipped"
    seconds: float
    reason: str
    #: judgments that failed while the run executed (each job's line of its failure log: judge, count, kinds)
    failures: list[dict[str, Any]] = field(default_factory=list)

    @property
    def n_failed_judgments(self) -> int:
        return sum(int(line["n_failed"]) for line in self.failures)


@dataclass(frozen=True)
class Target:
    """Where an execution of the run plan goes: the executed notebooks, the skip records, and the environment its
    kernels get (``RECJUDGE_RESULTS`` for a variant's tables). ``plan_logs``: a plan pass, whose kernels run the
    engine in its dry-run mode, each run's job lines in ``plan_logs/<run>.jsonl`` (``compendium.variants``)."""

    notebooks: Path
    cache: Path
    environment: tuple[tuple[str, str], ...] = ()
    plan_logs: Path | None = None
    #: the profile of the runs, and the runs whose parameters it changes: whether a run's local judges reuse the
    #: prompt prefix depends on both (``recjudge.llm.prefix_reuse.reuses_prefix``)
    profile: str = DEFAULT_PROFILE
    rescaled: frozenset[str] = frozenset()

    @classmethod
    def book(cls, root: Path) -> "Target":
        """The committed book: ``book/notebooks/`` and ``.runplan-cache/``; tables to ``results_dir()``."""
        return cls(root / OUTPUT_DIR, root / CACHE_DIR)

    def output_path(self, run: Run) -> Path:
        return self.notebooks / f"{run.name}.ipynb"

    def failure_log(self, run: Run) -> Path:
        """Where the engine's jobs in ``run``'s kernel record failed judgments (``recjudge.llm.report``)."""
        return self.cache / "failures" / f"{run.name}.jsonl"

    def warning_log(self, run: Run) -> Path:
        """Where ``run``'s kernel writes the warnings it keeps off the page (``kernels.keep_warnings_off_the_page``)."""
        return self.cache / "warnings" / f"{run.name}.jsonl"

    def job_log(self, run: Run) -> Path:
        """Where the engine's jobs in ``run``'s kernel write their summary lines (``recjudge.llm.report.log_job``)."""
        return job_log_path(self.cache, run.name)

    def reading_log(self, run: Run) -> Path:
        """Where the engine's jobs in ``run``'s kernel list the stored replies they read
        (``recjudge.llm.report.log_readings``)."""
        return reading_log_path(self.cache, run.name)

    def run_environment(self, run: Run) -> dict[str, str]:
        from recjudge.llm.prefix_reuse import PREFIX_REUSE_ENV, reuses_prefix
        from recjudge.llm.report import FAILURE_LOG_ENV, JOB_LOG_ENV, READING_LOG_ENV

        # save_table writes results/<name>/ only; the engine's jobs log their failed judgments, their summaries and
        # the stored replies they read
        environment = {**dict(self.environment), RUN_NAME_ENV: run.name, FAILURE_LOG_ENV: str(self.failure_log(run)),
                       JOB_LOG_ENV: str(self.job_log(run)), WARNING_LOG_ENV: str(self.warning_log(run)),
                       READING_LOG_ENV: str(self.reading_log(run))}
        # "0" too, so that a value in the calling shell never decides a run's store keys
        environment[PREFIX_REUSE_ENV] = "1" if reuses_prefix(run.name, self.profile,
                                                             rescaled=run.name in self.rescaled) else "0"
        if self.plan_logs is not None:
            from recjudge.compendium.variants import PLAN_LOG_ENV, PLAN_MODE, plan_log_path

            environment.update({MODE_ENV: PLAN_MODE, PLAN_LOG_ENV: str(plan_log_path(self.plan_logs, run.name))})
        return environment


def job_log_path(cache: Path, run_name: str) -> Path:
    """The job summaries of a run's last execution, under a target's skip-record folder (``Target.job_log``)."""
    return Path(cache) / "jobs" / f"{run_name}.jsonl"


def reading_log_path(cache: Path, run_name: str) -> Path:
    """The stored replies a run's last execution read, per job, under a target's skip-record folder
    (``Target.reading_log``)."""
    return Path(cache) / "readings" / f"{run_name}.jsonl"


@contextmanager
def _environment(values: dict[str, str]):
    """``values`` in ``os.environ`` (for the kernels started meanwhile), the previous values restored after."""
    before = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def execute_notebook(run: Run, root: Path, output: Path, failed_copy: Path, *, plan: bool = False) -> None:
    """Execute ``run`` with papermill into ``output``. The notebook is written to a temporary file first, so a failure
    never replaces the last good output; the partial notebook is kept at ``failed_copy`` for inspection. ``plan``: a
    plan pass, which stops after the chapter's last judge call (``cell_selection.notebook_for_plan``)."""
    import nbformat
    import papermill
    from papermill.exceptions import PapermillExecutionError

    from recjudge.compendium.cell_selection import notebook_for_available_data, notebook_for_plan, notebook_for_variant

    output.parent.mkdir(parents=True, exist_ok=True)
    with ExitStack() as own_files:
        # Names of this run's own (two runs of one chapter never share them), removed however the run ends, also by
        # a worker that a stop ends at once (recjudge.stopping.own_temporary_file).
        temporary = own_files.enter_context(_private_path(output, ".running.ipynb"))
        source = root / run.notebook
        original = read_source_notebook(source)
        # The plan's end first: it is a position in the chapter, whichever cells the variant or the data leave out
        selected, missing = notebook_for_available_data(
            notebook_for_variant(notebook_for_plan(original) if plan else original, run.variant), run.datasets)
        if selected is not original or source.suffix != ".ipynb":
            # execute a copy with the cells of this variant whose data are present (compendium.cell_selection)
            source = own_files.enter_context(_private_path(output, ".selected-cells.ipynb"))
            nbformat.write(selected, source)
        try:
            papermill.execute_notebook(
                str(source), str(temporary), parameters=dict(run.parameters), kernel_name=KERNEL_NAME,
                cwd=str(root), progress_bar=False, log_output=False, execution_timeout=run.timeout,
                extra_arguments=kernel_arguments(), kernel_manager_class=local_kernel_manager(),
            )
        except PapermillExecutionError as error:
            _keep_failed(temporary, failed_copy)
            frames = [_ANSI.sub("", entry) for entry in (error.traceback or [])]
            # The frame inside the notebook's own cell says which line failed; the full traceback is in the copy.
            cell_frames = [frame for frame in frames if frame.lstrip().startswith("Cell In[")]
            where = cell_frames[-1] if cell_frames else "\n".join(frames[-1:])
            raise RunFailedError(
                f"run {run.name!r}: notebook {run.notebook} failed in cell In[{error.exec_count}] (cell index "
                f"{error.cell_index} of the executed notebook): {error.ename}: {error.evalue}\n{where.rstrip()}\n"
                f"full traceback in the partially executed notebook {failed_copy}") from error
        except Exception as error:  # kernel death, cell timeout, unreadable notebook...
            _keep_failed(temporary, failed_copy)
            raise RunFailedError(f"run {run.name!r}: notebook {run.notebook} could not be executed: "
                                 f"{type(error).__name__}: {error}") from error
        _show_run_parameters(temporary)
        _title_copy(temporary, run, root)
        os.replace(temporary, output)


#: The first line of papermill's cell of a run's parameters, and what the page says instead.
_PAPERMILL_HEADING = "# Parameters"
RUN_PARAMETERS_HEADING = "# This run's parameters (runplan.yaml): they replace the defaults above"


def _show_run_parameters(path: Path) -> None:
    """Show papermill's "# Parameters" cell after the chapter's parameters cell, headed as the run's values: the
    page shows the chapter's interface (its parameters cell) and what this run set, so that the shown cells copied
    top to bottom run with the run's values. Its random cell id becomes a fixed one, so that an executed chapter is
    reproducible like its source's cells."""
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    injected = [cell for cell in notebook.cells if "injected-parameters" in cell.metadata.get("tags", [])]
    # A page that hides its own parameters cell (it shows no code) hides the run's values too.
    hidden = any("parameters" in tags and "remove-cell" in tags
                 for tags in (cell.metadata.get("tags", []) for cell in notebook.cells))
    for position, cell in enumerate(injected):
        cell.metadata["tags"] = [tag for tag in cell.metadata["tags"] if tag != "remove-cell"] + (
            ["remove-cell"] if hidden else [])
        lines = cell.source.split("\n")
        if lines and lines[0].strip() == _PAPERMILL_HEADING:
            cell.source = "\n".join([RUN_PARAMETERS_HEADING, *lines[1:]])
        if "id" in cell:
            cell["id"] = f"injected-parameters-{position}"
    if injected:
        nbformat.write(notebook, path)


def _title_copy(path: Path, run: Run, root: Path) -> None:
    """A copied chapter (a notebook file whose ``NOTEBOOK`` default names another chapter) that kept its original's
    title gets its run's name in it and a note on which line to retitle (``labels.retitle_copy``)."""
    import nbformat

    from recjudge.compendium.labels import chapter_name, retitle_copy, title_lines, titles

    source = root / run.notebook
    notebook = nbformat.read(path, as_version=4)
    own = chapter_name(notebook)
    original = source.with_name(f"{own}{source.suffix}") if own else None
    if original is None or original == source or not original.is_file():
        return
    lines = title_lines(source.read_text(encoding="utf-8")) if source.suffix == ".md" else {}
    retitled = retitle_copy(notebook, run.name, titles(read_source_notebook(original)), str(run.notebook), lines)
    if retitled is not notebook:
        nbformat.write(nbformat.from_dict(retitled), path)


def executed_content(path: Path) -> str:
    """An executed notebook without what records its execution (``_EXECUTION_RECORDS``): its cells' sources and
    outputs and the rest of the metadata, as nbformat writes them. Two executions that computed the same give the same
    text (the notebooks in ``book/notebooks/`` themselves differ in their timestamps)."""
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    for metadata in (notebook.metadata, *(cell.metadata for cell in notebook.cells)):
        for name in _EXECUTION_RECORDS:
            metadata.pop(name, None)
    return nbformat.writes(notebook)


def _private_path(output: Path, suffix: str) -> ContextManager[Path]:
    """A new hidden file beside ``output`` whose name no other run uses, removed when the block ends."""
    return own_temporary_file(output.parent, prefix=f".{output.stem}.", suffix=suffix)


def _keep_failed(temporary: Path, failed_copy: Path) -> None:
    if temporary.exists():
        failed_copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(temporary), failed_copy)


def execute_plan(runs: list[Run], root: Path, *, force: bool = False, log: Callable[[str], None] = print,
                 target: Target | None = None, jobs: int = 1) -> list[RunOutcome]:
    """Execute (or skip) each run in order into ``target`` (default: the committed book); stop at the first failure,
    keeping what already succeeded. ``jobs`` > 1: up to that many runs at once (``_execute_at_once``)."""
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a whole number of at least 1, got {jobs!r}")
    target = target or Target.book(root)
    cache = RunCache(target.cache)
    hasher = FileHasher(cache.folder / "file-hashes.json")
    outcomes: list[RunOutcome] = []
    restore_environment = use_common_numeric_kernels()  # the same results on AVX2 and AVX-512 machines
    try:
        if jobs > 1:
            outcomes = _execute_at_once(runs, root, target, hasher, force, log, jobs)
        else:
            for run in runs:
                with _environment(target.run_environment(run)):
                    outcomes.append(_execute_run(run, root, target, cache, hasher, force, log))
    finally:
        hasher.save()
        restore_environment()
    return outcomes


@dataclass
class _RunReport:
    """What a worker of ``_execute_at_once`` hands back: the run's outcome or its error, its log lines, and the file
    hashes it computed (for the caller's memo)."""

    outcome: RunOutcome | None
    error: Exception | None
    lines: list[str]
    file_hashes: dict[str, list[Any]]


def _execute_at_once(runs: list[Run], root: Path, target: Target, hasher: FileHasher, force: bool,
                     log: Callable[[str], None], jobs: int) -> list[RunOutcome]:
    """``recjudge run --jobs N``: up to ``jobs`` runs at once, each in a worker process (its own ``os.environ``, which
    its kernel inherits), in the run plan's order as workers free up. A run that reads other runs' tables
    (``results_of``) starts once those of them in ``runs`` have ended. Each kernel gets its share of the CPUs'
    threads (``kernels.thread_share_environment``). A run's log lines are printed together when it ends, so runs
    going at once do not interleave. As in order: after a failure no run starts, the runs already going finish and
    keep their work, and the first failure is raised."""
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait

    position = {run.name: index for index, run in enumerate(runs)}
    for run in runs:
        later = [name for name in run.results_of if position.get(name, -1) > position[run.name]]
        if later:
            raise RunPlanError(f"run {run.name!r}: 'results_of' {later} must come before it in the runs executed")
    threads = thread_share_environment(jobs)
    waiting = list(runs)
    ended: dict[str, RunOutcome] = {}
    running: dict[Future, Run] = {}
    failure: Exception | None = None
    # "spawn": a fresh interpreter per worker; forking a process that may hold threads (the store's, papermill's) is
    # unsafe.
    # Each worker ignores Ctrl-C and, when ended, ends its kernels with it (recjudge.stopping).
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"),
                             initializer=worker_ends_with_its_children) as pool:
        try:
            while waiting or running:
                ready = [run for run in waiting if all(name in ended for name in run.results_of if name in position)]
                for run in ready[:jobs - len(running)] if failure is None else ():
                    waiting.remove(run)
                    log(f"[run] {run.name}: started")
                    running[pool.submit(_execute_run_alone, run, root, target, force, threads)] = run
                if not running:  # a failure: what has not started stays so
                    break
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in sorted(done, key=lambda future: position[running[future].name]):
                    run = running.pop(future)
                    report = future.result()
                    for line in report.lines:
                        log(line)
                    hasher.merge(report.file_hashes)
                    if report.error is not None:
                        failure = failure or report.error
                    else:
                        ended[run.name] = report.outcome
        except BaseException:
            # Ctrl-C, SIGTERM (recjudge.stopping.Terminated) or a broken pool: end the workers and their kernels
            # now, so that none goes on writing a chapter after `recjudge run` has ended.
            workers = list((pool._processes or {}).values())
            for worker in workers:
                worker.terminate()
            for worker in workers:
                worker.join(timeout=30)
            pool.shutdown(wait=True, cancel_futures=True)
            raise
    if failure is not None:
        raise failure
    return [ended[run.name] for run in runs]


def _execute_run_alone(run: Run, root: Path, target: Target, force: bool, threads: dict[str, str]) -> _RunReport:
    """One run in a worker process of ``_execute_at_once``, in its target's environment and thread share."""
    cache = RunCache(target.cache)
    hasher = FileHasher(cache.folder / "file-hashes.json")
    lines: list[str] = []
    try:
        with _environment({**threads, **target.run_environment(run)}):
            outcome = _execute_run(run, root, target, cache, hasher, force, lines.append)
    except Exception as error:  # handed to the caller, which raises it as an execution in order would
        return _RunReport(None, error, lines, hasher.entries())
    return _RunReport(outcome, None, lines, hasher.entries())


def table_hashes(run: Run, hasher: Callable[[Path], str]) -> dict[str, str]:
    """Each file under the run's results folder (``results_dir()/<run>``, in the run's environment), by its path
    there, with its sha256: what the run wrote, recorded when it ends and compared later (a table edited after its
    run is not what the chapter computed). Hidden files are no table."""
    folder = results_dir() / run.name
    if not folder.is_dir():
        return {}
    return {path.relative_to(folder).as_posix(): hasher(path) for path in sorted(folder.rglob("*"))
            if path.is_file() and not any(part.startswith(".") for part in path.relative_to(folder).parts)}


def changed_tables(record: dict[str, Any] | None, tables: dict[str, str]) -> list[str] | None:
    """The tables (paths under the run's results folder) that differ from what the run recorded writing, added or
    removed since included; None when the record holds no tables (a run recorded before tables were)."""
    written = (record or {}).get("results")
    if not isinstance(written, dict):
        return None
    return sorted(name for name in set(written) | set(tables) if written.get(name) != tables.get(name))


def why_stale(record: dict[str, Any] | None, current: dict[str, Any], output: Path, tables: dict[str, str],
              hasher: Callable[[Path], str]) -> str | None:
    """Why a run must execute again, or None when it is up to date: its inputs' fingerprint (``current``) is the one
    recorded, its output notebook is the one that execution wrote and its tables are the ones it wrote. The one rule
    ``recjudge run`` (skip or execute), ``--list`` and a build's record (``executed_from``) apply."""
    if record is None:
        return "changed: no previous run"
    if not output.is_file():
        return "output missing"
    if record.get("hash") != fingerprint_hash(current):
        return "changed: " + ", ".join(changed_components(record, current) or ["output notebook"])
    if record.get("output_sha256") != hasher(output):
        return "changed: output notebook"
    changed = changed_tables(record, tables)
    if changed is None:
        return "changed: tables (their record predates the run cache's table hashes)"
    if changed:
        return (f"changed: tables ({len(changed)} of its results folder differ from what the run wrote, first "
                f"{changed[0]}: it writes them again)")
    return None


def _execute_run(run: Run, root: Path, target: Target, cache: RunCache, hasher: FileHasher, force: bool,
                 log: Callable[[str], None]) -> RunOutcome:
    """Execute one run unless its inputs, output and tables are unchanged (``why_stale``; called in its target's
    environment)."""
    started = time.perf_counter()
    output = target.output_path(run)
    before = fingerprint(run, root, hasher)
    record = cache.load(run)
    stale = why_stale(record, before, output, table_hashes(run, hasher), hasher)
    if stale is None and not force:
        log(f"[run] {run.name}: up to date (inputs unchanged), skipped")
        return RunOutcome(run, "skipped", time.perf_counter() - started, "inputs unchanged")
    reason = "forced" if force else stale
    log(f"[run] {run.name}: executing {run.notebook} ({reason})")
    if target.plan_logs is not None:  # the engine appends: a fresh log, so the plan counts this execution only
        from recjudge.compendium.variants import plan_log_path

        log_path = plan_log_path(target.plan_logs, run.name)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        log_path.unlink(missing_ok=True)
    from recjudge.llm.report import read_failure_log

    failure_log = target.failure_log(run)
    failure_log.parent.mkdir(parents=True, exist_ok=True)
    failure_log.unlink(missing_ok=True)  # the engine appends: this execution's failures only
    target.job_log(run).unlink(missing_ok=True)  # and this execution's job summaries
    target.warning_log(run).parent.mkdir(parents=True, exist_ok=True)
    target.warning_log(run).unlink(missing_ok=True)  # and the warnings it keeps off its page
    target.reading_log(run).unlink(missing_ok=True)  # and the stored replies it read
    execute_notebook(run, root, output, cache.folder / "failed" / f"{run.name}.ipynb",
                     plan=target.plan_logs is not None)
    kept_off = read_warning_log(target.warning_log(run))
    if kept_off:
        first = kept_off[0]
        log(f"[run] {run.name}: {len(kept_off)} warning(s) kept off its page (all in "
            f"{_shown(target.warning_log(run), root)}); first: {first['category']}: {first['message']} "
            f"({Path(first['file']).name}:{first['line']})")
    failures = read_failure_log(failure_log)
    seconds = time.perf_counter() - started
    if failures:
        # No skip record: the next invocation executes the run again and asks what failed.
        outcome = RunOutcome(run, "executed", seconds, reason, failures)
        log(f"[run] {run.name}: executed in {seconds:.1f} s with {_failure_summary(failures)}; its tables leave "
            f"them out -> {_shown(output, root)}")
        return outcome
    # A run in live/auto mode may add replies to the store: record the store as the run left it, so the
    # next invocation does not re-run for its own additions. Other inputs are taken from before the run.
    after = dict(before, store=fingerprint(run, root, hasher)["store"])
    cache.store(run, {"hash": fingerprint_hash(after), "components": after,
                      "output_sha256": hasher(output), "notebook": run.notebook,
                      "results": table_hashes(run, hasher),
                      "executed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    log(f"[run] {run.name}: done in {seconds:.1f} s -> {_shown(output, root)}")
    return RunOutcome(run, "executed", seconds, reason)


def _failure_summary(failures: list[dict[str, Any]]) -> str:
    """"3 failed judgment(s) (2 unreachable, 1 not_asked; first: why)" for the lines of one run's failure log."""
    kinds: dict[str, int] = {}
    for line in failures:
        for kind, count in (line.get("failed_by_kind") or {}).items():
            kinds[kind] = kinds.get(kind, 0) + int(count)
    total = sum(int(line["n_failed"]) for line in failures)
    first = next((line["first_error"] for line in failures if line.get("first_error")), None)
    return (f"{total} failed judgment(s) ({', '.join(f'{n} {kind}' for kind, n in sorted(kinds.items()))}"
            + (f"; first: {str(first)[:200]}" if first else "") + ")")


def _shown(path: Path, root: Path) -> Path:
    """``path`` relative to the project when it lies inside it."""
    return path.relative_to(root) if path.is_relative_to(root) else path


def describe_plan(runs: list[Run], root: Path, target: Target | None = None) -> list[dict[str, Any]]:
    """For ``--list``: each run with its state (up to date / would run and why) in ``target``."""
    target = target or Target.book(root)
    cache = RunCache(target.cache)
    hasher = FileHasher(cache.folder / "file-hashes.json")
    rows = []
    for run in runs:
        with _environment(target.run_environment(run)):
            current = fingerprint(run, root, hasher)
            tables = table_hashes(run, hasher)
        stale = why_stale(cache.load(run), current, target.output_path(run), tables, hasher)
        state = "up to date" if stale is None else f"will run ({stale.removeprefix('changed: ')})"
        missing = [name for name, value in current["datasets"].items() if value == "missing"]
        rows.append({"name": run.name, "notebook": run.notebook, "parameters": run.parameters, "state": state,
                     "missing_datasets": missing})
    hasher.save()
    return rows


def executed_from(runs: list[Run], root: Path, target: Target | None = None) -> dict[str, dict[str, Any]]:
    """For a build's record (``build-info.json``): each run's input fingerprint now (``"fingerprint"``), the one
    its executed notebook was made from (``"executed"``: the run cache's, None when the run has no record or its
    notebook is not the one that execution wrote) and, when they differ, which inputs differ (``"differs"``: the
    fingerprint's components, e.g. ``datasets`` when the data the chapter reads now are not those it read); the
    tables the run wrote, with their hashes as written (``"results"``), and those that differ now
    (``"tables_changed"``; None when the run recorded none). A chapter whose fingerprints or tables differ is stale."""
    target = target or Target.book(root)
    cache = RunCache(target.cache)
    hasher = FileHasher(cache.folder / "file-hashes.json")
    states: dict[str, dict[str, Any]] = {}
    for run in runs:
        with _environment(target.run_environment(run)):
            components = fingerprint(run, root, hasher)
            tables = table_hashes(run, hasher)
        current = fingerprint_hash(components)
        record = cache.load(run)
        output = target.output_path(run)
        written = record is not None and output.is_file() and record.get("output_sha256") == hasher(output)
        executed = record.get("hash") if written else None
        states[run.name] = {
            "fingerprint": current, "executed": executed,
            "differs": [] if executed == current else
            changed_components(record, components) if written else ["executed notebook (none recorded)"],
            "results": (record or {}).get("results"), "tables_changed": changed_tables(record, tables)}
    hasher.save()
    return states
