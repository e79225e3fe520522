"""The at-a-glance page's headline numbers: for each paper's headline number, the paper's value and the book's
judge's (with n, 95% interval and how the model was chosen), and in a variant a column per reader's judge, every
number read from the result tables by name; and how the page shows them (:func:`headlines_shown`).

The page's other table, one row per paper and question, is :mod:`recjudge.compendium.at_a_glance`.
"""


from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TypeVar

import pandas as pd

from recjudge.compendium import claim_readers, claims, pages
from recjudge.compendium.claim_evidence import named_row
from recjudge.compendium.claim_readers import with_interval
from recjudge.compendium.pages import fmt
from recjudge.llm.judge_spec import JudgeSpec

Loader = Callable[[str, str], pd.DataFrame]
T = TypeVar("T")

#: The headline numbers: the paper's and the committed book's (the book's own judges); in a variant, one more column
#: per reader's judge (named by its label: ``your_judge_column``), or without one (a scale profile alone),
#: ``this_variant``: the variant's build of the same rows.
HEADLINE_COLUMNS = ["paper", "number", "model", "paper_value", "default_judge", "n", "ci_low", "ci_high", "note"]
THIS_VARIANT = "this_variant"
#: This book's own threshold (``pages.MIN_ANSWERS``), in the book's column and in every reader's judge's alike.
MIN_ANSWERS = pages.MIN_ANSWERS
_LLM_FAMILIES = ("LLM zero-shot", "LLM few-shot")
#: Reads one reader's judge's number (or its :class:`Detail`) from a variant's tables: its rows, columns or pool,
#: named by the judge.
ReaderNumber = Callable[[Loader, JudgeSpec], float]
ReaderDetail = Callable[[Loader, JudgeSpec], "Detail"]


@dataclass(frozen=True)
class Headline:
    """One number of a finding: ``ours`` reads it from a build's tables (by name), ``printed`` from the chapter's
    copy of the paper's table (None: the paper prints no such number), ``yours`` a reader's judge's from a variant's
    tables (None: not a judge's number, e.g. a proxy's); ``detail`` and ``your_detail`` the n and 95% interval of
    the book's number and of a reader's judge's, read the same way."""

    paper: str
    number: str
    ours: Callable[[Loader], float]
    printed: Callable[[Loader], float] | None = None
    yours: ReaderNumber | None = None
    detail: Callable[[Loader], Detail] | None = None
    your_detail: ReaderDetail | None = None
    #: The model the book's number comes from: a name, or read from the build's tables when a rule chose it (the
    #: best of several judges); :func:`headlines` adds it to the label.
    model: str | Callable[[Loader], str] = claim_readers.BOOK_JUDGE


@dataclass(frozen=True)
class Detail:
    """Beside a number: its n (a count of answers or replies; on held-out halves the mean count per half; NaN where
    it is no single count), its 95% interval, and a note on how it was chosen or read (a maximum selected on the same
    answers says so, with its held-out value)."""

    n: float = float("nan")
    ci_low: float = float("nan")
    ci_high: float = float("nan")
    note: str = ""


def _detail(read: Callable[[Loader], Detail] | None, load: Loader | None) -> Detail:
    if read is None or load is None:
        return Detail()
    try:
        return read(load)
    except (FileNotFoundError, KeyError):
        return Detail()


def _row_detail(chapter: str, table: str, key: str, value: object, ci: str = "pearson", note: str = ""
                ) -> Callable[[Loader], Detail]:
    def read(load: Loader) -> Detail:
        frame = load(chapter, table)
        row = named_row(frame, key, value, f"{chapter}/{table}")
        return Detail(float(row["n"]), float(row[f"{ci}_ci_low"]), float(row[f"{ci}_ci_high"]),
                      _with_resampling(note, frame))
    return read


