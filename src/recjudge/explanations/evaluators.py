"""Meta-evaluation of evaluators of recommendation explanations (Zhang et al. 2024, Table 1).

An *evaluator* gives each rated explanation of the Lu et al. study a score per aspect (persuasiveness,
transparency, accuracy, satisfaction). Its accuracy is the correlation between its scores and the users' own
ratings at three levels (dataset, user, user–movie pair; :func:`recjudge.metaeval.multilevel_correlation`), with
Pearson, Spearman and Kendall.

Scores travel as a *long* frame: ``row_id`` (the study's explanation id), ``evaluator``, ``aspect``, ``score``.
Evaluators built here: the seeded Random baseline, the two third-party annotators and their mean, and BLEU-1,
BLEU-4, ROUGE-1-F and ROUGE-L-F against the users' self-explanations (one score used for all four aspects). LLM
evaluators come from :mod:`recjudge.prompts.explanations` in the same format.

Missing values: by default (:data:`DROP_NULLS`) a row with a missing user rating or a missing evaluator score is
left out of that aspect's correlations. :data:`PAPER_NULLS` applies Zhang et al.'s conventions instead: a missing
user rating becomes 3 ("unknown attitude") and a missing evaluator score (an unparsable LLM reply) becomes 0 (a
penalty). Groups whose correlation is undefined (constant ratings) are left out of the user/pair means and counted
in ``n_undefined``, as the paper's code does (pandas' ``mean`` skips the NaN that scipy returns for them).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from recjudge import papers
from recjudge.data.lu2023 import ASPECTS, ExplanationStudy
from recjudge.metaeval import baselines
from recjudge.metaeval.agreement import CORRELATION_METHODS, multilevel_correlation
from recjudge.metaeval.ensembles import ensemble_accuracy

__all__ = [
    "ANNOTATOR_EVALUATORS",
    "REFERENCE_METRIC",
    "versus_reference",
    "ERROR_COLUMNS",
    "errors_beside_baselines",
    "mean_errors_over_aspects",
    "on_rating_scale",
    "LLMEvaluation",
    "PAPER_TABLE2_USD",
    "cost_per_text",
    "run_llm_evaluators",
    "DROP_NULLS",
    "LEVELS",
    "NullPolicy",
    "PAPER_NULLS",
    "PAPER_TABLE1",
    "REFERENCE_METRIC_EVALUATORS",
    "annotator_scores",
    "compare_with_paper",
    "meta_evaluate",
    "paper_table1",
    "PAPER_TABLE1_AVERAGE",
    "average_over_aspects",
    "random_baseline",
    "random_scores",
    "reference_metric_evaluator_scores",
    "table1_layout",
    "truth_frame",
]

LEVELS = ("dataset", "user", "pair")
#: Table 1 names of the annotator evaluators -> the study's annotator columns.
ANNOTATOR_EVALUATORS = {"Annotator-1": "annotator_1", "Annotator-2": "annotator_2", "Average": "annotator_mean"}
#: Table 1 names of the reference-based metrics -> columns of recjudge.text_metrics.reference_metric_scores.
REFERENCE_METRIC_EVALUATORS = {"BLEU-1": "bleu_1", "BLEU-4": "bleu_4", "ROUGE-1-F": "rouge_1_f",
                               "ROUGE-L-F": "rouge_l_f"}


@dataclass(frozen=True)
class NullPolicy:
    """What to do with missing values before correlating.

    missing_user_rating:     None drops the row; a number replaces the missing user rating (the paper: 3).
    missing_evaluator_score: None drops the row; a number replaces the missing evaluator score (the paper: 0).
    """

    missing_user_rating: float | None = None
    missing_evaluator_score: float | None = None

    @property
    def label(self) -> str:
        user = "drop" if self.missing_user_rating is None else f"{self.missing_user_rating:g}"
        evaluator = "drop" if self.missing_evaluator_score is None else f"{self.missing_evaluator_score:g}"
        return f"user NA→{user}, evaluator NA→{evaluator}"


DROP_NULLS = NullPolicy()
PAPER_NULLS = NullPolicy(missing_user_rating=3.0, missing_evaluator_score=0.0)


# --------------------------------------------------------------------------------------------------------------------
# Evaluators
# --------------------------------------------------------------------------------------------------------------------
def truth_frame(study: ExplanationStudy) -> pd.DataFrame:
    """The users' ratings: row_id, user_id, item_id and one column per aspect (NaN = left blank)."""
    return study.user_ratings[["row_id", "user_id", "item_id", *ASPECTS]].copy()


