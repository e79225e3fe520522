"""Variants of the book: a reader's judges and a scale profile, run beside the committed book, never over it.

``recjudge run --judge SPEC --profile P`` (or a profile other than ``default`` alone) executes into
``variants/<judges>-<profile>/`` (git-ignored), where ``<judges>`` is the judges' slugs joined by ``+`` (``default``
without ``--judge``; a judge that sets its own sampling or label has a short hash of them in its slug, so two
configurations of one model never share a folder: ``JudgeSpec.slug``)::

    variants/openai-gpt-4o-mini-smoke/
      results/<chapter>/*.csv       the chapters' tables (env RECJUDGE_RESULTS, which recjudge.paths honours)
      notebooks/<run>.ipynb         the executed notebooks
      .runplan-cache/               the skip records of this variant (inputs unchanged -> skipped)
      variant.json                  what the variant is: profile, judges, the LLM runs left out
      plan/                         the last --plan: logs/<run>.jsonl, and the plan pass's own results and notebooks

The committed ``results/``, ``book/notebooks/`` and ``data/llm/`` are never written; the reader's replies go to the
reader's response store, ``variants/store/`` (git-ignored; ``recjudge.paths.store_dir``), read together with the
committed one, so a second run replays what the first paid for.  With ``--judge`` only the runs that ask an LLM
and take the ``judges`` parameter execute (a judge changes nothing in the others; ``runplan.with_judges``), and the
pages that read their tables (``results_of``: the at-a-glance page; ``runplan.with_summaries``), which read the
committed tables of the chapters the variant did not run (``results.load_table_or_committed``); a profile alone executes
every run.  ``recjudge book --variant NAME`` then builds the variant's own book into ``_build/variants/NAME/html``
(``compendium.variant_book``); ``make book JUDGE=SPEC PROFILE=P`` runs and builds it in one command.

The plan.  ``--plan`` executes the chapters with the engine in its dry-run mode: env ``RECJUDGE_LLM_MODE=plan`` makes
``run_judge`` ask nothing and append one JSON line per judge job to the file named by ``RECJUDGE_PLAN_LOG`` (one file
per run here), with the fields ``provider``, ``model``, ``n_requests`` (prompts), ``n_judgments`` (replies wanted:
prompts x runs), ``n_missing`` (of those, not in the store), ``weights_present`` (a local judge's GGUF on this
machine), ``left_out`` (a judge not asked: the book's own beside a reader's judge at another scale) and those of
``recjudge.llm.estimate.JobEstimate`` (a local judge's time at the median latency of its stored replies when the
store has them, ``rate_basis`` says which).  ``plan_table`` sums them per chapter: judgments missing from the store,
input and output tokens, cost at list price and at batch price (``recjudge.llm.pricing``; NaN, shown as unknown, when
a model has no listed price; nothing for a reader's own server), and time.  Time adds the jobs of a chapter one after
the other, as the chapters run them, except batch jobs, which all wait in the providers' window together (the
longest counts once).  Every figure is an estimate: tokens from characters, output at the reply-length limit.
A plan pass keeps its own skip records: a chapter whose inputs (notebook, parameters, package, data, response store)
are unchanged is not executed again and its job lines are reused; ``--force`` plans again (after changing
``RECJUDGE_LLM_CONCURRENCY`` or the rate limit, which the time depends on).
A live run whose estimate is above ``RECJUDGE_LLM_MAX_USD``, or unknown for a paid model, stops before its first
request unless confirmed (``cost_gate``; ``--yes``).

Batches in one pass.  With ``--batch`` the reader's judges (and only they: ``RECJUDGE_LLM_BATCH_JUDGES``) are asked
through their provider's batch API, and no job waits (``RECJUDGE_LLM_BATCH_WAIT=0``): each submits what the store
lacks and the chapters run on with those judgments pending, so one pass submits every chapter's prompts and the
command returns, saying what is still with the providers (``pending_batches``, read from the batch ledgers). The
same command later runs the judged chapters again, whatever their skip records say, while a batch is pending: their
jobs collect what has ended (never submitting it again) and the chapters are computed with the replies.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import pandas as pd

from recjudge.llm import pricing
from recjudge.llm.ask_options import PLAN as PLAN_MODE
from recjudge.llm.batch import BATCH_JUDGES_ENV, WAIT_ENV, BatchLedger, batch_judge_name
from recjudge.llm.estimate import MAX_USD_ENV, cost_limit, duration
from recjudge.llm.judge_spec import JudgeSpec
from recjudge.llm.plan import PLAN_LOG_ENV

VARIANTS_DIR = "variants"
#: Without --judge, a variant runs the chapters' own judges.
DEFAULT_JUDGES = "default"
#: Longest variant folder name kept readable; a longer one keeps the first judge and a hash of all.
MAX_NAME = 100

#: ``judgments``: the replies the jobs want (prompts x runs), of which ``missing`` are not in the store and would be
#: asked; ``left_out``: missing replies of judges not asked (the book's own, with a reader's judge at another scale).
PLAN_COLUMNS = ["chapter", "jobs", "judgments", "missing", "left_out", "input_tokens", "output_tokens",
                "cost_list_usd", "cost_batch_usd", "cost_run_usd", "seconds", "batch_window_s"]
#: The by-judge table's columns besides the totals: whether the judge is asked, and what its time rests on.
JUDGE_COLUMNS = ["judge", "asked", "weights_present", "rate_basis"]


class PlanLogError(ValueError):
    """A plan log line that does not follow the contract; the message names the file, the line and the field."""


def variant_name(judges: Sequence[JudgeSpec], profile: str) -> str:
    """``<judge slugs joined by '+'>-<profile>``, e.g. ``openai-gpt-4o-mini-paper``."""
    slugs = "+".join(judge.slug for judge in judges) or DEFAULT_JUDGES
    name = f"{slugs}-{profile}"
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(slugs.encode()).hexdigest()[:8]
    return f"{judges[0].slug[:MAX_NAME // 2]}+{len(judges) - 1}-more-{digest}-{profile}"


def variant_folder(root: Path, name: str) -> Path:
    return Path(root) / VARIANTS_DIR / name


def describe_variant(folder: Path, judges: Sequence[JudgeSpec], profile: str, runs: Iterable[str],
                     left_out: Iterable[str]) -> None:
    """Write ``variant.json``: what produced the variant (no dates, no paths, no keys: it diffs and shares). Its
    ``runs`` keep those of earlier runs into the same folder (an ``--only`` run adds to the variant, it does not
    replace what ran before)."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        earlier = json.loads((folder / "variant.json").read_text(encoding="utf-8")).get("runs", [])
    except (OSError, ValueError, AttributeError):  # none yet, or damaged: this run's own
        earlier = []
    runs = set(runs) | {run for run in earlier if isinstance(run, str)}
    record = {"profile": profile, "judges": [judge.to_parameter() for judge in judges], "runs": sorted(runs),
              "llm_runs_without_judges_parameter": sorted(left_out)}
    (folder / "variant.json").write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")


