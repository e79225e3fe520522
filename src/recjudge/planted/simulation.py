"""The reader's path in process: a planted judge's answers drawn for many seeds at once, through the same analysis
and the same registry the chapters call, without asking a server.

For each claim a reader's judge can decide (:data:`SIMULATIONS`), a :class:`ClaimSimulation` does what the claim's
chapter does at a profile, up to the result tables the claim reads:

1. ``prepare`` (once per profile, any seed): the chapter's data and sample at the profile's parameters (the notebook's
   defaults with the run plan's overrides: :func:`chapter_parameters`), the prompts the chapter builds for a reader's
   judge, read as the server reads them (:func:`recjudge.planted.reading.read_messages`) and looked up in the key
   (:func:`recjudge.planted.judge.resolve`);
2. ``tables`` (per planted value and seed): the planted judge's answers to those prompts
   (:meth:`recjudge.planted.judge.PlantedJudge.answer_prompts`, the function the server answers with), and the
   chapter's own functions turn them into the tables the claim reads, written and read back as CSV as a run writes
   them (:class:`MemoryTables`);
3. the claims registry reads them with the reader's labels (:func:`evidence`), as the chapter's verdict box does.

Only what a claim reads is computed (a table's other rows, bootstrap intervals the claim does not read); that the
numbers a claim reads equal the real path's, number for number, is what ``tests/test_planted.py`` proves with a run of
``recjudge run --judge`` over the server.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from recjudge.compendium import claims as claims_registry
from recjudge.compendium.claim_evidence import Evidence
from recjudge.planted.judge import PlantedJudge, PlantedName, resolve
from recjudge.planted.key import PlantedKey
from recjudge.planted.reading import read_messages

#: The profiles whose operating characteristics are measured, smallest first.
PROFILES = ("check", "default", "paper")
#: The planted judges averaged for Kang et al.'s RQ3 (their Table 5 averages three).
ENSEMBLE_MEMBERS = ("a", "b", "c")


@functools.lru_cache(maxsize=64)
def _parameters(chapter: str, profile: str) -> tuple[tuple[str, Any], ...]:
    from recjudge.compendium.runplan import load_runplan
    from recjudge.compendium.runplan.parameters import declared_defaults
    from recjudge.paths import project_root

    runs = {run.name: run for run in load_runplan(profile=profile)}
    run = runs[chapter]
    defaults = {name: default.value for name, default in declared_defaults(project_root() / run.notebook).items()}
    return tuple({**defaults, **run.parameters}.items())


def chapter_parameters(chapter: str, profile: str) -> dict[str, Any]:
    """A chapter's parameters at ``profile``: its notebook's defaults with the run plan's overrides."""
    return dict(_parameters(chapter, profile))


class MemoryTables:
    """Result tables held in memory, each written and read back as a run's CSV is (``save_table``'s format), read
    by the registry as ``load(chapter, name)``; a table of ``context`` (the book's own judges' tables, which a claim
    reads for its words, never for its verdict) is the committed book's; any other table not held is
    ``FileNotFoundError``, as a table a build did not write."""

    def __init__(self, tables: Mapping[tuple[str, str], pd.DataFrame], context: Sequence[tuple[str, str]] = ()):
        self.tables = {where: as_written(frame) for where, frame in tables.items()}
        self.context = set(context)

    def __call__(self, chapter: str, name: str) -> pd.DataFrame:
        if (chapter, name) in self.tables:
            return self.tables[(chapter, name)].copy()
        if (chapter, name) in self.context:
            from recjudge.compendium.results import load_committed_table

            return load_committed_table(chapter, name)
        raise FileNotFoundError(f"{chapter}/{name} is not among the simulated tables")