def _long(frame: pd.DataFrame, evaluator: str, columns: dict[str, str]) -> pd.DataFrame:
    """Wide (row_id + one column per aspect) -> long scores of one evaluator. ``columns`` maps aspect -> column."""
    parts = [
        pd.DataFrame({"row_id": frame["row_id"].to_numpy(), "evaluator": evaluator, "aspect": aspect,
                      "score": frame[column].to_numpy(dtype=float)})
        for aspect, column in columns.items()
    ]
    return pd.concat(parts, ignore_index=True)


def annotator_scores(study: ExplanationStudy) -> pd.DataFrame:
    """Long scores of Annotator-1, Annotator-2 and their mean ("Average" in Table 1)."""
    parts = []
    for name, annotator in ANNOTATOR_EVALUATORS.items():
        frame = study.annotator_ratings[study.annotator_ratings["annotator"] == annotator]
        parts.append(_long(frame, name, {a: a for a in ASPECTS}))
    return pd.concat(parts, ignore_index=True)


def random_scores(row_ids: Sequence[int], seed: int, *, low: int = 1, high: int = 5,
                  name: str = "Random") -> pd.DataFrame:
    """Integer scores drawn uniformly from low..high, independently per row and aspect (numpy PCG64, ``seed``)."""
    rng = np.random.default_rng(seed)
    row_ids = np.asarray(row_ids)
    frame = pd.DataFrame({"row_id": row_ids})
    for aspect in ASPECTS:
        frame[aspect] = rng.integers(low, high + 1, size=len(row_ids)).astype(float)
    return _long(frame, name, {a: a for a in ASPECTS})


def reference_metric_evaluator_scores(study: ExplanationStudy, **metric_options) -> pd.DataFrame:
    """BLEU-1, BLEU-4, ROUGE-1-F, ROUGE-L-F of each explanation against its user's self-explanation for the movie,
    the same score for the four aspects. ``metric_options`` go to
    :func:`recjudge.text_metrics.reference_metric_scores` (tokenisation, smoothing)."""
    from recjudge.explanations.text_metrics import reference_metric_scores

    wide = study.wide()
    metrics = reference_metric_scores(wide["explanation_text"].tolist(), wide["self_explanation"].tolist(),
                                      **metric_options)
    metrics.insert(0, "row_id", wide["row_id"].to_numpy())
    return pd.concat(
        [_long(metrics, name, {a: column for a in ASPECTS}) for name, column in REFERENCE_METRIC_EVALUATORS.items()],
        ignore_index=True,
    )


# --------------------------------------------------------------------------------------------------------------------
# Meta-evaluation
# --------------------------------------------------------------------------------------------------------------------
def meta_evaluate(
    truth: pd.DataFrame,
    scores: pd.DataFrame,
    *,
    nulls: NullPolicy = DROP_NULLS,
    methods: Sequence[str] = CORRELATION_METHODS,
    aspects: Sequence[str] = ASPECTS,
) -> pd.DataFrame:
    """Three-level correlations of every evaluator in ``scores`` with ``truth``.

    truth:  row_id, user_id, item_id and one column per aspect (see :func:`truth_frame`).
    scores: long frame row_id, evaluator, aspect, score. Only the rows an evaluator scored are used (an evaluator
            run on a sample is meta-evaluated on that sample; ``n_rows`` says how many).
    Returns evaluator, aspect, level, method, value, n_groups, n_undefined, n_rows (value in [-1, 1]).
    """
    missing = {"row_id", "evaluator", "aspect", "score"} - set(scores.columns)
    if missing:
        raise KeyError(f"scores frame lacks column(s) {sorted(missing)}")
    for aspect in set(scores["aspect"]) & set(aspects):
        if aspect not in truth.columns:
            raise KeyError(f"truth frame lacks the aspect column {aspect!r}")
    results = []
    for (evaluator, aspect), group in scores.groupby(["evaluator", "aspect"], sort=False):
        if aspect not in aspects:
            continue
        if group["row_id"].duplicated().any():
            raise ValueError(f"evaluator {evaluator!r} has several scores for one row_id on {aspect!r}; "
                             "average runs before meta-evaluating")
        frame = truth[["row_id", "user_id", "item_id", aspect]].rename(columns={aspect: "truth"}).merge(
            group[["row_id", "score"]], on="row_id", how="inner", validate="one_to_one")
        if nulls.missing_user_rating is not None:
            frame["truth"] = frame["truth"].fillna(nulls.missing_user_rating)
        if nulls.missing_evaluator_score is not None:
            frame["score"] = frame["score"].fillna(nulls.missing_evaluator_score)
        table = multilevel_correlation(frame, "score", "truth", "user_id", "item_id", methods=tuple(methods))
        table.insert(0, "aspect", aspect)
        table.insert(0, "evaluator", evaluator)
        results.append(table)
    if not results:
        return pd.DataFrame(columns=["evaluator", "aspect", "level", "method", "value", "n_groups", "n_undefined",
                                     "n_rows"])
    return pd.concat(results, ignore_index=True)