# ------------------------------------------------------------------------------------------------ batches, one pass
def batch_environment(judges: Sequence[JudgeSpec], *, wait: bool) -> tuple[tuple[str, str], ...]:
    """What the chapters' kernels need for the judges asked through a batch API (``--batch``): the judges named in
    ``RECJUDGE_LLM_BATCH_JUDGES`` (the chapters' own local judges are asked as always), and, unless ``wait`` or the
    reader set ``RECJUDGE_LLM_BATCH_WAIT``, no waiting: every job submits what it lacks (or polls its batches once)
    and goes on, so one pass over the chapters submits every chapter's prompts and returns."""
    names = [batch_judge_name(judge.provider, judge.model) for judge in judges if judge.batch]
    if not names:
        return ()
    environment = [(BATCH_JUDGES_ENV, ",".join(names))]
    if not wait and WAIT_ENV not in os.environ:
        environment.append((WAIT_ENV, "0"))
    return tuple(environment)


def pending_batches(store_root: Path, judges: Sequence[JudgeSpec]) -> dict[str, int]:
    """For each batch judge with batches not yet collected (``recjudge.llm.batch.BatchLedger``): how many prompts
    they hold. Empty: nothing is with a provider."""
    pending = {}
    for judge in judges:
        if judge.batch:
            entries = BatchLedger(store_root, judge.provider, judge.model).pending()
            if entries:
                pending[batch_judge_name(judge.provider, judge.model)] = sum(len(entry["keys"]) for entry in entries)
    return pending