def _with_resampling(note: str, table: pd.DataFrame) -> str:
    """``note``, and what the interval resamples where the table says (users, when answers cluster by user)."""
    if "interval_resamples" not in table.columns:
        return note
    return "; ".join(part for part in (note, f"the interval resamples {claim_readers.resampled(table)}") if part)


def _wilson(part: int, whole: int, note: str = "") -> Detail:
    """n and the Wilson 95% interval (in %) of the share ``part`` of ``whole``."""
    from statsmodels.stats.proportion import proportion_confint

    if whole == 0:
        raise KeyError("no replies")
    low, high = proportion_confint(part, whole, alpha=0.05, method="wilson")
    return Detail(float(whole), 100 * low, 100 * high, note)


def _share_detail(count: Callable[[Loader], tuple[int, int]], note: str = "") -> Callable[[Loader], Detail]:
    """n and the Wilson 95% interval (in %) of a share of ``count``'s (part, whole)."""
    return lambda load: _wilson(*count(load), note)


def _best_judge_detail(load: Loader) -> Detail:
    sample = load("proxy_vs_llm", "agreement_sample")
    runs = load("proxy_vs_llm", "judge_runs")
    judged = sample[sample["method"].isin(set(runs["method"]))].dropna(subset=["pearson_pct"])
    best = judged.loc[judged["pearson_pct"].idxmax()]
    # a judge run read two ways (its expected score, its most likely score token) is one run and two readings
    asked = runs[runs["method"].isin(judged["method"])]["judge"].nunique()
    readings = (f"the highest of {len(judged)} readings of {pages.count(asked, 'LLM judge run')} (a local judge's "
                "run read as its expected score and as its most likely score token; a reading without a Pearson "
                "left out)" if len(judged) > asked else f"the highest of {pages.count(len(judged), 'LLM judge run')}")
    return Detail(float(best["n"]), float(best["pearson_ci_low"]), float(best["pearson_ci_high"]),
                  _with_resampling(f"selected: {readings} on the same answers ({best['method']}); no held-out "
                                   "value", sample))


def _no_auxiliary_detail(load: Loader) -> Detail:
    detail = _row_detail("auxiliary_data", "agreement_by_setting", "method", "none (NA)")(load)
    integer = named_row(load("auxiliary_data", "tables45_vs_paper"), "method", "none (NA), integer",
                        "auxiliary_data/tables45_vs_paper")["pearson_pct"]
    as_integer = ("read as an integer, as the paper scores, every answer gets the same score and Pearson is "
                  "undefined" if pd.isna(integer) else f"read as an integer, as the paper scores: {fmt(integer)}%")
    return Detail(detail.n, detail.ci_low, detail.ci_high, f"expected score; {as_integer}")


def _best_auxiliary_detail(load: Loader) -> Detail:
    versus = load("auxiliary_data", "tables45_vs_paper")
    settings = load("auxiliary_data", "agreement_by_setting")
    best = named_row(versus, "method", "Auxiliary Data", "auxiliary_data/tables45_vs_paper")
    held = named_row(versus, "method", "Auxiliary Data, held out", "auxiliary_data/tables45_vs_paper")
    chosen = named_row(settings, "method", best["best_setting"], "auxiliary_data/agreement_by_setting")
    others = settings[settings["method"] != "none (NA)"]
    held_words = pages.unless_too_few(f"{fmt(held['pearson_pct'])}%", int(held["n"]),
                                      detail=f"{claim_readers.answers_per_half(held)} per held-out half")
    return Detail(float(chosen["n"]), float(chosen["pearson_ci_low"]), float(chosen["pearson_ci_high"]),
                  f"selected: the highest of {len(others)} settings ({best['best_setting']}) on the same answers; "
                  f"chosen on half of the users and measured on the other half: {held_words}")


def _held_out_detail(load: Loader) -> Detail:
    held = named_row(load("llm_ensembles", "table5_ours"), "method", "Multi-LLM & Auxiliary Data, held out",
                     "llm_ensembles/table5_ours")
    return Detail(float(held["n"]), note="mean over splits of the cell chosen on the other half of the users "
                       f"({claim_readers.splits(held['cell'])}); "
                       f"{claim_readers.answers_per_half(held)} answers per half")


