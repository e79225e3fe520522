"""Step 2 of a judge run (``recjudge.llm.runner.run_judge``): fetch the replies a job lacks, as its mode says.

``ask_for_missing`` fills the ``JudgeJob`` that step 1 (``job.open_job``) opened: recorded judgments are looked up
by request key; a judge not among those asked (env RECJUDGE_LLM_ASK_ONLY) leaves its missing replies out; replay
mode raises ``MissingReplies``; plan mode plans them (``recjudge.llm.plan``); otherwise they are asked through the
provider's batch API (``recjudge.llm.batch``) or one at a time behind a concurrency gate
(``recjudge.llm.workers``, ``recjudge.llm.concurrency``).  What the asking did (calls, throttles, the gate, the
batches, failures, notes) is written on the job, from which steps 3 and 4 (``recjudge.llm.report``) read it.  The
rules each way follows are in the ``recjudge.llm.runner`` docstring.
"""

from __future__ import annotations

from . import batch as batch_api
from .ask_options import DEFAULT_CONCURRENCY, FALLBACK_CONCURRENCY, LEFT_OUT, PLAN, AskOptions, is_asked
from .concurrency import ConcurrencyLimit
from .config import JudgeConfig
from .estimate import JobEstimate, check_cost, job_estimate, measured_latency, paid
from .job import JudgeInterrupted, JudgeJob, sigterm_raises_interrupt
from .plan import log_estimate, plan, plan_line
from .providers import get_provider
from .providers.base import Provider, ProviderError
from .retry import RateLimiter, RetryPolicy
from .store import MissingReplies, ResponseStore
from .workers import ask_one_by_one

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


def ask_for_missing(job: JudgeJob, mode: str, provider: Provider | None, ask: AskOptions) -> None:
    """Fetch what ``job`` lacks in ``mode`` (see the module docstring); ``provider``: an already built provider
    (default: built from the job's configuration, only when something has to be asked)."""
    config = job.config
    if config.provider == "recorded":
        _look_up_recorded(job, provider)
        return
    if job.to_ask and not is_asked(config.provider, config.model):
        _leave_out(job, mode, ask)
        return
    if mode == "replay" and job.to_ask:
        raise MissingReplies(job.missing_slots(), label=config.label, store_root=job.store.root)  # type: ignore
    if mode == PLAN:
        _plan(job, ask)
        return
    in_batches = ask.uses_batch(config.provider, config.model)
    if job.to_ask and in_batches:
        _ask_in_batches(job, provider, ask)
    elif job.to_ask:
        _ask_one_by_one(job, mode, provider, ask)


def job_estimate_at(job: JudgeJob, ask: AskOptions) -> JobEstimate:
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
        measured = measured_latency(job.store.records_of(config.provider, config.model))
    return measured


def _check_local_weights(config: JudgeConfig, store: ResponseStore) -> None:
    """Refuse to add replies of one GGUF to a model name whose stored replies another GGUF gave: the store key holds
    the model name, not the weights, so a file swapped behind the name would mix two judges' replies."""
    from .providers.local import gguf_sha256, resolve_model_path

    path = resolve_model_path(config.served_model or config.model)
    current = gguf_sha256(path)
    store.refresh(config.provider, config.model)
    for record in store.records_of(config.provider, config.model):
        stored = (record.get("provenance") or {}).get("gguf_sha256")
        if stored and stored != current:
            raise ProviderError(
                f"local model {config.model!r}: the store holds replies of weights with sha256 {stored[:16]}..., but "
                f"{path} has sha256 {current[:16]}...; give these weights a model name of their own (a GGUF path, or "
                "another name with RECJUDGE_LOCAL_GGUF) so that replies of two models are never mixed",
                kind="configuration", configuration=True)


