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

import functools
import hashlib
import math
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
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..compendium.paths import store_dir
from . import batch as batch_api
from . import pricing, shapes
from .concurrency import NEUTRAL, SUCCESS, THROTTLED, ConcurrencyLimit, LimitStats
from .config import JudgeConfig
from .estimate import (
    JobEstimate,
    check_cost,
    job_estimate,
)
from .parsing import expected_score, modal_score, parse_likert
from .providers import get_provider
from .providers._common import redact
from .providers.base import Message, Provider, ProviderError, TransientProviderError
from .retry import RateLimiter, RetryPolicy
from .settings import env_flag, env_number
from .store import (
    MissingReplies,
    ResponseStore,
    StoreKeyer,
    max_stored_chars,
    now_utc,
    sanitise_record,
)

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

Parser = Callable[[str], "float | Mapping[str, float]"]


@dataclass
class JudgeRequest:
    """One prompt to judge: ``key`` identifies it in the result table (e.g. "user:item"), ``messages`` is the chat."""

    key: str
    messages: list[Message]
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class RunReport:
    """What a run did.  ``tokens``/``cost_usd`` are what this run spent (new provider calls only); ``job_*`` are
    the whole job's totals over all replies (what asking everything live would cost)."""

    config_label: str
    mode: str
    store: str
    n_prompts: int
    n_runs: int
    n_replies: int
    n_from_store: int
    n_asked: int
    n_provider_calls: int
    n_retries: int
    n_failed: int
    n_unparsable: int
    n_no_logprobs: int
    input_tokens: int
    output_tokens: int
    tokens: int
    cost_usd: float
    job_tokens: int
    job_cost_usd: float
    seconds: float
    notes: list[str] = field(default_factory=list)
    #: failed judgments by kind (see the module docstring)
    failed_by_kind: dict[str, int] = field(default_factory=dict)
    #: replies normalised to be storable (``repairs`` in the entry) and replies cut to the stored-text limit
    n_repaired: int = 0
    n_truncated: int = 0
    #: replies another process asked while this one waited (prompt claimed by it)
    n_from_other_process: int = 0
    #: replies whose server-reported model id did not match the name asked
    n_model_mismatch: int = 0
    #: unusable lines met in this model's shards, as "shard:line: reason"
    skipped_store_lines: list[str] = field(default_factory=list)
    #: throttled provider replies (HTTP 429 or Retry-After), each retried
    n_throttled: int = 0
    #: the concurrency gate, when something was asked: "adaptive" or "fixed", its cap, final and peak limit
    concurrency: dict[str, Any] = field(default_factory=dict)
    #: batch mode: ids of the batches submitted, resumed (found in the ledger) and still pending, and the result
    #: lines that could not be read ("batch <id>, <file> line <n>: <why>")
    batches: dict[str, list[str]] = field(default_factory=dict)
    #: constrained runs (``JudgeConfig.output_shape``): replies that do not conform to the shape (a server that
    #: ignored the constraint, a reply cut by max_tokens), counted apart from ``n_unparsable``
    n_shape_violations: int = 0

    @property
    def n_skipped_store_lines(self) -> int:
        return len(self.skipped_store_lines)

    def __str__(self) -> str:
        cost = "unknown" if math.isnan(self.cost_usd) else f"${self.cost_usd:.4f}"
        job_cost = "unknown" if math.isnan(self.job_cost_usd) else f"${self.job_cost_usd:.4f}"
        text = (
            f"{self.config_label} ({self.mode} mode): {self.n_prompts} prompts x {self.n_runs} run(s) -> "
            f"{self.n_replies} replies, {self.n_from_store} from the store, {self.n_asked} asked with "
            f"{self.n_provider_calls} provider call(s) ({self.n_retries} retries); {self.n_failed} failed, "
            f"{self.n_unparsable} unparsable"
        )
        if self.failed_by_kind:
            text += " (failed: " + ", ".join(f"{n} {kind}" for kind, n in sorted(self.failed_by_kind.items())) + ")"
        for count, what in ((self.n_repaired, "repaired to be storable"), (self.n_truncated, "truncated when stored"),
                            (self.n_from_other_process, "asked by another process"),
                            (self.n_model_mismatch, "from a model id other than the one asked"),
                            (self.n_shape_violations, "out of the output shape"),
                            (self.n_skipped_store_lines, "unusable store line(s) skipped")):
            if count:
                text += f", {count} {what}"
        if self.n_no_logprobs:
            text += f", {self.n_no_logprobs} without log-probabilities"
        if self.n_throttled:
            text += f", {self.n_throttled} throttled (429)"
        text += (
            f". This run: {self.tokens} tokens ({self.input_tokens} in, {self.output_tokens} out), cost {cost}; "
            f"whole job: {self.job_tokens} tokens, {job_cost}. {self.seconds:.1f} s."
        )
        if self.notes:
            text += " " + " ".join(self.notes)
        return text

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "n_skipped_store_lines": self.n_skipped_store_lines}