# ---------------------------------------------------------------------------------------------------------- the plan
def read_plan_log(path: Path) -> list[dict[str, Any]]:
    """The job lines of one plan log (an absent file: a chapter that asked no LLM)."""
    if not path.is_file():
        return []
    jobs = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}, line {number}"
        try:
            job = json.loads(line)
        except ValueError as error:
            raise PlanLogError(f"{where}: not JSON ({error})") from None
        jobs.append(checked_job(job, where))
    return jobs


def checked_job(job: Any, where: str) -> dict[str, Any]:
    """A job line held to the contract (the fields the plan sums, of the right types), with its counts read; a line
    that breaks it is a ``PlanLogError`` naming ``where`` and the field."""
    if not isinstance(job, dict):
        raise PlanLogError(f"{where}: a job line must be a JSON object")
    for name in ("provider", "model"):
        if not isinstance(job.get(name), str):
            raise PlanLogError(f"{where}: field {name!r} missing or not a string")
    for name in ("input_tokens", "output_tokens", "seconds"):
        if not _number(job.get(name)):
            raise PlanLogError(f"{where}: field {name!r} missing or not a number")
    job["_missing"] = _count(job, "n_missing", where)
    job["_judgments"] = _count(job, "n_judgments", where)
    if job["_missing"] > job["_judgments"]:
        raise PlanLogError(f"{where}: n_missing {job['_missing']} is more than n_judgments {job['_judgments']}")
    job["_left_out"] = job.get("left_out") is True
    return job