def _strategy_detail(template: str) -> Callable[[Loader], Detail]:
    return _row_detail("prompt_strategies", "metrics", "template", template, ci="mae",
                       note="parsed replies only")


def _recommender_score_detail(load: Loader) -> Detail:
    table3 = load("recommender_reevaluation", "table3_latest-small")
    scored = table3[table3["recommender"] != "Random"].dropna(subset=["avg_score_mean"])
    best = scored.loc[scored["avg_score_mean"].idxmax()]
    per_fold = [int(users) for users in str(best["n_users"]).split("/")]
    low, high = _t_interval_over_folds(float(best["avg_score_mean"]), float(best["avg_score_std"]), len(per_fold))
    return Detail(n=sum(per_fold), ci_low=low, ci_high=high,
                  note=f"selected: the highest of {len(scored)} recommenders ({best['recommender']}), expected "
                       f"score on ml-latest-small; n: judged users ({len(per_fold)} folds), the interval a t interval "
                       "over the folds' means; the paper's is GPT-4o-mini's on ML-1M")


def _t_interval_over_folds(mean: float, sd: float, folds: int) -> tuple[float, float]:
    """The 95% t interval of a mean over ``folds`` fold values with standard deviation ``sd`` (NaN for one fold)."""
    from scipy import stats

    if folds < 2 or not math.isfinite(sd):
        return math.nan, math.nan
    if sd == 0:
        return mean, mean
    low, high = stats.t.interval(0.95, df=folds - 1, loc=mean, scale=sd / math.sqrt(folds))
    return float(low), float(high)


def _recommender_replies(load: Loader) -> tuple[int, int]:
    parsing = load("metamorphic_recommender", "reply_parsing")
    total = int(parsing["replies"].sum())
    return total - int(parsing["not_a_list"].sum()), total


def _labels_worth_detail(load: Loader) -> Detail:
    worth = load("trust_judges", "labels_worth")
    at_100 = worth[(worth["estimand"] == "mean serendipity") & (worth["n"] == 100)]
    best = at_100.loc[at_100["labels_worth"].idxmax()]
    return Detail(100.0, note=f"selected: the one worth the most labels of {len(at_100)} predictors "
                              f"({best['judge']}); 100 means no gain")


def _value(read: Callable[[Loader], float] | None, load: Loader | None) -> float:
    """The number, or NaN (shown as absent, never as 0) when there is nothing to read: no loader, a table the build
    did not write, or a row it has not (a reader's judge that scored too few answers for it)."""
    if read is None or load is None:
        return float("nan")
    try:
        return float(read(load))
    except (FileNotFoundError, KeyError):
        return float("nan")


def _column(chapter: str, table: str, column: str, key: str, value: object) -> Callable[[Loader], float]:
    return lambda load: named_row(load(chapter, table), key, value, f"{chapter}/{table}")[column]


def _best_pearson_row(load: Loader, methods: set[str]) -> pd.Series:
    """The row of the highest Pearson (%) with users among ``methods`` on the RQ1 chapter's sample."""
    sample = load("proxy_vs_llm", "agreement_sample")
    judged = sample[sample["method"].isin(methods)].dropna(subset=["pearson_pct"])
    if judged.empty:
        raise KeyError("proxy_vs_llm/agreement_sample: no Pearson of an LLM judge")
    return judged.loc[judged["pearson_pct"].idxmax()]


def _best_pearson(load: Loader, methods: set[str]) -> float:
    """The highest Pearson (%) with users among ``methods`` on the RQ1 chapter's sample."""
    return float(_best_pearson_row(load, methods)["pearson_pct"])


