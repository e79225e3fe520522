"""The judge runner: asks (or replays) one judge configuration on many prompts and returns a tidy table.

``run_judge(config, requests)`` looks every (prompt, sample index) up in the response store and, depending on the
mode, asks the provider for what is missing:

- ``"replay"``: store only; anything missing raises ``MissingReplies`` listing it (no provider is even built, so no
  key is needed).
- ``"auto"`` (default; env RECJUDGE_LLM_MODE overrides): store first, then ask the provider for the rest.
- ``"live"``: ask the provider for everything and store the new replies (the newest entry wins on later reads).

Asking uses a pool of worker threads behind a concurrency gate (``recjudge.llm.concurrency``): by default an
adaptive limit (AIMD: one more request in flight per window of successes, fewer on a 429 or a Retry-After,
between 1 and a cap; after the first 429, starts spaced a round trip over the limit apart), or a fixed limit
(``adaptive=False`` or env RECJUDGE_LLM_ADAPTIVE=0); an optional
requests-per-minute limit; and bounded retries with exponential backoff and jitter on ``TransientProviderError``
(429, 5xx, timeouts, dropped connections, unreadable bodies), honouring Retry-After.  Every reply is written to the
store the moment it arrives, so an interrupted job
resumes where it stopped.  A prompt whose retries run out, or that the provider refuses, is a failed judgment: NaN
score with its error in the table and listed in ``JudgeRun.failures``; the other replies are kept.  The report counts
failures by kind (``RunReport.failed_by_kind``): "transient" (retries exhausted), "deadline", "malformed" (a 200
reply without a usable answer; see ``recjudge.llm.providers.openai_compat`` for which are retried), "refused",
"configuration", "not_asked" (the job was stopped first), "store" (the reply could not be written).

Robustness rules:

- Before anything is asked the store is checked to be writable (``ResponseStore.check_writable``), and an HTTP
  provider checks the model's identity at its endpoint (``prepare``; see ``openai_compat``).
- Odd replies are normalised before they are stored (``recjudge.llm.store.sanitise_record``): lone surrogates, NaN
  or string token counts, content given as parts.  Reply text is cut at ``max_stored_chars(max_tokens)`` and the
  entry marked ``truncated_from_chars``.  The report counts repaired and truncated replies (``n_repaired``,
  ``n_truncated``) and store lines skipped as unusable (``n_skipped_store_lines``, named in the notes).
- Configuration errors fail fast: an unusable URL or key stops the job at once; a refused connection or an HTML page
  stops it when no reply has succeeded yet (after one success they are retried as transient).
- Interrupts: SIGINT (Ctrl-C, a Jupyter interrupt) and, while ``run_judge`` runs in the main thread, SIGTERM stop
  the job at once: backoff and rate-limit waits end, prompts not started are not asked, the workers are given
  ``INTERRUPT_GRACE_S`` to finish the request they are in (each reply that arrives is stored), and
  ``JudgeInterrupted`` (a KeyboardInterrupt) is raised.  Each request also has an overall deadline (``timeout``).
- Two processes running the same job on one store do not both pay for a prompt: each prompt is claimed
  (``ResponseStore.claim``) before it is asked, and a prompt claimed by another live process is waited for and read
  from the store (``RunReport.n_from_other_process``).
"""

from __future__ import annotations

import hashlib
import os
import queue
import random
import signal
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ..paths import store_dir
from ..settings import env_flag, env_number
from . import batch as batch_api
from . import shapes
from .concurrency import NEUTRAL, SUCCESS, THROTTLED, ConcurrencyLimit, LimitStats
from .config import JudgeConfig
from .entry import max_stored_chars, reply_entry
from .estimate import (
    JobEstimate,
    check_cost,
    job_estimate,
)
from .parsing import parse_likert
from .providers import get_provider
from .providers._common import redact
from .providers.base import Message, Provider, ProviderError, ProviderRequest, TransientProviderError
from .report import JudgeRun, Parser, assemble
from .retry import RateLimiter, RetryPolicy
from .store import MissingReplies, ResponseStore, StoreKeyer

