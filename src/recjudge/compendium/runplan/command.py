"""``recjudge run``: parses the command line and calls the other modules (load the plan, price it, gate its cost,
execute it, report the judges' and batches' sums).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from recjudge.compendium.runplan.execution import (
    EXIT_FAILED_JUDGMENTS,
    RunOutcome,
    Target,
    _failure_summary,
    _shown,
    describe_plan,
    execute_plan,
)
from recjudge.compendium.runplan.plan import (
    left_out_runs,
    load_runplan,
    stand_ins_for_absent_data,
    with_judges,
    with_summaries,
)
from recjudge.compendium.runplan.run import (
    ASK_ONLY_ENV,
    CACHE_DIR,
    DEFAULT_PROFILE,
    JUDGES_PARAMETER,
    MODE_ENV,
    RUNPLAN_FILE,
    Run,
    RunFailedError,
    RunPlanError,
)
from recjudge.paths import RESULTS_ENV, project_root, store_dir
from recjudge.settings import whole_number

if TYPE_CHECKING:
    import pandas as pd

#: The job-summary counts ``recjudge run`` prints per judge, and their headings.
SUMMARY_COUNTS = {"n_replies_wanted": "judgments", "n_asked": "asked", "n_from_store": "from store",
                  "n_failed": "failed", "n_unparsable": "unparsable", "n_shape_violations": "out of shape",
                  "n_left_out": "left out"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--runplan", type=Path, default=None, metavar="FILE",
                        help=f"run plan file (default: <root>/{RUNPLAN_FILE})")
    parser.add_argument("--only", action="append", metavar="NAME",
                        help="execute only this run (repeatable)")
    parser.add_argument("--force", action="store_true", help="execute even when the inputs are unchanged")
    parser.add_argument("--list", action="store_true", help="list the runs and whether each would execute")
    parser.add_argument("--jobs", type=whole_number(1), default=None, metavar="N",
                        help="execute up to N runs at once (default 1; a plan: the CPUs, at most "
                             f"{MAX_PLAN_JOBS}), each kernel with its share of the CPUs' threads; a run that reads "
                             "other runs' tables (results_of) starts after them")
    parser.add_argument("--allow-failures", action="store_true",
                        help=f"exit 0 even when judgments failed (without it: exit status {EXIT_FAILED_JUDGMENTS}); "
                             "a chapter with failures is executed again next time either way")
    judged = parser.add_argument_group(
        "your judge, the whole book", "re-run every chapter that asks an LLM with your judge(s) and/or at another "
        "scale, into variants/<judge>-<profile>/ (git-ignored); the committed results and book are never written")
    judged.add_argument("--judge", action="append", metavar="SPEC",
                        help="provider:model (openai:gpt-4o-mini, anthropic:claude-3-5-haiku, local:/path/model.gguf "
                             "or a local model's name) or a judge file (.yaml); repeatable: several judges")
    judged.add_argument("--base-url", metavar="URL", help="an OpenAI-compatible server for an openai:IDENTITY judge")
    judged.add_argument("--served-model", metavar="NAME",
                        help="the name that server knows the weights by (the model in SPEC is then their identity)")
    judged.add_argument("--batch", action="store_true", help="ask through the providers' batch APIs (half price)")
    judged.add_argument("--profile", default=DEFAULT_PROFILE, metavar="NAME",
                        help="scale: default (the committed book), paper (the papers' populations), smoke (a few "
                             "prompts per chapter); defined in the run plan")
    judged.add_argument("--with-book-judges", action="store_true",
                        help="with --judge and a profile other than default, ask the chapters' own judges too (by "
                             "default only your judges are asked; the book's replay what the store holds and their "
                             "missing rows are left out, named on each page)")
    judged.add_argument("--plan", action="store_true",
                        help="ask nothing: execute the chapters with the engine in its dry-run mode and print, per "
                             "chapter and in total, the missing judgments, tokens, cost and time")
    judged.add_argument("--yes", action="store_true",
                        help="confirm a live run estimated above the cost limit (env RECJUDGE_LLM_MAX_USD)")


class _UsageError(ValueError):
    """Options that do not go together; the message names them."""


@dataclass
class _Invocation:
    """What ``recjudge run`` was asked to do, checked before anything runs."""

    runs: list[Run]
    judges: tuple[Any, ...]
    left_out: list[Run]
    variant: str | None  # None: the committed book
    folder: Path | None
    profile: str = DEFAULT_PROFILE
    #: runs whose parameters the profile changes
    rescaled: frozenset[str] = frozenset()
    #: the only judges asked (``provider:model``): a reader's judges at a profile other than default; () asks all
    ask_only: tuple[str, ...] = ()
    #: every run of the profile, ``--only`` or not (the chapters a prompt manifest keeps entries of)
    profile_runs: tuple[str, ...] = ()

    def judge_environment(self) -> tuple[tuple[str, str], ...]:
        return ((ASK_ONLY_ENV, ",".join(self.ask_only)),) if self.ask_only else ()

    def paid(self) -> bool:
        """True when a judge costs money (not a local model, not the reader's own server)."""
        return any(judge.provider != "local" and not judge.own_server() for judge in self.judges)

    def target(self, root: Path, *, confirmed: bool = False) -> Target:
        if self.folder is None:
            return Target.book(root)
        from recjudge.compendium.variants import batch_environment
        from recjudge.llm.estimate import CONFIRM_COST_ENV

        environment = [(RESULTS_ENV, str(self.folder / "results")), *batch_environment(self.judges, wait=False),
                       *self.judge_environment()]
        if confirmed:  # --yes: the chapters' jobs must not refuse what the reader confirmed for the whole run
            environment.append((CONFIRM_COST_ENV, "1"))
        return Target(self.folder / "notebooks", self.folder / CACHE_DIR, tuple(environment), profile=self.profile,
                      rescaled=self.rescaled)

    def plan_target(self, root: Path) -> Target:
        """The plan pass: its own notebooks, tables and skip records, so it never stands in for a real run."""
        from recjudge.compendium.variants import batch_environment, variant_folder, variant_name

        folder = (self.folder or variant_folder(root, variant_name((), DEFAULT_PROFILE))) / "plan"
        environment = ((RESULTS_ENV, str(folder / "results")), *batch_environment(self.judges, wait=True),
                       *self.judge_environment())
        return Target(folder / "notebooks", folder / CACHE_DIR, environment, plan_logs=folder / "logs",
                      profile=self.profile, rescaled=self.rescaled)


def _prepare(args: argparse.Namespace, root: Path) -> _Invocation:
    """Every check that needs no execution, in the order a reader would fix them (raises with one clear message)."""
    from recjudge.compendium.variants import variant_folder, variant_name
    from recjudge.llm.estimate import cost_limit
    from recjudge.llm.judge_spec import parse_judges

    try:  # read now, not after a pricing pass
        cost_limit()
    except ValueError as error:
        raise _UsageError(str(error)) from None
    given = [option for option, value in (("--base-url", args.base_url), ("--served-model", args.served_model),
                                          ("--batch", args.batch)) if value]
    if given and not args.judge:
        raise _UsageError(f"{', '.join(given)} describe(s) a judge: give it with --judge provider:model")
    if args.with_book_judges and not args.judge:
        raise _UsageError("--with-book-judges asks the book's judges beside yours: give yours with --judge "
                          "provider:model (without --judge the book's judges are the ones asked)")
    judges = parse_judges(args.judge or [], base_url=args.base_url, served_model=args.served_model, batch=args.batch)
    runs = load_runplan(args.runplan, root=root, profile=args.profile)
    every_run = {run.name for run in runs}
    at_default = load_runplan(args.runplan, root=root)
    rescaled = rescaled_runs(runs, at_default)
    profile_leaves_out = left_out_runs(args.runplan, root=root, profile=args.profile, runs=at_default)
    stand_ins = stand_ins_for_absent_data(at_default, profile_leaves_out)
    for name, absent in stand_ins.items():
        print(f"note: profile {args.profile} leaves out {name}, but it runs here (at its default scale): its "
              f"chapter's data ({', '.join(absent)}) are absent, so it is the run that exercises the chapter's "
              "judges", file=sys.stderr)
    left_out: list[Run] = []
    without_logprobs: dict[str, list[str]] = {}
    if judges:
        judged, left_out, without_logprobs = with_judges(runs, [judge.to_parameter() for judge in judges], root)
        for run_name, labels in without_logprobs.items():
            print(f"note: --judge: {run_name} reads expected scores from token log-probabilities, which "
                  f"{', '.join(labels)} do(es) not return: left out of it", file=sys.stderr)
        if not judged:
            raise _UsageError(f"--judge: no chapter of the run plan can take these judges (chapters that ask an "
                              f"LLM but take no '{JUDGES_PARAMETER}' parameter: {sorted(r.name for r in left_out)}; "
                              f"that read log-probabilities: {sorted(without_logprobs)})")
        runs = with_summaries(runs, judged, [judge.to_parameter() for judge in judges], root)
    if args.only:
        unknown = sorted(set(args.only) - every_run - profile_leaves_out)
        if unknown:
            raise _UsageError(f"--only {unknown}: no such run in the run plan (runs: {sorted(every_run)})")
        left_by_profile = sorted(set(args.only) - every_run)
        if left_by_profile:
            raise _UsageError(f"--only {left_by_profile}: profile {args.profile} leaves out {left_by_profile} "
                              f"({args.runplan or RUNPLAN_FILE} maps it to 'leave out' under profiles: "
                              f"{args.profile}): give another profile to run it, or leave it out of --only")
        refused = sorted(set(args.only) & {run.name for run in left_out})
        if refused:
            raise _UsageError(f"--only {refused} with --judge: these chapters ask an LLM but do not take the "
                              f"'{JUDGES_PARAMETER}' parameter yet")
        unplayable = sorted(set(args.only) - {run.name for run in runs} & set(without_logprobs))
        if unplayable:
            raise _UsageError(f"--only {unplayable} with --judge: these chapters read expected scores from token "
                              "log-probabilities, which no judge given returns")
        no_llm = sorted(set(args.only) - {run.name for run in runs} - set(refused))
        if no_llm:
            raise _UsageError(f"--only {no_llm} with --judge: these chapters ask no LLM and read no judged chapter's "
                              "tables; a judge changes nothing in them")
        chosen = set(args.only)
        if judges or args.profile != DEFAULT_PROFILE:
            # A variant's pages that read the chosen chapters' tables and ask no LLM (the at-a-glance page) run with
            # them, as they do with every judged chapter: otherwise the variant's book shows them not run
            readers = [run.name for run in runs if run.name not in chosen and not run.asks_llm
                       and set(run.results_of) & chosen]
            if readers:
                print(f"note: --only {sorted(chosen)} also runs {', '.join(readers)}, which read(s) their tables",
                      file=sys.stderr)
            chosen |= set(readers)
        runs = [run for run in runs if run.name in chosen]
    # Only a run that may ask needs keys: not a plan, a listing or a replay.
    live = not (args.plan or args.list) and os.environ.get(MODE_ENV, "").strip().lower() != "replay"
    problems = [problem for judge in judges for problem in judge.readiness_problems(live=live)]
    if problems:
        raise _UsageError("\n".join(problems))
    if not judges and args.profile == DEFAULT_PROFILE:
        invocation = _Invocation(runs, judges, left_out, None, None, profile_runs=tuple(sorted(every_run)))
    else:
        name = variant_name(judges, args.profile)
        # A reader's judge at another scale is asked alone unless the book's judges are wanted too
        ask_only = (tuple(dict.fromkeys(f"{judge.provider}:{judge.model}" for judge in judges))
                    if judges and args.profile != DEFAULT_PROFILE and not args.with_book_judges else ())
        invocation = _Invocation(runs, judges, left_out, name, variant_folder(root, name), args.profile, rescaled,
                                 ask_only, tuple(sorted(every_run)))
    return invocation


def rescaled_runs(runs: Iterable[Run], default_runs: Iterable[Run]) -> frozenset[str]:
    """Names of the runs of a profile (``runs``) whose parameters differ from the default profile's."""
    default = {run.name: run.parameters for run in default_runs}
    return frozenset(run.name for run in runs if run.parameters != default.get(run.name))


def run_command(args: argparse.Namespace) -> int:
    from recjudge.compendium.variants import PlanLogError
    from recjudge.llm.judge_spec import JudgeSpecError

    root = project_root()
    try:
        invocation = _prepare(args, root)
    except (RunPlanError, JudgeSpecError, _UsageError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if invocation.left_out:
        print(f"note: --judge: {len(invocation.left_out)} chapter(s) ask an LLM but do not take the "
              f"'{JUDGES_PARAMETER}' parameter yet, so they are left out of this variant: "
              f"{', '.join(run.name for run in invocation.left_out)}", file=sys.stderr)
    runs = invocation.runs
    if args.list:
        target = invocation.plan_target(root) if args.plan else invocation.target(root)
        for row in describe_plan(runs, root, target):
            missing = f"; datasets missing: {', '.join(row['missing_datasets'])}" if row["missing_datasets"] else ""
            print(f"{row['name']:<32} {row['notebook']:<44} {row['state']}{missing}")
            if row["parameters"]:
                print(f"{'':<32} parameters: {json.dumps(row['parameters'], sort_keys=True)}")
        return 0
    started = time.perf_counter()
    try:
        if args.plan:
            priced = _plan(invocation, root, force=args.force, jobs=plan_jobs(args.jobs))
            print(_plan_heading(invocation, args.profile))
            from recjudge.compendium.variants import format_plan

            print(format_plan(priced.table))
            for line in priced.data_lines():
                print(line)
            print("\nThe same plan by judge (a judge not asked: what asking it too would take):")
            print(format_plan(priced.by_judge))
            from recjudge.compendium.variants import left_out_line, limit_line, not_fetched_line

            for line in (left_out_line(priced.by_judge), not_fetched_line(priced.by_judge),
                         limit_line(priced.table, invocation.paid())):
                if line:
                    print(line)
            print(plan_time_line(priced.outcomes, time.perf_counter() - started, plan_jobs(args.jobs),
                                 priced.source_line()))
            return 0
        if invocation.folder is not None:
            status = _gate_cost(invocation, root, args)
            if status:
                return status
            from recjudge.compendium.variants import describe_variant

            describe_variant(invocation.folder, invocation.judges, args.profile, [run.name for run in runs],
                             [run.name for run in invocation.left_out])
        force = args.force or _collecting_batches(invocation)
        outcomes = execute_plan(runs, root, force=force, target=invocation.target(root, confirmed=args.yes),
                                jobs=args.jobs or 1)
    except RunFailedError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except PlanLogError as error:  # a plan log that breaks the engine's contract
        print(f"error: {error}", file=sys.stderr)
        return 1
    executed = sum(outcome.status == "executed" for outcome in outcomes)
    where = f" -> {_shown(invocation.folder, root)}" if invocation.folder is not None else ""
    print(f"[run] {executed} executed, {len(outcomes) - executed} up to date, "
          f"{time.perf_counter() - started:.1f} s in all{where}")
    with_failures = [outcome for outcome in outcomes if outcome.failures]
    if with_failures:
        print(f"{'warning' if args.allow_failures else 'error'}: judgments failed in "
              f"{len(with_failures)} chapter(s): "
              + "; ".join(f"{outcome.run.name}: {_failure_summary(outcome.failures)}" for outcome in with_failures)
              + ". Their tables leave them out; run again to ask them (stored replies are not asked again)"
              + ("" if args.allow_failures else "; --allow-failures exits 0"), file=sys.stderr)
    _report_batches(invocation)
    summary = judge_summary(outcomes, invocation.target(root))
    if summary:
        print("[run] judges, this run's executed chapters:\n" + summary)
    if invocation.variant is not None:
        print(f"[run] its book: `recjudge book --variant {invocation.variant}` builds "
              f"_build/variants/{invocation.variant}/html (`make book` with the same JUDGE=/PROFILE= runs and "
              "builds in one command)")
    return EXIT_FAILED_JUDGMENTS if with_failures and not args.allow_failures else 0


def judge_summary(outcomes: list[RunOutcome], target: Target) -> str:
    """One line per judge summed over the executed runs' job logs (``recjudge.llm.report.log_job``): judgments
    wanted, asked, from the store, failed, unparsable, out of shape, left out; empty when no judge was asked."""
    import pandas as pd

    from recjudge.llm.report import read_job_log

    lines = [line for outcome in outcomes if outcome.status == "executed"
             for line in read_job_log(target.job_log(outcome.run))]
    if not lines:
        return ""
    frame = pd.DataFrame(lines)
    frame["judge"] = frame["provider"] + ":" + frame["model"]
    table = frame.groupby("judge", sort=False)[list(SUMMARY_COUNTS)].sum().reset_index()
    shown = table.rename(columns=SUMMARY_COUNTS).to_string(index=False)
    recorded = [judge for judge in table["judge"] if judge.startswith("recorded:")]
    if recorded:  # neither asked nor in the store: their row would otherwise read as judgments from nowhere
        shown += (f"\n{', '.join(recorded)}: judgments recorded in a dataset's own file, read from it (neither asked "
                  "nor held in the response store)")
    return shown


def _collecting_batches(invocation: _Invocation) -> bool:
    """True when a batch judge has batches with its provider: the judged chapters run again (their inputs may be
    unchanged) so that their jobs poll them and store what has ended."""
    from recjudge.compendium.variants import pending_batches

    pending = pending_batches(store_dir(), invocation.judges)
    if pending:
        print(f"[run] collecting batches: {_pending_prompts(pending)} were with the provider; the judged chapters "
              "run again to read them")
    return bool(pending)


def _pending_prompts(pending: dict[str, int]) -> str:
    return ", ".join(f"{n:,} prompt(s) of {name}" for name, n in pending.items())


def _report_batches(invocation: _Invocation) -> None:
    """After a --batch pass: what is still with the providers, and that the same command collects it."""
    from recjudge.compendium.variants import pending_batches

    pending = pending_batches(store_dir(), invocation.judges)
    if pending:
        print(f"[run] submitted in one pass, not yet answered: {_pending_prompts(pending)}"
              + ". The variant's tables lack them (NaN) until then: run the same command again later (providers "
              "answer within 24 h) to collect them; chained prompts (least-to-most) need one pass per step.")


#: A plan's chapters only read the store and count, so by default they are priced as many at once as there are CPUs,
#: up to this many (each kernel holds a chapter's data in memory).
MAX_PLAN_JOBS = 4


def plan_jobs(requested: int | None) -> int:
    """Chapters a plan prices at once: ``--jobs`` when given, else the CPUs (at most :data:`MAX_PLAN_JOBS`)."""
    return requested if requested is not None else max(1, min(os.cpu_count() or 1, MAX_PLAN_JOBS))


def plan_time_line(outcomes: list[RunOutcome], seconds: float, jobs: int, sources: str = "") -> str:
    """What a plan's time went into: the chapters read from the prompt manifest and those executed (``sources``),
    each executed one up to its last judge call."""
    executed = [outcome for outcome in outcomes if outcome.status == "executed"]
    if not executed:
        return f"[plan] priced in {seconds:.0f} s" + (f": {sources}" if sources else "")
    slowest = sorted(executed, key=lambda outcome: -outcome.seconds)[:3]
    at_once = f", {jobs} chapters at once" if jobs > 1 else "; --jobs 2 prices two chapters at once"
    line = (f"[plan] priced in {seconds:.0f} s{at_once}" + (f"; {sources}" if sources else "") + ". Each chapter "
            "executed ran up to its last judge call, nothing asked: the time is each chapter's kernel start "
            "(imports, data) and the building of every prompt it would send, to count its tokens")
    line += "; slowest: " + ", ".join(f"{outcome.run.name} {outcome.seconds:.0f} s" for outcome in slowest)
    return line


@dataclass
class _Priced:
    """A plan's figures (by chapter, by judge), the chapters executed to price them, and where each chapter's
    figures came from: the prompt manifest or an execution, with what of its data was absent."""

    table: pd.DataFrame
    by_judge: pd.DataFrame
    outcomes: list[RunOutcome] = field(default_factory=list)
    manifest: str = ""  # the manifest file read, as shown
    from_manifest: list[str] = field(default_factory=list)
    #: chapter -> why it was executed
    executed: dict[str, str] = field(default_factory=dict)
    #: chapter -> {dataset: status here}: priced from the manifest although these data are absent here
    absent_here: dict[str, dict[str, str]] = field(default_factory=dict)
    #: chapter -> {dataset: status}: priced without these data (an execution without them, or an entry recorded so)
    priced_without: dict[str, dict[str, str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def source_line(self) -> str:
        parts = []
        if self.from_manifest:
            parts.append(f"{len(self.from_manifest)} chapter(s) read from the prompt manifest {self.manifest}")
        if self.executed:
            parts.append(f"{len(self.executed)} executed (" + "; ".join(f"{name}: {why}" for name, why
                                                                       in self.executed.items()) + ")")
        return ", ".join(parts)

    def data_lines(self) -> list[str]:
        """What the table's figures stand for where data are absent here (printed right under the table)."""
        lines = list(self.notes)
        absent: dict[str, tuple[str, list[str]]] = {}
        for chapter, datasets in self.absent_here.items():
            for name, status in datasets.items():
                absent.setdefault(name, (status, []))[1].append(chapter)
        if absent:
            lines.append("Data absent here: " + "; ".join(
                f"{name} ({status} here; {', '.join(chapters)})" for name, (status, chapters) in absent.items())
                + ". These chapters are priced from the prompt manifest as they run with those data; run without "
                  "them, they would leave out what needs them: set RECJUDGE_DATA_MIRROR, or `recjudge data fetch "
                  "NAME`, before the run.")
        if self.priced_without:
            lines.append("Not priced in full: " + "; ".join(
                f"{chapter} (without {', '.join(f'{name}, {status}' for name, status in datasets.items())})"
                for chapter, datasets in self.priced_without.items())
                + ". Their rows, and so the total, leave out what these chapters would ask with those data: the "
                  "prompt manifest has no entry recorded with them for the chapters' current sources.")
        return lines


def _plan(invocation: _Invocation, root: Path, *, force: bool = False, jobs: int = 1) -> _Priced:
    """Price the runs that ask an LLM: each from the committed prompt manifest of the profile when its entry stands
    for the chapter's current sources (``runplan.manifest``), else by executing it in the engine's dry-run mode up to
    its last judge call (a page that only reads other runs' tables asks nothing, and what a chapter draws after its
    judges is not needed to count them), which records its entry anew. The job lines are summed by chapter and by
    judge (``compendium.variants.plan_table``, ``plan_by_judge``), both also written beside the logs, as CSV.
    ``force``: execute every chapter. ``jobs``: chapters executed at once (``recjudge run --jobs``)."""
    import pandas as pd

    from recjudge.compendium.runplan import manifest as prompts
    from recjudge.compendium.runplan.fingerprints import FileHasher
    from recjudge.compendium.variants import plan_by_judge, plan_log_path, plan_table, read_plan_log

    target = invocation.plan_target(root)
    asking = [run for run in invocation.runs if run.asks_llm]
    priced = _Priced(pd.DataFrame(), pd.DataFrame(),
                     manifest=str(_shown(prompts.manifest_path(root, invocation.profile), root)))
    statuses = {run.name: prompts.dataset_statuses(run.datasets) for run in asking}
    hasher = FileHasher(target.cache / "file-hashes.json")
    keys = {run.name: prompts.prompt_key(run, root, hasher) for run in asking}
    hasher.save()
    entries: dict[str, dict[str, Any]] = {}
    try:
        entries = prompts.load_manifest(root, invocation.profile)
    except prompts.ManifestError as error:
        priced.notes.append(f"note: {error}; its chapters are priced by executing them")
    stored = [f"{judge.provider}:{judge.model}" for judge in invocation.judges
              if prompts.judge_has_stored_replies(judge.provider, judge.model)]
    if stored:
        priced.notes.append(f"note: the response store holds replies of {', '.join(stored)}, so which of its "
                            "judgments are missing is counted by executing every chapter (the prompt manifest counts "
                            "every judgment of a judge with none stored)")
    to_execute = []
    for run in asking:
        entry = entries.get(run.name)
        if force:
            why = "forced"
        elif stored:
            why = "its judge has stored replies"
        elif entry is None:
            why = "not in the prompt manifest"
        elif entry["key"] != keys[run.name]:
            why = "changed since the prompt manifest"
        elif prompts.absent_here(statuses[run.name], entry["datasets"]):
            why = "its manifest entry was recorded with less of its data than this machine has"
        else:
            priced.from_manifest.append(run.name)
            continue
        priced.executed[run.name] = why
        to_execute.append(run)
    if to_execute:
        priced.outcomes = execute_plan(to_execute, root, force=force, target=target, jobs=jobs)
    logs: dict[str, list[dict[str, Any]]] = {}
    for run in asking:
        if run.name in priced.executed:
            logs[run.name] = read_plan_log(plan_log_path(target.plan_logs, run.name))
            recorded = statuses[run.name]
        else:
            entry = entries[run.name]
            logs[run.name] = prompts.priced_jobs(entry, invocation.judges, invocation.ask_only)
            recorded = entry["datasets"]
            absent = prompts.absent_here(entry["datasets"], statuses[run.name])
            if absent:
                priced.absent_here[run.name] = absent
        without = {name: status for name, status in recorded.items() if status in prompts.UNPRICED_STATUSES}
        if without:
            priced.priced_without[run.name] = without
    _record_manifest(invocation, root, priced.executed, logs, keys, statuses)
    free = {(judge.provider, judge.model) for judge in invocation.judges if judge.own_server()}
    priced.table, priced.by_judge = plan_table(logs, free), plan_by_judge(logs, free)
    target.plan_logs.mkdir(parents=True, exist_ok=True)
    for table, name in zip((priced.table, priced.by_judge), ("plan_by_chapter.csv", "plan_by_judge.csv")):
        table.to_csv(target.plan_logs.parent / name, index=False)
    return priced


def _record_manifest(invocation: _Invocation, root: Path, executed: dict[str, str],
                     logs: dict[str, list[dict[str, Any]]], keys: dict[str, str],
                     statuses: dict[str, dict[str, str]]) -> None:
    """Record the entries of the chapters this plan executed in the profile's prompt manifest, when the profile has
    one (``runplan.manifest.MANIFEST_PROFILES``) and the first judge priced is a remote provider's (the chapters' own
    judges are local or recorded, so its jobs are the reader's role)."""
    from recjudge.compendium.runplan import manifest as prompts

    if invocation.profile not in prompts.MANIFEST_PROFILES or not invocation.judges or not executed:
        return
    reader = invocation.judges[0]
    if reader.provider not in prompts.READER_PROVIDERS:
        return
    entries = {}
    for name in executed:
        entry = prompts.entry_from_jobs(logs[name], (reader.provider, reader.model), keys[name], statuses[name])
        if entry is not None:
            entries[name] = entry
    if entries and prompts.record_entries(root, invocation.profile, entries, invocation.profile_runs):
        print(f"[plan] recorded {len(entries)} chapter(s) in the prompt manifest "
              f"{_shown(prompts.manifest_path(root, invocation.profile), root)}: {', '.join(sorted(entries))}",
              file=sys.stderr)


def _plan_heading(invocation: _Invocation, profile: str) -> str:
    judges = ", ".join(f"{judge.provider}:{judge.model}" for judge in invocation.judges) or "the chapters' own"
    return (f"Plan (nothing asked): judges {judges}, profile {profile}; estimates (tokens from characters, output at "
            "the reply-length limit, time at the configured concurrency and rate limit)")


def _gate_cost(invocation: _Invocation, root: Path, args: argparse.Namespace) -> int:
    """A live run with a paid judge is priced first (a plan pass) and stops before its first request when the
    estimate is above the limit; 0 to go on. Confirmed (--yes) or replaying, there is nothing to guard."""
    replaying = os.environ.get(MODE_ENV, "").strip().lower() == "replay"
    if not invocation.paid() or args.yes or replaying:
        return 0
    from recjudge.compendium.variants import cost_gate, format_plan

    print("[run] pricing the run before anything is asked (a plan)")
    priced = _plan(invocation, root, jobs=plan_jobs(args.jobs))
    print(format_plan(priced.table))
    for line in priced.data_lines():
        print(line)
    refusal = cost_gate(priced.table, args.yes)
    if refusal:
        print(f"error: {refusal}", file=sys.stderr)
        return 2
    return 0
