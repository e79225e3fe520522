"""The judges of the trust part, at full coverage of Serendipity-2018.

Prediction-powered inference needs a judge's score for every answer of the population, not only for the stratified
sample the RQ1 chapter judges. This module names those judges once (the chapter replays them, and
``scripts/ask_trust_judges.py`` asks them), and the rows they cover:

- the answers with a ground truth, less every answer of the few-shot examples' users, so that no judged user's own
  answers appear as an example in any prompt (``coverage``);
- for a judge too slow for every answer on a CPU, a seeded simple random sample of those rows (``rows_for``), so that
  it still estimates the population's figures without bias.

The local judges set the llama.cpp batch size ``n_batch`` to ``recjudge.llm.prefix_reuse.PREFIX_BATCH`` so that the
shared instructions and few-shot examples of consecutive prompts are reused from the prompt cache
(``recjudge.llm.providers.local``); the batch size enters the store key, so these entries never mix with the RQ1
chapter's replies of the same prompts at the default batch size.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from recjudge.llm import JudgeConfig, JudgeRequest, JudgeRun, run_judge
from recjudge.llm.prefix_reuse import PREFIX_BATCH
from recjudge.serendipity import ground_truth


@dataclass(frozen=True)
class TrustJudge:
    """One judge of the trust part.

    name:        the judge's name in tables and figures.
    config:      what is asked (``recjudge.llm.JudgeConfig``).
    sample_size: None for every covered answer; else a seeded simple random sample of this many.
    family:      the model family, for the ensemble of different models.
    note:        what the judge is, in a few words, shown with its numbers.
    batch:       ``run_judge``'s batch option (a reader's judge asked through its provider's batch API); None: the
                 environment's (``RECJUDGE_LLM_BATCH``).
    """

    name: str
    config: JudgeConfig
    sample_size: int | None = None
    family: str = ""
    note: str = ""
    batch: bool | None = None


def _local(model: str, prompt: str) -> JudgeConfig:
    return ground_truth.rq1_judge(prompt, model, options=(("n_batch", PREFIX_BATCH),))


#: The recorded judge: gpt-3.5-turbo scores of every answer, published with their own prompt.
RECORDED_GPT35 = ground_truth.recorded_gpt35()

LOCAL_JUDGES: tuple[TrustJudge, ...] = (
    TrustJudge("SmolLM2-135M zero-shot", _local("smollm2-135m-instruct-q4_1", "kang_basic"),
               family="SmolLM2", note="local, 135M parameters, 4-bit, expected score"),
    TrustJudge("SmolLM2-135M few-shot (5)", _local("smollm2-135m-instruct-q4_1", "kang_fewshot"),
               family="SmolLM2", note="local, 135M parameters, 4-bit, expected score"),
    TrustJudge("Gemma-3-270M few-shot (5)", _local("gemma-3-270m-q4_k_m", "kang_fewshot"), sample_size=600,
               family="Gemma 3", note="local base model (not instruction-tuned), 270M parameters, 4-bit"),
    TrustJudge("Qwen2.5-Coder-1.5B zero-shot", _local("qwen2.5-coder-1.5b-instruct-q4_k_m", "kang_basic"),
               sample_size=300, family="Qwen2.5", note="local, 1.5B parameters, 4-bit"),
)


#: Test-retest: the few-shot judge generating its score token at temperature 1, twice per answer, on a random sample.
RETEST_JUDGE = TrustJudge(
    "SmolLM2-135M few-shot (5), sampled twice at temperature 1",
    JudgeConfig(provider="local", model="smollm2-135m-instruct-q4_1", prompt="kang_fewshot", scoring="generate",
                max_tokens=1, temperature=1.0, runs=2, seed=0, options=(("n_batch", PREFIX_BATCH),)),
    sample_size=300, family="SmolLM2", note="local, generated score token, two draws per answer")


#: The RQ1 role a reader's judge plays here: Kang et al.'s 5-shot prompt, the expected score of one reply token.
READER_PROMPT = "kang_fewshot"


def reader_judges(judges, sample_size: int | None = None, prompt: str = READER_PROMPT) -> tuple[TrustJudge, ...]:
    """Each reader's judge of ``judges`` (a chapter's ``judges`` parameter: ``JudgeSpec.to_parameter()`` dicts) as
    one more judge of this part, in the RQ1 role of ``prompt`` (``ground_truth.rq1_judge``: expected score, one
    reply token, temperature 0 unless the judge sets its own), named like the local judges ("<label> few-shot (5)"),
    on a seeded random sample of ``sample_size`` covered answers (None: every one)."""
    from recjudge.llm.judge_spec import chapter_judge, role_of
    from recjudge.prompts.serendipity import METHOD_NAMES

    if sample_size is not None and sample_size < 1:
        raise ValueError(f"judge_sample_size must be a positive number of answers or None, got {sample_size!r}")
    readers = []
    for entry in judges:
        label, config, batch = chapter_judge(entry, **role_of(ground_truth.rq1_judge(prompt)))
        readers.append(TrustJudge(f"{label} {METHOD_NAMES.get(prompt, prompt)}", config, sample_size=sample_size,
                                  family=label, note=f"the reader's judge ({config.provider}), expected score",
                                  batch=batch))
    return tuple(readers)


def coverage(answers: pd.DataFrame, examples: pd.DataFrame) -> pd.DataFrame:
    """The answers every judge of this part covers: those with a ground truth (``truth``), less all answers of the
    users who supply the few-shot examples."""
    keep = answers["truth"].notna() & ~answers["user_id"].isin(set(examples["user_id"]))
    return answers.loc[keep]


def rows_for(judge: TrustJudge, covered: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """The rows ``judge`` scores: every covered answer, or its seeded simple random sample."""
    if judge.sample_size is None or judge.sample_size >= len(covered):
        return covered
    return covered.sample(n=judge.sample_size, random_state=seed).sort_index()


def requests_for(judge: TrustJudge, study, covered: pd.DataFrame, seed: int = 0) -> list[JudgeRequest]:
    """The judge requests of ``judge`` on its rows (``study``: a ``Serendipity2018Study``)."""
    return study.requests(judge.config.prompt, rows_for(judge, covered, seed))


def run(judge: TrustJudge, study, covered: pd.DataFrame, mode: str | None = None, seed: int = 0,
        progress: bool = False) -> JudgeRun:
    """Ask (or replay) ``judge`` on its rows."""
    return run_judge(judge.config, requests_for(judge, study, covered, seed), mode=mode, progress=progress,
                     batch=judge.batch)


def recorded_gpt35(covered: pd.DataFrame, mode: str | None = None) -> JudgeRun:
    """The recorded gpt-3.5-turbo scores of the covered answers."""
    from recjudge.prompts.serendipity import request_key

    keys = [request_key(u, i) for u, i in covered[["user_id", "item_id"]].itertuples(index=False)]
    return run_judge(RECORDED_GPT35, [JudgeRequest(key, []) for key in keys], mode=mode, progress=False)


def by_name(name: str) -> TrustJudge:
    for judge in (*LOCAL_JUDGES, RETEST_JUDGE):
        if judge.name == name:
            return judge
    raise KeyError(f"no trust judge named {name!r}; known: {', '.join(j.name for j in LOCAL_JUDGES)}")


def prompt_readings(study, prompts, model: str = "smollm2-135m-instruct-q4_1", mode: str | None = None
                    ) -> pd.DataFrame:
    """The RQ1 chapter's local judge under each of ``prompts`` on its stratified sample (its configuration, replayed
    from the store): one column of expected scores per prompt, one row per sampled answer (key "user_id:item_id")."""
    columns = {}
    for prompt in prompts:
        columns[prompt] = run_judge(ground_truth.rq1_judge(prompt, model), study.requests(prompt), mode=mode,
                                    progress=False).scores()
    return pd.DataFrame(columns)


def retest_readings(study, covered: pd.DataFrame, mode: str | None = None, seed: int = 0) -> pd.DataFrame:
    """The test-retest judge's two draws per answer (columns "draw 1", "draw 2"; NaN where a reply is not a score
    1-5), one row per sampled answer (key "user_id:item_id")."""
    asked = run(RETEST_JUDGE, study, covered, mode=mode, seed=seed)
    wide = asked.table.pivot(index="key", columns="run", values="score")
    return wide.rename(columns=lambda draw: f"draw {int(draw) + 1}").rename_axis(columns=None)


def reading_sets(study, frame: pd.DataFrame, llm_judges, prompts=(), retest: bool = True, mode: str | None = None,
                 seed: int = 0, min_pair_answers: int = 30) -> dict[str, pd.DataFrame]:
    """The sets of readings whose agreement the reliability audit measures, by name, each one row per answer and one
    column per reading: the RQ1 chapter's local judge under ``prompts`` (at least two) on its stratified sample;
    each pair of ``llm_judges`` (columns of ``frame``, the population frame) on the answers both scored, when they
    are at least ``min_pair_answers``; with ``retest``, the test-retest judge's two draws."""
    sets = {}
    if len(prompts) >= 2:
        sets[f"SmolLM2-135M, {len(prompts)} prompts (RQ1 sample)"] = prompt_readings(study, prompts, mode=mode)
    for position, first in enumerate(llm_judges):
        for second in llm_judges[position + 1:]:
            pair = frame[[first, second]].dropna()
            if len(pair) >= min_pair_answers:
                sets[f"{first} / {second}"] = pair
    if retest:
        covered = coverage(study.answers, study.examples)
        sets[f"{RETEST_JUDGE.name} (test-retest)"] = retest_readings(study, covered, mode=mode, seed=seed)
    return sets