MODES = ("replay", "live", "auto")
MODE_ENV = "RECJUDGE_LLM_MODE"
CONCURRENCY_ENV = "RECJUDGE_LLM_CONCURRENCY"
ADAPTIVE_ENV = "RECJUDGE_LLM_ADAPTIVE"
RATE_LIMIT_ENV = "RECJUDGE_LLM_RPM"
#: Requests in flight with a fixed limit (``adaptive=False``).
DEFAULT_CONCURRENCY = {"local": 1, "openai": 8, "anthropic": 4, "recorded": 1}
#: The cap of the adaptive limit (the default): it starts at ``ADAPTIVE_INITIAL`` and finds the server's pace.
DEFAULT_ADAPTIVE_CAP = {"local": 1, "openai": 64, "anthropic": 32, "recorded": 1}
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
#: Stop a job early when this many provider refusals (non-transient errors) arrive before any success: a wrong key
#: or model name would otherwise be sent once per prompt.
ABORT_AFTER_REFUSALS = 10
#: After an interrupt, seconds the workers get to finish the request they are in (their replies are stored).
INTERRUPT_GRACE_S = 2.0
#: How often a prompt claimed by another process is looked for in the store.
CLAIM_POLL_S = 0.2


def estimate_job(config: JudgeConfig, requests: Sequence[JudgeRequest],
                 store: "ResponseStore | str | os.PathLike[str] | None" = None, *, concurrency: int | None = None,
                 rate_limit_per_minute: float | None = None, batch: bool = False) -> JobEstimate:
    """Before a live job: how many replies are not yet in ``store`` (default: the process's store for
    ``store_dir()``), their estimated tokens, cost and time (see ``JobEstimate``).  Nothing is asked."""
    requests = list(requests)
    _validate(requests)
    keyer = StoreKeyer(provider=config.provider, model=config.model, temperature=config.temperature,
                       max_tokens=config.max_tokens, seed=config.seed, logprobs=config.scoring == "expected",
                       options=config.provider_options())
    rendered = _rendered_messages(keyer, requests)
    if not isinstance(store, ResponseStore):
        store = open_store(store)
    store.refresh(config.provider, config.model)
    slots = [(request, keyer.key(messages_json, run))
             for request, messages_json in zip(requests, rendered) for run in range(config.runs)]
    stored = store.peek_many(key for _, key in slots)  # read in place: only whether each key is there counts
    missing = [request for request, key in slots if key not in stored]
    cap = concurrency or env_number(CONCURRENCY_ENV, int) or DEFAULT_CONCURRENCY.get(config.provider, 4)
    rpm = rate_limit_per_minute or env_number(RATE_LIMIT_ENV)
    return job_estimate(config, len(requests), len(requests) * config.runs, missing, int(cap), rpm, batch=batch)


class JudgeInterrupted(KeyboardInterrupt):
    """A job stopped by SIGINT or SIGTERM; every reply that arrived before is in the store (re-run to resume)."""



@dataclass
class JudgeRequest:
    """One prompt to judge: ``key`` identifies it in the result table (e.g. "user:item"), ``messages`` is the chat."""

    key: str
    messages: list[Message]
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Outcome:
    record: dict[str, Any] | None
    error: str | None
    calls: int
    kind: str | None = None  # failure kind, or "other_process" for a reply another process asked


_open_stores: dict[Path, ResponseStore] = {}
_open_stores_lock = threading.Lock()


def open_store(root: str | os.PathLike[str] | None = None) -> ResponseStore:
    """The process-wide ResponseStore for a folder (default ``store_dir()``), so that a notebook calling
    ``run_judge`` many times reads each shard once and afterwards only what was appended."""
    path = Path(root if root is not None else store_dir()).resolve()
    with _open_stores_lock:
        if path not in _open_stores:
            _open_stores[path] = ResponseStore(path)
        return _open_stores[path]


