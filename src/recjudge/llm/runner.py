"""The judge runner: asks (or replays) one judge configuration on many prompts and returns a tidy table.

``run_judge(config, requests)`` looks every (prompt, sample index) up in the response store (``recjudge.llm.job``)
and, depending on the mode, asks the provider for what is missing:

- ``"replay"``: store only; anything missing raises ``MissingReplies`` listing it (no provider is even built, so no
  key is needed).
- ``"auto"`` (default; env RECJUDGE_LLM_MODE overrides): store first, then ask the provider for the rest.
- ``"live"``: ask the provider for everything and store the new replies (the newest entry wins on later reads).
- ``"plan"``: a dry run (``recjudge.llm.plan``): the store's replies as in replay; the others are planned, not
  asked (NaN, counted in ``RunReport.n_planned``), and the job's estimate is appended to env RECJUDGE_PLAN_LOG.
  No provider is built and nothing is written to the store.

How to ask is a set of run options outside the store key (``recjudge.llm.ask_options.AskOptions``).  Asking uses a
pool of worker threads (``recjudge.llm.workers``) behind a concurrency gate (``recjudge.llm.concurrency``): by
default an adaptive limit (AIMD: one more request in flight per window of successes, fewer on a 429 or a Retry-After,
between 1 and a cap; after the first 429, starts spaced a round trip over the limit apart), or a fixed limit
(``adaptive=False`` or env RECJUDGE_LLM_ADAPTIVE=0); an optional
requests-per-minute limit; and bounded retries with exponential backoff and jitter on ``TransientProviderError``
(429, 5xx, timeouts, dropped connections, unreadable bodies), honouring Retry-After.  Every reply is written to the
store the moment it arrives, so an interrupted job
resumes where it stopped.  A prompt whose retries run out, or that the provider refuses, is a failed judgment: NaN
score with its error in the table and listed in ``JudgeRun.failures``; the other replies are kept.  The report counts
failures by kind (``RunReport.failed_by_kind``): "transient" (retries exhausted), "deadline", "malformed" (a 200
reply without a usable answer; see ``recjudge.llm.providers.openai_compat`` for which are retried), "refused",
"configuration", "quota" (the account is out of credit: OpenAI's 429 ``insufficient_quota``; the job stops at once),
"throttled" (nothing but 429s and no reply for ``RetryPolicy.max_throttled_s_without_success``: the job stops),
"unreachable" (a refused connection; after ``RetryPolicy.max_unreachable_s`` of nothing but refusals since the last
reply, a server that stopped mid-run, the job stops),
"not_asked" (the job was stopped first), "store" (the reply could not be written).

Robustness rules:

- Before anything is asked the store is checked to be writable (``ResponseStore.check_writable``), and an HTTP
  provider checks the model's identity at its endpoint (``prepare``; see ``openai_compat``).
- Odd replies are normalised before they are stored (``recjudge.llm.entry.sanitise_record``): lone surrogates, NaN
  or string token counts, content given as parts.  Reply text is cut at ``max_stored_chars(max_tokens)`` and the
  entry marked ``truncated_from_chars``.  The report counts repaired and truncated replies (``n_repaired``,
  ``n_truncated``) and store lines skipped as unusable (``n_skipped_store_lines``, named in the notes).
- Configuration errors fail fast: an unusable URL or key stops the job at once; a refused connection or an HTML page
  stops it when no reply has succeeded yet (after one success they are retried as transient).
- Interrupts: SIGINT (Ctrl-C, a Jupyter interrupt) and, while ``run_judge`` runs in the main thread, SIGTERM stop
  the job at once: backoff and rate-limit waits end, prompts not started are not asked, the workers are given
  ``workers.INTERRUPT_GRACE_S`` to finish the request they are in (each reply that arrives is stored), and
  ``JudgeInterrupted`` (a KeyboardInterrupt) is raised.  Each request also has an overall deadline (``timeout``).
- Two processes running the same job on one store do not both pay for a prompt: each prompt is claimed
  (``ResponseStore.claim``) before it is asked, and a prompt claimed by another live process is waited for and read
  from the store (``RunReport.n_from_other_process``).
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Sequence

from ..paths import store_layers
from . import batch as batch_api
from . import shapes
from .ask_options import DEFAULT_CONCURRENCY, FALLBACK_CONCURRENCY, LEFT_OUT, PLAN, AskOptions, is_asked
from .concurrency import ConcurrencyLimit, LimitStats
from .config import JudgeConfig
from .estimate import JobEstimate, check_cost, job_estimate, measured_latency, paid
from .job import JudgeInterrupted, JudgeJob, JudgeRequest, sigterm_raises_interrupt, validate
from .parsing import parse_likert
from .plan import log_estimate, plan, plan_line
from .prefix_reuse import local_judge_config
from .providers import get_provider
from .providers.base import Provider, ProviderError
from .report import JudgeRun, Parser, RunReport, assemble
from .retry import RateLimiter, RetryPolicy
from .store import MissingReplies, ResponseStore, default_store
from .workers import ask_one_by_one

__all__ = ["JudgeInterrupted", "JudgeRequest", "estimate_job", "open_store", "run_judge"]

#: The adaptive limit starts at this many requests in flight (its cap: ``AskOptions.concurrency_cap``).
ADAPTIVE_INITIAL = 4
#: Factors applied to the adaptive limit on a throttled reply (see ``recjudge.llm.concurrency``).  The first throttle
#: ends slow start, whose last step doubled the limit: halving goes back to the last limit that drew no 429.  After
#: that the limit hovers just around the server's pace, and a gentle cut keeps it there: against a server whose
#: bucket holds a tenth of a second's requests, x0.7 left 9-14% of its capacity unused (x0.5: 12-17%), because at a
#: limit of 6 it cuts to 4 when 5 would do (benchmarks/bench_adaptive_concurrency.py, side by side).
ADAPTIVE_FIRST_DECREASE = 0.5
ADAPTIVE_DECREASE = 0.85
#: After the first throttle, space request starts one round trip / limit apart instead of starting a window's worth
#: at once (see ``recjudge.llm.concurrency``): with a bucket of a tenth of a second's requests it took the 429s of
#: the benchmark from ~50 to ~30 per 400 prompts at 100 ms per reply, and the throughput from 25% to 55% of the
#: server's capacity at 500 ms per reply (where the unpaced limit was cut to ~7 although 25 fit).
ADAPTIVE_PACING = True
#: After a cut, grow halfway back to the limit that drew it per window of successes (see
#: ``recjudge.llm.concurrency``); with pacing's paced slow start it took the benchmark's server at 500 ms per reply
#: from 55% to about 75% of its capacity, against 69% growing by one per window.
ADAPTIVE_BINARY_INCREASE = True


def estimate_job(config: JudgeConfig, requests: Sequence[JudgeRequest],
                 store: "ResponseStore | str | os.PathLike[str] | None" = None, *, concurrency: int | None = None,
                 rate_limit_per_minute: float | None = None, batch: bool = False) -> JobEstimate:
    """Before a live job: how many replies are not yet in ``store`` (default: ``open_store()``), their
    estimated tokens, cost and time (see ``JobEstimate``).  Nothing is asked."""
    requests = list(requests)
    validate(requests)
    config = local_judge_config(config)
    if not isinstance(store, ResponseStore):
        store = open_store(store)
    job = JudgeJob.open(config, requests, store)
    return _estimate(job, AskOptions(concurrency=concurrency, rate_limit_per_minute=rate_limit_per_minute,
                                     batch=batch))


def _estimate(job: JudgeJob, ask: AskOptions) -> JobEstimate:
    """The estimate of asking every reply ``job`` lacks (each slot counted), at ``ask``'s concurrency taken as a
    fixed limit and its rate limit, in batches when ``ask`` says so."""
    provider = job.config.provider
    return job_estimate(job.config, len(job.requests), len(job.slots), job.unanswered(),
                        ask.concurrency_cap(provider, adaptive=False), ask.requests_per_minute(),
                        batch=ask.uses_batch(provider, job.config.model), measured=_local_rate(job))


def _local_rate(job: JudgeJob) -> tuple[float, int] | None:
    """A local judge's rate on this machine: the median recorded latency of this job's stored replies, else of
    every stored reply of the model (``estimate.measured_latency``); None for other providers or too few replies."""
    config = job.config
    if config.provider != "local":
        return None
    measured = measured_latency(job.records.values())
    if measured is None and job.store is not None:
        measured = measured_latency(record for record in job.store.records()
                                    if record.get("provider") == config.provider
                                    and record.get("model") == config.model)
    return measured


_open_stores: dict[Path | tuple[Path, ...], ResponseStore] = {}
_open_stores_lock = threading.Lock()


def open_store(root: str | os.PathLike[str] | None = None) -> ResponseStore:
    """The process-wide ResponseStore for a folder, so that a notebook calling ``run_judge`` many times reads each
    shard once and afterwards only what was appended.  Default: the layered store (``store.default_store``: the
    committed replies read, the reader's store written; ``$RECJUDGE_STORE`` alone when set)."""
    if root is None:
        layers = tuple(folder.resolve() for folder in store_layers())
        with _open_stores_lock:
            if layers not in _open_stores:
                _open_stores[layers] = default_store()
            return _open_stores[layers]
    path = Path(root).resolve()
    with _open_stores_lock:
        if path not in _open_stores:
            _open_stores[path] = ResponseStore(path)
        return _open_stores[path]


def _check_local_weights(config: JudgeConfig, store: ResponseStore) -> None:
    """Refuse to add replies of one GGUF to a model name whose stored replies another GGUF gave: the store key holds
    the model name, not the weights, so a file swapped behind the name would mix two judges' replies."""
    from .providers.local import gguf_sha256, resolve_model_path

    path = resolve_model_path(config.served_model or config.model)
    current = gguf_sha256(path)
    store.refresh(config.provider, config.model)
    for record in store.records():
        if record["provider"] != config.provider or record["model"] != config.model:
            continue
        stored = (record.get("provenance") or {}).get("gguf_sha256")
        if stored and stored != current:
            raise ProviderError(
                f"local model {config.model!r}: the store holds replies of weights with sha256 {stored[:16]}..., but "
                f"{path} has sha256 {current[:16]}...; give these weights a model name of their own (a GGUF path, or "
                "another name with RECJUDGE_LOCAL_GGUF) so that replies of two models are never mixed",
                kind="configuration", configuration=True)


def run_judge(
    config: JudgeConfig,
    requests: Sequence[JudgeRequest],
    parser: Parser | None = None,
    *,
    store: ResponseStore | str | os.PathLike[str] | None = None,
    provider: Provider | None = None,
    ask: AskOptions | None = None,
    **options: object,
) -> JudgeRun:
    """Judge every request ``config.runs`` times (sample indices 0..runs-1); see the module docstring.

    parser: reply text -> float, or -> dict aspect -> float; default ``parse_likert`` (1-5), or for a constrained
            configuration the answer of its output shape (``shapes.answer_parser``).
    store: a ResponseStore or folder; default ``open_store()`` (committed replies read, the reader's store written).
    provider: an already built provider (default: ``get_provider(config, timeout=timeout)``, built only when
        something has to be asked).
    ask: how to ask (``AskOptions``; default: every option at its default).  Each of its fields may also be given
        as a keyword, which replaces the field of ``ask``: ``run_judge(config, requests, mode="replay")``.  An
        unknown keyword is a TypeError naming it and listing the valid ones.  The options, each documented in
        ``AskOptions``: mode ("replay" | "live" | "auto" | "plan"), concurrency, adaptive, retry, rate_limit_per_minute,
        timeout, order_prompts, confirm_cost, batch, batch_wait, batch_poll_s, progress.

    Raises ``JudgeInterrupted`` on SIGINT/SIGTERM (replies received so far are stored), ``StoreNotWritable`` when
    something must be asked and the store cannot be written, ``ProviderError`` for a configuration the provider
    refuses before any request (missing key, unusable base URL, a model name that cannot identify the judge).
    """
    started = time.perf_counter()
    ask = AskOptions.of(ask, **options)
    config = local_judge_config(config)  # the batch size a local judge is asked at (recjudge.llm.prefix_reuse)
    parser = parser or (parse_likert if config.shape is None else shapes.answer_parser(config.shape))
    mode = ask.resolved_mode()
    if config.provider == "recorded":
        return _run_recorded(config, list(requests), parser, mode, provider, started)
    if not isinstance(store, ResponseStore):
        store = open_store(store)
    asked = is_asked(config.provider, config.model)
    job = JudgeJob.open(config, requests, store, read_store=mode != "live" or not asked,
                        order_prompts=ask.order_prompts)
    if job.to_ask and not asked:
        return _leave_out(job, mode, ask, parser, started)
    if mode == "replay" and job.to_ask:
        raise MissingReplies(job.missing_slots(), label=config.label, store_root=store.root)
    if mode == PLAN:
        return _plan(job, ask, parser, started)
    in_batches = ask.uses_batch(config.provider, config.model)
    if job.to_ask and in_batches:
        return _ask_in_batches(job, mode, provider, ask, parser, started)
    gate = _ask_one_by_one(job, mode, provider, ask) if job.to_ask else None
    run = assemble(job, mode, parser, started)
    if gate is not None:
        _report_concurrency(run.report, gate.stats)
    return run


def _plan(job: JudgeJob, ask: AskOptions, parser: Parser, started: float) -> JudgeRun:
    """Plan mode (``recjudge.llm.plan``): the replies in the store, the others planned and estimated, not asked."""
    estimate = _estimate(job, ask)
    plan(job, estimate, concurrency=ask.concurrency_cap(job.config.provider, adaptive=False),
         rate_limit_per_minute=ask.requests_per_minute())
    return assemble(job, PLAN, parser, started)


def _leave_out(job: JudgeJob, mode: str, ask: AskOptions, parser: Parser, started: float) -> JudgeRun:
    """A judge not among those asked (env RECJUDGE_LLM_ASK_ONLY): the store's replies, the others left out (NaN,
    kind ``left_out``, counted in ``RunReport.n_left_out``, not among the failures). In plan mode its estimate is
    still logged, marked ``left_out``, so the plan says what asking it too would take."""
    if mode == PLAN:
        estimate = _estimate(job, ask)
        line = plan_line(job, estimate, concurrency=ask.concurrency_cap(job.config.provider, adaptive=False),
                         rate_limit_per_minute=ask.requests_per_minute())
        log_estimate({**line, "left_out": True})
    for key in job.to_ask:
        job.fail(key, "left out: only the reader's judges are asked at this scale (--with-book-judges asks "
                      "this one too)", LEFT_OUT)
    job.notes.append(f"{len(job.to_ask)} judgment(s) not in the store were left out, not asked (env "
                     "RECJUDGE_LLM_ASK_ONLY names other judges).")
    return assemble(job, mode, parser, started)


def _ask_one_by_one(job: JudgeJob, mode: str, provider: Provider | None, ask: AskOptions) -> ConcurrencyLimit:
    """Ask the job's missing prompts one at a time (``recjudge.llm.workers``) after pricing them; returns the
    concurrency gate they went through."""
    config = job.config
    retry = ask.retry or RetryPolicy()
    adaptive = ask.uses_adaptive()
    gate = ConcurrencyLimit(ask.concurrency_cap(config.provider, adaptive=adaptive), adaptive=adaptive,
                            initial=ADAPTIVE_INITIAL, decrease=ADAPTIVE_DECREASE,
                            first_decrease=ADAPTIVE_FIRST_DECREASE, pacing=ADAPTIVE_PACING,
                            binary_increase=ADAPTIVE_BINARY_INCREASE, max_pause_s=retry.max_retry_after_s)
    rpm = ask.requests_per_minute()
    # Fixed mode runs at its limit; adaptive mode is estimated at the fixed default (a cautious pace).
    pace = gate.cap if not adaptive else min(gate.cap, DEFAULT_CONCURRENCY.get(config.provider, FALLBACK_CONCURRENCY))
    check_cost(job.estimate(pace, rpm), ask.confirm_cost, ask.progress, costs_money=paid(config))
    provider = _built_provider(job, provider, ask)
    _prepare(provider, config)
    if config.provider == "local":
        _check_local_weights(config, job.store)
    ask_one_by_one(job, provider, retry=retry, gate=gate, limiter=RateLimiter(rpm), progress=ask.progress,
                   claim=mode != "live")
    return gate


def _report_concurrency(report: RunReport, stats: LimitStats) -> None:
    report.n_throttled = stats.n_throttled
    report.concurrency = {"mode": "adaptive" if stats.adaptive else "fixed", "cap": stats.cap,
                          "final": stats.limit, "peak": stats.peak, "decreases": stats.n_decreases}


def _built_provider(job: JudgeJob, provider: Provider | None, ask: AskOptions) -> Provider:
    """The provider to ask, built only now that something must be asked, once the store is known writable."""
    job.store.check_writable(job.config.provider, job.config.model)
    return provider if provider is not None else get_provider(job.config, timeout=ask.timeout)


def _prepare(provider: Provider, config: JudgeConfig) -> None:
    """Let an HTTP provider check the model's identity at its endpoint before anything is asked."""
    prepare = getattr(provider, "prepare", None)
    if callable(prepare):
        prepare(config.served_model or config.model, explicit_identity=config.served_model is not None)


def _ask_in_batches(job: JudgeJob, mode: str, provider: Provider | None, ask: AskOptions, parser: Parser,
                    started: float) -> JudgeRun:
    """Send the job's missing prompts through the provider's batch API (``recjudge.llm.batch``) and report."""
    config = job.config
    check_cost(job.estimate(1, None, batch=True), ask.confirm_cost, ask.progress, costs_money=paid(config))
    provider = _built_provider(job, provider, ask)
    backend = batch_api.backend_for(provider)
    _prepare(provider, config)
    items = [batch_api.BatchItem(key, request.key, run, job.provider_request(request, run).body_for(provider))
             for key, (request, run) in job.to_ask.items()]
    try:
        with sigterm_raises_interrupt():
            outcome = batch_api.ask_in_batches(backend, job, items, wait=ask.waits_for_batches(),
                                               poll_s=ask.batch_poll_s)
    except KeyboardInterrupt:
        raise JudgeInterrupted(
            f"{config.label}: interrupted while waiting for batches; they keep running at the provider and "
            "their ids are in the batch ledger beside the store. Run again to collect them.") from None
    job.notes.append(f"Batch mode: {len(outcome.submitted)} batch(es) submitted, {len(outcome.resumed)} resumed"
                     + (f", {len(outcome.pending)} still running (run again to collect)" if outcome.pending else "")
                     + "; replies priced at the batch rate.")
    job.notes.extend(outcome.notes)
    run = assemble(job, mode, parser, started, batch=True)
    run.report.batches = {"submitted": outcome.submitted, "resumed": outcome.resumed,
                          "pending": outcome.pending, "unreadable_lines": outcome.unreadable_lines}
    return run


def _run_recorded(config: JudgeConfig, requests: list[JudgeRequest], parser: Parser, mode: str,
                  provider: Provider | None, started: float) -> JudgeRun:
    """Recorded judgments are looked up by request key; the store is not involved (the source file is the record)."""
    validate(requests)
    if config.runs != 1:
        raise ValueError(f"{config.label}: recorded judgments hold one reply per key; runs must be 1, "
                         f"got {config.runs}")
    provider = provider or get_provider(config)
    job = JudgeJob(config, None, requests, slots=[(request, 0, None) for request in requests])
    for request in requests:
        completion = provider.answer(request.key)  # type: ignore[attr-defined]
        if completion is None:
            job.fail(request.key, f"no recorded judgment for key {request.key!r} in "
                                  f"{getattr(provider, 'origin', '?')}", "not_recorded")
        else:
            job.keep(request.key, {"text": completion.text, "logprobs": None, "input_tokens": None,
                                   "output_tokens": None})
    job.notes.append(f"Recorded judgments from {getattr(provider, 'origin', '?')}, attributed to {config.model}.")
    return assemble(job, mode, parser, started)