def _jobs(log: Path | Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """A chapter's job lines: read from its plan log, or given already checked (priced from the prompt manifest)."""
    return read_plan_log(log) if isinstance(log, Path) else list(log)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _count(job: dict[str, Any], name: str, where: str) -> int:
    value = job.get(name)
    if not _number(value):
        raise PlanLogError(f"{where}: field {name!r} missing or not a count")
    return int(value)


def job_costs(job: Mapping[str, Any], free: set[tuple[str, str]] = frozenset()) -> tuple[float, float, float]:
    """(list price, batch price, price of the run as it would ask) of one job line, in USD."""
    provider, model = job["provider"], job["model"]
    if (provider, model) in free:
        return 0.0, 0.0, 0.0
    tokens = (int(job["input_tokens"]), int(job["output_tokens"]))
    listed = pricing.cost_usd(provider, model, *tokens)
    batch = pricing.cost_usd(provider, model, *tokens, batch=True) if provider in pricing.BATCH_DISCOUNT else listed
    return listed, batch, batch if job.get("batch") else listed


def _job_totals(jobs: Sequence[Mapping[str, Any]], free: set[tuple[str, str]], *,
                with_left_out: bool = False) -> dict[str, Any]:
    """Jobs summed as one chapter runs them: one after the other, except batch jobs, which wait together. The
    missing replies of jobs left out (not asked) count in ``left_out`` only, and their tokens, cost and time not at
    all, unless ``with_left_out`` (the by-judge table: what asking that judge too would take)."""
    left_out = sum(job["_missing"] for job in jobs if job["_left_out"])
    judgments = sum(job["_judgments"] for job in jobs)
    if not with_left_out:
        jobs = [job for job in jobs if not job["_left_out"]]
    costs = [job_costs(job, free) for job in jobs]
    window = max((float(job["seconds"]) for job in jobs if job.get("batch")), default=0.0)
    return {
        "jobs": sum(int(job.get("jobs", 1)) for job in jobs), "judgments": judgments,
        "missing": sum(job["_missing"] for job in jobs if not job["_left_out"]), "left_out": left_out,
        "input_tokens": sum(int(job["input_tokens"]) for job in jobs),
        "output_tokens": sum(int(job["output_tokens"]) for job in jobs),
        "cost_list_usd": _sum(cost[0] for cost in costs), "cost_batch_usd": _sum(cost[1] for cost in costs),
        "cost_run_usd": _sum(cost[2] for cost in costs),
        "seconds": sum(float(job["seconds"]) for job in jobs if not job.get("batch")) + window,
        "batch_window_s": window,
    }


def plan_table(logs: Mapping[str, Path | Sequence[dict[str, Any]]],
               free: set[tuple[str, str]] = frozenset()) -> pd.DataFrame:
    """One row per chapter (``logs``: run name -> its plan log, or its job lines, ``checked_job``), in order, and a
    last row ``total``. A cost is NaN when one of its jobs has no listed price: unknown, not zero."""
    rows = [{"chapter": chapter, **_job_totals(_jobs(log), free)} for chapter, log in logs.items()]
    table = pd.DataFrame(rows, columns=PLAN_COLUMNS)
    total = {column: (_sum(table[column]) if column.startswith("cost") else table[column].sum())
             for column in PLAN_COLUMNS[1:]}
    # The batches of every chapter are submitted in one pass: their windows overlap, the longest counts once.
    window = float(table["batch_window_s"].max()) if len(table) else 0.0
    total["seconds"] = float((table["seconds"] - table["batch_window_s"]).sum()) + window
    total["batch_window_s"] = window
    table.loc[len(table)] = {"chapter": "total", **total}
    return table


def plan_by_judge(logs: Mapping[str, Path | Sequence[dict[str, Any]]],
                  free: set[tuple[str, str]] = frozenset()) -> pd.DataFrame:
    """The same plan summed per judge (``provider:model``) over every chapter, in order of first appearance: what the
    reader's judge costs apart from the chapters' own (local) judges. A judge not asked (``asked`` False: the book's
    own beside a reader's judge at another scale) is summed with what asking it too would take; ``weights_present``
    is False for a local judge whose weights are not on this machine, ``rate_basis`` says what its time rests on."""
    by_judge: dict[str, list[dict[str, Any]]] = {}
    for log in logs.values():
        for job in _jobs(log):
            by_judge.setdefault(f"{job['provider']}:{job['model']}", []).append(job)
    rows = []
    for judge, jobs in by_judge.items():
        present = {job.get("weights_present") for job in jobs} - {None}
        bases = sorted({rate_kind(str(job.get("rate_basis") or "")) for job in jobs if job["_missing"]} - {""})
        # The judges asked are chosen per judge (env RECJUDGE_LLM_ASK_ONLY): one job left out marks the judge (its
        # jobs with nothing missing have no reason to say so)
        rows.append({"judge": judge, "asked": not any(job["_left_out"] for job in jobs),
                     "weights_present": (False not in present) if present else None,
                     "rate_basis": "; ".join(bases), **_job_totals(jobs, free, with_left_out=True)})
    return pd.DataFrame(rows, columns=[*JUDGE_COLUMNS, *PLAN_COLUMNS[1:]])


def rate_kind(basis: str) -> str:
    """A job's ``rate_basis`` without its count, so a judge's jobs say in one phrase what their time rests on."""
    return "median latency of its stored replies" if basis.startswith("median latency") else basis


def left_out_line(by_judge: pd.DataFrame) -> str | None:
    """The plan's line on the judges not asked (the book's own, with a reader's judge at another scale), or None
    when every judge is asked."""
    skipped = by_judge[~by_judge["asked"].astype(bool)]
    if skipped.empty:
        return None
    missing = int(skipped["left_out"].sum())
    names = ", ".join(skipped["judge"])
    return (f"book's judges ({names}): {missing:,} judgments missing from the store at this scale, not asked (their "
            f"rows are left out and named on each chapter's page; asking them would take "
            f"~{duration(float(skipped['seconds'].sum()))}); --with-book-judges to ask them")


def not_fetched_line(by_judge: pd.DataFrame) -> str | None:
    """The plan's line on local judges whose weights are not on this machine, or None."""
    absent = by_judge[by_judge["weights_present"].astype("boolean").eq(False).fillna(False).astype(bool)]
    if absent.empty:
        return None
    return ("not fetched: " + ", ".join(f"{row.judge} ({int(row.missing + row.left_out):,} judgments missing"
                                        + ("" if row.asked else ", not asked") + ")"
                                        for row in absent.itertuples())
            + ": their weights are not on this machine (`recjudge models fetch NAME`, `recjudge models list`); "
            "asked without them, these judgments would fail")


def _sum(values: Iterable[float]) -> float:
    """A sum that stays NaN when one term is unknown (pandas would skip it and understate the cost)."""
    values = [float(value) for value in values]
    return math.nan if any(math.isnan(value) for value in values) else float(sum(values))


def format_plan(table: pd.DataFrame) -> str:
    """The plan as printed (by chapter, or by judge): counts with thousands separators, dollars, durations, 'unknown'
    for an unknown cost."""
    def dollars(value: float) -> str:
        return "unknown" if math.isnan(value) else f"${value:,.2f}"

    first = "chapter" if "chapter" in table else "judge"
    if table.empty:  # nothing built a judge job (no chapter that asks, or every one's data absent)
        return f"(no judge jobs: no {first} has a judgment to count)"
    shown = pd.DataFrame({
        first: table[first],
        "judge jobs": table["jobs"].map(lambda n: f"{int(n):,}"),
        "judgments": table["judgments"].map(lambda n: f"{int(n):,}"),
        "missing judgments": table["missing"].map(lambda n: f"{int(n):,}"),
        "left out": table["left_out"].map(lambda n: f"{int(n):,}"),
        "input tokens": table["input_tokens"].map(lambda n: f"~{int(n):,}"),
        "output tokens": table["output_tokens"].map(lambda n: f"<={int(n):,}"),
        "list price": table["cost_list_usd"].map(dollars),
        "batch price": table["cost_batch_usd"].map(dollars),
        "time": table["seconds"].map(lambda s: f"~{duration(float(s))}"),
    })
    if first == "judge":  # the by-judge table also asks all of a judge's missing replies, left out or not
        shown["missing judgments"] = (table["missing"] + table["left_out"]).map(lambda n: f"{int(n):,}")
        shown["left out"] = [("asked" if asked else "not asked") + ("" if present is not False else ", not fetched")
                             for asked, present in zip(table["asked"], table["weights_present"])]
        shown = shown.rename(columns={"left out": "status"})
        shown["time based on"] = table["rate_basis"]
    return shown.to_string(index=False)


def cost_gate(table: pd.DataFrame, confirmed: bool) -> str | None:
    """Why a live run must not start (its estimate is above the limit and it was not confirmed), or None."""
    cost = float(table.loc[table["chapter"] == "total", "cost_run_usd"].iloc[0])
    limit = cost_limit()
    if confirmed or cost <= limit:
        return None
    if math.isnan(cost):  # a paid model without a listed price: the limit cannot be checked, so it is not assumed met
        return (f"the run's cost is unknown (a judge's model has no listed price in recjudge.llm.pricing), so the "
                f"limit of ${limit:,.2f} (env {MAX_USD_ENV}) cannot be checked; nothing was asked. Confirm with --yes "
                "after reading the token counts above")
    return (f"the run is estimated at about ${cost:,.2f}, above the limit of ${limit:,.2f} (env {MAX_USD_ENV}); "
            "nothing was asked. Confirm with --yes, or raise the limit, or choose a smaller --profile")


def limit_line(table: pd.DataFrame, paid: bool) -> str | None:
    """What a plan's estimate (``plan_table``) means for the live run of the same command: whether it is within the
    spending limit (``recjudge.llm.estimate.cost_limit``) or will stop before its first request (``cost_gate``).
    None when no judge costs money (no limit applies)."""
    if not paid:
        return None
    cost = float(table.loc[table["chapter"] == "total", "cost_run_usd"].iloc[0])
    limit = cost_limit()
    if math.isnan(cost):
        return (f"Spending limit: the cost is unknown (a judge's model has no listed price), so the live run will stop "
                f"before its first request unless confirmed with --yes (limit ${limit:,.2f}, env {MAX_USD_ENV}).")
    if cost > limit:
        return (f"Spending limit: about ${cost:,.2f} is above the limit of ${limit:,.2f} (env {MAX_USD_ENV}), so the "
                f"live run of this command will stop before its first request. Add --yes to confirm the cost, set "
                f"{MAX_USD_ENV}={math.ceil(cost)}, or choose a smaller --profile.")
    return (f"Spending limit: about ${cost:,.2f} is within the limit of ${limit:,.2f} (env {MAX_USD_ENV}); the live "
            "run starts without asking.")


def plan_log_path(folder: Path, run_name: str) -> Path:
    """Where a plan pass has the engine write one run's job lines."""
    return Path(folder) / f"{run_name}.jsonl"


__all__ = ["PLAN_LOG_ENV", "PLAN_MODE", "PlanLogError", "VARIANTS_DIR", "batch_environment", "checked_job", "cost_gate",
           "describe_variant", "pending_batches",
           "format_plan", "job_costs", "left_out_line", "limit_line", "not_fetched_line",
           "plan_by_judge", "plan_log_path", "plan_table", "read_plan_log",
           "variant_folder", "variant_name"]