def _run_seed(seed: int | None, run: int, request_key: str) -> int | None:
    """The seed sent with one reply: derived from the configured seed, the sample index and the request, so that the
    runs of one prompt are distinct draws and the draws of different prompts are independent. (One seed per sample
    index, shared by every prompt, makes a sampler draw every prompt's k-th reply at the same quantile of its
    distribution: measured with the local judge at temperature 1, run 1 of ten prompts all gave the tail token "7"
    or "8".) The store key holds the configured seed, the sample index and the request, which determine this one."""
    if seed is None:
        return None
    digest = hashlib.sha256(f"{int(seed)}:{int(run)}:{request_key}".encode()).digest()
    return int.from_bytes(digest[:4], "big") >> 1  # 31 bits: every provider's seed range


def _provider_request(config: JudgeConfig, request: JudgeRequest, run: int) -> ProviderRequest:
    """What is sent to the provider for sample ``run`` of ``request``."""
    return ProviderRequest(request.messages, model=config.served_model or config.model,
                           temperature=config.temperature, max_tokens=config.max_tokens,
                           seed=_run_seed(config.seed, run, request.key), logprobs=config.scoring == "expected",
                           options=config.provider_options())


def _resolve_mode(mode: str | None) -> str:
    chosen = (mode or os.environ.get(MODE_ENV) or "auto").strip().lower()
    if chosen not in MODES:
        raise ValueError(f"LLM mode must be one of {MODES}, got {chosen!r} (argument mode or env {MODE_ENV})")
    return chosen


def _resolve_batch(batch: bool | None) -> bool:
    return bool(batch) if batch is not None else env_flag(batch_api.BATCH_ENV, default=False)


def _resolve_adaptive(adaptive: bool | None) -> bool:
    return bool(adaptive) if adaptive is not None else env_flag(ADAPTIVE_ENV, default=True)


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


def _validate(requests: Sequence[JudgeRequest]) -> None:
    """Every request is a JudgeRequest and no key repeats (messages: see ``_rendered_messages``)."""
    # The common case (all fine) is checked in bulk; the loop below only runs to name the first problem.
    if all(type(request) is JudgeRequest for request in requests) \
            and len({request.key for request in requests}) == len(requests):
        return
    seen: set[str] = set()
    for position, request in enumerate(requests):
        if not isinstance(request, JudgeRequest):
            raise TypeError(f"request {position} is a {type(request).__name__}, not a JudgeRequest")
        if request.key in seen:
            raise ValueError(f"duplicate request key {request.key!r} (request {position}); keys must be unique")
        seen.add(request.key)


def _rendered_messages(keyer: StoreKeyer, requests: Sequence[JudgeRequest]) -> list[bytes]:
    """Each request's messages as the canonical JSON its store keys hash, checked on the way: a request without
    messages, or with a message that is not a {'role': str, 'content': str} mapping, is refused by name."""
    plain = keyer.plain_messages_json  # the usual messages pass its check, so they cost no separate one
    rendered = []
    for request in requests:
        text = plain(request.messages) if request.messages else None
        if text is None:
            _check_messages(request)
            text = keyer.messages_json(request.messages)
        rendered.append(text)
    return rendered


def _check_messages(request: JudgeRequest) -> None:
    if not request.messages:
        raise ValueError(f"request {request.key!r} has no messages")
    for turn, message in enumerate(request.messages):
        if not _plain_message(message):
            raise ValueError(
                f"request {request.key!r}, message {turn}: expected {{'role': str, 'content': str}}, got {message!r}"
            )


def _plain_message(message: object) -> bool:
    """Whether a chat message is a {'role': str, 'content': str} mapping, as providers need."""
    return isinstance(message, dict) and type(message.get("role")) is str and type(message.get("content")) is str