#: The reference metric an LLM evaluator is set against (Zhang et al.'s best on the Average column of Table 1).
REFERENCE_METRIC = "ROUGE-1-F"
VERSUS_COLUMNS = ["evaluator", "aspect", "reference", "n", "pearson", "reference_pearson", "r_with_reference"]


def versus_reference(truth: pd.DataFrame, scores: pd.DataFrame, reference_scores: pd.DataFrame, *,
                     reference: str = REFERENCE_METRIC, nulls: NullPolicy = DROP_NULLS,
                     aspects: Sequence[str] = ASPECTS) -> pd.DataFrame:
    """Each evaluator of ``scores`` against the ``reference`` metric on the same texts, per aspect, at the dataset
    level: the texts both scored that have a user rating (``n``), each one's Pearson correlation with the users
    (``pearson``, ``reference_pearson``) and theirs with each other (``r_with_reference``), as a comparison of two
    correlations on the same texts reads them (``recjudge.metaeval.dependent``). ``reference_scores``: long scores
    holding the reference's rows (``reference_metric_evaluator_scores``). Empty without an evaluator."""
    theirs = reference_scores[reference_scores["evaluator"] == reference][["row_id", "aspect", "score"]]
    if theirs.empty:
        raise KeyError(f"no scores of the reference metric {reference!r}")
    rows = []
    for (evaluator, aspect), group in scores.groupby(["evaluator", "aspect"], sort=False):
        if aspect not in aspects:
            continue
        frame = truth[["row_id", aspect]].rename(columns={aspect: "truth"}).merge(
            group[["row_id", "score"]], on="row_id", validate="one_to_one").merge(
            theirs[theirs["aspect"] == aspect][["row_id", "score"]].rename(columns={"score": "reference"}),
            on="row_id", validate="one_to_one")
        if nulls.missing_user_rating is not None:
            frame["truth"] = frame["truth"].fillna(nulls.missing_user_rating)
        if nulls.missing_evaluator_score is not None:
            frame["score"] = frame["score"].fillna(nulls.missing_evaluator_score)
        frame = frame.dropna()

        def pearson(a: str, b: str) -> float:
            return (float(np.corrcoef(frame[a], frame[b])[0, 1])
                    if len(frame) > 2 and frame[a].nunique() > 1 and frame[b].nunique() > 1 else np.nan)

        rows.append({"evaluator": evaluator, "aspect": aspect, "reference": reference, "n": len(frame),
                     "pearson": pearson("score", "truth"), "reference_pearson": pearson("reference", "truth"),
                     "r_with_reference": pearson("score", "reference")})
    return pd.DataFrame(rows, columns=VERSUS_COLUMNS)


def ensemble_meta_evaluation(
    truth: pd.DataFrame,
    scores: pd.DataFrame,
    evaluators: Sequence[str],
    *,
    sizes: Sequence[int] | None = None,
    methods: Sequence[str] = ("pearson",),
    nulls: NullPolicy = DROP_NULLS,
) -> pd.DataFrame:
    """Three-level meta-evaluation of every ensemble of ``evaluators`` (Figure 4): the generic
    :func:`recjudge.metaeval.ensembles.ensemble_accuracy` per (row_id, aspect), judged by :func:`meta_evaluate`.

    Returns n (ensemble size), members, aspect, level, method, value, n_groups, n_undefined, n_rows.
    """
    return ensemble_accuracy(
        scores, evaluators,
        lambda combined: meta_evaluate(truth, combined, nulls=nulls, methods=methods),
        keys=("row_id", "aspect"), sizes=sizes, missing_score=nulls.missing_evaluator_score)


