"""Asking a job's missing prompts one at a time, on a pool of worker threads (the runner's usual way; see
``recjudge.llm.runner`` for the rules it follows).

Each worker takes the next prompt, claims it in the store (so another process running the same job waits for its
reply instead of paying for it again), and asks it through the concurrency gate and the rate limit, retrying
transient failures with backoff.  Every reply is stored the moment it arrives.  The caller's thread collects the
outcomes into the ``JudgeJob`` and turns SIGINT/SIGTERM into ``JudgeInterrupted`` after a short grace.
"""

from __future__ import annotations

import queue
import random
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Mapping

from .concurrency import NEUTRAL, SUCCESS, THROTTLED, ConcurrencyLimit
from .entry import max_stored_chars, reply_entry
from .job import JudgeInterrupted, JudgeJob, JudgeRequest, Terminated, sigterm_raises_interrupt
from .providers._common import redact
from .providers.base import UNREACHABLE, Completion, Provider, ProviderError, ProviderRequest, TransientProviderError
from .retry import RateLimiter, RetryPolicy

#: Stop a job early when this many provider refusals (non-transient errors) arrive before any success: a wrong key
#: or model name would otherwise be sent once per prompt.
ABORT_AFTER_REFUSALS = 10
#: After an interrupt, seconds the workers get to finish the request they are in (their replies are stored).
INTERRUPT_GRACE_S = 2.0
#: How often a prompt claimed by another process is looked for in the store.
CLAIM_POLL_S = 0.2
#: How long the collecting thread waits for an outcome at a time: it stays responsive to signals whatever the
#: platform's lock does.
COLLECT_POLL_S = 0.5


@dataclass
class _Outcome:
    record: Mapping[str, Any] | None
    error: str | None
    calls: int
    kind: str | None = None  # failure kind, or "other_process" for a reply another process asked


@dataclass
class _Tries:
    """One prompt's attempts so far; ``throttles``: the throttled ones, which have their own budget (adaptive limit
    only)."""

    attempts: int = 0
    throttles: int = 0


class _Stopped(Exception):
    """A worker saw the stop event."""


class _NoBar:
    """What a job without a progress bar updates and closes (tqdm is imported only for a bar that is shown)."""

    def update(self, count: int) -> None:
        pass

    def close(self) -> None:
        pass


def _progress_bar(total: int, label: str, shown: bool) -> Any:
    if not shown:
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=total, desc=label, unit="reply")


def ask_one_by_one(job: JudgeJob, provider: Provider, *, retry: RetryPolicy, gate: ConcurrencyLimit,
                   limiter: RateLimiter, progress: bool, claim: bool = True) -> None:
    """Ask every prompt of ``job.to_ask`` and put each outcome in ``job`` (``claim``: claim each prompt first; live
    mode does not, it asks again whatever the store holds)."""
    _OneByOne(job, provider, retry, gate, limiter, claim).run(progress)


