"""Batch mode: a job's missing prompts sent through the providers' batch APIs (half price, replies within 24 h).

``run_judge(config, requests, batch=True)`` (or env ``RECJUDGE_LLM_BATCH=1``) submits the prompts the store lacks as
one or more batches instead of asking them one by one:

- OpenAI (and OpenAI-compatible servers that implement it): a JSON-lines file uploaded with ``purpose="batch"``,
  then ``POST /v1/batches`` on ``/v1/chat/completions``; results are read from the batch's output and error files.
- Anthropic: Message Batches (``POST /v1/messages/batches``); results are read from its ``results_url``.

Every reply is written under the same store key a direct call would use (the key is the store key; batching is
not part of it), with the batch id in its provenance. Each batch's id and the keys it holds are written to a ledger
beside the store (``<store>/.batches/<provider>/<model>.json``) as soon as the provider accepts it, so a process
that is killed or interrupted while waiting resumes polling on the next run instead of submitting (and paying for)
the same prompts again. A batch is marked collected once its results are stored.

A paid batch is never lost to one fault:

- Results are read line by line. A line that cannot be read (not JSON, the wrong shape, cut short, a custom id the
  batch does not hold, a repeated one) is counted and named (batch id, file, line number) in the run report
  (``RunReport.batches["unreadable_lines"]`` and a note); every other line is stored, the prompts whose line was
  bad are failed judgments (kind ``malformed``) submitted again by the next run, and the batch is closed.
- Polls and result downloads that fail transiently (429, 5xx, timeouts, dropped connections) are retried with
  exponential backoff and jitter, ``POLL_RETRY_ATTEMPTS`` times at most; a final failure raises
  ``BatchUnavailable`` (a ``ProviderError``, API keys redacted) and leaves the batch in the ledger, so the next run
  resumes polling it.
- A run waits at most ``RECJUDGE_LLM_BATCH_DEADLINE`` seconds (default ``DEFAULT_DEADLINE_S``, 26 h: the
  providers' 24-hour window and a margin) for its batches; then it stops waiting, keeps them in the ledger and
  reports their prompts as pending (kind ``batch_pending``): run again to resume polling.

Per-request failures (an error line, a refused request, a malformed body) and requests a batch did not reach
(expired or cancelled batches) are failed judgments in the run report, counted by kind (``batch_error``,
``batch_expired``, ``batch_cancelled``, ``malformed``); they are not stored, so the next run submits them again.
The cost report prices batch replies at the providers' batch rates (``recjudge.llm.pricing.BATCH_DISCOUNT``).

Batch mode needs a provider with a batch API (``openai``, ``anthropic``); expected-score mode works with OpenAI
batches (log-probabilities are part of the request body).

Each provider owns its adapter to its batch API (a ``recjudge.llm.providers.batches.BatchBackend``, built by the
provider's ``batches()``); this module runs a job through any of them and the providers import nothing from it.
"""

from __future__ import annotations

import functools
import json
import os
import random
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from filelock import FileLock

from ..settings import env_number
from .config import JudgeConfig
from .entry import entry_problem, max_stored_chars, now_utc, reply_entry
from .providers._common import redact, short_error
from .providers.base import ProviderError, TransientProviderError
from .providers.batches import BatchBackend, BatchItem, BatchResult, BatchStatus, UnreadableLine
from .retry import RetryPolicy
from .store import ResponseStore, model_slug

#: Environment variable: "1" turns batch mode on for every job (like ``run_judge(batch=True)``).
BATCH_ENV = "RECJUDGE_LLM_BATCH"
#: Environment variable: the judges asked in batches, ``provider:model`` separated by commas (``recjudge run
#: --judge SPEC --batch`` sets it for the chapters' kernels, so that the reader's judge batches and the chapters'
#: own local judges, which have no batch API, do not).
BATCH_JUDGES_ENV = "RECJUDGE_LLM_BATCH_JUDGES"
#: Environment variable: "0" makes a job poll its batches once and return (``run_judge(batch_wait=False)``); the
#: prompts still in flight are pending and the next run collects them.
WAIT_ENV = "RECJUDGE_LLM_BATCH_WAIT"


def batch_judge_name(provider: str, model: str) -> str:
    """How a judge is named in ``RECJUDGE_LLM_BATCH_JUDGES``."""
    return f"{provider}:{model}"


def batched_by_environment(provider: str, model: str) -> bool:
    """True when ``RECJUDGE_LLM_BATCH_JUDGES`` names this judge."""
    names = {name.strip() for name in os.environ.get(BATCH_JUDGES_ENV, "").split(",")}
    return batch_judge_name(provider, model) in names
