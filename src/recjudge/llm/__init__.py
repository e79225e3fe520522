"""The LLM judge engine: configurations, providers, the response store, the runner and reply parsing.

Typical use::

    from recjudge.llm import JudgeConfig, JudgeRequest, run_judge
    run = run_judge(JudgeConfig(provider="local", model="smollm2-135m-instruct-q4_1"), requests)
    run.table, run.scores(), print(run.report)

Modules: ``config`` (a judge: provider, model, sampling), ``providers/`` (openai-compatible, anthropic, local
llama.cpp, recorded), ``store`` (the content-addressed response store), ``entry`` (a store entry's schema: built,
normalised, checked), ``runner`` (``run_judge``: modes, dispatch), ``ask_options`` (how to ask: the run options
outside the store key), ``job`` (one job: its prompts, what the store holds, what asking brought; signals),
``workers`` (asking one prompt at a time on worker threads: claims, retries), ``plan`` (the dry-run mode: what a
job would ask, estimated and logged, nothing asked), ``report`` (the run's table and report), ``concurrency`` (the
adaptive limit of requests in flight), ``estimate`` (tokens, cost and time before asking; the cost limit),
``retry`` (backoff and the requests-per-minute limit), ``batch`` (the providers' batch APIs, resumable),
``parsing`` (scores from replies), ``reading_changes`` (the committed record of how many stored replies each change
of a reading rule moved), ``shapes`` (output shapes every provider enforces: a grammar, a JSON schema, a
forced tool), ``pricing`` (cost accounting), ``store_cli`` (``recjudge store info|export|import``),
``store_share`` (one file of store entries, to share a judge's replies, and its checked import into another store),
``models`` (the optional local GGUF models, pinned, assembled from PyPI chunk packages on request) and ``models_cli``
(``recjudge models list|fetch``); ``prefix_reuse`` decides which local judges evaluate prompts in small batches so that
the shared few-shot prefix is reused (those without committed replies); ``judge_spec`` reads a reader's judge (``--judge
provider:model`` or a judge file) into a ``JudgeSpec``; ``serve_local`` (``recjudge serve start|stop``) runs
llama-cpp-python's OpenAI-compatible server with a local GGUF on loopback, so a local model can be judged through the
OpenAI path.
"""

from . import shapes
from .ask_options import AskOptions
from .config import JudgeConfig
from .estimate import CostLimitExceeded, JobEstimate
from .parsing import expected_score, parse_aspect_scores, parse_likert
from .report import JudgeRun, RunReport
from .retry import RetryPolicy
from .runner import (
                     JudgeRequest,
                     estimate_job,
                     open_store,
                     run_judge,
)
from .store import MissingReplies, ResponseStore, StoredReply, store_key

__all__ = [
    "AskOptions",
    "CostLimitExceeded",
    "JobEstimate",
    "estimate_job",
    "JudgeConfig",
    "JudgeRequest",
    "JudgeRun",
    "MissingReplies",
    "ResponseStore",
    "RetryPolicy",
    "RunReport",
    "StoredReply",
    "expected_score",
    "parse_aspect_scores",
    "open_store",
    "parse_likert",
    "run_judge",
    "shapes",
    "store_key",
]