def _pearson_detail(row: pd.Series) -> Detail:
    """n and the 95% interval of the Pearson of a row of an agreement table."""
    return Detail(float(row["n"]), float(row["pearson_ci_low"]), float(row["pearson_ci_high"]))


def _best_llm_judge_name(load: Loader) -> str:
    """The model (and prompt) of ``_best_llm_judge``."""
    return str(_best_pearson_row(load, set(load("proxy_vs_llm", "judge_runs")["method"]))["method"])


def _best_llm_judge(load: Loader) -> float:
    """The highest Pearson (%) with users of the LLM judges the RQ1 chapter asked (named in its judge_runs table,
    whatever judges those were), on its sample."""
    return _best_pearson(load, set(load("proxy_vs_llm", "judge_runs")["method"]))


def _your_best_llm_judge_row(load: Loader, judge: JudgeSpec) -> pd.Series:
    """The row of the highest Pearson (%) with users of the reader's judge over the RQ1 prompts (its runs in
    judge_runs)."""
    runs = load("proxy_vs_llm", "judge_runs")
    return _best_pearson_row(load, set(runs.loc[runs["judge"].str.startswith(f"{claims.asks_as(judge)}/"), "method"]))


def _your_best_llm_judge(load: Loader, judge: JudgeSpec) -> float:
    return float(_your_best_llm_judge_row(load, judge)["pearson_pct"])


def _your_settings(load: Loader, judge: JudgeSpec) -> pd.DataFrame:
    table = load("auxiliary_data", "agreement_by_setting")
    return table[table["judge"] == judge.display_label]


def _your_setting_row(load: Loader, judge: JudgeSpec, setting: str) -> pd.Series:
    return named_row(_your_settings(load, judge), "method", setting,
                     f"auxiliary_data/agreement_by_setting ({judge.display_label})")


def _your_setting(setting: str) -> ReaderNumber:
    return lambda load, judge: _your_setting_row(load, judge, setting)["pearson_pct"]


def _your_best_auxiliary_row(load: Loader, judge: JudgeSpec) -> pd.Series:
    """The reader's judge's "Auxiliary Data" (Tables 4-5): its row of the highest Pearson among the settings other
    than NA, chosen on the answers it is reported on, as the chapter chooses the book's judge's."""
    others = _your_settings(load, judge).query("method != 'none (NA)'").dropna(subset=["pearson_pct"])
    if others.empty:
        raise KeyError(f"auxiliary_data/agreement_by_setting: no Pearson of {judge.display_label} with auxiliary data")
    return others.loc[others["pearson_pct"].idxmax()]


def _your_best_auxiliary_data(load: Loader, judge: JudgeSpec) -> float:
    return float(_your_best_auxiliary_row(load, judge)["pearson_pct"])


def _your_strategy_detail(template: str) -> ReaderDetail:
    """n and the 95% interval of the reader's judge's MAE with ``template`` (its rows of the chapter's metrics)."""
    def read(load: Loader, judge: JudgeSpec) -> Detail:
        metrics = load("prompt_strategies", "metrics")
        row = named_row(metrics[metrics["judge"] == judge.display_label], "template", template,
                        f"prompt_strategies/metrics ({judge.display_label})")
        return Detail(float(row["n"]), float(row["mae_ci_low"]), float(row["mae_ci_high"]))
    return read


def _if_in_your_pool(read: Callable[[Loader], T]) -> Callable[[Loader, JudgeSpec], T]:
    """``read`` (a number of a variant's RQ3 tables, computed over a pool of judges) when the reader's judge is in
    that pool (a judge of the pool on its own, in every_ensemble, is named "<label> <its prompt>"); KeyError
    otherwise (a judge without log-probabilities, for one, is left out of the ensembles)."""
    def yours(load: Loader, judge: JudgeSpec) -> T:
        ensembles = load("llm_ensembles", "every_ensemble")
        alone = ensembles.loc[ensembles["n"] == 1, "members"].astype(str)
        if not alone.str.startswith(f"{judge.display_label} ").any():
            raise KeyError(f"llm_ensembles/every_ensemble: {judge.display_label} is not in the pool")
        return read(load)
    return yours


