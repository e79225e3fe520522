"""Which local judges reuse the shared prompt prefix: the llama.cpp batch size a local judge configuration is asked at.

The local provider reuses the previous prompt's KV cache only up to a multiple of the batch size ``n_batch``, so that
a reply is bit-identical to a fresh evaluation (``recjudge.llm.providers.local``).  At llama.cpp's default batch size
(512) the reused part of a few-shot prompt is usually nothing, and every prompt is evaluated from its first token;
at ``PREFIX_BATCH`` the shared instructions and examples are reused.  ``n_batch`` is part of the store key (the
logits depend slightly on how a prompt is cut into batches), so the batch size of a configuration whose replies are
committed must stay what it was, or the book would miss them.  Hence one rule, ``local_judge_config``:

- a configuration that sets ``n_batch`` itself is asked as given;
- a local judge that has no committed replies gets ``n_batch = PREFIX_BATCH``: a reader's local judge
  (``JudgeSpec.to_config``, ``recjudge judge``), a chapter that is not among ``DEFAULT_BATCH_RUNS`` (a new chapter),
  and a committed chapter run at a profile whose replies are not committed (``paper``) where that profile changes
  the chapter's parameters;
- the book's committed chapters at the ``default`` and ``smoke`` profiles (``COMMITTED_PROFILES``; CI replays the
  book's judges of both) keep llama.cpp's default batch, and so their store keys.

``recjudge run`` decides per run (``reuses_prefix``) and tells the run's kernel through ``PREFIX_REUSE_ENV``; the
engine (``run_judge``, ``estimate_job``) applies ``local_judge_config`` to every configuration it is given, so the
store keys of a plan, a replay and a live run agree.  Outside ``recjudge run`` (a test, a script, a notebook opened
by hand) a configuration is asked as given.  The trust part's judges and a few chapter roles set ``n_batch`` to
``PREFIX_BATCH`` themselves (one size, so equal prompts share their replies).
"""

from __future__ import annotations

import os

from .config import JudgeConfig

#: llama.cpp batch size of a local judge that reuses the shared prompt prefix: small enough that the few-shot
#: examples shared by consecutive prompts are reused in whole batches, large enough that a prompt is still
#: evaluated in a few batches (measured: ``benchmarks/bench_prefix_local.py``).
PREFIX_BATCH = 64
#: The load option that sets it (``recjudge.llm.providers.local.LOAD_OPTIONS``).
BATCH_OPTION = "n_batch"
#: Environment variable set by ``recjudge run`` in the kernel of a run whose local judges have no committed replies.
PREFIX_REUSE_ENV = "RECJUDGE_LOCAL_PREFIX_REUSE"
#: The run-plan runs whose local judges' replies are committed at llama.cpp's default batch size (at their default
#: parameters and at the ``COMMITTED_PROFILES``).  Never add a run here: a new chapter reuses the prefix.
DEFAULT_BATCH_RUNS = frozenset({
    "proxy_vs_llm", "proxy_vs_llm_synthetic", "auxiliary_data", "auxiliary_data_synthetic", "llm_ensembles",
    "llm_ensembles_synthetic", "prompt_strategies", "prompt_strategies_synthetic", "recommender_reevaluation",
    "explanation_evaluators", "metamorphic_recommender", "judge_robustness", "trust_judges",
    "trust_judges_synthetic",
})
#: Profiles whose replies of the ``DEFAULT_BATCH_RUNS`` are committed (the book as committed; CI's smoke variant).
COMMITTED_PROFILES = ("default", "smoke")


def reuses_prefix(run: str, profile: str, *, rescaled: bool) -> bool:
    """True when the local judges of run-plan run ``run`` at ``profile`` have no committed replies, so they reuse the
    prompt prefix: a run not among ``DEFAULT_BATCH_RUNS``, or one whose parameters the profile changes
    (``rescaled``) when the profile is not one of ``COMMITTED_PROFILES`` (a profile that leaves a run's parameters
    alone asks what the default profile asks, which the store holds)."""
    if run not in DEFAULT_BATCH_RUNS:
        return True
    return rescaled and profile not in COMMITTED_PROFILES


def reuse_from_environment() -> bool:
    """What ``recjudge run`` decided for the run this process executes (``PREFIX_REUSE_ENV``); False elsewhere."""
    return os.environ.get(PREFIX_REUSE_ENV, "").strip() == "1"


def local_judge_config(config: JudgeConfig, *, reuse: bool | None = None) -> JudgeConfig:
    """``config`` as it is asked: a local judge whose options set no batch size gets ``n_batch = PREFIX_BATCH`` when
    ``reuse`` (None: as ``recjudge run`` decided, ``reuse_from_environment``); any other configuration unchanged."""
    if config.provider != "local" or BATCH_OPTION in dict(config.options):
        return config
    if not (reuse_from_environment() if reuse is None else reuse):
        return config
    return config.with_(options=(*config.options, (BATCH_OPTION, PREFIX_BATCH)))


__all__ = ["BATCH_OPTION", "COMMITTED_PROFILES", "DEFAULT_BATCH_RUNS", "PREFIX_BATCH", "PREFIX_REUSE_ENV",
           "local_judge_config", "reuse_from_environment", "reuses_prefix"]