def random_baseline(
    truth: pd.DataFrame,
    seeds: Iterable[int],
    *,
    row_ids: Sequence[int] | None = None,
    nulls: NullPolicy = DROP_NULLS,
    methods: Sequence[str] = CORRELATION_METHODS,
    name: str = "Random",
) -> pd.DataFrame:
    """Meta-evaluation of uniform random 1–5 scores, one draw per seed, averaged over the seeds.

    Returns the :func:`meta_evaluate` columns with ``value`` = mean over seeds, plus ``value_sd`` (standard deviation
    over seeds) and ``n_seeds``.
    """
    seeds = list(seeds)
    if not seeds:
        raise ValueError("random_baseline needs at least one seed")
    row_ids = truth["row_id"].to_numpy() if row_ids is None else np.asarray(row_ids)
    per_seed = [
        meta_evaluate(truth, random_scores(row_ids, seed, name=name), nulls=nulls, methods=methods).assign(seed=seed)
        for seed in seeds
    ]
    stacked = pd.concat(per_seed, ignore_index=True)
    keys = ["evaluator", "aspect", "level", "method"]
    summary = stacked.groupby(keys, sort=False).agg(
        value=("value", "mean"), value_sd=("value", "std"), n_groups=("n_groups", "mean"),
        n_undefined=("n_undefined", "mean"), n_rows=("n_rows", "first"), n_seeds=("seed", "nunique"),
    ).reset_index()
    return summary


#: The columns of :func:`errors_beside_baselines`.
ERROR_COLUMNS = ["evaluator", "aspect", "n", "mae", "rmse", "accuracy_pct", "answer", "chosen_on"]


def on_rating_scale(scores: pd.DataFrame, low: int = 1, high: int = 5) -> list[str]:
    """The evaluators of ``scores`` that score on the users' scale (every score present within ``low``..``high``),
    in order of appearance; a reference metric (BLEU, ROUGE) scores text overlap on 0–1 and is left out
    even when its scores happen to fall in range."""
    present = scores.dropna(subset=["score"])
    in_range = present.groupby("evaluator", sort=False)["score"].agg(lambda v: bool(v.between(low, high).all()))
    return [e for e, ok in in_range.items() if ok and e not in REFERENCE_METRIC_EVALUATORS]


def errors_beside_baselines(truth: pd.DataFrame, scores: pd.DataFrame, *, aspects: Sequence[str] = ASPECTS,
                            low: int = 1, high: int = 5) -> pd.DataFrame:
    """MAE, RMSE and accuracy (the rating level, rounded half up) against the users' ratings of every evaluator on
    the users' 1–5 scale (:func:`on_rating_scale`), per aspect, on the texts it scored (a missing score or rating
    left out), and beside them the trivial baselines (``recjudge.metaeval.baselines``) on the texts any evaluator
    scored: the most frequent rating and the mean rating, each chosen for a user on every *other* user's ratings of
    the whole study, and Random (exact expectation). Columns :data:`ERROR_COLUMNS` (``answer``, ``chosen_on``: the
    baselines' only)."""
    rows = []
    judged = on_rating_scale(scores, low, high)
    for aspect in aspects:
        of_aspect = scores[(scores["aspect"] == aspect) & scores["evaluator"].isin(judged)]
        for evaluator, group in of_aspect.groupby("evaluator", sort=False):
            pairs = truth[["row_id", aspect]].merge(group[["row_id", "score"]], on="row_id", validate="one_to_one")
            rows.append({"evaluator": evaluator, "aspect": aspect,
                         **baselines.score_answers(pairs["score"], pairs[aspect])})
        scored = truth["row_id"].isin(scores.loc[scores["aspect"] == aspect, "row_id"])
        if not (scored & truth[aspect].notna()).any():
            continue
        floor = baselines.baselines_out_of_fold(truth[aspect], truth["user_id"], low=low, high=high, scored=scored,
                                                chosen_on="the other users' ratings")
        rows += floor.rename(columns={"baseline": "evaluator"}).assign(aspect=aspect).to_dict("records")
    return pd.DataFrame(rows, columns=ERROR_COLUMNS)


def mean_errors_over_aspects(errors: pd.DataFrame) -> pd.DataFrame:
    """:func:`errors_beside_baselines` averaged over the aspects per evaluator (``n``: the (text, aspect) pairs
    scored), in order of appearance."""
    return errors.groupby("evaluator", sort=False).agg(
        n=("n", "sum"), mae=("mae", "mean"), rmse=("rmse", "mean"), accuracy_pct=("accuracy_pct", "mean"),
        aspects=("aspect", "nunique")).reset_index()


# The paper's Table 1 (Pearson, %, dataset / user / pair level), transcribed from the RecSys '24 paper
# (``recjudge.papers``: ``zhang2024explanations_table1``)
_T = tuple[float, float, float]
_TABLE1 = papers.table("zhang2024explanations_table1")
_CELLS = {(e, a): (d, u, p) for e, a, d, u, p in _TABLE1[["evaluator", "aspect", *LEVELS]].itertuples(index=False)}
PAPER_TABLE1: dict[str, dict[str, _T]] = {
    evaluator: {aspect: _CELLS[evaluator, aspect] for aspect in ASPECTS} for evaluator in _TABLE1["evaluator"].unique()}