_RQ3_HELD_OUT = _column("llm_ensembles", "table5_ours", "pearson_pct", "method", "Multi-LLM & Auxiliary Data, held out")


def _best_llm_printed(load: Loader) -> float:
    paper = load("proxy_vs_llm", "paper_table2")
    return float(paper[paper["family"].isin(_LLM_FAMILIES)]["pearson_pct"].max())


def _best_recommender_score(load: Loader, judge_name: str | None = None) -> float:
    """The highest mean score of a recommender other than Random on latest-small (``judge_name``: that judge's
    rows only, as the chapter names it in its ``judge`` column; None: the one judge of the committed book)."""
    table3 = load("recommender_reevaluation", "table3_latest-small")
    if judge_name is not None:
        table3 = table3[table3["judge"] == judge_name]
    scores = table3[table3["recommender"] != "Random"]["avg_score_mean"].dropna()
    if scores.empty:
        raise KeyError(f"recommender_reevaluation/table3_latest-small: no mean score of {judge_name or 'a judge'}")
    return float(scores.max())


def _ratio(counts: tuple[int, int]) -> float:
    part, whole = counts
    if whole == 0:
        raise KeyError("no replies")
    return part / whole


def _best_recommender_printed(load: Loader) -> float:
    """The highest Avg. Score@20 the paper prints on ML-1M (its Table 3)."""
    paper = load("recommender_reevaluation", "paper_table3_ml1m")
    return float(paper[paper["dataset"] == "ML-1M"]["avg_score"].max())


def _share_of(frame: pd.DataFrame, part: str, whole: str, where: str) -> float:
    """100 × (1 − sum of ``part`` / sum of ``whole``): the share of replies that were usable."""
    total = float(frame[whole].sum())
    if total == 0:
        raise KeyError(f"{where}: no {whole}")
    return 100 * (1 - float(frame[part].sum()) / total)


def _your_evaluators_share(load: Loader, judge: JudgeSpec) -> float:
    runs = load("explanation_evaluators", "llm_runs")
    return _share_of(runs[runs["model"] == claims.asks_as(judge)], "n_unparsable", "n_replies",
                     f"explanation_evaluators/llm_runs ({judge.display_label})")


def _your_evaluator_replies(load: Loader, judge: JudgeSpec) -> tuple[int, int]:
    """(replies that held a score, replies) of the reader's judge's evaluator runs."""
    runs = load("explanation_evaluators", "llm_runs")
    mine = runs[runs["model"] == claims.asks_as(judge)]
    return int(mine["n_replies"].sum()) - int(mine["n_unparsable"].sum()), int(mine["n_replies"].sum())


def _your_recommender_share(load: Loader, judge: JudgeSpec) -> float:
    parsing = load("metamorphic_recommender", "reader_reply_parsing")
    return _share_of(parsing[parsing["recommender"] == judge.display_label], "not_a_list", "replies",
                     f"metamorphic_recommender/reader_reply_parsing ({judge.display_label})")


def _your_recommender_replies(load: Loader, judge: JudgeSpec) -> tuple[int, int]:
    """(replies that are a list of titles, replies) of the reader's judge as the LLM recommender."""
    parsing = load("metamorphic_recommender", "reader_reply_parsing")
    mine = parsing[parsing["recommender"] == judge.display_label]
    return int(mine["replies"].sum()) - int(mine["not_a_list"].sum()), int(mine["replies"].sum())


def _labels_worth_judge(load: Loader) -> str:
    """The judge (or proxy) of ``_labels_worth_at_100``."""
    worth = load("trust_judges", "labels_worth")
    at_100 = worth[(worth["estimand"] == "mean serendipity") & (worth["n"] == 100)]
    if at_100.empty:
        raise KeyError("trust_judges/labels_worth: no row for the mean at n = 100")
    return str(at_100.loc[at_100["labels_worth"].idxmax(), "judge"])


