"""How to ask: the run options of ``run_judge`` that are not part of the store key (``AskOptions``).

A ``JudgeConfig`` is what a judge is, and every field of it decides which store entries a run reads; these options
only decide how the missing replies are fetched (mode, pace, retries, batching, the cost check, a progress bar), so
two runs that differ in them read and write the same entries.  Every environment default of these options is read
here, when the runner first needs it: an unusable value (``RECJUDGE_LLM_RPM=fast``) fails with its variable's name,
and a run that never needs a value (a replay) never reads it.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Any

from ..settings import env_flag, env_number
from .batch import BATCH_ENV, WAIT_ENV, batched_by_environment
from .retry import RetryPolicy

#: The dry-run mode (``recjudge.llm.plan``).
PLAN = "plan"
MODES = ("replay", "live", "auto", PLAN)
MODE_ENV = "RECJUDGE_LLM_MODE"
CONCURRENCY_ENV = "RECJUDGE_LLM_CONCURRENCY"
ADAPTIVE_ENV = "RECJUDGE_LLM_ADAPTIVE"
RATE_LIMIT_ENV = "RECJUDGE_LLM_RPM"
#: Requests in flight with a fixed limit (``adaptive=False``).
DEFAULT_CONCURRENCY = {"local": 1, "openai": 8, "anthropic": 4, "recorded": 1}
#: The cap of the adaptive limit (the default): it starts low and finds the server's pace (``recjudge.llm.runner``).
DEFAULT_ADAPTIVE_CAP = {"local": 1, "openai": 64, "anthropic": 32, "recorded": 1}
#: Either limit for a provider named in neither table.
FALLBACK_CONCURRENCY = 4
#: Environment variable: the only judges asked (``provider:model``, comma-separated; unset: every judge). Any other
#: judge's job takes the store's replies and leaves the rest out, unasked (failure kind ``LEFT_OUT``, not a failure):
#: ``recjudge run --judge SPEC --profile P`` asks the reader's judges only, unless ``--with-book-judges``.
ASK_ONLY_ENV = "RECJUDGE_LLM_ASK_ONLY"
#: Kind of a judgment left out because its judge is not among those asked (``ASK_ONLY_ENV``).
LEFT_OUT = "left_out"


def judge_name(provider: str, model: str) -> str:
    """How a judge is named in ``RECJUDGE_LLM_ASK_ONLY`` (and in ``RECJUDGE_LLM_BATCH_JUDGES``)."""
    return f"{provider}:{model}"


def is_asked(provider: str, model: str) -> bool:
    """False when env RECJUDGE_LLM_ASK_ONLY names judges and not this one: its missing replies are left out."""
    names = {name.strip() for name in os.environ.get(ASK_ONLY_ENV, "").split(",") if name.strip()}
    return not names or judge_name(provider, model) in names


def reads_store(mode: str, provider: str, model: str) -> bool:
    """Whether a run in ``mode`` takes the store's replies: every mode but live, which asks everything again; and
    live mode too for a judge not asked (``is_asked``), which has nothing else to give."""
    return mode != "live" or not is_asked(provider, model)


@dataclass(frozen=True)
class AskOptions:
    """How ``run_judge`` asks for what the store lacks; None means the default named here.

    mode: "replay" | "live" | "auto" | "plan" (see ``recjudge.llm.runner``); default env RECJUDGE_LLM_MODE, else
        "auto".
    concurrency: the most requests in flight: the cap of the adaptive limit, or the fixed limit; default env
        RECJUDGE_LLM_CONCURRENCY, else per provider (adaptive: ``DEFAULT_ADAPTIVE_CAP``, openai 64, anthropic 32;
        fixed: ``DEFAULT_CONCURRENCY``, openai 8, anthropic 4; local 1 either way).
    adaptive: True (default; env RECJUDGE_LLM_ADAPTIVE=0 turns it off) adapts the requests in flight to the
        server's rate limit (AIMD, see ``recjudge.llm.concurrency``); False keeps exactly ``concurrency`` in flight.
    retry: retry policy (default ``RetryPolicy()``).
    rate_limit_per_minute: request starts per minute; default env RECJUDGE_LLM_RPM, else unlimited.
    timeout: overall deadline of one request in seconds (default env RECJUDGE_LLM_TIMEOUT, else 60).
    order_prompts: ask the missing prompts sorted by their rendered messages, so prompts sharing a prefix (system
        prompt, few-shot examples) come one after another and a prefix cache (the local provider's llama.cpp KV
        cache, a vLLM server's prefix caching) reuses it.  The table is in the caller's order either way, and the
        replies do not depend on the order asked.
    confirm_cost: before asking, the job is estimated (``recjudge.llm.runner.estimate_job``; printed in one line
        when more than ``ESTIMATE_PRINT_MIN`` replies are to be asked); a job estimated above env
        RECJUDGE_LLM_MAX_USD (default 5 USD) raises ``CostLimitExceeded`` unless ``confirm_cost=True`` or env
        RECJUDGE_LLM_CONFIRM_COST=1.
    batch: send the missing prompts through the provider's batch API (``recjudge.llm.batch``: half price, replies
        within 24 h; default: on for a judge named in env RECJUDGE_LLM_BATCH_JUDGES, else env RECJUDGE_LLM_BATCH=1,
        else off).  Replies are stored under the same keys; a
        killed job resumes polling its batches.  batch_wait: poll until every batch ends (default; env
        RECJUDGE_LLM_BATCH_WAIT=0 turns it off), or poll once and return with the prompts still in flight counted as
        failed (kind ``batch_pending``; run again to collect).
        batch_poll_s: seconds between polls (default env RECJUDGE_LLM_BATCH_POLL_S, else 30).
    progress: show a progress bar, and print the estimate of a large job (default True).
    """

    mode: str | None = None
    concurrency: int | None = None
    adaptive: bool | None = None
    retry: RetryPolicy | None = None
    rate_limit_per_minute: float | None = None
    timeout: float | None = None
    order_prompts: bool = True
    confirm_cost: bool = False
    batch: bool | None = None
    batch_wait: bool | None = None
    batch_poll_s: float | None = None
    progress: bool = True

    @classmethod
    def of(cls, ask: "AskOptions | None" = None, **options: Any) -> "AskOptions":
        """``ask`` (default: all defaults) with ``options`` replacing its fields; TypeError naming an unknown
        option and listing the valid ones."""
        valid = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(options) - set(valid))
        if unknown:
            raise TypeError(f"unknown run option(s) {', '.join(map(repr, unknown))}; valid: {', '.join(valid)}")
        if ask is not None and not isinstance(ask, AskOptions):
            raise TypeError(f"ask must be an AskOptions, got {type(ask).__name__}")
        return dataclasses.replace(ask or cls(), **options)

    def resolved_mode(self) -> str:
        """The mode: ``mode``, else env RECJUDGE_LLM_MODE, else "auto"; ValueError naming both when unknown."""
        chosen = (self.mode or os.environ.get(MODE_ENV) or "auto").strip().lower()
        if chosen not in MODES:
            raise ValueError(f"LLM mode must be one of {MODES}, got {chosen!r} (argument mode or env {MODE_ENV})")
        return chosen

    def uses_batch(self, provider: str, model: str) -> bool:
        """``batch``, else True for a judge named in env RECJUDGE_LLM_BATCH_JUDGES, else env RECJUDGE_LLM_BATCH."""
        if self.batch is not None:
            return bool(self.batch)
        return batched_by_environment(provider, model) or env_flag(BATCH_ENV, default=False)

    def waits_for_batches(self) -> bool:
        return bool(self.batch_wait) if self.batch_wait is not None else env_flag(WAIT_ENV, default=True)

    def uses_adaptive(self) -> bool:
        return bool(self.adaptive) if self.adaptive is not None else env_flag(ADAPTIVE_ENV, default=True)

    def concurrency_cap(self, provider: str, *, adaptive: bool) -> int:
        """The most requests in flight: ``concurrency``, else env RECJUDGE_LLM_CONCURRENCY, else the provider's
        default for an adaptive (``DEFAULT_ADAPTIVE_CAP``) or a fixed limit (``DEFAULT_CONCURRENCY``)."""
        defaults = DEFAULT_ADAPTIVE_CAP if adaptive else DEFAULT_CONCURRENCY
        chosen = self.concurrency or env_number(CONCURRENCY_ENV, int) or defaults.get(provider, FALLBACK_CONCURRENCY)
        return max(1, int(chosen))

    def requests_per_minute(self) -> float | None:
        """``rate_limit_per_minute``, else env RECJUDGE_LLM_RPM, else None (unlimited)."""
        return self.rate_limit_per_minute or env_number(RATE_LIMIT_ENV)


def resolve_mode(mode: str | None) -> str:
    """The mode a run with ``mode`` (None: the environment's) uses; see ``AskOptions.resolved_mode``."""
    return AskOptions(mode=mode).resolved_mode()
