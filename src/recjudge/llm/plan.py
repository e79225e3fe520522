"""Plan mode: a dry run that records what a job would ask instead of asking it.

``run_judge(..., mode="plan")`` (or env ``RECJUDGE_LLM_MODE=plan``) reads the store as a replay does, builds no
provider, asks nothing and writes nothing to the store.  Each reply the store lacks is a planned judgment: NaN
score, error "planned, not asked", counted in ``RunReport.n_planned`` (not among the failures).  The job's estimate
(``recjudge.llm.estimate.JobEstimate``: replies missing, tokens, cost at list and at batch price, time at the
configured concurrency and rate limit, exactly what ``estimate_job`` gives for the same job and options) is
appended as one JSON line to the file named by env ``RECJUDGE_PLAN_LOG`` (folders created; unset: nothing is
recorded), so that a driver running many chapters in plan mode can add up what a full run would take.

A chained prompt (a step built from the previous step's reply, such as least-to-most) is planned from a chat
holding an empty reply where the missing one would be: its input tokens are an underestimate, and its line says
which prompt template it is (``prompt``) so the driver can label it.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from pathlib import Path
from typing import Any

from .config import JudgeConfig
from .estimate import JobEstimate, token_estimate
from .job import JudgeJob

#: Environment variable: the JSON-lines file each planned job's estimate is appended to.
PLAN_LOG_ENV = "RECJUDGE_PLAN_LOG"
#: Failure kind (and table error) of a judgment planned, not asked.
PLANNED = "planned"


def plan(job: JudgeJob, estimate: JobEstimate, *, concurrency: int, rate_limit_per_minute: float | None) -> None:
    """Mark every reply ``job`` lacks as planned, note the estimate, and append it to the plan log."""
    for key in job.to_ask:
        job.fail(key, "planned, not asked (plan mode)", PLANNED)
    job.notes.append(f"Plan mode: nothing was asked. {estimate}.")
    log_estimate(plan_line(job, estimate, concurrency=concurrency, rate_limit_per_minute=rate_limit_per_minute))


def plan_line(job: JudgeJob, estimate: JobEstimate, *, concurrency: int,
              rate_limit_per_minute: float | None) -> dict[str, Any]:
    """One job's line of the plan log: the judge, the number of requests, the missing count, the concurrency and rate
    limit the time assumes, whether a local judge's weights are on this machine, and every field of the estimate
    (an unknown cost as null). ``n_requests`` counts prompts, ``n_judgments`` the replies wanted (prompts x runs),
    which ``n_missing`` is part of. ``all_input_tokens`` and ``all_output_tokens`` are the tokens of every judgment
    wanted, missing or not: what the job would take of a judge with no reply stored (the prompt manifest,
    ``recjudge.compendium.runplan.manifest``, keeps them to price any judge in this role)."""
    config = job.config
    every_input, every_output = token_estimate([request for request, _, _ in job.slots], config.max_tokens)
    line: dict[str, Any] = {
        "provider": config.provider, "model": config.model, "prompt": config.prompt, "runs": config.runs,
        "n_requests": len(job.requests), "n_judgments": len(job.slots), "n_missing": estimate.n_missing,
        "all_input_tokens": every_input, "all_output_tokens": every_output,
        "concurrency": concurrency, "rate_limit_per_minute": rate_limit_per_minute,
        "weights_present": weights_present(config),
    }
    for name, value in dataclasses.asdict(estimate).items():
        line[name] = None if isinstance(value, float) and math.isnan(value) else value
    return line


def weights_present(config: JudgeConfig) -> bool | None:
    """For a local judge, whether its GGUF file is on this machine (an optional model not fetched, a path that does
    not exist: False); None for the other providers."""
    if config.provider != "local":
        return None
    from .providers.base import ProviderError
    from .providers.local import resolve_model_path

    try:
        resolve_model_path(config.served_model or config.model)
    except ProviderError:
        return False
    return True


def log_estimate(line: dict[str, Any]) -> Path | None:
    """Append ``line`` to the file named by env RECJUDGE_PLAN_LOG (None, and nothing written, when it is unset)."""
    name = os.environ.get(PLAN_LOG_ENV, "").strip()
    if not name:
        return None
    path = Path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(line, ensure_ascii=False, allow_nan=False) + "\n"
    # One write of one short line in append mode: lines of processes planning side by side do not interleave.
    with path.open("a", encoding="utf-8") as log:
        log.write(text)
    return path