#: The Average column of the paper's Table 1, as printed (the mean over the four aspects, rounded by the authors:
#: recomputing it from the printed cells can differ in the last digit, e.g. BLEU-4 -2.17 against the printed -2.16).
PAPER_TABLE1_AVERAGE: dict[str, _T] = {evaluator: _CELLS[evaluator, "average"] for evaluator in PAPER_TABLE1}


def paper_table1(*, with_average: bool = False) -> pd.DataFrame:
    """The paper's Table 1 as a long frame: evaluator, aspect, level, method ("pearson"), paper (in %). With
    ``with_average``, also the printed Average column as aspect "average" (quoted, not recomputed)."""
    rows = [
        (evaluator, aspect, level, "pearson", value)
        for evaluator, cells in PAPER_TABLE1.items()
        for aspect, values in [*cells.items(), *((("average", PAPER_TABLE1_AVERAGE[evaluator]),)
                                                 if with_average else ())]
        for level, value in zip(LEVELS, values)
    ]
    return pd.DataFrame(rows, columns=["evaluator", "aspect", "level", "method", "paper"])


def average_over_aspects(results: pd.DataFrame, method: str = "pearson") -> pd.DataFrame:
    """Per evaluator and level, the mean over the four aspects of a :func:`meta_evaluate` table (the paper's
    Average column), in %: evaluator, level, value."""
    data = results[(results["method"] == method) & results["aspect"].isin(ASPECTS)]
    mean = data.groupby(["evaluator", "level"], sort=False)["value"].mean().mul(100)
    return mean.rename("value").reset_index()


def compare_with_paper(ours: pd.DataFrame, *, evaluators: Sequence[str] | None = None) -> pd.DataFrame:
    """Paper vs ours for every Table 1 cell we computed (Pearson only; the paper prints only Pearson).

    Returns evaluator, aspect, level, paper, ours, difference (ours − paper), all in percentage points, plus the
    group counts of our value.
    """
    mine = ours[ours["method"] == "pearson"].copy()
    mine["ours"] = 100 * mine["value"]
    if evaluators is not None:
        mine = mine[mine["evaluator"].isin(evaluators)]
    table = paper_table1().drop(columns="method").merge(
        mine[["evaluator", "aspect", "level", "ours", "n_groups", "n_undefined", "n_rows"]],
        on=["evaluator", "aspect", "level"], how="inner")
    table["difference"] = table["ours"] - table["paper"]
    order = {name: i for i, name in enumerate(PAPER_TABLE1)}
    table["_e"] = table["evaluator"].map(order)
    table["_a"] = table["aspect"].map({a: i for i, a in enumerate(ASPECTS)})
    table["_l"] = table["level"].map({lvl: i for i, lvl in enumerate(LEVELS)})
    table = table.sort_values(["_e", "_a", "_l"]).drop(columns=["_e", "_a", "_l"]).reset_index(drop=True)
    return table[["evaluator", "aspect", "level", "paper", "ours", "difference", "n_groups", "n_undefined", "n_rows"]]


def table1_layout(results: pd.DataFrame, *, method: str = "pearson", digits: int = 2) -> pd.DataFrame:
    """Table 1's layout: one row per evaluator, one column per aspect plus "average", each cell
    "dataset / user / pair" in % (the average is the mean over the four aspects at each level)."""
    data = results[results["method"] == method].copy()
    data["pct"] = 100 * data["value"].astype(float)
    cells: dict[str, dict[str, str]] = {}
    evaluators = list(dict.fromkeys(data["evaluator"]))
    for evaluator in evaluators:
        sub = data[data["evaluator"] == evaluator]
        row: dict[str, str] = {}
        for aspect in [*ASPECTS, "average"]:
            part = sub if aspect == "average" else sub[sub["aspect"] == aspect]
            values = [part.loc[part["level"] == level, "pct"].mean() for level in LEVELS]
            row[aspect] = " / ".join("—" if np.isnan(v) else f"{v:.{digits}f}" for v in values)
        cells[evaluator] = row
    table = pd.DataFrame.from_dict(cells, orient="index", columns=[*ASPECTS, "average"])
    return table.rename_axis("evaluator").reset_index()


