"""What a job would ask and cost before anything is asked: the estimate (``JobEstimate``: tokens from characters,
cost at list or batch price, time at the concurrency and rate limit) and the cost limit a live job must not pass
unconfirmed (``check_cost``; env RECJUDGE_LLM_MAX_USD, RECJUDGE_LLM_CONFIRM_COST).  The runner's ``estimate_job``
counts what is missing from the store and asks this module for the rest."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..settings import env_flag, env_number
from . import pricing
from .config import JudgeConfig

#: Environment variable: the most a live job may be estimated to cost (USD) before it needs confirming.
MAX_USD_ENV = "RECJUDGE_LLM_MAX_USD"
DEFAULT_MAX_USD = 5.0
#: Environment variable: "1" confirms any estimated cost (like ``run_judge(confirm_cost=True)``).
CONFIRM_COST_ENV = "RECJUDGE_LLM_CONFIRM_COST"
#: ``run_judge`` prints the estimate before asking more than this many prompts.
ESTIMATE_PRINT_MIN = 20
#: Characters per token for the input estimate (no tokenizer is used; English text averages about 4).
CHARS_PER_TOKEN = 4.0
#: Tokens a chat message adds besides its text (role markers), for the estimate.
TOKENS_PER_MESSAGE = 4
#: Assumed seconds per reply for the time estimate when nothing better is known (for a local judge: when the store
#: holds too few of its replies with a recorded latency, ``measured_latency``).
ASSUMED_LATENCY_S = {"local": 5.0, "openai": 1.5, "anthropic": 2.0}
#: Fewest stored replies with a recorded latency whose median is taken as a local judge's rate on this machine.
MIN_MEASURED_REPLIES = 5
#: The providers' batch completion window (OpenAI "24h"; Anthropic's batches end within 24 hours).
BATCH_WINDOW_S = 24 * 3600.0


class CostLimitExceeded(RuntimeError):
    """A live job's estimated cost is above the limit (env RECJUDGE_LLM_MAX_USD) and was not confirmed."""


@dataclass(frozen=True)
class JobEstimate:
    """What a job would ask and roughly cost before it starts (``estimate_job``).

    input_tokens: characters / ``CHARS_PER_TOKEN`` plus ``TOKENS_PER_MESSAGE`` per message (no tokenizer; real counts
    differ by tens of percent, more for non-English text).  output_tokens: ``max_tokens`` per reply, an upper bound.
    cost_usd: what the job would pay, at the list prices of ``recjudge.llm.pricing``, or at the batch rate when
    ``batch`` (NaN when the model has no price); list_cost_usd and batch_cost_usd: the same replies at either price,
    whichever way the job is asked.  seconds: the larger of the rate limit's bound and (replies x assumed latency /
    concurrency), or the batch window: an order of magnitude, not a promise.
    """

    config_label: str
    n_prompts: int
    n_replies: int
    n_missing: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    seconds: float
    #: asked through a batch API: priced at the batch rate, ``seconds`` is the providers' window (at most)
    batch: bool = False
    list_cost_usd: float = math.nan
    batch_cost_usd: float = math.nan
    #: the seconds per reply the time assumes, and where that rate comes from (``measured_latency``, or assumed)
    seconds_per_reply: float = math.nan
    rate_basis: str = ""

    def __str__(self) -> str:
        cost = "unknown cost (no price listed)" if math.isnan(self.cost_usd) else f"at most about ${self.cost_usd:.2f}"
        when = f"within {duration(self.seconds)} (batch)" if self.batch else f"~{duration(self.seconds)}"
        return (f"{self.config_label}: {self.n_missing} of {self.n_replies} replies to ask, ~{self.input_tokens:,} "
                f"input tokens (chars/4) + <= {self.output_tokens:,} output tokens, {cost}, {when}")


def duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def measured_latency(records: Iterable[Mapping[str, Any]]) -> tuple[float, int] | None:
    """(median seconds per reply, number of replies) over the stored ``records`` that recorded a latency
    (``latency_s``, written by the provider as it answered), or None when fewer than ``MIN_MEASURED_REPLIES`` did."""
    latencies = [float(record["latency_s"]) for record in records
                 if isinstance(record.get("latency_s"), (int, float)) and record["latency_s"] > 0]
    if len(latencies) < MIN_MEASURED_REPLIES:
        return None
    return statistics.median(latencies), len(latencies)


def token_estimate(requests: Sequence[Any], max_tokens: int) -> tuple[int, int]:
    """(input, output) tokens of asking each of ``requests`` (with ``messages``) once: characters /
    ``CHARS_PER_TOKEN`` plus ``TOKENS_PER_MESSAGE`` per message, and ``max_tokens`` per reply (see ``JobEstimate``)."""
    chars = sum(len(m["content"]) for request in requests for m in request.messages)
    n_messages = sum(len(request.messages) for request in requests)
    return int(math.ceil(chars / CHARS_PER_TOKEN)) + TOKENS_PER_MESSAGE * n_messages, max_tokens * len(requests)