def as_written(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` as ``save_table`` writes it and ``load_table`` reads it back (six significant digits)."""
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False, float_format="%.6g")
    buffer.seek(0)
    return pd.read_csv(buffer)


def read_requests(key: PlantedKey, requests: Sequence[Any]) -> pd.DataFrame:
    """The prompts of ``requests`` (``JudgeRequest``s) as a planted judge reads them (``resolve``'s frame), with
    each row's request ``key``; ValueError naming the first prompt the judge cannot read (a simulation must read
    every prompt it asks)."""
    readings = [read_messages(request.messages) for request in requests]
    prompts = resolve(key, readings)
    unread = sorted(set(range(len(requests))) - set(prompts["prompt"]))
    if unread:
        first = requests[unread[0]]
        raise ValueError(f"{len(unread)} of {len(requests)} prompts cannot be read by a planted judge; the first, "
                         f"request {first.key!r}, reads as template {readings[unread[0]].template!r}")
    return prompts.assign(key=[requests[i].key for i in prompts["prompt"]])


@dataclass
class ClaimSimulation:
    """One claim's reading of a reader's judge, simulated (module docstring). ``prepare(key, profile)`` returns what
    every seed shares; ``tables(prepared, judge, seed, labels)`` the tables the claim reads (chapter, name) -> frame;
    ``answers(prepared)`` the n of the claim's comparison (the answers, texts or users it rests on); ``members``:
    the planted judges it asks (several for an average)."""

    claim: str
    #: The claim's name in the operating characteristics' figure.
    short: str
    chapter: str
    prepare: Callable[[PlantedKey, str], Any]
    tables: Callable[[Any, PlantedJudge, int, Sequence[str]], Mapping[tuple[str, str], pd.DataFrame]]
    answers: Callable[[Any], int]
    members: tuple[str, ...] = ("a",)
    #: The book's own judges' tables the claim reads for its words only (:class:`MemoryTables`).
    context: tuple[tuple[str, str], ...] = ()
    #: At most this many seeds per profile (a claim whose tables take seconds to compute takes fewer); None: as
    #: many as the operating characteristics draw.
    most_seeds: int | None = None

    def labels(self, value: str, seed: int) -> list[str]:
        """The reader's labels of the planted judges this claim asks (as ``recjudge run --judge`` names them)."""
        return [str(PlantedName(value, seed, member)) for member in self.members]

    def evidence(self, prepared: Any, judge: PlantedJudge, seed: int) -> Evidence:
        labels = self.labels(judge.value, seed)
        load = MemoryTables(self.tables(prepared, judge, seed, labels), self.context)
        found = next(claim for claim in claims_registry.CLAIMS if claim.claim == self.claim)
        return found.evidence(load, readers=labels)


# ------------------------------------------------------------------------------------------------- Kang et al. RQ1

@dataclass
class _Sample:
    """A Serendipity-2018 chapter's judged answers (``frame``: user_id, truth and the columns the claim reads) and
    its prompts, read (``prompts``, one row per prompt, in the frame's order)."""

    frame: pd.DataFrame
    prompts: pd.DataFrame


def _proxy_vs_llm(key: PlantedKey, profile: str) -> _Sample:
    from recjudge.serendipity import ground_truth as ser
    from recjudge.serendipity import proxies

    p = chapter_parameters("proxy_vs_llm", profile)
    study = ser.prepare_serendipity2018(p["source"], history_k=p["history_k"], sample_size=p["sample_size"],
                                       seed=p["seed"], examples_first=p["examples_first"])
    sog = proxies.study_proxies(study, seed=p["seed"]).scores["SOG"].to_numpy()
    frame = study.answers[["user_id", "item_id", "truth"]].assign(SOG=sog).loc[study.sample.index]
    requests = study.requests("kang_basic")
    return _Sample(frame, read_requests(key, requests))


def _proxy_vs_llm_tables(sample: _Sample, judge: PlantedJudge, seed: int, labels: Sequence[str]
                         ) -> dict[tuple[str, str], pd.DataFrame]:
    from recjudge.prompts.serendipity import METHOD_NAMES
    from recjudge.serendipity import claims as kang_claims
    from recjudge.serendipity import ground_truth as ser

    name = f"{labels[0]} {METHOD_NAMES['kang_basic']}"
    scores = sample.frame.assign(**{name: judge.answer_prompts(sample.prompts, seed).astype(float)})
    agreement = ser.agreement_table(scores, ["SOG", name], n_boot=0, seed=0, groups="user_id", versus="SOG")
    return {("proxy_vs_llm", "agreement_sample"): agreement,
            ("proxy_vs_llm", "paper_claim_gain_over_sog"): kang_claims.zero_shot_gain_over_sog(ser.kang2025_table2())}


def _rows(sample: _Sample) -> int:
    return int(sample.frame["truth"].notna().sum())


# ------------------------------------------------------------------------------------------ the judge's parameter

#: The base URL a simulated reader's judge is given (nothing is ever asked there: it names an OpenAI-compatible
#: server, as ``recjudge run --judge openai:NAME --base-url URL`` does).
SIMULATED_URL = "http://127.0.0.1:9/v1"


def reader_parameter(label: str) -> dict[str, Any]:
    """The ``judges`` parameter entry of a planted judge, as ``recjudge run --judge openai:LABEL --base-url URL``
    gives the chapters."""
    from recjudge.llm.judge_spec import JudgeSpec

    return JudgeSpec(provider="openai", model=label, base_url=SIMULATED_URL).to_parameter()


@contextlib.contextmanager
def book_judges_replayed(label: str = "openai:planted"):
    """The environment of a reader's run at another profile: only the reader's judge would be asked, so the book's
    own judges give the replies the store holds and leave the rest out, exactly as in ``recjudge run --judge``
    (``RECJUDGE_LLM_ASK_ONLY``); nothing is asked."""
    from recjudge.llm.ask_options import ASK_ONLY_ENV, MODE_ENV

    saved = {name: os.environ.get(name) for name in (ASK_ONLY_ENV, MODE_ENV)}
    os.environ[ASK_ONLY_ENV], os.environ[MODE_ENV] = label, "auto"
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _by_key(prompts: pd.DataFrame, answers: np.ndarray) -> pd.Series:
    """A judge's answers to ``prompts`` (``read_requests``' frame, one row per prompt) by request key."""
    return pd.Series(answers.astype(float), index=prompts["key"].to_numpy())


# ------------------------------------------------------------------------------------------------- Kang et al. RQ2

@dataclass
class _Settings:
    rows: pd.DataFrame
    settings: list[str]
    prompts: dict[str, pd.DataFrame]


def _auxiliary_data(key: PlantedKey, profile: str) -> _Settings:
    from recjudge import data
    from recjudge.serendipity import auxiliary_data as aux
    from recjudge.serendipity import ground_truth as ser

    p = chapter_parameters("auxiliary_data", profile)
    study = ser.prepare_serendipity2018(p["source"], history_k=10, sample_size=p["sample_size"], seed=p["seed"],
                                       examples_first=p["examples_first"])
    pool = ser.stratified_sample(study.sample, "level", n=p["aux_pool_size"], seed=p["seed"])
    rows = ser.stratified_sample(pool, "level", n=p["aux_sample_size"], seed=p["seed"])
    chosen = aux.settings_by_name(p["settings"]) + aux.length_settings(p["history_lengths"])
    with book_judges_replayed():
        built = aux.setting_prompts(study, rows, data.load_movielens("latest-small").ratings, chosen,
                                    model=p["local_model"])
    return _Settings(rows, [s.name for s in chosen], {name: read_requests(key, requests)
                                                      for name, requests in built.requests.items()})


def _auxiliary_data_tables(prepared: _Settings, judge: PlantedJudge, seed: int, labels: Sequence[str]
                           ) -> dict[tuple[str, str], pd.DataFrame]:
    from recjudge.serendipity import auxiliary_data as aux

    keys = [f"{u}:{i}" for u, i in prepared.rows[["user_id", "item_id"]].itertuples(index=False)]
    scores = pd.DataFrame({name: _by_key(prompts, judge.answer_prompts(prompts, seed)).reindex(keys).to_numpy()
                           for name, prompts in prepared.prompts.items()}, index=prepared.rows.index)
    run = aux.RQ2Run(scores=pd.DataFrame(index=prepared.rows.index), aux=pd.DataFrame(), reports=pd.DataFrame(),
                     readers={labels[0]: scores})
    table = aux.readers_agreement(run, prepared.rows, prepared.settings, n_boot=0, seed=0)
    return {("auxiliary_data", "agreement_by_setting"): table}


def _aux_rows(prepared: _Settings) -> int:
    return int(prepared.rows["truth"].notna().sum())


# -------------------------------------------------------------------------------------- Tokutake et al., Table 1

@dataclass
class _Strategies:
    items: pd.DataFrame
    prompts: dict[str, pd.DataFrame]


def _prompt_strategies(key: PlantedKey, profile: str) -> _Strategies:
    from recjudge.llm import JudgeRequest
    from recjudge.serendipity import prompt_strategies as ps

    p = chapter_parameters("prompt_strategies", profile)
    study = ps.prepare_study(p["source"], sample_size=p["sample_size"], seed=p["seed"], history_k=p["history_k"],
                             examples_first=p["examples_first"])
    prompts = {}
    for strategy in p["strategies"]:
        requests = [JudgeRequest(k, ps.first_messages(strategy, h, i, study.examples_block(strategy)))
                    for k, h, i in zip(study.items["key"], study.items["history"], study.items["item"])]
        if strategy == "ltm":  # the answer is the last step's: the chain read as the server reads it
            for step in (2, 3):
                requests = [JudgeRequest(r.key, ps.ltm_next_messages(r.messages, "", step)) for r in requests]
        prompts[strategy] = read_requests(key, requests)
    return _Strategies(study.items, prompts)


def _prompt_strategies_tables(prepared: _Strategies, judge: PlantedJudge, seed: int, labels: Sequence[str]
                              ) -> dict[tuple[str, str], pd.DataFrame]:
    from recjudge.serendipity import prompt_strategies as ps

    items = prepared.items
    predictions, rows = {}, []
    for strategy, prompts in prepared.prompts.items():
        predicted = _by_key(prompts, judge.answer_prompts(prompts, seed)).reindex(items["key"])
        predictions[(labels[0], strategy)] = predicted
        rows.append({"judge": labels[0], "strategy": strategy, "template": ps.STRATEGY_NAMES[strategy],
                     **ps.strategy_metrics(predicted.to_numpy(), items["g"].to_numpy(), n_boot=0, seed=0)})
    metrics = ps.gaps_to(pd.DataFrame(rows), predictions, items.set_index("key")["g"])
    return {("prompt_strategies", "metrics"): metrics}


def _items(prepared: _Strategies) -> int:
    return int(prepared.items["g"].notna().sum())


# --------------------------------------------------------------------------------------------- part V, the labels

@dataclass
class _Population:
    frame: pd.DataFrame
    judges: pd.DataFrame
    prompts: pd.DataFrame
    keys: pd.Index
    sizes: list[int]
    draws: int
    seed: int
    min_answers: int
    recorded_worth: pd.DataFrame


def _trust_judges(key: PlantedKey, profile: str) -> _Population:
    from recjudge.prompts.serendipity import request_key
    from recjudge.serendipity import ground_truth as ser
    from recjudge.trust import judges as trust_judges
    from recjudge.trust import population, ppi

    p = chapter_parameters("trust_judges", profile)
    study = ser.prepare_serendipity2018(p["source"], history_k=10, sample_size=p["sample_size"], seed=p["seed"])
    with book_judges_replayed():
        judged = population.judged_population(study, local_judges=[], use_recorded=p["use_recorded_gpt35"],
                                              seed=p["seed"])
    reader = trust_judges.reader_judges([reader_parameter("planted")], p["judge_sample_size"])[0]
    covered = trust_judges.coverage(study.answers, study.examples)
    prompts = read_requests(key, trust_judges.requests_for(reader, study, covered, p["seed"]))
    keys = pd.Index([request_key(u, i) for u, i in covered[["user_id", "item_id"]].itertuples(index=False)])
    sizes = list(p["label_sizes"])  # every size: a judge's worth at one n is read off the widths at all of them
    studied = judged.analysed(p["min_answers"], integer_readings=False)
    recorded = [judge for judge in studied if judged.kind(judge) not in ("proxy metric",)]
    worth = (ppi.worth_table(judged.frame, recorded, "truth", sizes, draws=p["draws"], seed=p["seed"])
             .assign(estimand="mean serendipity") if recorded else pd.DataFrame())
    return _Population(judged.frame, judged.judges, prompts, keys, sizes, p["draws"], p["seed"], p["min_answers"],
                       worth)


def _trust_judges_tables(prepared: _Population, judge: PlantedJudge, seed: int, labels: Sequence[str]
                         ) -> dict[tuple[str, str], pd.DataFrame]:
    from recjudge.prompts.serendipity import METHOD_NAMES
    from recjudge.trust import ppi

    name = f"{labels[0]} {METHOD_NAMES['kang_fewshot']}"
    answers = _by_key(prepared.prompts, judge.answer_prompts(prepared.prompts, seed))
    frame = prepared.frame.assign(**{name: answers.reindex(prepared.keys).to_numpy()})
    judges = pd.concat([prepared.judges, pd.DataFrame([{"judge": name, "kind": "reader's LLM",
                                                        "answers": int(frame[name].notna().sum())}])],
                       ignore_index=True)
    parts = [prepared.recorded_worth]
    if judges["answers"].iloc[-1] >= prepared.min_answers:
        parts.append(ppi.worth_table(frame, [name], "truth", prepared.sizes, draws=prepared.draws,
                                     seed=prepared.seed).assign(estimand="mean serendipity"))
    worth = pd.concat([part for part in parts if len(part)], ignore_index=True)
    return {("trust_judges", "labels_worth"): worth, ("trust_judges", "judges"): judges}


def _population(prepared: _Population) -> int:
    return int(len(prepared.prompts))


# ------------------------------------------------------------------------------------------------- Kang et al. RQ3

def _llm_ensembles(key: PlantedKey, profile: str) -> _Sample:
    from recjudge.serendipity import ground_truth as ser

    p = chapter_parameters("llm_ensembles", profile)
    study = ser.prepare_serendipity2018(p["source"], history_k=10, sample_size=p["sample_size"], seed=p["seed"],
                                       examples_first=p["examples_first"])
    return _Sample(study.sample[["user_id", "item_id", "truth"]], read_requests(key, study.requests(
        ser.AVERAGED_PROMPT)))


def _llm_ensembles_tables(sample: _Sample, judge: PlantedJudge, seed: int, labels: Sequence[str]
                          ) -> dict[tuple[str, str], pd.DataFrame]:
    from recjudge.prompts.serendipity import METHOD_NAMES
    from recjudge.serendipity import ground_truth as ser

    judged = {f"{label} {METHOD_NAMES[ser.AVERAGED_PROMPT]}": pd.Series(
        judge.answer_prompts(sample.prompts, seed, member).astype(float), index=sample.frame.index)
        for label, member in zip(labels, ENSEMBLE_MEMBERS)}
    average = ser.readers_average(judged, sample.frame, labels, n_boot=0)
    return {("llm_ensembles", "readers_average"): average}


# -------------------------------------------------------------------------------------- Zhang et al., Table 1

@dataclass
class _Texts:
    truth: pd.DataFrame
    reference: pd.DataFrame
    evaluations: list[tuple[str, str, pd.DataFrame, list[int]]]


def _explanation_evaluators(key: PlantedKey, profile: str) -> _Texts:
    from recjudge.data.lu2023 import load_explanation_study
    from recjudge.explanations import evaluators as ex
    from recjudge.prompts import explanations as ex_prompts

    p = chapter_parameters("explanation_evaluators", profile)
    study = load_explanation_study()
    sample_rows = ex_prompts.sample_pairs(study, p["n_users"], p["pairs_per_user"], seed=p["sample_seed"])
    single_rows = ex_prompts.first_users(study, sample_rows, p["single_aspect_users"])
    plan = [("multi", setting, sample_rows) for setting in p["settings"]] + [("single", "zero_shot", single_rows)]
    evaluations = []
    for mode, setting, rows in plan:
        built = ex_prompts.build_requests(study, rows, mode, setting, seed=p["example_seed"])
        prompts = read_requests(key, built.requests)
        evaluations.append((mode, setting, prompts, [built.requests[i].meta["row_id"] for i in prompts["prompt"]]))
    reference = ex.reference_metric_evaluator_scores(study)
    return _Texts(ex.truth_frame(study), reference[reference["evaluator"] == ex.REFERENCE_METRIC], evaluations)


def _explanation_evaluators_tables(texts: _Texts, judge: PlantedJudge, seed: int, labels: Sequence[str]
                                   ) -> dict[tuple[str, str], pd.DataFrame]:
    from recjudge.explanations import evaluators as ex
    from recjudge.prompts import explanations as ex_prompts

    parts = [pd.DataFrame({"row_id": row_ids, "evaluator": ex_prompts.evaluator_name(labels[0], mode, setting),
                           "aspect": prompts["aspect"].to_numpy(),
                           "score": judge.answer_prompts(prompts, seed).astype(float)})
             for mode, setting, prompts, row_ids in texts.evaluations]
    versus = ex.versus_reference(texts.truth, pd.concat(parts, ignore_index=True), texts.reference)
    return {("explanation_evaluators", "readers_versus_reference"): versus}


def _texts(texts: _Texts) -> int:
    return int(min(len(set(row_ids)) for *_, row_ids in texts.evaluations))


# ------------------------------------------------------------------------------ Tokutake et al., the re-evaluation

@dataclass
class _Lists:
    judged_lists: pd.DataFrame
    targets: pd.DataFrame
    pairs: pd.DataFrame
    prompts: pd.DataFrame
    k: int
    users: int


def _recommender_reevaluation(key: PlantedKey, profile: str) -> _Lists:
    from recjudge.data.loaders import load_movielens
    from recjudge.recsys import judging, split
    from recjudge.recsys import lists as recsys_lists

    p = chapter_parameters("recommender_reevaluation", profile)
    ml = load_movielens(p["dataset"])
    folds = split.folds(ml.ratings)
    lists, _ = recsys_lists.load_committed_lists(p["dataset"])
    test_lists = lists[lists["part"] == "test"]
    judged = judging.first_test_users(folds, test_lists, p["judged_users_per_fold"])
    pairs, prompts = [], []
    for fold in folds:
        sub = test_lists[(test_lists["fold"] == fold.fold) & test_lists["user_id"].isin(judged[fold.fold])]
        requests = judging.requests_for(sub, fold.train, ml.items, p["prompt"])
        read = read_requests(key, requests)
        prompts.append(read.assign(prompt=read["prompt"] + sum(len(part) for part in pairs)))
        pairs.append(pd.DataFrame([{"fold": fold.fold, **request.meta} for request in requests]))
    # the claim reads the recommenders Table 3 prints: their lists and their users' targets alone (each
    # recommender's row is computed from its own lists)
    printed = set(judging.paper_table3("ML-1M")["recommender"])
    judged_lists = judging.lists_of_users(test_lists, judged)
    judged_lists = judged_lists[judged_lists["recommender"].isin(printed)]
    targets = split.targets(folds, "test")
    targets = targets.merge(judged_lists[["fold", "user_id"]].drop_duplicates())
    return _Lists(judged_lists, targets, pd.concat(pairs, ignore_index=True), pd.concat(prompts, ignore_index=True),
                  p["k"], sum(len(users) for users in judged.values()))


def _recommender_reevaluation_tables(lists: _Lists, judge: PlantedJudge, seed: int, labels: Sequence[str]
                                     ) -> dict[tuple[str, str], pd.DataFrame]:
    from recjudge.recsys import judging
    from recjudge.recsys.models import RECOMMENDERS

    scores = pd.Series(judge.answer_prompts(lists.prompts, seed).astype(float),
                       index=lists.prompts["prompt"].to_numpy()).reindex(range(len(lists.pairs))).to_numpy()
    scored = lists.pairs.assign(score=scores, integer_score=scores)
    order = [name for name in RECOMMENDERS if name in set(lists.judged_lists["recommender"])]
    table3 = judging.table3_of_judge(lists.judged_lists, lists.targets, scored, k=lists.k, order=order)
    return {("recommender_reevaluation", "table3_latest-small"): table3.assign(judge=labels[0])}


def _users(lists: _Lists) -> int:
    return lists.users


KANG_RQ1_LEAD = "LLMs such as Qwen2.5-14B and GPT-4 correlate with users better than the best proxy (SOG) on both " \
                "datasets"
KANG_RQ1_GAIN = "The LLMs' gain over SOG is about 100% in Pearson"
KANG_RQ2 = "Auxiliary data in the prompt makes the judge agree better with users"
KANG_RQ3 = "Averaging several LLM judges agrees better with users than one"
TOKUTAKE_COT = "Chain-of-thought gives the lowest MAE of the four prompts, for both LLMs"
TOKUTAKE_RANKING = "An LLM judge ranks the recommenders' serendipity as printed"
ZHANG_LLMS = "Certain LLMs evaluate explanations as well as or better than BLEU and ROUGE"
LABELS_SAVED = "An LLM judge's scores save human labels"

#: Every claim a reader's judge can decide, by its words in the registry.
SIMULATIONS = (
    ClaimSimulation(KANG_RQ1_LEAD, "RQ1: LLM above SOG", "proxy_vs_llm", _proxy_vs_llm, _proxy_vs_llm_tables,
                    _rows),
    ClaimSimulation(KANG_RQ1_GAIN, "RQ1: gain about 100%", "proxy_vs_llm", _proxy_vs_llm, _proxy_vs_llm_tables,
                    _rows),
    ClaimSimulation(KANG_RQ2, "RQ2: auxiliary data", "auxiliary_data", _auxiliary_data, _auxiliary_data_tables,
                    _aux_rows),
    ClaimSimulation(KANG_RQ3, "RQ3: averaging", "llm_ensembles", _llm_ensembles, _llm_ensembles_tables, _rows,
                    members=ENSEMBLE_MEMBERS, context=(("llm_ensembles", "table5_ours"),)),
    ClaimSimulation(TOKUTAKE_COT, "Tokutake: CoT's MAE", "prompt_strategies", _prompt_strategies,
                    _prompt_strategies_tables, _items),
    ClaimSimulation(TOKUTAKE_RANKING, "Tokutake: ranking", "recommender_reevaluation", _recommender_reevaluation,
                    _recommender_reevaluation_tables, _users,
                    context=(("recommender_reevaluation", "paper_table3_ml1m"),), most_seeds=15),
    ClaimSimulation(ZHANG_LLMS, "Zhang: LLMs and ROUGE", "explanation_evaluators", _explanation_evaluators,
                    _explanation_evaluators_tables, _texts,
                    context=(("explanation_evaluators", "llm_runs"), ("explanation_evaluators", "authors_runs")),
                    most_seeds=20),
    ClaimSimulation(LABELS_SAVED, "Part V: labels saved", "trust_judges", _trust_judges, _trust_judges_tables,
                    _population, most_seeds=20),
)


def simulation(claim: str) -> ClaimSimulation:
    return next(item for item in SIMULATIONS if item.claim == claim)


def prepared_once(key: PlantedKey) -> Callable[[ClaimSimulation, str], Any]:
    """``prepare`` of each chapter and profile once (claims of one chapter share it)."""
    cache: dict[tuple[Callable, str], Any] = {}

    def prepared(simulated: ClaimSimulation, profile: str) -> Any:
        where = (simulated.prepare, profile)
        if where not in cache:
            cache[where] = simulated.prepare(key, profile)
        return cache[where]

    return prepared