def run_judge(
    config: JudgeConfig,
    requests: Sequence[JudgeRequest],
    parser: Parser | None = None,
    *,
    store: ResponseStore | str | os.PathLike[str] | None = None,
    mode: str | None = None,
    concurrency: int | None = None,
    progress: bool = True,
    retry: RetryPolicy | None = None,
    rate_limit_per_minute: float | None = None,
    provider: Provider | None = None,
    timeout: float | None = None,
    adaptive: bool | None = None,
    order_prompts: bool = True,
    confirm_cost: bool = False,
    batch: bool | None = None,
    batch_wait: bool = True,
    batch_poll_s: float | None = None,
) -> JudgeRun:
    """Judge every request ``config.runs`` times (sample indices 0..runs-1); see the module docstring.

    parser: reply text -> float, or -> dict aspect -> float; default ``parse_likert`` (1-5), or for a constrained
            configuration the answer of its output shape (``shapes.answer_parser``).
    store: a ResponseStore or folder; default ``recjudge.paths.store_dir()``.
    mode: "replay" | "live" | "auto"; default env RECJUDGE_LLM_MODE, else "auto".
    concurrency: the most requests in flight: the cap of the adaptive limit, or the fixed limit; default env
        RECJUDGE_LLM_CONCURRENCY, else per provider (adaptive: ``DEFAULT_ADAPTIVE_CAP``, openai 64, anthropic 32;
        fixed: ``DEFAULT_CONCURRENCY``, openai 8, anthropic 4; local 1 either way).
    adaptive: True (default; env RECJUDGE_LLM_ADAPTIVE=0 turns it off) adapts the requests in flight to the
        server's rate limit (AIMD, see ``recjudge.llm.concurrency``); False keeps exactly ``concurrency`` in flight.
    retry: retry policy (default ``RetryPolicy()``).
    rate_limit_per_minute: request starts per minute; default env RECJUDGE_LLM_RPM, else unlimited.
    provider: an already built provider (default: ``get_provider(config, timeout=timeout)``, built only when
        something has to be asked).
    timeout: overall deadline of one request in seconds (default env RECJUDGE_LLM_TIMEOUT, else 60).
    order_prompts: ask the missing prompts sorted by their rendered messages, so prompts sharing a prefix (system
        prompt, few-shot examples) come one after another and a prefix cache (the local provider's llama.cpp KV
        cache, a vLLM server's prefix caching) reuses it.  The table is in the caller's order either way, and the
        replies do not depend on the order asked.
    confirm_cost: before asking, the job is estimated (``estimate_job``; printed in one line when more than
        ``ESTIMATE_PRINT_MIN`` replies are to be asked); a job estimated above env RECJUDGE_LLM_MAX_USD (default 5
        USD) raises ``CostLimitExceeded`` unless ``confirm_cost=True`` or env RECJUDGE_LLM_CONFIRM_COST=1.
    batch: send the missing prompts through the provider's batch API (``recjudge.llm.batch``: half price, replies
        within 24 h; default env RECJUDGE_LLM_BATCH=1, else off).  Replies are stored under the same keys; a
        killed job resumes polling its batches.  batch_wait: poll until every batch ends (default), or return at
        once with the prompts still in flight counted as failed (kind ``batch_pending``; run again to collect).
        batch_poll_s: seconds between polls (default env RECJUDGE_LLM_BATCH_POLL_S, else 30).

    Raises ``JudgeInterrupted`` on SIGINT/SIGTERM (replies received so far are stored), ``StoreNotWritable`` when
    something must be asked and the store cannot be written, ``ProviderError`` for a configuration the provider
    refuses before any request (missing key, unusable base URL, a model name that cannot identify the judge).
    """
    started = time.perf_counter()
    parser = parser or (parse_likert if config.shape is None else shapes.answer_parser(config.shape))
    mode = _resolve_mode(mode)
    requests = list(requests)
    if config.provider == "recorded":
        return _run_recorded(config, requests, parser, mode, provider, started)
    _validate(requests)
    if not isinstance(store, ResponseStore):
        store = open_store(store)
    # Read this model's shards: only bytes appended since the last run (by this or any other process).
    store.refresh(config.provider, config.model)
    retry = retry or RetryPolicy()
    want_logprobs = config.scoring == "expected"
    options = config.provider_options()

    keyer = StoreKeyer(provider=config.provider, model=config.model, temperature=config.temperature,
                       max_tokens=config.max_tokens, seed=config.seed, logprobs=want_logprobs, options=options)
    messages_jsons = _rendered_messages(keyer, requests)  # what the store keys hash
    slots: list[tuple[JudgeRequest, int, str]] = []
    runs = range(config.runs)
    for request, messages_json in zip(requests, messages_jsons):
        for run in runs:
            slots.append((request, run, keyer.key(messages_json, run)))

    records: dict[str, dict[str, Any]] = {}
    if mode != "live":
        records = store.peek_many(key for _, _, key in slots)
    from_store: set[str] = set(records)
    to_ask: dict[str, tuple[JudgeRequest, int]] = {}
    if len(records) < len(slots):  # else every slot has its reply (the usual replay)
        for request, run, key in slots:
            if key not in records and key not in to_ask:
                to_ask[key] = (request, run)
    if order_prompts and len(to_ask) > 1:
        rendered = dict(zip([request.key for request in requests], messages_jsons))
        to_ask = dict(sorted(to_ask.items(), key=lambda item: (rendered[item[1][0].key], item[1][1])))
    if mode == "replay" and to_ask:
        missing = [(request.key, run, key) for request, run, key in slots if key in to_ask]
        raise MissingReplies(missing, label=config.label, store_root=store.root)

    errors: dict[str, tuple[str, str]] = {}
    counters: Counter[str] = Counter()
    notes: list[str] = []
    batch = _resolve_batch(batch)
    if to_ask and batch:
        estimate = job_estimate(config, len(requests), len(slots), [request for request, _ in to_ask.values()],
                             1, None, batch=True)
        check_cost(estimate, confirm_cost, progress)
        store.check_writable(config.provider, config.model)
        if provider is None:
            provider = get_provider(config, timeout=timeout)
        backend = batch_api.backend_for(provider)
        served_model = config.served_model or config.model
        prepare = getattr(provider, "prepare", None)
        if callable(prepare):
            prepare(served_model, explicit_identity=config.served_model is not None)
        items = [batch_api.BatchItem(key, request.key, run, _provider_request(config, request, run).body_for(provider))
                 for key, (request, run) in to_ask.items()]
        try:
            with _sigterm_raises_interrupt():
                outcome = batch_api.ask_in_batches(
                    backend, store, provider_name=config.provider, model=config.model,
                    max_tokens=config.max_tokens, items=items, records=records, errors=errors, counters=counters,
                    wait=batch_wait, poll_s=batch_poll_s)
        except KeyboardInterrupt:
            raise JudgeInterrupted(
                f"{config.label}: interrupted while waiting for batches; they keep running at the provider and "
                "their ids are in the batch ledger beside the store. Run again to collect them.") from None
        notes.append(f"Batch mode: {len(outcome.submitted)} batch(es) submitted, {len(outcome.resumed)} resumed"
                     + (f", {len(outcome.pending)} still running (run again to collect)" if outcome.pending else "")
                     + "; replies priced at the batch rate.")
        notes.extend(outcome.notes)
        run = assemble(config, mode, store, slots, records, from_store, errors, counters, len(to_ask),
                        parser, want_logprobs, notes, started, batch=True)
        run.report.batches = {"submitted": outcome.submitted, "resumed": outcome.resumed,
                              "pending": outcome.pending, "unreadable_lines": outcome.unreadable_lines}
        return run
    if to_ask:
        adaptive = _resolve_adaptive(adaptive)
        defaults = DEFAULT_ADAPTIVE_CAP if adaptive else DEFAULT_CONCURRENCY
        workers = concurrency or env_number(CONCURRENCY_ENV, int) or defaults.get(config.provider, 4)
        gate = ConcurrencyLimit(max(1, int(workers)), adaptive=adaptive, initial=ADAPTIVE_INITIAL,
                                decrease=ADAPTIVE_DECREASE, first_decrease=ADAPTIVE_FIRST_DECREASE,
                                pacing=ADAPTIVE_PACING, binary_increase=ADAPTIVE_BINARY_INCREASE,
                                max_pause_s=retry.max_retry_after_s)
        rpm = rate_limit_per_minute or env_number(RATE_LIMIT_ENV)
        # Fixed mode runs at its limit; adaptive mode is estimated at the fixed default (a cautious pace).
        pace = gate.cap if not adaptive else min(gate.cap, DEFAULT_CONCURRENCY.get(config.provider, 4))
        estimate = job_estimate(config, len(requests), len(slots), [request for request, _ in to_ask.values()],
                             pace, rpm)
        check_cost(estimate, confirm_cost, progress)
        store.check_writable(config.provider, config.model)
        if provider is None:
            provider = get_provider(config, timeout=timeout)
        prepare = getattr(provider, "prepare", None)
        if callable(prepare):
            prepare(config.served_model or config.model, explicit_identity=config.served_model is not None)
        if config.provider == "local":
            _check_local_weights(config, store)
        _ask_all(config, provider, store, to_ask, records, from_store, errors, counters, want_logprobs, options,
                 retry, RateLimiter(rpm), gate, progress, claim=mode != "live")

    run = assemble(config, mode, store, slots, records, from_store, errors, counters, len(to_ask),
                    parser, want_logprobs, notes, started)
    if to_ask:
        stats: LimitStats = gate.stats
        run.report.n_throttled = stats.n_throttled
        run.report.concurrency = {"mode": "adaptive" if stats.adaptive else "fixed", "cap": stats.cap,
                                  "final": stats.limit, "peak": stats.peak, "decreases": stats.n_decreases}
    return run