def _labels_worth_at_100(load: Loader, judge_prefix: str | None = None) -> float:
    """The most human labels a judge is worth beside 100 labels for the mean (``judge_prefix``: among the judges
    so named only; the trust chapter names a reader's judge "<label> <its RQ1 role>")."""
    worth = load("trust_judges", "labels_worth")
    at_100 = worth[(worth["estimand"] == "mean serendipity") & (worth["n"] == 100)]
    if judge_prefix is not None:
        at_100 = at_100[at_100["judge"].str.startswith(judge_prefix)]
    if at_100.empty:
        raise KeyError(f"trust_judges/labels_worth: no row of {judge_prefix or 'a judge'} for the mean at n = 100")
    return float(at_100["labels_worth"].max())


#: The judge of Kang et al.'s Tables 4-5, whose numbers the RQ2 rows print beside the book's.
KANG_RQ2_JUDGE = "Qwen2.5-14B few-shot"

HEADLINES = (
    Headline("Kang et al. 2025, RQ1", "Pearson (%) of the SOG proxy with users, all answers",
             _column("proxy_vs_llm", "agreement_all_answers", "pearson_pct", "method", "SOG"),
             _column("proxy_vs_llm", "paper_table2", "pearson_pct", "method", "SOG"),
             detail=_row_detail("proxy_vs_llm", "agreement_all_answers", "method", "SOG"),
             model="no LLM: the SOG proxy"),
    Headline("Kang et al. 2025, RQ1", "Pearson (%) of the best LLM judge with users (the chapter's sample; paper: "
             "the best LLM of its Table 2, GPT-4 few-shot, on all answers)", _best_llm_judge, _best_llm_printed,
             _your_best_llm_judge, detail=_best_judge_detail, model=_best_llm_judge_name,
             your_detail=lambda load, judge: _pearson_detail(_your_best_llm_judge_row(load, judge))),
    Headline("Kang et al. 2025, RQ2", f"Pearson (%) of the judge without auxiliary data (paper: {KANG_RQ2_JUDGE})",
             _column("auxiliary_data", "tables45_vs_paper", "pearson_pct", "method", "none (NA)"),
             _column("auxiliary_data", "tables45_vs_paper", "paper_pearson_pct", "method", "none (NA)"),
             _your_setting("none (NA)"), detail=_no_auxiliary_detail,
             your_detail=lambda load, judge: _pearson_detail(_your_setting_row(load, judge, "none (NA)"))),
    Headline("Kang et al. 2025, RQ2", "Pearson (%) with the best auxiliary data (selected in sample; paper: "
             f"{KANG_RQ2_JUDGE})",
             _column("auxiliary_data", "tables45_vs_paper", "pearson_pct", "method", "Auxiliary Data"),
             _column("auxiliary_data", "tables45_vs_paper", "paper_pearson_pct", "method", "Auxiliary Data"),
             _your_best_auxiliary_data, detail=_best_auxiliary_detail,
             your_detail=lambda load, judge: _pearson_detail(_your_best_auxiliary_row(load, judge))),
    Headline("Kang et al. 2025, RQ3", "Pearson (%) of the ensemble with auxiliary data, on held-out users",
             _RQ3_HELD_OUT, yours=_if_in_your_pool(_RQ3_HELD_OUT), detail=_held_out_detail,
             your_detail=_if_in_your_pool(_held_out_detail)),
    *(Headline("Tokutake et al. 2025", f"MAE of the {template} prompt (paper: GPT-4o-mini)",
               _column("prompt_strategies", "table1_vs_paper", "mae_ours", "template", template),
               _column("prompt_strategies", "table1_vs_paper", "mae_gpt", "template", template),
               lambda load, judge, template=template: _column(
                   "prompt_strategies", "table1_vs_paper", f"mae_{judge.display_label}", "template", template)(load),
               detail=_strategy_detail(template), your_detail=_your_strategy_detail(template))
      for template in claim_readers.STRATEGIES),
    Headline("Tokutake et al. 2025, re-evaluation", "Highest mean serendipity score of a recommender (1–5)",
             _best_recommender_score, _best_recommender_printed,
             yours=lambda load, judge: _best_recommender_score(load, judge.display_label),
             detail=_recommender_score_detail),
    Headline("Zhang et al. 2024", "Replies of the LLM evaluators that held a score (%; every run)",
             lambda load: 100 * _ratio(claim_readers.evaluator_replies(load)), yours=_your_evaluators_share,
             detail=_share_detail(claim_readers.evaluator_replies, "Wilson interval"),
             your_detail=lambda load, judge: _wilson(*_your_evaluator_replies(load, judge))),
    Headline("Khirbat et al. 2024", "Replies of the LLM recommender that are a list of titles (%)",
             lambda load: 100 * _ratio(_recommender_replies(load)), yours=_your_recommender_share,
             detail=_share_detail(_recommender_replies, "Wilson interval"),
             your_detail=lambda load, judge: _wilson(*_your_recommender_replies(load, judge))),
    Headline("Beyond the papers: part V", "Human labels that 100 labels and the predictor worth the most labels "
             "are worth (PPI++)", _labels_worth_at_100, model=_labels_worth_judge,
             yours=lambda load, judge: _labels_worth_at_100(load, f"{judge.display_label} "),
             detail=_labels_worth_detail,
             your_detail=lambda load, judge: Detail(100.0)),
)