# --------------------------------------------------------------------------------------------------------------------
# LLM evaluators through the judge engine
# --------------------------------------------------------------------------------------------------------------------
@dataclass
class LLMEvaluation:
    """Result of :func:`run_llm_evaluators`.

    scores:   long scores (row_id, evaluator, aspect, score); NaN where a reply could not be read.
    runs:     one row per (aspect mode, setting): evaluator, template, model label, n_texts, n_prompts, n_replies,
              n_from_store, n_unparsable (replies with at least one unreadable aspect), n_failed (judgments without a
              reply: a server that stopped, refusals; not counted as unparsable), n_skipped (texts without an
              eligible example), input_tokens, output_tokens, tokens_per_text, cost_usd (job cost at the model's
              price), seconds.
    replies:  the engine's tables, concatenated, with evaluator and template columns (for inspecting replies).
    """

    scores: pd.DataFrame
    runs: pd.DataFrame
    replies: pd.DataFrame


def run_llm_evaluators(
    study: ExplanationStudy,
    config,
    plan: Sequence[tuple[str, str, Sequence[int]]],
    *,
    model_label: str | None = None,
    seed: int = 0,
    mode: str | None = None,
    store=None,
    progress: bool = False,
    prompts: str = "reconstruction",
    reading: str = "authors",
    batch: bool | None = None,
) -> LLMEvaluation:
    """Ask ``config``'s model to rate the texts of each ``plan`` entry (aspect_mode, setting, row_ids) through
    ``recjudge.llm.run_judge`` (store first in "auto"/"replay" mode). ``config.prompt`` is replaced by each entry's
    template. ``model_label`` names the evaluator rows (default: the config's model). ``prompts``:
    "reconstruction" (our prompts from the paper's outline; settings of ``SETTINGS``) or "authors" (the authors'
    own; settings of ``AUTHORS_SETTINGS``, optionally + ``PROFILE_SUFFIX``), whose replies are read with the authors'
    rule (``reading="authors"``) or by aspect name (``reading="names"``; rows named "..., read by name"). ``batch``:
    ``run_judge``'s batch option (True: the provider's batch API; None: env ``RECJUDGE_LLM_BATCH`` decides)."""
    from recjudge.llm import run_judge
    from recjudge.prompts import explanations as ex_prompts

    if prompts not in ("reconstruction", "authors"):
        raise ValueError(f"prompts must be 'reconstruction' or 'authors', got {prompts!r}")
    build = ex_prompts.build_requests if prompts == "reconstruction" else ex_prompts.build_authors_requests
    if reading not in ("authors", "names"):
        raise ValueError(f"reading must be 'authors' or 'names', got {reading!r}")
    parser = (ex_prompts.parser_for if prompts == "reconstruction"
              else ex_prompts.authors_parser if reading == "authors" else ex_prompts.names_parser)
    label = model_label or config.model
    score_parts, run_rows, reply_parts = [], [], []
    for aspect_mode, setting, row_ids in plan:
        built = build(study, row_ids, aspect_mode, setting, seed=seed)
        name = ex_prompts.evaluator_name(label, aspect_mode, setting)
        if prompts == "authors" and reading == "names":
            name = f"{name}{ex_prompts.READ_BY_NAME}"
        run = run_judge(config.with_(prompt=built.template), built.requests, parser(aspect_mode),
                        store=store, mode=mode, progress=progress, batch=batch)
        score_parts.append(ex_prompts.scores_from_run(run, built, name))
        table = run.table.copy()
        table.insert(0, "template", built.template)
        table.insert(0, "evaluator", name)
        reply_parts.append(table)
        n_texts = len({r.meta["row_id"] for r in built.requests})
        tokens = int(table["input_tokens"].fillna(0).sum() + table["output_tokens"].fillna(0).sum())
        failed = table["error"].notna()
        unreadable = (~table["parsed_ok"].astype(bool) & ~failed).sum()
        report = run.report
        run_rows.append({
            "evaluator": name, "template": built.template, "model": config.label.split("/")[0],
            "n_texts": n_texts, "n_prompts": len(built.requests), "n_replies": report.n_replies,
            "n_from_store": report.n_from_store, "n_unparsable": int(unreadable), "n_failed": int(failed.sum()),
            "n_skipped": len(built.skipped),
            "input_tokens": int(table["input_tokens"].fillna(0).sum()),
            "output_tokens": int(table["output_tokens"].fillna(0).sum()),
            "tokens_per_text": tokens / n_texts if n_texts else float("nan"),
            "cost_usd": report.job_cost_usd,
        })
    return LLMEvaluation(
        scores=pd.concat(score_parts, ignore_index=True),
        runs=pd.DataFrame(run_rows),
        replies=pd.concat(reply_parts, ignore_index=True),
    )