class _Stopped(Exception):
    """Internal: a worker saw the stop event."""


def _ask_all(
    config: JudgeConfig,
    provider: Provider,
    store: ResponseStore,
    to_ask: dict[str, tuple[JudgeRequest, int]],
    records: dict[str, dict[str, Any]],
    from_store: set[str],
    errors: dict[str, tuple[str, str]],
    counters: Counter[str],
    want_logprobs: bool,
    options: dict[str, Any],
    retry: RetryPolicy,
    limiter: RateLimiter,
    gate: ConcurrencyLimit,
    progress: bool,
    *,
    claim: bool = True,
) -> None:
    from tqdm import tqdm

    rng_lock = threading.Lock()
    rng = random.Random()
    state = {"successes": 0, "refusals": 0}
    abort: dict[str, str] = {}  # why the job was stopped early (set once)
    stop = threading.Event()  # interrupt or abort: every wait ends at once, no new request starts
    max_chars = max_stored_chars(config.max_tokens)

    waiting_said = threading.Event()

    def stop_job(reason: str) -> None:
        with rng_lock:
            abort.setdefault("reason", reason)
        stop.set()

    def not_asked(attempts: int) -> _Outcome:
        return _Outcome(None, f"not asked: {abort.get('reason', 'the job was stopped')}", attempts, "not_asked")

    def wait_for_claim(key: str) -> dict[str, Any] | None:
        """Return the reply another process stores for ``key``, or None once this process holds the claim."""
        if not waiting_said.is_set():  # said once per job: another process holds claims of this job's prompts
            waiting_said.set()
            print(f"[recjudge] another process is asking some of these prompts; waiting for its replies "
                  f"(claims under {store.claim_path(key).parent})", file=sys.stderr)
        while not stop.is_set():
            store.refresh(config.provider, config.model)
            record = store.peek(key)
            if record is not None:
                return record
            if store.claim(key):
                return None
            stop.wait(CLAIM_POLL_S)
        raise _Stopped

    def ask(key: str, request: JudgeRequest, run: int) -> _Outcome:
        if claim and not store.claim(key):
            try:
                record = wait_for_claim(key)
            except _Stopped:
                return not_asked(0)
            if record is not None:
                return _Outcome(record, None, 0, "other_process")
        try:
            if claim:  # the claim holder before us may have stored it just before releasing
                store.refresh(config.provider, config.model)
                record = store.peek(key)
                if record is not None:
                    return _Outcome(record, None, 0, "other_process")
            return ask_claimed(key, request, run)
        finally:
            if claim:
                store.release(key)

    def ask_claimed(key: str, request: JudgeRequest, run: int) -> _Outcome:
        attempts = throttles = 0  # throttles: throttled attempts with their own budget (adaptive limit only)
        while True:
            if stop.is_set():
                return not_asked(attempts)
            epoch = gate.acquire(stop)
            if epoch is None:
                return not_asked(attempts)
            outcome = NEUTRAL
            retry_after = seconds = None
            try:
                limiter.acquire(stop)
                if stop.is_set():
                    return not_asked(attempts)
                attempts += 1
                asked_at = time.monotonic()
                completion = _provider_request(config, request, run).send(provider)
                outcome = SUCCESS
                seconds = time.monotonic() - asked_at
            except TransientProviderError as exc:
                if exc.throttled:
                    outcome, retry_after = THROTTLED, exc.retry_after
                gate.release(epoch, outcome, retry_after)
                epoch = None
                if exc.configuration and state["successes"] == 0:
                    stop_job(f"no reply has succeeded and the provider looks misconfigured: {redact(exc)}")
                    return _Outcome(None, f"configuration: {redact(exc)}", attempts, "configuration")
                if exc.throttled and gate.adaptive:
                    throttles += 1
                    exhausted = throttles >= retry.max_throttled_attempts
                else:
                    exhausted = attempts - throttles >= min(retry.max_attempts,
                                                            exc.max_attempts or retry.max_attempts)
                if exhausted:
                    return _Outcome(None, f"gave up after {attempts} attempts: {redact(exc)}", attempts, exc.kind)
                with rng_lock:
                    pause = retry.delay(attempts, exc.retry_after, rng)
                stop.wait(pause)  # an interrupt ends the wait at once
                continue
            except ProviderError as exc:
                gate.release(epoch, outcome)
                epoch = None
                if exc.configuration:
                    stop_job(f"configuration error: {redact(exc)}")
                    return _Outcome(None, f"configuration: {redact(exc)}", attempts, "configuration")
                with rng_lock:
                    state["refusals"] += 1
                    too_many = state["successes"] == 0 and state["refusals"] >= ABORT_AFTER_REFUSALS
                if too_many:
                    stop_job("the job was stopped after repeated provider refusals")
                return _Outcome(None, f"refused: {redact(exc)}", attempts, exc.kind)
            finally:
                if epoch is not None:
                    gate.release(epoch, outcome, retry_after, seconds)
            try:  # persisted before anything else can go wrong
                record = store.put_records([reply_entry(
                    completion, key=key, provider=config.provider, model=config.model, sample=run,
                    request_key=request.key, max_chars=max_chars)])[0]
            except (OSError, ValueError, TypeError) as exc:
                return _Outcome(None, f"reply received but not stored: {type(exc).__name__}: {exc}"[:300],
                                attempts, "store")
            with rng_lock:
                state["successes"] += 1
            return _Outcome(record, None, attempts)

    results: queue.SimpleQueue[tuple[str, _Outcome | BaseException]] = queue.SimpleQueue()
    work: queue.SimpleQueue[str] = queue.SimpleQueue()
    for key in to_ask:
        work.put(key)

    def worker() -> None:
        while not stop.is_set():
            try:
                key = work.get_nowait()
            except queue.Empty:
                return
            request, run = to_ask[key]
            try:
                results.put((key, ask(key, request, run)))
            except BaseException as exc:  # a provider bug: handed to the caller's thread, which re-raises it
                results.put((key, exc))

    bar = tqdm(total=len(to_ask), desc=config.label, disable=not progress, unit="reply")
    # Daemon threads rather than an executor: a worker stuck in a request when the job is interrupted must not
    # keep the interpreter from exiting (its request has its own deadline; a reply that arrives is still stored).
    threads = [threading.Thread(target=worker, name=f"recjudge-judge-{i}", daemon=True)
               for i in range(min(gate.cap, len(to_ask)))]
    done: set[str] = set()

    def collect(outcome_key: str, outcome: _Outcome) -> None:
        done.add(outcome_key)
        counters["calls"] += outcome.calls
        if outcome.record is not None:
            records[outcome_key] = outcome.record
            if outcome.kind == "other_process":
                from_store.add(outcome_key)
                counters["other_process"] += 1
        else:
            errors[outcome_key] = (outcome.error or "failed", outcome.kind or "failed")
        bar.update(1)

    with _sigterm_raises_interrupt():
        try:
            for thread in threads:
                thread.start()
            while len(done) < len(to_ask):
                try:
                    # A timeout keeps the main thread responsive to signals whatever the platform's lock does.
                    key, outcome = results.get(timeout=0.5)
                except queue.Empty:
                    if not any(t.is_alive() for t in threads) and results.empty():
                        break  # every worker left early (stop was set): the rest were never asked
                    continue
                if isinstance(outcome, BaseException):
                    stop.set()
                    raise outcome
                collect(key, outcome)
        except KeyboardInterrupt as exc:
            stop_job("interrupted")
            grace_end = time.monotonic() + INTERRUPT_GRACE_S
            for thread in threads:
                thread.join(max(0.0, grace_end - time.monotonic()))
            while not results.empty():
                key, outcome = results.get_nowait()
                if isinstance(outcome, _Outcome):
                    collect(key, outcome)
            stored = sum(1 for k in done if k in records and k not in from_store)
            bar.close()
            raise JudgeInterrupted(
                f"{config.label}: interrupted ({'SIGTERM' if isinstance(exc, _Terminated) else 'SIGINT'}); "
                f"{stored} new repl{'y' if stored == 1 else 'ies'} stored, {len(to_ask) - len(done)} prompt(s) not "
                "finished. Run again to resume: stored replies are not asked again."
            ) from None
        finally:
            stop.set()
            bar.close()
    for key in to_ask:
        if key not in done:  # never started: the job was stopped early
            errors[key] = (f"not asked: {abort.get('reason', 'the job was stopped')}", "not_asked")