class _OneByOne:
    """The state one job's workers share: the stop event (an interrupt or an abort ends every wait at once), the
    count of successes and refusals that decides an early stop, and the outcomes collected so far."""

    def __init__(self, job: JudgeJob, provider: Provider, retry: RetryPolicy, gate: ConcurrencyLimit,
                 limiter: RateLimiter, claim: bool):
        self.job, self.provider, self.retry, self.gate, self.limiter, self.claim = \
            job, provider, retry, gate, limiter, claim
        self.store = job.store
        self.max_chars = max_stored_chars(job.config.max_tokens)
        self.lock = threading.Lock()  # guards the counts, the abort reason and the shared random generator
        self.rng = random.Random()
        self.successes = self.refusals = 0
        #: when the first throttled reply of a job that has had no success arrived (monotonic), else None
        self.throttled_since: float | None = None
        #: when the endpoint first refused a connection since the last reply (monotonic), else None
        self.unreachable_since: float | None = None
        self.abort_reason: str | None = None  # why the job was stopped early (set once)
        self.stop = threading.Event()
        self.waiting_said = threading.Event()
        self.results: queue.SimpleQueue[tuple[str, _Outcome | BaseException]] = queue.SimpleQueue()
        self.done: set[str] = set()

    # ------------------------------------------------------------------------------------------ the caller's thread
    def run(self, progress: bool) -> None:
        to_ask = self.job.to_ask
        work: queue.SimpleQueue[str] = queue.SimpleQueue()
        for key in to_ask:
            work.put(key)
        bar = _progress_bar(len(to_ask), self.job.config.label, progress)
        # Daemon threads rather than an executor: a worker stuck in a request when the job is interrupted must not
        # keep the interpreter from exiting (its request has its own deadline; a reply that arrives is still stored).
        threads = [threading.Thread(target=self._work, args=(work,), name=f"recjudge-judge-{i}", daemon=True)
                   for i in range(min(self.gate.cap, len(to_ask)))]
        with sigterm_raises_interrupt():
            try:
                for thread in threads:
                    thread.start()
                self._collect_all(threads, bar)
            except KeyboardInterrupt as exc:
                raise self._interrupted(exc, threads, bar) from None
            finally:
                self._set_stop()
                bar.close()
        for key in to_ask:
            if key not in self.done:  # never started: the job was stopped early
                self.job.fail(key, self._not_asked_why(), "not_asked")

    def _collect_all(self, threads: list[threading.Thread], bar: Any) -> None:
        while len(self.done) < len(self.job.to_ask):
            try:
                key, outcome = self.results.get(timeout=COLLECT_POLL_S)
            except queue.Empty:
                if not any(t.is_alive() for t in threads) and self.results.empty():
                    return  # every worker left early (stop was set): the rest were never asked
                continue
            if isinstance(outcome, BaseException):
                self._set_stop()
                raise outcome
            self._collect(key, outcome, bar)

    def _collect(self, key: str, outcome: _Outcome, bar: Any) -> None:
        self.done.add(key)
        self.job.counters["calls"] += outcome.calls
        if outcome.record is not None:
            self.job.keep(key, outcome.record, other_process=outcome.kind == "other_process")
        else:
            self.job.fail(key, outcome.error or "failed", outcome.kind or "failed")
        bar.update(1)

    def _interrupted(self, signal: KeyboardInterrupt, threads: list[threading.Thread], bar: Any) -> JudgeInterrupted:
        """Stop the workers, give them ``INTERRUPT_GRACE_S`` to finish (their replies are stored and counted), and
        say what was stored."""
        self._stop_job("interrupted")
        grace_end = time.monotonic() + INTERRUPT_GRACE_S
        for thread in threads:
            thread.join(max(0.0, grace_end - time.monotonic()))
        while not self.results.empty():
            key, outcome = self.results.get_nowait()
            if isinstance(outcome, _Outcome):
                self._collect(key, outcome, bar)
        job = self.job
        stored = sum(1 for k in self.done if k in job.records and k not in job.from_store)
        bar.close()
        return JudgeInterrupted(
            f"{job.config.label}: interrupted ({'SIGTERM' if isinstance(signal, Terminated) else 'SIGINT'}); "
            f"{stored} new repl{'y' if stored == 1 else 'ies'} stored, {len(job.to_ask) - len(self.done)} prompt(s) "
            "not finished. Run again to resume: stored replies are not asked again."
        )

    # ------------------------------------------------------------------------------------------ the workers
    def _work(self, work: queue.SimpleQueue[str]) -> None:
        while not self.stop.is_set():
            try:
                key = work.get_nowait()
            except queue.Empty:
                return
            request, run = self.job.to_ask[key]
            try:
                self.results.put((key, self._ask(key, request, run)))
            except BaseException as exc:  # a provider bug: handed to the caller's thread, which re-raises it
                self.results.put((key, exc))

    def _stop_job(self, reason: str) -> None:
        with self.lock:
            if self.abort_reason is None:
                self.abort_reason = reason
        self._set_stop()

    def _set_stop(self) -> None:
        """Stop every worker: waits end at once, those in the concurrency gate included."""
        self.stop.set()
        self.gate.wake()

    def _not_asked_why(self) -> str:
        return f"not asked: {self.abort_reason or 'the job was stopped'}"

    def _not_asked(self, attempts: int) -> _Outcome:
        return _Outcome(None, self._not_asked_why(), attempts, "not_asked")

    def _ask(self, key: str, request: JudgeRequest, run: int) -> _Outcome:
        """The outcome of one prompt: asked under this process's claim, or read once another process stored it."""
        if self.claim and not self.store.claim(key):
            try:
                record = self._wait_for_claim(key)
            except _Stopped:
                return self._not_asked(0)
            if record is not None:
                return _Outcome(record, None, 0, "other_process")
        try:
            if self.claim:  # the claim holder before us may have stored it just before releasing
                record = self._stored(key)
                if record is not None:
                    return _Outcome(record, None, 0, "other_process")
            return self._ask_claimed(key, request, run)
        finally:
            if self.claim:
                self.store.release(key)

    def _stored(self, key: str) -> Mapping[str, Any] | None:
        self.store.refresh_key(self.job.config.provider, self.job.config.model, key)
        return self.store.peek(key)

    def _wait_for_claim(self, key: str) -> Mapping[str, Any] | None:
        """The reply another process stores for ``key``, or None once this process holds the claim."""
        if not self.waiting_said.is_set():  # said once per job: another process holds claims of this job's prompts
            self.waiting_said.set()
            print(f"[recjudge] another process is asking some of these prompts; waiting for its replies "
                  f"(claims under {self.store.claim_path(key).parent})", file=sys.stderr)
        while not self.stop.is_set():
            record = self._stored(key)
            if record is not None:
                return record
            if self.store.claim(key):
                return None
            self.stop.wait(CLAIM_POLL_S)
        raise _Stopped

    def _ask_claimed(self, key: str, request: JudgeRequest, run: int) -> _Outcome:
        sent = self.job.provider_request(request, run)
        tries = _Tries()
        while not self.stop.is_set():
            try:
                completion = self._attempt(sent, tries)
            except _Stopped:
                break
            except TransientProviderError as exc:
                failed = self._after_transient(exc, tries)
                if failed is not None:
                    return failed
                continue
            except ProviderError as exc:
                return self._after_refusal(exc, tries.attempts)
            return self._store_reply(key, request, run, completion, tries.attempts)
        return self._not_asked(tries.attempts)

    def _attempt(self, sent: ProviderRequest, tries: _Tries) -> Completion:
        """One request through the gate and the rate limit; the gate hears how it went (and how long it took)."""
        epoch = self.gate.acquire(self.stop)
        if epoch is None:
            raise _Stopped
        outcome, retry_after, seconds = NEUTRAL, None, None
        try:
            self.limiter.acquire(self.stop)
            if self.stop.is_set():
                raise _Stopped
            tries.attempts += 1
            asked_at = time.monotonic()
            completion = sent.send(self.provider)
            outcome, seconds = SUCCESS, time.monotonic() - asked_at
            return completion
        except TransientProviderError as exc:
            if exc.throttled:
                outcome, retry_after = THROTTLED, exc.retry_after
            raise
        finally:
            self.gate.release(epoch, outcome, retry_after, seconds)

    def _after_transient(self, exc: TransientProviderError, tries: _Tries) -> _Outcome | None:
        """The failed judgment when this failure ends the prompt's attempts; else None, after the backoff."""
        if exc.configuration and self.successes == 0:
            self._stop_job(f"no reply has succeeded and the provider looks misconfigured: {redact(exc)}")
            return _Outcome(None, f"configuration: {redact(exc)}", tries.attempts, "configuration")
        retry = self.retry
        deadline = self._throttle_deadline(exc)
        if deadline is not None and time.monotonic() >= deadline:
            return self._stop_throttled(exc, tries)
        unreachable = self._unreachable_deadline(exc)
        if unreachable is not None and time.monotonic() >= unreachable:
            return self._stop_unreachable(exc, tries)
        if exc.throttled and self.gate.adaptive:
            tries.throttles += 1
            exhausted = tries.throttles >= retry.max_throttled_attempts
        else:
            exhausted = tries.attempts - tries.throttles >= min(retry.max_attempts,
                                                                exc.max_attempts or retry.max_attempts)
        if exhausted:
            return _Outcome(None, f"gave up after {tries.attempts} attempts: {redact(exc)}", tries.attempts, exc.kind)
        with self.lock:
            pause = retry.delay(tries.attempts, exc.retry_after, self.rng)
        for limit in (deadline, unreachable):  # no wait goes past the time a job may go without any reply
            if limit is not None:
                pause = min(pause, max(0.0, limit - time.monotonic()))
        self.stop.wait(pause)  # an interrupt ends the wait at once
        if deadline is not None and time.monotonic() >= deadline and self.successes == 0:
            return self._stop_throttled(exc, tries)
        if unreachable is not None and self._unreachable_for_too_long():
            return self._stop_unreachable(exc, tries)
        return None

    def _unreachable_for_too_long(self) -> bool:
        """Whether the endpoint has refused every connection for ``max_unreachable_s`` (a reply that arrived during
        the wait starts the count again)."""
        with self.lock:
            since = self.unreachable_since
        return since is not None and time.monotonic() >= since + self.retry.max_unreachable_s

    def _throttle_deadline(self, exc: TransientProviderError) -> float | None:
        """While no reply has succeeded: when a job throttled since its first throttled reply is stopped
        (``RetryPolicy.max_throttled_s_without_success``); None once a reply has succeeded or before any throttle."""
        with self.lock:
            if self.successes:
                return None
            if exc.throttled and self.throttled_since is None:
                self.throttled_since = time.monotonic()
            if self.throttled_since is None:
                return None
            return self.throttled_since + self.retry.max_throttled_s_without_success

    def _unreachable_deadline(self, exc: TransientProviderError) -> float | None:
        """For a refused connection: when the job is stopped if no reply arrives meanwhile
        (``RetryPolicy.max_unreachable_s`` after the first refusal since the last reply); else None."""
        if exc.kind != UNREACHABLE:
            return None
        with self.lock:
            if self.unreachable_since is None:
                self.unreachable_since = time.monotonic()
            return self.unreachable_since + self.retry.max_unreachable_s

    def _stop_unreachable(self, exc: TransientProviderError, tries: _Tries) -> _Outcome:
        waited = self.retry.max_unreachable_s
        self._stop_job(f"the endpoint has refused every connection for {waited:.0f} s since the last reply (the "
                       f"server stopped?); the replies received are stored; run again once it answers: {redact(exc)}")
        return _Outcome(None, f"unreachable: no connection within {waited:.0f} s: {redact(exc)}", tries.attempts,
                        UNREACHABLE)

    def _stop_throttled(self, exc: TransientProviderError, tries: _Tries) -> _Outcome:
        waited = self.retry.max_throttled_s_without_success
        self._stop_job(f"the server has throttled every request for {waited:.0f} s and no reply has succeeded (out "
                       f"of quota, or a rate limit too low for any request); run again later: {redact(exc)}")
        return _Outcome(None, f"throttled: no reply within {waited:.0f} s: {redact(exc)}", tries.attempts,
                        "throttled")

    def _after_refusal(self, exc: ProviderError, attempts: int) -> _Outcome:
        """A refused request fails its judgment; a configuration error, or many refusals before any success, stop
        the job."""
        if exc.configuration:  # a set-up error, or an account out of quota (kind "quota"): nothing more is sent
            kind = "configuration" if exc.kind == ProviderError.kind else exc.kind
            self._stop_job(f"{kind} error: {redact(exc)}")
            return _Outcome(None, f"{kind}: {redact(exc)}", attempts, kind)
        with self.lock:
            self.refusals += 1
            too_many = self.successes == 0 and self.refusals >= ABORT_AFTER_REFUSALS
        if too_many:
            self._stop_job("the job was stopped after repeated provider refusals")
        return _Outcome(None, f"refused: {redact(exc)}", attempts, exc.kind)

    def _store_reply(self, key: str, request: JudgeRequest, run: int, completion: Completion,
                     attempts: int) -> _Outcome:
        config = self.job.config
        try:  # persisted before anything else can go wrong
            record = self.store.put_records([reply_entry(
                completion, key=key, provider=config.provider, model=config.model, sample=run,
                request_key=request.key, max_chars=self.max_chars)])[0]
        except (OSError, ValueError, TypeError) as exc:
            return _Outcome(None, f"reply received but not stored: {type(exc).__name__}: {exc}"[:300], attempts,
                            "store")
        with self.lock:
            self.successes += 1
            self.unreachable_since = None
        return _Outcome(record, None, attempts)