def _plan(job: JudgeJob, ask: AskOptions) -> None:
    """Plan mode (``recjudge.llm.plan``): the replies in the store, the others planned and estimated, not asked."""
    estimate = job_estimate_at(job, ask)
    plan(job, estimate, concurrency=ask.concurrency_cap(job.config.provider, adaptive=False),
         rate_limit_per_minute=ask.requests_per_minute())


def _leave_out(job: JudgeJob, mode: str, ask: AskOptions) -> None:
    """A judge not among those asked (env RECJUDGE_LLM_ASK_ONLY): the store's replies, the others left out (NaN,
    kind ``left_out``, counted in ``RunReport.n_left_out``, not among the failures). In plan mode its estimate is
    still logged, marked ``left_out``, so the plan says what asking it too would take."""
    if mode == PLAN:
        estimate = job_estimate_at(job, ask)
        line = plan_line(job, estimate, concurrency=ask.concurrency_cap(job.config.provider, adaptive=False),
                         rate_limit_per_minute=ask.requests_per_minute())
        log_estimate({**line, "left_out": True})
    for key in job.to_ask:
        job.fail(key, "left out: only the reader's judges are asked at this scale (--with-book-judges asks "
                      "this one too)", LEFT_OUT)
    job.notes.append(f"{len(job.to_ask)} judgment(s) not in the store were left out, not asked (env "
                     "RECJUDGE_LLM_ASK_ONLY names other judges).")


def _ask_one_by_one(job: JudgeJob, mode: str, provider: Provider | None, ask: AskOptions) -> None:
    """Ask the job's missing prompts one at a time (``recjudge.llm.workers``) after pricing them; the concurrency
    gate they went through is summarised on the job."""
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
        _check_local_weights(config, job.store)  # type: ignore[arg-type]
    ask_one_by_one(job, provider, retry=retry, gate=gate, limiter=RateLimiter(rpm), progress=ask.progress,
                   claim=mode != "live")
    stats = gate.stats
    job.n_throttled = stats.n_throttled
    job.concurrency = {"mode": "adaptive" if stats.adaptive else "fixed", "cap": stats.cap,
                       "final": stats.limit, "peak": stats.peak, "decreases": stats.n_decreases}


def _built_provider(job: JudgeJob, provider: Provider | None, ask: AskOptions) -> Provider:
    """The provider to ask, built only now that something must be asked, once the store is known writable."""
    job.store.check_writable(job.config.provider, job.config.model)  # type: ignore[union-attr]
    return provider if provider is not None else get_provider(job.config, timeout=ask.timeout)


def _prepare(provider: Provider, config: JudgeConfig) -> None:
    """Let an HTTP provider check the model's identity at its endpoint before anything is asked."""
    prepare = getattr(provider, "prepare", None)
    if callable(prepare):
        prepare(config.served_model or config.model, explicit_identity=config.served_model is not None)


def _ask_in_batches(job: JudgeJob, provider: Provider | None, ask: AskOptions) -> None:
    """Send the job's missing prompts through the provider's batch API (``recjudge.llm.batch``); their replies are
    priced at the batch rate."""
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
    job.batch_priced = True
    job.batches = {"submitted": outcome.submitted, "resumed": outcome.resumed, "pending": outcome.pending,
                   "unreadable_lines": outcome.unreadable_lines}


def _look_up_recorded(job: JudgeJob, provider: Provider | None) -> None:
    """Recorded judgments are looked up by request key; the store is not involved (the source file is the record)."""
    config = job.config
    provider = provider or get_provider(config)
    for request in job.requests:
        completion = provider.answer(request.key)  # type: ignore[attr-defined]
        if completion is None:
            job.fail(request.key, f"no recorded judgment for key {request.key!r} in "
                                  f"{getattr(provider, 'origin', '?')}", "not_recorded")
        else:
            job.keep(request.key, {"text": completion.text, "logprobs": None, "input_tokens": None,
                                   "output_tokens": None})
    job.notes.append(f"Recorded judgments from {getattr(provider, 'origin', '?')}, attributed to {config.model}.")