_EMPTY_SCORES = ("row_id", "evaluator", "aspect", "score")
_EMPTY_RUNS = ("evaluator", "template", "model", "n_texts", "n_prompts", "n_unparsable")


def concat_evaluations(results: Sequence[LLMEvaluation]) -> LLMEvaluation:
    """The :class:`LLMEvaluation` of several runs (one per judge) as one; with no run (no judge configured), empty
    frames with the columns the meta-evaluation and the run tables read. A run whose every reply an earlier run
    already read (the same store keys, read another way) names that run in ``rereads``."""
    if not results:
        return LLMEvaluation(scores=pd.DataFrame(columns=list(_EMPTY_SCORES)),
                             runs=pd.DataFrame(columns=[*_EMPTY_RUNS, "rereads"]), replies=pd.DataFrame())
    joined = LLMEvaluation(*(pd.concat([getattr(r, part) for r in results], ignore_index=True)
                             for part in ("scores", "runs", "replies")))
    joined.runs["rereads"] = rereads(joined.runs, joined.replies)
    return joined


def rereads(runs: pd.DataFrame, replies: pd.DataFrame) -> list[str]:
    """Per run (row of ``runs``), the earlier run whose replies it reads again: every store key (``store_key``) of
    its replies is one of that run's ("" when it asked anything new). A share of replies counts each reply once:
    over the runs with no ``rereads`` (``recjudge.prompts.explanations.distinct_runs``)."""
    # By the store's key (``store_key``), not the request's (``key``), which the settings of one text share; replies
    # without one (never stored) cannot be told to be the same replies.
    keys = {name: frozenset(part["store_key"].dropna()) for name, part in replies.groupby("evaluator", sort=False)} \
        if len(replies) and "store_key" in replies else {}
    earlier: list[str] = []
    found = []
    for name in runs["evaluator"]:
        mine = keys.get(name, frozenset())
        found.append(next((e for e in earlier if mine and mine <= keys.get(e, frozenset())), ""))
        earlier.append(name)
    return found


def run_authors_prompts(
    study: ExplanationStudy,
    judges: Sequence[dict],
    plan: Sequence[tuple[str, str, Sequence[int]]],
    *,
    seed: int = 0,
    mode: str | None = None,
    store=None,
) -> LLMEvaluation:
    """The authors' own prompts (:func:`run_llm_evaluators` with ``prompts="authors"``) asked of each judge (a
    ``label`` plus ``JudgeConfig`` fields) on ``plan``, each run read twice: with the authors' rule and by aspect
    name (rows "..., read by name"); replies are asked once: the second reading takes them from the store (in
    ``live`` mode too, which would otherwise pay for every prompt twice)."""
    from recjudge.llm import JudgeConfig
    from recjudge.llm.ask_options import resolve_mode

    again = "auto" if resolve_mode(mode) == "live" else mode
    parts = []
    for judge in judges:
        fields = dict(judge)
        label = fields.pop("label")
        fields["options"] = tuple(fields.get("options", {}).items())
        config = JudgeConfig(prompt="zhang_authors_multi", **fields)
        for reading, reading_mode in (("authors", mode), ("names", again)):
            parts.append(run_llm_evaluators(study, config, plan, model_label=label, seed=seed, mode=reading_mode,
                                            store=store, prompts="authors", reading=reading))
    return concat_evaluations(parts)


def ensemble_members(judge_labels: Sequence[str], settings: Sequence[str], *, min_llms: int = 3) -> list[str]:
    """The members of the Figure 4 ensembles: the zero-shot multiple-aspect run of each judge (when ``settings``
    include it) and, when there are fewer than ``min_llms`` of them, the two third-party annotators, so that an
    ensemble of several members exists."""
    from recjudge.prompts.explanations import evaluator_name

    members = [evaluator_name(label, "multi", "zero_shot") for label in judge_labels if "zero_shot" in settings]
    if len(members) < min_llms:
        members += ["Annotator-1", "Annotator-2"]
    return members