def your_judge_column(judge: JudgeSpec) -> str:
    """The headline table's column of a reader's judge: its label, the name the chapters' tables give it."""
    return judge.display_label


def interval_columns(column: str) -> tuple[str, str, str]:
    """The columns of the n and 95% interval of a reader's judge's (or the variant's) number ``column``."""
    return f"{column}_n", f"{column}_ci_low", f"{column}_ci_high"


def _interval_values(column: str, detail: Detail) -> dict[str, float]:
    return dict(zip(interval_columns(column), (detail.n, detail.ci_low, detail.ci_high)))


def headline_model(headline: Headline, load: Loader) -> str:
    """The model the book's number of ``headline`` comes from (its ``model`` column, beside the label): read from
    the tables when a rule chose it, "this book's judge" when its table is missing."""
    try:
        model = headline.model(load) if callable(headline.model) else headline.model
    except (KeyError, FileNotFoundError, ValueError):
        model = "this book's judge (its table is missing)"
    return model


def headlines(default: Loader, variant: Loader | None = None, judges: Sequence[JudgeSpec] = ()) -> pd.DataFrame:
    """One row per headline number (``HEADLINES``): the paper's (from the default build's copy of its table) and the
    default build's; in a variant (``variant``: its tables), one column per reader's judge of ``judges``
    (``your_judge_column``) with that judge's own number, or without judges (a scale profile alone)
    ``this_variant``, the variant's build of the same rows; each such column is followed by its n and 95% interval
    (``interval_columns``), read as the book's are. A number a build does not have is NaN, shown as absent."""
    if variant is None and judges:
        raise ValueError("headlines: a reader's judges' numbers are read from a variant's tables; none given")
    beside = [your_judge_column(judge) for judge in judges] if judges else [THIS_VARIANT] if variant else []
    columns = [*HEADLINE_COLUMNS, *(name for column in beside for name in (column, *interval_columns(column)))]
    clashing = sorted(set(HEADLINE_COLUMNS) & set(columns[len(HEADLINE_COLUMNS):]))
    if clashing:
        raise ValueError(f"headlines: a reader's judge is labelled {clashing}, a column of the table; relabel it")
    rows = []
    for headline in HEADLINES:
        detail = _detail(headline.detail, default)
        row = {"paper": headline.paper, "number": headline.number, "model": headline_model(headline, default),
               "paper_value": _value(headline.printed, default), "default_judge": _value(headline.ours, default),
               "n": detail.n, "ci_low": detail.ci_low, "ci_high": detail.ci_high, "note": detail.note}
        for judge in judges:
            column = your_judge_column(judge)
            row[column] = _value(headline.yours and partial(headline.yours, judge=judge), variant)
            row.update(_interval_values(column, _detail(headline.your_detail and partial(headline.your_detail,
                                                                                         judge=judge), variant)))
        if variant is not None and not judges:
            row[THIS_VARIANT] = _value(headline.ours, variant)
            row.update(_interval_values(THIS_VARIANT, _detail(headline.detail, variant)))
        rows.append(row)
    frame = pd.DataFrame(rows, columns=columns)
    counts = ["n", *(interval_columns(column)[0] for column in beside)]
    return frame.astype({column: "Int64" for column in counts})  # n is a count, never 5.5