@dataclass
class JudgeRun:
    """A run's result.

    table: one row per (request key, run): key, run, score (or one column per aspect for a dict parser), reply,
    parsed_ok, input_tokens, output_tokens, from_store, plus error (why a judgment failed, else None), store_key,
    and in "expected" scoring mode text_score (the score read from the reply text, for comparison) and modal_score
    (the most probable score token: the integer the papers' judges would generate).
    """

    config: JudgeConfig
    table: pd.DataFrame
    report: RunReport
    score_columns: list[str]

    @property
    def failures(self) -> pd.DataFrame:
        """Rows whose judgment failed (no reply): key, run, error."""
        return self.table.loc[self.table["error"].notna(), ["key", "run", "error"]].reset_index(drop=True)

    def scores(self, fill_unparsable: float | None = None, column: str | None = None) -> pd.Series | pd.DataFrame:
        """Mean score over runs per request key (in request order), over the runs whose reply parsed.

        column: another per-reply score column to average instead of the scores, e.g. "modal_score" (the integer
        reading of an expected-score run).

        fill_unparsable: None (default) leaves unparsable replies out (NaN when no run parsed).  A number, e.g.
        0.0 for the "null -> 0" convention of some papers, replaces the score of each *unparsable reply* before
        averaging.  Failed judgments (no reply at all) stay NaN either way.
        """
        columns = self.score_columns if column is None else [column]
        if column is not None and column not in self.table.columns:
            raise KeyError(f"this run's table has no column {column!r} (modal_score needs scoring='expected')")
        frame = self.table[["key", *columns]].copy()
        if fill_unparsable is not None:
            has_reply = self.table["error"].isna()
            for name in columns:
                frame.loc[has_reply & frame[name].isna(), name] = float(fill_unparsable)
        order = pd.unique(self.table["key"])
        means = frame.groupby("key", sort=False)[columns].mean().reindex(order)
        means.index.name = "key"
        if len(columns) == 1 and (column is not None or columns == ["score"]):
            return means[columns[0]]
        return means


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


def _resolve_mode(mode: str | None) -> str:
    chosen = (mode or os.environ.get(MODE_ENV) or "auto").strip().lower()
    if chosen not in MODES:
        raise ValueError(f"LLM mode must be one of {MODES}, got {chosen!r} (argument mode or env {MODE_ENV})")
    return chosen


def _resolve_batch(batch: bool | None) -> bool:
    return bool(batch) if batch is not None else env_flag(batch_api.BATCH_ENV, default=False)


def _resolve_adaptive(adaptive: bool | None) -> bool:
    return bool(adaptive) if adaptive is not None else env_flag(ADAPTIVE_ENV, default=True)


def _score_range(parser: Callable[..., Any]) -> tuple[float, float]:
    if isinstance(parser, functools.partial):
        keywords = parser.keywords or {}
        return keywords.get("low", 1), keywords.get("high", 5)
    return getattr(parser, "low", 1), getattr(parser, "high", 5)