def job_estimate(config: JudgeConfig, n_prompts: int, n_replies: int, missing: Sequence[Any],
                 concurrency: int, rpm: float | None, *, batch: bool = False,
                 measured: tuple[float, int] | None = None) -> JobEstimate:
    """The estimate of asking ``missing`` (requests with ``messages``) for ``config`` (see ``JobEstimate``).
    ``measured``: a local judge's rate from its stored replies (``measured_latency``), used instead of the assumed
    one."""
    input_tokens, output_tokens = token_estimate(missing, config.max_tokens)
    rate = None
    if measured is not None and config.provider == "local":
        rate = measured[0], f"median latency of {measured[1]:,} stored replies of this model"
    return counted_estimate(config.label, config.provider, config.model, n_prompts, n_replies, len(missing),
                            input_tokens, output_tokens, concurrency, rpm, batch=batch, rate=rate)


def counted_estimate(label: str, provider: str, model: str, n_prompts: int, n_replies: int, n_missing: int,
                     input_tokens: int, output_tokens: int, concurrency: int, rpm: float | None, *,
                     batch: bool = False, rate: tuple[float, str] | None = None) -> JobEstimate:
    """The estimate of asking ``n_missing`` replies of ``input_tokens`` and ``output_tokens`` in all (what a plan
    reads from the committed prompt manifest without building a prompt; ``job_estimate`` counts them from the
    requests). ``rate``: seconds per reply and what they rest on, else the provider's assumed latency."""
    latency, basis = rate if rate is not None else (
        ASSUMED_LATENCY_S.get(provider, 2.0),
        f"assumed {ASSUMED_LATENCY_S.get(provider, 2.0):g} s per reply (no measured rate)")
    seconds = n_missing * latency / max(1, concurrency)
    if rpm:
        seconds = max(seconds, n_missing * 60.0 / rpm)
    if batch:
        seconds = BATCH_WINDOW_S  # the providers promise results within their completion window
    list_cost, batch_cost = (pricing.cost_usd(provider, model, input_tokens, output_tokens, batch=at_batch_rate)
                             for at_batch_rate in (False, True))
    return JobEstimate(label, n_prompts, n_replies, n_missing, input_tokens, output_tokens,
                       batch_cost if batch else list_cost, seconds, batch=batch, list_cost_usd=list_cost,
                       batch_cost_usd=batch_cost, seconds_per_reply=latency, rate_basis=basis)


def cost_limit() -> float:
    """The most a live run may be estimated to cost before it needs confirming: env RECJUDGE_LLM_MAX_USD (a finite
    number, zero or more: 0 asks nothing that costs money), else ``DEFAULT_MAX_USD``; ValueError naming the variable
    for any other value.  The command lines call it before anything runs, so a bad value is found at once."""
    limit = env_number(MAX_USD_ENV, allow_zero=True)
    return DEFAULT_MAX_USD if limit is None else float(limit)


def paid(config: JudgeConfig) -> bool:
    """True when asking this judge costs money: Anthropic, or OpenAI's own service (not a reader's OpenAI-compatible
    server, not a local model)."""
    if config.provider == "openai":
        from .providers.openai_compat import is_openai_host

        return is_openai_host(config.base_url)
    return config.provider == "anthropic"


def check_cost(estimate: JobEstimate, confirm_cost: bool, progress: bool, *, costs_money: bool = False) -> None:
    """Print the estimate of a large job; refuse one estimated above the limit unless confirmed.  With a limit of 0
    a job of a judge that ``costs_money`` (``paid``) whose price is unknown is refused too: 0 asks nothing that may
    cost money."""
    if progress and estimate.n_missing > ESTIMATE_PRINT_MIN:
        print(f"Estimate: {estimate}", flush=True)
    limit = cost_limit()
    confirmed = confirm_cost or env_flag(CONFIRM_COST_ENV, default=False)
    if not confirmed and limit == 0 and costs_money and estimate.n_missing and math.isnan(estimate.cost_usd):
        raise CostLimitExceeded(
            f"{estimate}: the limit is $0 (env {MAX_USD_ENV}=0: ask nothing that costs money) and this paid model has "
            f"no listed price; nothing was asked. Confirm with run_judge(..., confirm_cost=True) or env "
            f"{CONFIRM_COST_ENV}=1, or raise {MAX_USD_ENV}."
        )
    if not confirmed and not math.isnan(estimate.cost_usd) and estimate.cost_usd > limit:
        raise CostLimitExceeded(
            f"{estimate}: above the limit of ${limit:.2f} (env {MAX_USD_ENV}); nothing was asked. Confirm with "
            f"run_judge(..., confirm_cost=True) or env {CONFIRM_COST_ENV}=1, or raise {MAX_USD_ENV}."
        )
