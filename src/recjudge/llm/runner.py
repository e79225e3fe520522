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
import time
from typing import Sequence

from . import shapes
from .ask_options import AskOptions, reads_store
from .asking import ask_for_missing, job_estimate_at
from .config import JudgeConfig
from .estimate import JobEstimate
from .job import JudgeInterrupted, JudgeJob, JudgeRequest, open_job, validate
from .parsing import parse_likert, parse_recorded
from .prefix_reuse import local_judge_config
from .providers.base import Provider
from .report import JudgeRun, Parser, assemble_scores, report_run
from .retry import RateLimiter  # noqa: F401  (re-exported: where the runner's callers look for it)
from .store import ResponseStore, open_store

__all__ = ["JudgeInterrupted", "JudgeRequest", "estimate_job", "open_store", "run_judge"]


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
    return job_estimate_at(job, AskOptions(concurrency=concurrency, rate_limit_per_minute=rate_limit_per_minute,
                                           batch=batch))


def default_parser(config: JudgeConfig) -> Parser:
    """The reply parser a run of ``config`` reads with when its caller names none (``run_judge``)."""
    if config.shape is not None:
        return shapes.answer_parser(config.shape)
    return parse_recorded if config.provider == "recorded" else parse_likert


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

    One request goes through four steps, in this order, each in the module that owns it:

    1. plan (``job.open_job``): look its replies up in the store; those missing are to ask.
    2. ask (``asking.ask_for_missing``): fetch the missing replies as the mode says (replay raises, plan mode plans,
       otherwise the provider is asked and each reply stored as it arrives).
    3. assemble (``report.assemble_scores``): read a score from each reply into the table, in the caller's order.
    4. report (``report.report_run``): count what the run did (``RunReport``) and log it.

    parser: reply text -> float, or -> dict aspect -> float; default ``parse_likert`` (1-5), for a recorded judge
            ``parse_recorded`` (its table holds numbers such as 3.5, not replies), or for a constrained configuration
            the answer of its output shape (``shapes.answer_parser``).
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
    parser = parser or default_parser(config)
    mode = ask.resolved_mode()
    job = open_job(config, requests, store, read_store=reads_store(mode, config.provider, config.model),
                   order_prompts=ask.order_prompts)
    ask_for_missing(job, mode, provider, ask)
    scores = assemble_scores(job, parser)
    return report_run(job, mode, scores, started)