def _declared_aspects(parser: Callable[..., Any]) -> list[str] | None:
    """Aspect names a dict parser announces (``partial(parse_aspect_scores, aspects=...)`` or ``.aspects``)."""
    aspects = None
    if isinstance(parser, functools.partial):
        aspects = (parser.keywords or {}).get("aspects")
    aspects = aspects if aspects is not None else getattr(parser, "aspects", None)
    return None if aspects is None else [str(a) for a in aspects]


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
    store: a ResponseStore or folder; default ``recjudge.compendium.paths.store_dir()``.
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
        items = [batch_api.BatchItem(key, request.key, run, provider.request_body(
            [dict(m) for m in request.messages], model=served_model, temperature=config.temperature,
            max_tokens=config.max_tokens, seed=_run_seed(config.seed, run, request.key), logprobs=want_logprobs,
            options=dict(options))) for key, (request, run) in to_ask.items()]
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
        run = _assemble(config, mode, store, slots, records, from_store, errors, counters, len(to_ask),
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

    run = _assemble(config, mode, store, slots, records, from_store, errors, counters, len(to_ask),
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
    served_model = config.served_model or config.model
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
                completion = provider.complete(
                    [dict(m) for m in request.messages], model=served_model, temperature=config.temperature,
                    max_tokens=config.max_tokens, seed=_run_seed(config.seed, run, request.key), logprobs=want_logprobs,
                    options=dict(options),
                )
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
            record = {
                "key": key, "provider": config.provider, "model": config.model, "sample": run,
                "request_key": request.key, "text": completion.text, "logprobs": completion.logprobs,
                "input_tokens": completion.input_tokens, "output_tokens": completion.output_tokens,
                "latency_s": None if not isinstance(completion.latency_s, (int, float))
                else round(completion.latency_s, 3),
                "finish_reason": completion.finish_reason, "created": now_utc(),
            }
            if completion.provenance:
                record["provenance"] = completion.provenance
            try:
                record = store.put_records([sanitise_record(record, max_chars=max_chars)])[0]
            except (OSError, ValueError, TypeError) as exc:  # persisted before anything else can go wrong
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


def _model_mismatch(record: Mapping[str, Any], asked: str) -> bool:
    """Whether the server reported a model id that is not the name asked (OpenAI's dated ids, e.g.
    gpt-4o-mini-2024-07-18 for gpt-4o-mini, and a path ending in the name count as a match)."""
    reported = (record.get("provenance") or {}).get("reported_model")
    if not isinstance(reported, str) or not reported:
        return False
    reported = reported.lower()
    return not (reported == asked or reported.startswith(asked) or reported.endswith("/" + asked))


def _parse_reply(parser: Parser, text: str, request_key: str) -> float | Mapping[str, float]:
    try:
        return parser(text)
    except Exception as exc:  # a parser bug must name the reply it choked on; the reply itself is safe in the store
        raise ValueError(f"parser {parser!r} failed on the reply for {request_key!r}: {text[:200]!r}") from exc


def _assemble(
    config: JudgeConfig,
    mode: str,
    store: ResponseStore | None,
    slots: Sequence[tuple[JudgeRequest, int, str | None]],
    records: Mapping[str, Mapping[str, Any]],
    from_store: set[str],
    errors: Mapping[str, tuple[str, str]],
    counters: Mapping[str, int],
    n_asked: int,
    parser: Parser,
    want_logprobs: bool,
    notes: list[str],
    started: float,
    batch: bool = False,
) -> JudgeRun:
    low, high = _score_range(parser)
    declared = _declared_aspects(parser)
    aspects: list[str] | None = declared
    lookups = [key if key is not None else request.key for request, _, key in slots]
    found = list(map(records.get, lookups))
    replies = [None if record is None else record["text"] for record in found]
    parsed_by_text: dict[str, Any] = {}  # parsers are pure functions of the reply text; replies repeat a lot
    for (request, _, _), text in zip(slots, replies):
        if text is not None and parsed_by_text.get(text) is None:
            parsed_by_text[text] = _parse_reply(parser, text, request.key)
    dict_parser = declared is not None or any(
        not isinstance(parsed, (float, int)) and isinstance(parsed, Mapping) for parsed in parsed_by_text.values())
    n_no_logprobs = 0
    if dict_parser:
        rows: list[dict[str, Any]] = []
        for request, run, key in slots:
            lookup = key if key is not None else request.key
            record = records.get(lookup)
            row: dict[str, Any] = {"key": request.key, "run": run}
            if record is None:
                row.update(score=math.nan, reply=None, parsed_ok=False, input_tokens=None, output_tokens=None,
                           from_store=False, error=errors.get(lookup, ("no reply", "failed"))[0], store_key=key)
                rows.append(row)
                continue
            text = record["text"]
            parsed = parsed_by_text.get(text)
            if parsed is None:
                parsed = parsed_by_text[text] = _parse_reply(parser, text, request.key)
            if not isinstance(parsed, (float, int)) and isinstance(parsed, Mapping):
                dict_parser = True
                if aspects is None:
                    aspects = list(parsed)
                for aspect, value in parsed.items():
                    row[aspect] = float(value)
                ok = all(not math.isnan(float(v)) for v in parsed.values())
            else:
                value = float(parsed)
                if want_logprobs:
                    row["text_score"] = value
                    row["modal_score"] = modal_score(record.get("logprobs"), int(low), int(high))
                    value = expected_score(record.get("logprobs"), int(low), int(high))
                    if not record.get("logprobs"):
                        n_no_logprobs += 1
                row["score"] = value
                ok = not math.isnan(value)
            row.update(reply=text, parsed_ok=ok, input_tokens=record.get("input_tokens"),
                       output_tokens=record.get("output_tokens"), from_store=lookup in from_store, error=None,
                       store_key=key)
            rows.append(row)
        data: Any = rows
    else:
        # One score per reply (the usual case): the table is built column by column, several times faster than
        # from one dict per row; the same values as the row-wise branch above.
        # Each column is handed to pandas as a typed array (pandas infers nothing per value).
        nan = math.nan
        values = np.array([nan if text is None else float(parsed_by_text[text]) for text in replies], dtype=float)
        data = {"key": _objects([request.key for request, _, _ in slots]),
                "run": np.array([run for _, run, _ in slots], dtype=np.int64)}
        if want_logprobs:
            data["text_score"] = values
            logprobs = [None if record is None else record.get("logprobs") for record in found]
            values = np.array([nan if record is None else expected_score(lp, int(low), int(high))
                               for record, lp in zip(found, logprobs)], dtype=float)
            data["modal_score"] = np.array([nan if record is None else modal_score(lp, int(low), int(high))
                                            for record, lp in zip(found, logprobs)], dtype=float)
            n_no_logprobs = sum(1 for record, lp in zip(found, logprobs) if record is not None and not lp)
        data["score"] = values
        answered = np.array([record is not None for record in found], dtype=bool)
        data.update(
            reply=_objects(replies),
            parsed_ok=answered & ~np.isnan(values),
            input_tokens=_token_column([None if record is None else record.get("input_tokens") for record in found]),
            output_tokens=_token_column([None if record is None else record.get("output_tokens")
                                         for record in found]),
            from_store=answered & np.array([lookup in from_store for lookup in lookups], dtype=bool),
            error=_objects([None if record is not None else errors.get(lookup, ("no reply", "failed"))[0]
                            for record, lookup in zip(found, lookups)]),
            store_key=_objects([key for _, _, key in slots]),
        )
    if dict_parser:
        score_columns = aspects or []
        for row in rows:
            if "score" in row and row["error"] is not None:
                row.pop("score")
                row.update({a: math.nan for a in score_columns})
    else:
        score_columns = ["score"]
    leading = ["key", "run", *score_columns]
    if want_logprobs and not dict_parser:
        leading += ["text_score", "modal_score"]
    columns = [*leading, "reply", "parsed_ok", "input_tokens", "output_tokens", "from_store", "error", "store_key"]
    table = pd.DataFrame(data, columns=columns)
    if dict_parser:  # built from rows: give the columns the types the column-wise branch builds them with
        for column in score_columns:
            table[column] = table[column].astype(float)
        for column in ("input_tokens", "output_tokens"):
            table[column] = pd.array(table[column].tolist(), dtype="Int64")
        table["run"] = table["run"].astype(int)
        table["parsed_ok"] = table["parsed_ok"].astype(bool)
        table["from_store"] = table["from_store"].astype(bool)

    has_reply = table["error"].isna()
    violated = np.zeros(len(table), dtype=bool)
    shape = config.shape
    if shape is not None:  # constrained: a reply out of shape is a violation, not an unparsable reply
        problems = {text: shapes.check(shape, text)[1] for text in set(replies) if text is not None}
        table["shape_violation"] = _objects([None if text is None else problems[text] for text in replies])
        violated = table["shape_violation"].notna().to_numpy()
        if violated.any():
            notes.append(f"{int(violated.sum())} replies do not conform to the output shape {shape.name!r} "
                         "(column shape_violation says why).")
    new_keys = set(records) - from_store
    new_in = sum(int(records[k].get("input_tokens") or 0) for k in new_keys)
    new_out = sum(int(records[k].get("output_tokens") or 0) for k in new_keys)
    job_in = int(table["input_tokens"].fillna(0).sum())
    job_out = int(table["output_tokens"].fillna(0).sum())
    if pricing.price(config.provider, config.model) is None:
        notes.append(f"Cost unknown: no price for {config.provider} model {config.model!r} in recjudge.llm.pricing.")
    if want_logprobs and dict_parser:
        notes.append("Expected scoring reads one score per reply; the aspect scores were read from the reply text.")
    if n_no_logprobs:
        notes.append(f"{n_no_logprobs} replies came without log-probabilities, so their expected score is NaN.")
    failed_by_kind = Counter(errors.get(key if key is not None else request.key, ("", "failed"))[1]
                             for request, _, key in slots if (key if key is not None else request.key) not in records)
    used = [records[key] for key in {key for _, _, key in slots if key is not None and key in records}]
    n_repaired = sum(1 for record in used if record.get("repairs"))
    n_truncated = sum(1 for record in used if record.get("truncated_from_chars"))
    asked_name = (config.served_model or config.model).lower()
    n_mismatch = sum(1 for k in new_keys if _model_mismatch(records[k], asked_name))
    if n_truncated:
        notes.append(f"{n_truncated} replies were longer than the stored-text limit for max_tokens={config.max_tokens} "
                     "and were cut (entries marked truncated_from_chars).")
    if n_mismatch:
        notes.append(f"{n_mismatch} replies came from a model id other than {asked_name!r} (provenance.reported_model):"
                     " check that the endpoint serves the judge this configuration names.")
    skipped: list[str] = []
    if store is not None:
        from .store import model_slug

        folder = store.root / model_slug(config.provider) / model_slug(config.model)
        skipped = [str(line) for line in store.skipped_lines if line.shard.parent == folder]
        if skipped:
            notes.append(f"{len(skipped)} unusable line(s) in this model's store shards were skipped: "
                         + "; ".join(skipped[:5]) + (" ..." if len(skipped) > 5 else "")
                         + " (ResponseStore.compact() moves them to quarantine).")
    n_calls = int(counters.get("calls", 0))
    report = RunReport(
        config_label=config.label,
        mode=mode,
        store=str(store.root) if store is not None else "(none)",
        n_prompts=len({request.key for request, _, _ in slots}),
        n_runs=config.runs,
        n_replies=int(has_reply.sum()),
        n_from_store=int(table["from_store"].sum()),
        n_asked=n_asked - int(counters.get("other_process", 0)),
        n_provider_calls=n_calls,
        n_retries=0 if batch else max(0, n_calls - (n_asked - int(counters.get("other_process", 0)))),
        n_failed=int((~has_reply).sum()),
        n_unparsable=int((has_reply & ~table["parsed_ok"] & ~violated).sum()),
        n_no_logprobs=n_no_logprobs,
        input_tokens=new_in,
        output_tokens=new_out,
        tokens=new_in + new_out,
        cost_usd=pricing.cost_usd(config.provider, config.model, new_in, new_out, batch=batch),
        job_tokens=job_in + job_out,
        job_cost_usd=pricing.cost_usd(config.provider, config.model, job_in, job_out),
        seconds=time.perf_counter() - started,
        notes=notes,
        failed_by_kind=dict(sorted(failed_by_kind.items())),
        n_repaired=n_repaired,
        n_truncated=n_truncated,
        n_from_other_process=int(counters.get("other_process", 0)),
        n_model_mismatch=n_mismatch,
        skipped_store_lines=skipped,
        n_shape_violations=int(violated.sum()),
    )
    return JudgeRun(config=config, table=table, report=report, score_columns=score_columns)


def _objects(values: list[Any]) -> np.ndarray:
    """A column of Python objects (strings, None) as pandas would store it."""
    column = np.empty(len(values), dtype=object)
    column[:] = values
    return column


def _token_column(counts: list[int | None]) -> pd.api.extensions.ExtensionArray:
    """Token counts (None where unknown) as a nullable Int64 column."""
    if None in counts:
        return pd.array(counts, dtype="Int64")
    return pd.array(np.array(counts, dtype=np.int64), dtype="Int64")


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
    return _assemble(config, mode, None, slots, records, set(), errors, {}, 0, parser,
                     config.scoring == "expected", notes, started)