#: BLEU and ROUGE settings tried against the paper's unstated tokenisation and smoothing: (row, kind, options); the
#: first of each row is the one Table 1 uses.
TOKENISATION_VARIANTS = (
    ("BLEU-1", "bleu", {"max_order": 1, "tokenize": "zh", "smooth_method": "none"}),
    ("BLEU-1", "bleu", {"max_order": 1, "tokenize": "jieba", "smooth_method": "none"}),
    ("BLEU-1", "bleu", {"max_order": 1, "tokenize": "char", "smooth_method": "none"}),
    ("BLEU-4", "bleu", {"max_order": 4, "tokenize": "zh", "smooth_method": "none"}),
    ("BLEU-4", "bleu", {"max_order": 4, "tokenize": "zh", "smooth_method": "exp"}),
    ("BLEU-4", "bleu", {"max_order": 4, "tokenize": "jieba", "smooth_method": "none"}),
    ("BLEU-4", "bleu", {"max_order": 4, "tokenize": "jieba", "smooth_method": "exp"}),
    ("BLEU-4", "bleu", {"max_order": 4, "tokenize": "char", "smooth_method": "none"}),
    ("ROUGE-1-F", "rouge1", {"tokenizer": "jieba"}),
    ("ROUGE-1-F", "rouge1", {"tokenizer": "char"}),
    ("ROUGE-L-F", "rougeL", {"tokenizer": "jieba"}),
    ("ROUGE-L-F", "rougeL", {"tokenizer": "char"}),
)


def tokenisation_variants(study: ExplanationStudy, truth: pd.DataFrame,
                          variants: Sequence[tuple[str, str, dict]] = TOKENISATION_VARIANTS) -> pd.DataFrame:
    """Each BLEU/ROUGE variant (row, "bleu" or a rouge-score key, options) scored against the self-explanations,
    meta-evaluated with the paper's null convention (Pearson) and compared with the paper's 12 cells of its row.

    Returns metric, setting, mean_abs_difference, max_abs_difference (points), dataset_level_mean (ours, %, mean over
    the aspects) and paper_dataset_level_average (the paper's Average column as printed)."""
    from recjudge.explanations import text_metrics

    wide = study.wide()
    hyps, refs = wide["explanation_text"].tolist(), wide["self_explanation"].tolist()
    rows = []
    for metric, kind, options in variants:
        if kind == "bleu":
            values = text_metrics.bleu_scores(hyps, refs, **options)
        else:
            values = text_metrics.rouge_f_scores(hyps, refs, (kind,), **options)[kind].to_numpy()
        scores = pd.concat([pd.DataFrame({"row_id": wide["row_id"], "evaluator": metric, "aspect": a, "score": values})
                            for a in ASPECTS])
        cells = compare_with_paper(meta_evaluate(truth, scores, nulls=PAPER_NULLS, methods=("pearson",)))
        rows.append({"metric": metric, "setting": ", ".join(f"{k}={v}" for k, v in options.items() if k != "max_order"),
                     "mean_abs_difference": cells["difference"].abs().mean(),
                     "max_abs_difference": cells["difference"].abs().max(),
                     "dataset_level_mean": cells.loc[cells["level"] == "dataset", "ours"].mean(),
                     "paper_dataset_level_average": PAPER_TABLE1_AVERAGE[metric][0]})
    return pd.DataFrame(rows)


def cost_per_text(runs: pd.DataFrame, priced_models: Sequence[tuple[str, str]]) -> pd.DataFrame:
    """Cost of evaluating one text on the four aspects at the price of each (provider, model) in
    ``priced_models``, from the measured tokens of ``runs`` (from :func:`run_llm_evaluators`): mean input and output
    tokens per text × the price table of ``recjudge.llm.pricing``. Token counts are those of the model that was run
    (its tokenizer), so for another model they are an approximation.

    Returns evaluator, template, input_tokens_per_text, output_tokens_per_text, and one ``usd_<model>`` column per
    priced model (NaN when the model is not in the price table)."""
    from recjudge.llm.pricing import cost_usd

    rows = []
    for _, run in runs.iterrows():
        n = run["n_texts"]
        row = {"evaluator": run["evaluator"], "template": run["template"],
               "input_tokens_per_text": run["input_tokens"] / n, "output_tokens_per_text": run["output_tokens"] / n}
        for provider, model in priced_models:
            row[f"usd_{model}"] = cost_usd(provider, model, run["input_tokens"], run["output_tokens"]) / n
        rows.append(row)
    columns = ["evaluator", "template", "input_tokens_per_text", "output_tokens_per_text",
               *[f"usd_{model}" for _, model in priced_models]]
    return pd.DataFrame(rows, columns=columns)


#: Table 2 of the paper: USD per text entry evaluated on four aspects; (S)/(M) single/multiple-aspect prompt
#: (``recjudge.papers``: ``zhang2024explanations_table2``).
PAPER_TABLE2_USD = {evaluator: float(usd) for evaluator, usd in papers.table("zhang2024explanations_table2")[
    ["evaluator", "usd_per_text"]].itertuples(index=False)}