def headline_labels(judges: Sequence[JudgeSpec] = ()) -> dict[str, str]:
    """Column headers of the headline table (``headlines``): the committed book's numbers, then each reader's
    judge's, or the variant's build."""
    return {"paper": "Paper", "number": "Number", "model": "Model (this book)",
            "paper_value": "Paper's value", "default_judge": "This book [95% CI]",
            "n": "n", "note": "How chosen or read",
            THIS_VARIANT: "This variant [95% CI]", f"{THIS_VARIANT}_n": "n (this variant)",
            **{your_judge_column(judge): f"Your judge: {judge.display_label} [95% CI]" for judge in judges},
            **{interval_columns(your_judge_column(judge))[0]: f"n ({judge.display_label})" for judge in judges}}


def _decimals(n: float, number: str) -> int:
    """Precision follows n: a percentage gets one decimal from 100 answers on and none below; a score or error on
    the 1–5 scale two decimals from 100 on and one below; a count of labels none."""
    many = pd.notna(n) and n >= 100
    if "labels" in number:
        return 0
    return (1 if many else 0) if "%" in number else (2 if many else 1)


def _count(n: float) -> str:
    """n as the page shows it: a count."""
    return "–" if pd.isna(n) else f"{int(n):,}"


def _shown_number(value: float, n: float, low: float, high: float, number: str) -> str:
    """A number with its interval at the precision its n allows; "too few answers (n)" below ``MIN_ANSWERS``."""
    if pages.too_few(n):
        return pages.too_few_text(n)
    if pd.isna(value):
        return "–"
    return with_interval(value, low, high, _decimals(n, number))


def headlines_shown(frame: pd.DataFrame) -> pd.DataFrame:
    """The headline table as the page shows it: each build's or judge's number with its interval in one cell, at the
    precision its n allows (or "too few answers (n)" below ``MIN_ANSWERS``), n as a count, and the paper's value as
    printed."""
    beside = [column for column in frame.columns[len(HEADLINE_COLUMNS):] if f"{column}_n" in frame.columns]
    rows = []
    for row in frame.to_dict("records"):
        shown = {"paper": row["paper"], "number": row["number"], "model": row["model"],
                 "paper_value": "–" if pd.isna(row["paper_value"]) else fmt(row["paper_value"], 3 if "MAE" in
                                                                            row["number"] else 2),
                 "default_judge": _shown_number(row["default_judge"], row["n"], row["ci_low"], row["ci_high"],
                                                row["number"]),
                 "n": _count(row["n"]), "note": row["note"] or "–"}
        for column in beside:
            n, low, high = (row[name] for name in interval_columns(column))
            shown[column] = _shown_number(row[column], n, low, high, row["number"])
            shown[f"{column}_n"] = _count(n)
        rows.append(shown)
    hidden = {"ci_low", "ci_high", *(name for column in beside for name in interval_columns(column)[1:])}
    return pd.DataFrame(rows, columns=[c for c in frame.columns if c not in hidden])