#: Environment variable: seconds between two polls of a pending batch (default ``DEFAULT_POLL_S``).
POLL_ENV = "RECJUDGE_LLM_BATCH_POLL_S"
DEFAULT_POLL_S = 30.0
#: Environment variable: the most seconds a run waits for its batches (default ``DEFAULT_DEADLINE_S``).
DEADLINE_ENV = "RECJUDGE_LLM_BATCH_DEADLINE"
#: The providers end every batch within 24 hours; two more cover the last poll, a late end and the download.
DEFAULT_DEADLINE_S = 26 * 3600.0
#: Attempts at one poll or one results download that fails transiently, and their backoff (``RetryPolicy``):
#: the batch is paid for, so a blip of a few minutes must not end the wait (waits of about 2, 4, ... 120 s).
POLL_RETRY_ATTEMPTS = 8
POLL_RETRY_BASE_S = 2.0
POLL_RETRY_MAX_S = 120.0
#: Most requests per batch (the providers' limits: OpenAI 50,000 requests per file, Anthropic 100,000 per batch).
MAX_REQUESTS = {"openai": 50_000, "anthropic": 100_000}
#: ``BatchResult.kind`` of a result line that could not be read.
UNREADABLE = "unreadable"
#: Characters of an unreadable line quoted in the report.
_QUOTED_CHARS = 80
#: Unreadable lines named one by one in the run report's note (all are in ``BatchOutcome.unreadable_lines``).
_NAMED_IN_NOTE = 10

if TYPE_CHECKING:
    from .job import JudgeJob

_T = TypeVar("_T")


class BatchUnavailable(ProviderError):
    """Polling a batch or downloading its results failed for good (after retries); the batch stays in the ledger,
    so the next run resumes polling it."""

    kind = "transient"


def read_result_lines(backend: BatchBackend, batch_id: str, name: str, content: bytes) -> Iterator[BatchResult]:
    """The results of one downloaded JSON-lines file, one per non-blank line; a line that cannot be read is a
    result of kind ``UNREADABLE`` saying why, never an exception (the other lines are paid replies)."""
    lines = content.split(b"\n")  # not splitlines(): JSON text may hold U+2028 and other line separators
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"batch {batch_id}, {name} line {number}"
        try:
            result = _read_line(backend, line)
        except UnreadableLine as exc:
            reason = str(exc)
            if number == len(lines):  # the file does not end with a line end
                reason = f"cut short (the file ends inside this line): {reason}"
            quoted = redact(line[:_QUOTED_CHARS].decode("utf-8", "replace"))
            yield BatchResult(exc.key, error=f"{reason}; the line begins {quoted!r}", kind=UNREADABLE, where=where)
            continue
        result.where = where
        if result.error is not None:
            result.error = f"{where}: {result.error}"
        yield result