class _Terminated(KeyboardInterrupt):
    """Internal: SIGTERM arrived while a job ran."""


class _sigterm_raises_interrupt:
    """While active (main thread only, and only if SIGTERM still has its default action), SIGTERM raises
    ``_Terminated`` in the main thread, so a terminated job stops like an interrupted one instead of dying with
    its workers mid-write."""

    def __enter__(self) -> None:
        self.previous = None
        if threading.current_thread() is threading.main_thread() and \
                signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            self.previous = signal.signal(signal.SIGTERM, self._raise)

    @staticmethod
    def _raise(signum: int, frame: Any) -> None:
        raise _Terminated()

    def __exit__(self, *exc: Any) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGTERM, self.previous)


def _run_recorded(
    config: JudgeConfig,
    requests: list[JudgeRequest],
    parser: Parser,
    mode: str,
    provider: Provider | None,
    started: float,
) -> JudgeRun:
    """Recorded judgments are looked up by request key; the store is not involved (the source file is the record)."""
    _validate(requests)
    if config.runs != 1:
        raise ValueError(f"{config.label}: recorded judgments hold one reply per key; runs must be 1, "
                         f"got {config.runs}")
    provider = provider or get_provider(config)
    records: dict[str, dict[str, Any]] = {}
    errors: dict[str, tuple[str, str]] = {}
    for request in requests:
        completion = provider.answer(request.key)  # type: ignore[attr-defined]
        if completion is None:
            errors[request.key] = (f"no recorded judgment for key {request.key!r} in "
                                   f"{getattr(provider, 'origin', '?')}", "not_recorded")
        else:
            records[request.key] = {"text": completion.text, "logprobs": None, "input_tokens": None,
                                    "output_tokens": None}
    slots = [(request, 0, None) for request in requests]
    notes = [f"Recorded judgments from {getattr(provider, 'origin', '?')}, attributed to {config.model}."]
    return assemble(config, mode, None, slots, records, set(), errors, {}, 0, parser,
                     config.scoring == "expected", notes, started)