def _read_line(backend: BatchBackend, line: bytes) -> BatchResult:
    try:
        entry = json.loads(line)
    except UnicodeDecodeError:
        raise UnreadableLine("not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise UnreadableLine(f"not JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise UnreadableLine("JSON nested too deeply") from None
    if not isinstance(entry, dict):
        raise UnreadableLine(f"a JSON {type(entry).__name__}, not a result object")
    key = entry.get("custom_id")
    if not isinstance(key, str) or not key:
        raise UnreadableLine("a JSON object without a custom_id")
    try:
        return backend.read_line(entry)
    except UnreadableLine as exc:
        exc.key = key
        raise
    except (AttributeError, KeyError, TypeError, ValueError) as exc:  # a shape the reader did not foresee
        raise UnreadableLine(f"unexpected shape ({short_error(exc, 160)})", key) from None


# ---------------------------------------------------------------------------------------------------------- ledger
class BatchLedger:
    """Submitted batches of one (provider, model), persisted as JSON beside the store.

    Entry: ``{"id", "submitted", "keys": {store key: [request key, sample]}, "collected": bool, "state"}``.
    Writes replace the file atomically under a file lock, so a kill at any moment leaves the last complete ledger.
    """

    def __init__(self, store_root: Path, provider: str, model: str):
        self.path = Path(store_root) / ".batches" / provider / f"{model_slug(model)}.json"
        self._lock = FileLock(str(self.path) + ".lock")

    def entries(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"batch ledger {self.path} cannot be read ({exc}); move it away to submit afresh "
                             "(batches it lists are then not collected)") from None
        if not isinstance(data, list) or not all(isinstance(e, dict) and "id" in e and "keys" in e for e in data):
            raise ValueError(f"batch ledger {self.path}: expected a list of batches with 'id' and 'keys'")
        return data

    def pending(self) -> list[dict[str, Any]]:
        return [entry for entry in self.entries() if not entry.get("collected")]

    def _update(self, change: Callable[[list[dict[str, Any]]], None]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock:
            entries = self.entries()
            change(entries)
            temporary = self.path.with_suffix(".json.tmp")
            temporary.write_text(json.dumps(entries, indent=1, sort_keys=True) + "\n", encoding="utf-8")
            os.replace(temporary, self.path)

    def add(self, batch_id: str, items: Iterable[BatchItem]) -> None:
        keys = {item.key: [item.request_key, item.sample] for item in items}
        self._update(lambda entries: entries.append(
            {"id": batch_id, "submitted": now_utc(), "keys": keys, "collected": False, "state": "submitted"}))

    def mark(self, batch_id: str, *, state: str, collected: bool, counts: Mapping[str, int] | None = None) -> None:
        def change(entries: list[dict[str, Any]]) -> None:
            for entry in entries:
                if entry["id"] == batch_id:
                    entry.update(state=state, collected=collected)
                    if counts:
                        entry["counts"] = dict(counts)
        self._update(change)

def backend_for(provider: Any) -> BatchBackend:
    """The batch API of a built provider; ProviderError (configuration) when it has none."""
    make = getattr(provider, "batches", None)
    if not callable(make):
        raise ProviderError(f"provider {getattr(provider, 'name', provider)!r} has no batch API; batch mode needs "
                            "'openai' or 'anthropic'", kind="configuration", configuration=True)
    return make()


# ---------------------------------------------------------------------------------------------------------- the job
@dataclass
class BatchOutcome:
    """What one batch job did (added to the run report)."""

    submitted: list[str] = field(default_factory=list)
    resumed: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    #: result lines that could not be read, as "batch <id>, <file> line <n>: <why>"
    unreadable_lines: list[str] = field(default_factory=list)
    #: what the run report should say besides the counts (unreadable lines, a deadline reached)
    notes: list[str] = field(default_factory=list)


def poll_seconds(value: float | None = None) -> float:
    """Seconds between polls: ``value``, else RECJUDGE_LLM_BATCH_POLL_S, else the default."""
    if value is not None:
        return float(value)
    seconds = env_number(POLL_ENV, allow_zero=True, unit="seconds")
    return DEFAULT_POLL_S if seconds is None else seconds


def deadline_seconds(value: float | None = None) -> float:
    """The most seconds a run waits for its batches: ``value``, else RECJUDGE_LLM_BATCH_DEADLINE, else the
    default; ValueError naming the variable when it is not a positive number."""
    if value is not None:
        return float(value)
    seconds = env_number(DEADLINE_ENV, unit="seconds")
    return DEFAULT_DEADLINE_S if seconds is None else seconds


def poll_retry() -> RetryPolicy:
    """The retry policy of polls and result downloads."""
    return RetryPolicy(max_attempts=POLL_RETRY_ATTEMPTS, max_throttled_attempts=POLL_RETRY_ATTEMPTS,
                       base_delay_s=POLL_RETRY_BASE_S, max_delay_s=POLL_RETRY_MAX_S)


def _patiently(call: Callable[[], _T], what: str, batch_id: str, ledger: BatchLedger, retry: RetryPolicy,
               sleep: Callable[[float], None]) -> _T:
    """``call()``, retried with backoff while it fails transiently; BatchUnavailable once it fails for good."""
    rng = random.Random()
    attempt = 0
    while True:
        attempt += 1
        try:
            return call()
        except TransientProviderError as exc:
            if attempt < min(retry.max_attempts, exc.max_attempts or retry.max_attempts):
                sleep(retry.delay(attempt, exc.retry_after, rng))
                continue
            failure: ProviderError = exc
        except ProviderError as exc:
            failure = exc
        raise BatchUnavailable(
            f"{what} batch {batch_id} failed after {attempt} attempt(s): {redact(failure)}. The batch id is kept in "
            f"the batch ledger {ledger.path}, so the next run resumes polling it (nothing is submitted or paid for "
            "again).") from None


def ask_in_batches(backend: BatchBackend, job: JudgeJob, items: list[BatchItem], *, wait: bool = True,
                   poll_s: float | None = None, deadline_s: float | None = None, max_requests: int | None = None,
                   sleep: Callable[[float], None] | None = None, retry: RetryPolicy | None = None) -> BatchOutcome:
    """Submit ``items`` (prompts the store lacks) unless a pending batch of the ledger already holds them, then
    poll every pending batch that holds a wanted key until it ends (``wait``; at most ``deadline_s``, default env
    RECJUDGE_LLM_BATCH_DEADLINE), storing each batch's replies as it is read.  Polls and downloads are retried on
    transient errors (``retry``, default ``poll_retry()``).  Puts each reply and each failure in ``job``."""
    interval = poll_seconds(poll_s)
    deadline = deadline_seconds(deadline_s)  # both read before anything is paid for: a typo costs nothing
    batches = _BatchJob(backend, job, {item.key: item for item in items}, retry or poll_retry(), sleep or time.sleep)
    batches.submit(items, max_requests)
    waiting, deadline_passed = batches.wait(wait, interval, deadline)
    batches.outcome.pending = waiting
    batches.report_pending(waiting, deadline if deadline_passed else None)
    _note_unreadable(batches.outcome)
    return batches.outcome


class _BatchJob:
    """One run's batches: the judge job their replies go to, the ledger, the prompts wanted and what was done."""

    def __init__(self, backend: BatchBackend, job: JudgeJob, wanted: dict[str, BatchItem], retry: RetryPolicy,
                 pause: Callable[[float], None]):
        assert job.store is not None
        self.backend, self.job, self.wanted, self.retry, self.pause = backend, job, wanted, retry, pause
        self.store: ResponseStore = job.store
        self.ledger = BatchLedger(self.store.root, job.config.provider, job.config.model)
        self.max_chars = max_stored_chars(job.config.max_tokens)
        self.outcome = BatchOutcome()

    def submit(self, items: list[BatchItem], max_requests: int | None) -> None:
        """Resume the ledger's pending batches that hold wanted keys; submit the other items in batches."""
        covered: set[str] = set()
        for entry in self.ledger.pending():
            held = [key for key in entry["keys"] if key in self.wanted]
            if held:
                self.outcome.resumed.append(entry["id"])
                covered.update(held)
        fresh = [item for item in items if item.key not in covered]
        size = max_requests or MAX_REQUESTS.get(self.job.config.provider, 50_000)
        for start in range(0, len(fresh), size):
            chunk = fresh[start:start + size]
            batch_id = self.backend.submit(chunk)
            self.ledger.add(batch_id, chunk)  # before anything else can fail: a rerun resumes instead of resubmitting
            self.outcome.submitted.append(batch_id)
            self.job.counters["calls"] += len(chunk)  # one provider request per prompt

    def wait(self, wait: bool, interval: float, deadline: float) -> tuple[list[str], bool]:
        """Poll the batches until every one has ended and been read (only once unless ``wait``; at most
        ``deadline`` seconds); (the batches still running, whether the deadline passed)."""
        waiting = self.outcome.resumed + self.outcome.submitted
        give_up_at = time.monotonic() + deadline
        while waiting:
            waiting = [batch_id for batch_id in waiting if not self.read_if_ended(batch_id)]
            if not waiting or not wait:
                break
            left = give_up_at - time.monotonic()
            if left <= 0:
                return waiting, True
            self.pause(min(interval, left))
        return waiting, False

    def read_if_ended(self, batch_id: str) -> bool:
        """Whether the batch has ended; if so its results are read and stored."""
        status = self._patiently(self.backend.status, "polling", batch_id)
        if not status.done:
            return False
        files = self._patiently(self.backend.result_files, "downloading the results of", batch_id)
        results = [result for name, content in files
                   for result in read_result_lines(self.backend, batch_id, name, content)]
        self.collect(batch_id, status, results)
        return True

    def _patiently(self, call: Callable[[str], _T], what: str, batch_id: str) -> _T:
        return _patiently(functools.partial(call, batch_id), what, batch_id, self.ledger, self.retry, self.pause)

    def collect(self, batch_id: str, status: BatchStatus, results: list[BatchResult]) -> None:
        """Store an ended batch's replies, count its failures and unreadable lines, and close its ledger entry."""
        entry = next((e for e in self.ledger.entries() if e["id"] == batch_id), None)
        read = _BatchRead(batch_id, entry["keys"] if entry else {})
        n_unreadable = len(self.outcome.unreadable_lines)
        fresh = [record for result in results if (record := self._entry_of(result, read)) is not None]
        stored = self.store.put_records(fresh)
        for record in stored:
            self.job.keep(record["key"], record)
            self.job.errors.pop(record["key"], None)
        self.job.counters["batch_replies"] += len(stored)
        batch_unreadable = len(self.outcome.unreadable_lines) - n_unreadable
        for key in (key for key in read.held if key not in read.seen):
            kind, message = _missing(batch_id, status, read.unreadable.get(key), batch_unreadable)
            self._failed(key, message, kind)
        self.ledger.mark(batch_id, state=status.state, collected=True, counts=status.counts)

    def _entry_of(self, result: BatchResult, read: "_BatchRead") -> dict[str, Any] | None:
        """The store entry of one result line, or None: a prompt the batch failed, or a line that cannot be read
        (each counted)."""
        if result.kind == UNREADABLE:
            return self._bad_line(result, result.error or "unreadable", result.key, read)
        if result.key not in read.held:
            return self._bad_line(result, f"custom_id {str(result.key)[:80]!r} is not a prompt of this batch", None,
                                  read)
        if result.key in read.seen:
            return self._bad_line(result, "a second result for a prompt already read (the first is kept)", None, read)
        if result.completion is None:
            read.seen.add(result.key)
            self._failed(result.key, result.error or f"{result.where}: failed in the batch",
                         result.kind or "batch_error")
            return None
        record = _record(result, read.held[result.key], read.batch_id, self.job.config, self.max_chars)
        problem = entry_problem(record)
        if problem is not None:
            return self._bad_line(result, f"not a storable reply ({problem})", result.key, read)
        read.seen.add(result.key)
        return record

    def _failed(self, key: str, message: str, kind: str) -> None:
        self.job.counters[kind] += 1
        if key in self.wanted:
            self.job.fail(key, message, kind)

    def _bad_line(self, result: BatchResult, why: str, key: str | None, read: "_BatchRead") -> None:
        self.outcome.unreadable_lines.append(f"{result.where}: {why}")
        self.job.counters["batch_unreadable_lines"] += 1
        if key in read.held:
            read.unreadable.setdefault(key, f"{result.where}: unreadable result line: {why}")
        return None

    def report_pending(self, waiting: list[str], deadline: float | None) -> None:
        """The prompts of batches still running are failed judgments of kind ``batch_pending``."""
        if not waiting:
            return
        why = f"not ended within {DEADLINE_ENV}={deadline:g} s; " if deadline is not None else ""
        held = {entry["id"]: entry["keys"] for entry in self.ledger.pending()}
        for batch_id in waiting:
            for key in held.get(batch_id, ()):
                if key in self.wanted and key not in self.job.records:
                    self.job.fail(key, f"pending in batch {batch_id}: {why}run again to collect it", "batch_pending")
        if deadline is not None:
            self.outcome.notes.append(
                f"Stopped waiting after {deadline:g} s ({DEADLINE_ENV}): {len(waiting)} batch(es) still running are "
                f"kept in the batch ledger {self.ledger.path}; run again to resume polling them (nothing is submitted "
                "twice).")


@dataclass
class _BatchRead:
    """Reading one ended batch: the prompts it holds (store key -> [request key, sample]), those read, and why the
    line of a held prompt could not be read."""

    batch_id: str
    held: Mapping[str, list[Any]]
    seen: set[str] = field(default_factory=set)
    unreadable: dict[str, str] = field(default_factory=dict)


def _note_unreadable(outcome: BatchOutcome) -> None:
    lines = outcome.unreadable_lines
    if lines:
        outcome.notes.append(
            f"{len(lines)} unreadable line(s) in batch results (their prompts failed and are submitted again by the "
            "next run): " + "; ".join(lines[:_NAMED_IN_NOTE]) + (" ..." if len(lines) > _NAMED_IN_NOTE else "") + ".")


def _record(result: BatchResult, held: list[Any], batch_id: str, config: JudgeConfig, max_chars: int
            ) -> dict[str, Any]:
    """The store entry of a batch reply (``reply_entry``: what is written reads back)."""
    request_key, sample = held
    assert result.completion is not None and result.key is not None
    return reply_entry(result.completion, key=result.key, provider=config.provider, model=config.model,
                       sample=int(sample), request_key=request_key, max_chars=max_chars, batch_id=batch_id)


def _missing(batch_id: str, status: BatchStatus, unreadable: str | None, n_unreadable: int) -> tuple[str, str]:
    """(kind, message) of a prompt an ended batch gave no usable result for."""
    if unreadable is not None:
        return "malformed", unreadable
    if n_unreadable:
        return "malformed", (f"batch {batch_id} ended without a readable result for this prompt ({n_unreadable} "
                             "unreadable line(s), named in the run report)")
    kind = "batch_expired" if status.state == "expired" else (
        "batch_cancelled" if status.state in ("cancelled", "canceled") else "batch_error")
    # e.g. an expired batch's unfinished requests when the provider lists none of them
    return kind, f"batch {batch_id} ended ({status.state}) without a result for this prompt"
