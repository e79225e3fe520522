"""The at-a-glance page: one row per paper and research question, every number read from the chapters' result tables.

Each row has a builder that takes a table loader (``load(chapter, table) -> DataFrame``, by default
:func:`recjudge.compendium.results.load_table`) and selects every number it states **by name** (a method, a run,
a rank), never by the position of a row, so that a reordered table cannot put another number in its place. A
sentence that states a comparison ("more", "below", "no item") is chosen by the computation. A row whose tables are
missing says "not run in this build" and names the missing table instead of disappearing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

import pandas as pd

from recjudge.compendium.pages import fmt
from recjudge.compendium.results import load_table
from recjudge.llm.judge_spec import JudgeSpec

Loader = Callable[[str, str], pd.DataFrame]
COLUMNS = ["paper", "question", "here", "reproduced", "not_reproduced"]
NOT_RUN = "not run in this build"
#: The proxies of Kang et al.'s Table 2.
KANG_PROXIES = ("SOG", "SNPR", "PURS", "DESR")
#: |Pearson| below this (in %) is called weak agreement.
WEAK_PEARSON_PCT = 20.0


def named_row(table: pd.DataFrame, column: str, value: object, table_name: str) -> pd.Series:
    """The one row of ``table`` whose ``column`` equals ``value``; KeyError naming the table when there is none or
    more than one."""
    found = table[table[column] == value]
    if len(found) != 1:
        raise KeyError(f"{table_name}: expected one row with {column} = {value!r}, found {len(found)}")
    return found.iloc[0]


@dataclass(frozen=True)
class GlanceRow:
    paper: str
    question: str
    build: Callable[[Loader], dict[str, str]]

    def row(self, load: Loader) -> dict[str, str]:
        try:
            found = self.build(load)
        except FileNotFoundError as missing:
            found = {"here": NOT_RUN, "reproduced": "–", "not_reproduced": f"{NOT_RUN}: {missing}"}
        return {"paper": self.paper, "question": self.question, **found}


def kang_proxy_pearson(load: Loader) -> dict[str, float]:
    """Our Pearson (%) of each of Kang et al.'s proxies on all answers, by name."""
    agreement = load("proxy_vs_llm", "agreement_all_answers")
    return {name: float(named_row(agreement, "method", name, "proxy_vs_llm/agreement_all_answers")["pearson_pct"])
            for name in KANG_PROXIES}


def kang_rq1(load: Loader) -> dict[str, str]:
    agreement = load("proxy_vs_llm", "agreement_all_answers")
    paper = load("proxy_vs_llm", "paper_table2")
    sample = load("proxy_vs_llm", "agreement_sample")

    def ours(method: str) -> pd.Series:
        return named_row(agreement, "method", method, "proxy_vs_llm/agreement_all_answers")

    def printed(method: str) -> float:
        return float(named_row(paper, "method", method, "proxy_vs_llm/paper_table2")["pearson_pct"])

    sog, rnd, gpt = ours("SOG"), ours("Random"), ours("gpt-3.5-turbo (recorded)")
    proxies_ours = [abs(value) for value in kang_proxy_pearson(load).values()]
    proxies_paper = [abs(printed(name)) for name in KANG_PROXIES]
    weak_ours, weak_paper = max(proxies_ours) < WEAK_PEARSON_PCT, max(proxies_paper) < WEAK_PEARSON_PCT
    agreement_words = {
        (True, True): "the proxies agree weakly with users here as in the paper",
        (True, False): "the proxies agree weakly with users here, unlike the paper",
        (False, True): "some proxy agrees with users more than weakly here, unlike the paper",
        (False, False): "some proxy agrees with users more than weakly, here as in the paper",
    }[(weak_ours, weak_paper)]
    sample_n = int(named_row(sample, "method", "Random", "proxy_vs_llm/agreement_sample")["n"])
    return {
        "here": f"Serendipity-2018 ({int(sog['n']):,} answers; histories from the survey itself), proxies, Random "
                f"over {int(rnd['seeds']):,} seeds, recorded gpt-3.5-turbo, SmolLM2-135M on {sample_n} answers",
        "reproduced": f"{agreement_words} (every |Pearson| of {', '.join(KANG_PROXIES)} "
                      f"{'below' if weak_ours else 'not below'} {WEAK_PEARSON_PCT:.0f}%): SOG "
                      f"{fmt(sog['pearson_pct'])}% (paper {fmt(printed('SOG'), 2)}%), Random "
                      f"{fmt(rnd['pearson_pct'])}% "
                      f"(paper {fmt(printed('Random'), 2)}%)",
        "not_reproduced": f"LLMs beating proxies (paper: GPT-4 few-shot {fmt(printed('GPT-4 (few-shot)'), 2)}%): no "
                          f"capable LLM offline; recorded gpt-3.5-turbo is {fmt(gpt['pearson_pct'])}% "
                          f"[{fmt(gpt['pearson_ci_low'])}, {fmt(gpt['pearson_ci_high'])}] with another prompt",
    }


def kang_rq2_rq3(load: Loader) -> dict[str, str]:
    settings = load("auxiliary_data", "agreement_by_setting")
    fit = load("auxiliary_data", "taobao_fit")
    table5 = load("llm_ensembles", "table5_ours")
    none = named_row(settings, "method", "none (NA)", "auxiliary_data/agreement_by_setting")
    others = settings[settings["method"] != "none (NA)"]
    significant = int((others["p_pearson_vs_ref"] < 0.05).sum())

    def fitted(model: str) -> pd.Series:
        return named_row(fit[fit["kind"] == "OLS"], "model", model, "auxiliary_data/taobao_fit (OLS)")

    curiosity, big_five = float(fitted("curiosity")["explained"]), float(fitted("big_five")["explained"])
    best = named_row(table5, "method", "Auxiliary Data", "llm_ensembles/table5_ours")
    held = named_row(table5, "method", "Multi-LLM & Auxiliary Data, held out", "llm_ensembles/table5_ours")
    held_none = named_row(table5, "method", "none (NA), same held-out halves", "llm_ensembles/table5_ours")
    sizes = load("llm_ensembles", "by_ensemble_size")
    singles = sizes[(sizes["family"] == "LLM judges") & (sizes["n"] == 1) & (sizes["metric"] == "pearson_pct")]
    if len(singles) != 1:
        raise KeyError("llm_ensembles/by_ensemble_size: expected one row of single LLM judges (Pearson)")
    n_judges = int(singles["n_ensembles"].iloc[0])
    return {
        "here": f"{len(others)} auxiliary-data settings beside no auxiliary data on {int(none['n'])} Serendipity-2018 "
                f"answers (SmolLM2-135M, 5-shot); every subset of {n_judges} LLM judges; beside them, a different "
                "question "
                "from Kang's Figure 1 (traits as regressors, not trait text in a prompt): on Taobao's "
                f"{int(fitted('curiosity')['n']):,} users curiosity "
                f"explains {'more' if curiosity > big_five else 'no more'} of the serendipity ratings than the "
                f"Big-Five (OLS R² {fmt(curiosity, 3)} vs {fmt(big_five, 3)})",
        "reproduced": "– (with the tiny judge no claim of RQ2–RQ3 can be tested)",
        "not_reproduced": f"the gains from auxiliary data and ensembles: {significant} of {len(others)} settings "
                          "differ from none at p < 0.05; the best in-sample cell "
                          f"({best['cell']}: {fmt(best['pearson_pct'])}% on n = {int(best['n'])}, chosen on the same "
                          f"answers) gives {fmt(held['pearson_pct'])}% on held-out users (no auxiliary data on the "
                          f"same halves: {fmt(held_none['pearson_pct'])}%)",
    }


def tokutake_strategies(load: Loader) -> dict[str, str]:
    metrics = load("prompt_strategies", "metrics")
    paper = load("prompt_strategies", "paper_table1")
    search = load("prompt_strategies", "ground_truth_search")
    closest = named_row(search, "rank", 1, "prompt_strategies/ground_truth_search")
    paper_best = named_row(paper, "mae_gpt", paper["mae_gpt"].min(), "prompt_strategies/paper_table1")
    parsed = metrics[metrics["n"] > 0]
    unparsed = metrics[metrics["n"] == 0]["template"].tolist()
    mae_range = (f"from {fmt(parsed['mae'].min(), 2)} to {fmt(parsed['mae'].max(), 2)} on a handful of parsed "
                 "replies" if len(parsed) else "undefined: no reply parsed")
    no_reply = f"; no {' or '.join(unparsed)} reply held a score" if unparsed else ""
    return {
        "here": f"Base, LS, CoT and LtM (10-shot, reconstructed) with SmolLM2-135M on "
                f"{int((metrics['n'] + metrics['n_unparsable']).max())} Serendipity-2018 answers; {len(search):,} "
                "readings of the ground truth searched",
        "reproduced": f"no reading of the ground truth gives the paper's distribution exactly (closest: "
                      f"{int(closest['distance'])} answers off)",
        "not_reproduced": f"the ranking of the strategies (the paper's best: {paper_best['template']}): the tiny "
                          f"model's MAE ranges {mae_range}{no_reply} (paper, GPT-4o-mini: "
                          f"{fmt(paper['mae_gpt'].min(), 3)} to {fmt(paper['mae_gpt'].max(), 3)})",
    }


def tokutake_reevaluation(load: Loader) -> dict[str, str]:
    versus = load("recommender_reevaluation", "vs_random_latest-small")
    table3 = load("recommender_reevaluation", "table3_latest-small")
    cost = load("recommender_reevaluation", "judge_cost_latest-small")
    cost_name = "recommender_reevaluation/judge_cost_latest-small"
    judged = named_row(cost, "run", "this chapter (judged users)", cost_name)
    everyone = named_row(cost, "run", "all test users, every recommender", cost_name)
    integer = load("recommender_reevaluation", "table3_integer_latest-small")
    order_1m = named_row(load("recommender_reevaluation", "order_vs_paper_1m"), "metric", "n_acc",
                         "recommender_reevaluation/order_vs_paper_1m")
    versus_1m = load("recommender_reevaluation", "vs_random_1m")
    non_random = table3[table3["recommender"] != "Random"]
    integer_non_random = integer[integer["recommender"] != "Random"]
    top_precision = float(integer_non_random["precision_ser_mean"].max())
    ranking = ("read as the paper's judge answers (its most likely score, an integer), the tiny judge scores no item "
               "4 or more (Precision_ser 0 for all)" if top_precision == 0 else
               f"read as integers, Precision_ser reaches {fmt(100 * top_precision, 1)}% at most")
    return {
        "here": f"{len(non_random)} recommenders on ml-latest-small, global temporal split, three folds "
                f"({int(versus['n_users'].max())} test users); SmolLM2-135M judged {int(judged['judgments'])} "
                f"(user, item) pairs of {int(judged['users'])} test users",
        "reproduced": f"the protocol and metrics; {int((versus['recall10_p'] < 0.05).sum())} of {len(versus)} "
                      "recommenders beat Random on Recall@10 (p < 0.05); on ML-1M, trained here for the accuracy "
                      f"half, {int((versus_1m['recall10_p'] < 0.05).sum())} of {len(versus_1m)} do, and the paper's "
                      f"six come in an order with Kendall's τ {fmt(order_1m['tau'], 2)} against the paper's "
                      "(NDCG_acc@20)",
        "not_reproduced": f"the serendipity ranking: {ranking}; Avg. score (expected) "
                          f"{fmt(non_random['avg_score_mean'].min(), 2)}–{fmt(non_random['avg_score_mean'].max(), 2)}"
                          "; judging every test user with GPT-4o-mini would cost about "
                          f"${fmt(everyone['gpt4o_mini_usd'], 2)}",
    }


def zhang_explanations(load: Loader) -> dict[str, str]:
    gaps = load("explanation_evaluators", "table1_agreement_by_row")
    runs = load("explanation_evaluators", "llm_runs")
    overview = load("explanation_evaluators", "data_overview")
    gaps_name = "explanation_evaluators/table1_agreement_by_row"
    texts = named_row(overview, "quantity", "rated explanations", "explanation_evaluators/data_overview")["value"]
    annotators = gaps[gaps["evaluator"].isin(["Annotator-1", "Annotator-2", "Average"])]
    close = max(float(named_row(gaps, "evaluator", name, gaps_name)["mean_abs_difference"])
                for name in ("BLEU-1", "ROUGE-1-F", "ROUGE-L-F"))
    bleu4 = float(named_row(gaps, "evaluator", "BLEU-4", gaps_name)["mean_abs_difference"])
    statements = load("explanation_evaluators", "authors_prompt_statements")
    aspect_of = dict(zip(statements["questionnaire_statement"], statements["aspect"]))
    wrong = statements[~statements["asks_its_aspect"].astype(bool)]
    slip = "".join(f" (their multiple-aspect {row['line']} line states {aspect_of.get(row['statement_asked'], 'no')} "
                   f"instead of {row['aspect']})" for _, row in wrong.iterrows())
    return {
        "here": f"the full study of Lu et al. ({int(texts):,} texts) for the reference rows; SmolLM2-135M on "
                f"{int(runs['n_texts'].max())} texts, with our reconstructed prompts and with the authors' own"
                f"{slip}",
        "reproduced": f"annotator rows: all {int(annotators['cells'].sum())} cells within "
                      f"{fmt(annotators['max_abs_difference'].max(), 3)} points; BLEU-1 and ROUGE within "
                      f"{fmt(close, 1)} points on average",
        "not_reproduced": f"BLEU-4 (mean gap {fmt(bleu4, 1)} points; the paper's tokenisation is unknown); the LLM "
                          "rows (no capable LLM offline)",
    }


def lima_surprise(load: Loader) -> dict[str, str]:
    ordering = load("normalised_surprise", "ordering_check")
    holding = int(ordering["holds_on_means"].sum())
    return {
        "here": "ml-latest-small (embedded sample), item models C, P, U, N, exact and greedy limits",
        "reproduced": f"the ordering MSI ≥ kNN ≥ LSI holds on the means in {holding} of {len(ordering)} "
                      "model × distance comparisons",
        "not_reproduced": "the magnitudes of Table 2 (other dataset: MovieLens-1M with descriptions is not "
                          "available; fewer users per time frame)",
    }


def khirbat_metamorphic(load: Loader) -> dict[str, str]:
    parsing = load("metamorphic_recommender", "reply_parsing")
    robust = pd.concat([load("judge_robustness", f"robustness_{judge}")
                        for judge in ("kang_basic", "tokutake_cot", "explanation_zhang")], ignore_index=True)
    kang = robust[robust["judge"] == "Kang basic"]
    if kang.empty:
        raise KeyError("judge_robustness/robustness_kang_basic: no rows of the judge 'Kang basic'")
    changed = kang["share_changed"].dropna()
    moves = (f"the Kang basic judge changes {fmt(100 * changed.min(), 0)}–{fmt(100 * changed.max(), 0)}% of its "
             "scores under relations that should not matter" if changed.max() > 0 else
             "the Kang basic judge changes none of its scores under these relations")
    if "data" in robust.columns:
        per_judge = robust.drop_duplicates("judge")
        on = " (" + "; ".join(f"{judge} on {data}" for judge, data in zip(per_judge["judge"], per_judge["data"])) + ")"
    else:
        on = ""
    return {
        "here": f"the paper's prompt and relations with SmolLM2-135M ({int(parsing['replies'].sum())} replies); "
                f"{robust['relation'].nunique()} relations applied to {robust['judge'].nunique()} of this book's "
                f"judges{on}",
        "reproduced": f"the measures (Kendall τ variants, overlap, rank-biased overlap with ties) and the study "
                      f"design; {moves}",
        "not_reproduced": f"Tables 2–4: {int(parsing['not_a_list'].sum())} of {int(parsing['replies'].sum())} "
                          "replies of the tiny model are not a list of titles, so list similarity is 0 or undefined",
    }


def trust_worth(load: Loader) -> dict[str, str]:
    worth = load("trust_judges", "labels_worth")
    errors = load("trust_judges", "calibration_errors")
    paper_best = named_row(load("trust_judges", "paper_best_judge_worth"), "labels", 1000,
                           "trust_judges/paper_best_judge_worth")
    at_100 = worth[(worth["estimand"] == "mean serendipity") & (worth["n"] == 100)]
    if at_100.empty:
        raise KeyError("trust_judges/labels_worth: no row for the mean at n = 100")
    best = at_100.loc[at_100["labels_worth"].idxmax()]
    mae = errors.pivot_table(index="judge", columns="reading", values="mae")
    for reading in ("calibrated (isotonic)", "constant answer"):
        if reading not in mae.columns:
            raise KeyError(f"trust_judges/calibration_errors: no rows of the reading {reading!r}")
    better = mae.index[mae["constant answer"] - mae["calibrated (isotonic)"] > 0.005].tolist()
    return {
        "here": f"calibration, prediction-powered inference (PPI++) and audits of {len(at_100)} judges on "
                f"Serendipity-2018 ({int(at_100['population'].max()):,} answers)",
        "reproduced": f"(a question beyond the papers) with 100 human labels, the best judge here ({best['judge']}) is "
                      f"worth {best['labels_worth']:.0f} labels; calibrated, "
                      + (f"{', '.join(better)} beat{'s' if len(better) == 1 else ''} a constant answer's MAE on "
                         "the same answers by more than 0.005" if better else
                         "no judge beats a constant answer's MAE on the same answers by more than 0.005"),
        "not_reproduced": f"no capable LLM was run: the papers' best reported judge ({paper_best['paper_judge']}, "
                          f"Pearson {fmt(paper_best['pearson_pct'], 2)}%) would be worth "
                          f"{paper_best['labels_worth_by_rho2']:,.0f} labels per 1,000 by the ρ² rule",
    }


ROWS = (
    GlanceRow("Kang et al. 2025, RQ1", "Do LLM judges track users' serendipity ratings better than proxy metrics?",
              kang_rq1),
    GlanceRow("Kang et al. 2025, RQ2–RQ3",
              "Does auxiliary data in the prompt, or averaging several LLMs, make the judge better?", kang_rq2_rq3),
    GlanceRow("Tokutake et al. 2025", "Which prompt strategy makes the best serendipity judge?", tokutake_strategies),
    GlanceRow("Tokutake et al. 2025, re-evaluation",
              "How do recommenders rank when an LLM judge scores the serendipity of their lists?",
              tokutake_reevaluation),
    GlanceRow("Zhang et al. 2024",
              "Can LLMs evaluate recommendation explanations as users would (3-level meta-evaluation)?",
              zhang_explanations),
    GlanceRow("Lima & Peres",
              "How far can a recommender's surprise go, and does normalised surprise order MSI ≥ kNN ≥ LSI?",
              lima_surprise),
    GlanceRow("Khirbat et al. 2024",
              "Is an LLM recommender robust to semantics-preserving changes of its prompt (metamorphic testing)? "
              "And this book's own judges?", khirbat_metamorphic),
    GlanceRow("Beyond the papers: part V", "What is an LLM judge worth in human labels, and can its number be "
              "trusted?", trust_worth),
)


def findings(load: Loader = load_table) -> pd.DataFrame:
    """The page's table: one row per paper and question (columns ``COLUMNS``)."""
    return pd.DataFrame([row.row(load) for row in ROWS], columns=COLUMNS)


# ---------------------------------------------------------------------------------------------- headline numbers
#: The headline numbers: the paper's and the committed book's (the book's own judges); in a variant, one more column
#: per reader's judge (named by its label: ``your_judge_column``), or without one (a scale profile alone),
#: ``this_variant``: the variant's build of the same rows.
HEADLINE_COLUMNS = ["paper", "number", "paper_value", "default_judge"]
THIS_VARIANT = "this_variant"
_LLM_FAMILIES = ("LLM zero-shot", "LLM few-shot")
#: Reads one reader's judge's number from a variant's tables: its rows, columns or pool, named by the judge.
ReaderNumber = Callable[[Loader, JudgeSpec], float]


@dataclass(frozen=True)
class Headline:
    """One number of a finding: ``ours`` reads it from a build's tables (by name), ``printed`` from the chapter's
    copy of the paper's table (None: the paper prints no such number), ``yours`` a reader's judge's from a variant's
    tables (None: not a judge's number, e.g. a proxy's)."""

    paper: str
    number: str
    ours: Callable[[Loader], float]
    printed: Callable[[Loader], float] | None = None
    yours: ReaderNumber | None = None


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


def _best_pearson(load: Loader, methods: set[str]) -> float:
    """The highest Pearson (%) with users among ``methods`` on the RQ1 chapter's sample."""
    sample = load("proxy_vs_llm", "agreement_sample")
    judged = sample[sample["method"].isin(methods)]["pearson_pct"].dropna()
    if judged.empty:
        raise KeyError("proxy_vs_llm/agreement_sample: no Pearson of an LLM judge")
    return float(judged.max())


def _best_llm_judge(load: Loader) -> float:
    """The highest Pearson (%) with users of the LLM judges the RQ1 chapter asked (named in its judge_runs table,
    whatever judges those were), on its sample."""
    return _best_pearson(load, set(load("proxy_vs_llm", "judge_runs")["method"]))


def _asks_as(judge: JudgeSpec) -> str:
    """How the chapters' run tables name a judge's requests: ``<provider>:<model>`` (``JudgeConfig.label``'s head)."""
    return f"{judge.provider}:{judge.model}"


def _your_best_llm_judge(load: Loader, judge: JudgeSpec) -> float:
    """The highest Pearson (%) with users of the reader's judge over the RQ1 prompts (its runs in judge_runs)."""
    runs = load("proxy_vs_llm", "judge_runs")
    return _best_pearson(load, set(runs.loc[runs["judge"].str.startswith(f"{_asks_as(judge)}/"), "method"]))


def _your_settings(load: Loader, judge: JudgeSpec) -> pd.DataFrame:
    table = load("auxiliary_data", "agreement_by_setting")
    return table[table["judge"] == judge.display_label]


def _your_setting(setting: str) -> ReaderNumber:
    return lambda load, judge: named_row(_your_settings(load, judge), "method", setting,
                                         f"auxiliary_data/agreement_by_setting ({judge.display_label})")["pearson_pct"]


def _your_best_auxiliary_data(load: Loader, judge: JudgeSpec) -> float:
    """The reader's judge's "Auxiliary Data" (Tables 4-5): its highest Pearson among the settings other than NA,
    chosen on the answers it is reported on, as the chapter chooses the book's judge's."""
    others = _your_settings(load, judge).query("method != 'none (NA)'")["pearson_pct"].dropna()
    if others.empty:
        raise KeyError(f"auxiliary_data/agreement_by_setting: no Pearson of {judge.display_label} with auxiliary data")
    return float(others.max())


def _if_in_your_pool(read: Callable[[Loader], float]) -> ReaderNumber:
    """``read`` (a number of a variant's RQ3 tables, computed over a pool of judges) when the reader's judge is in
    that pool (a judge of the pool on its own, in every_ensemble, is named "<label> <its prompt>"); KeyError
    otherwise (a judge without log-probabilities, for one, is left out of the ensembles)."""
    def yours(load: Loader, judge: JudgeSpec) -> float:
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


def _share_of(frame: pd.DataFrame, part: str, whole: str, where: str) -> float:
    """100 × (1 − sum of ``part`` / sum of ``whole``): the share of replies that were usable."""
    total = float(frame[whole].sum())
    if total == 0:
        raise KeyError(f"{where}: no {whole}")
    return 100 * (1 - float(frame[part].sum()) / total)


def _usable_share(chapter: str, table: str, part: str, whole: str) -> Callable[[Loader], float]:
    return lambda load: _share_of(load(chapter, table), part, whole, f"{chapter}/{table}")


def _your_evaluators_share(load: Loader, judge: JudgeSpec) -> float:
    runs = load("explanation_evaluators", "llm_runs")
    return _share_of(runs[runs["model"] == _asks_as(judge)], "n_unparsable", "n_replies",
                     f"explanation_evaluators/llm_runs ({judge.display_label})")


def _your_recommender_share(load: Loader, judge: JudgeSpec) -> float:
    parsing = load("metamorphic_recommender", "reader_reply_parsing")
    return _share_of(parsing[parsing["recommender"] == judge.display_label], "not_a_list", "replies",
                     f"metamorphic_recommender/reader_reply_parsing ({judge.display_label})")


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


HEADLINES = (
    Headline("Kang et al. 2025, RQ1", "Pearson (%) of the SOG proxy with users, all answers",
             _column("proxy_vs_llm", "agreement_all_answers", "pearson_pct", "method", "SOG"),
             _column("proxy_vs_llm", "paper_table2", "pearson_pct", "method", "SOG")),
    Headline("Kang et al. 2025, RQ1", "Pearson (%) of the best LLM judge with users (the chapter's sample; the "
             "paper's best LLM on all answers)", _best_llm_judge, _best_llm_printed, _your_best_llm_judge),
    Headline("Kang et al. 2025, RQ2", "Pearson (%) of the judge without auxiliary data",
             _column("auxiliary_data", "tables45_vs_paper", "pearson_pct", "method", "none (NA)"),
             _column("auxiliary_data", "tables45_vs_paper", "paper_pearson_pct", "method", "none (NA)"),
             _your_setting("none (NA)")),
    Headline("Kang et al. 2025, RQ2", "Pearson (%) with the best auxiliary data (chosen in sample)",
             _column("auxiliary_data", "tables45_vs_paper", "pearson_pct", "method", "Auxiliary Data"),
             _column("auxiliary_data", "tables45_vs_paper", "paper_pearson_pct", "method", "Auxiliary Data"),
             _your_best_auxiliary_data),
    Headline("Kang et al. 2025, RQ3", "Pearson (%) of the ensemble with auxiliary data, on held-out users",
             _RQ3_HELD_OUT, yours=_if_in_your_pool(_RQ3_HELD_OUT)),
    *(Headline("Tokutake et al. 2025", f"MAE of the {template} prompt (paper: GPT-4o-mini)",
               _column("prompt_strategies", "table1_vs_paper", "mae_ours", "template", template),
               _column("prompt_strategies", "table1_vs_paper", "mae_gpt", "template", template),
               lambda load, judge, template=template: _column(
                   "prompt_strategies", "table1_vs_paper", f"mae_{judge.display_label}", "template", template)(load))
      for template in ("Base", "LS", "CoT", "LtM")),
    Headline("Tokutake et al. 2025, re-evaluation", "Highest mean serendipity score of a recommender (expected "
             "score, 1–5)", _best_recommender_score,
             yours=lambda load, judge: _best_recommender_score(load, judge.display_label)),
    Headline("Zhang et al. 2024", "Replies of the LLM evaluators that held a score (%)",
             _usable_share("explanation_evaluators", "llm_runs", "n_unparsable", "n_replies"),
             yours=_your_evaluators_share),
    Headline("Khirbat et al. 2024", "Replies of the LLM recommender that are a list of titles (%)",
             _usable_share("metamorphic_recommender", "reply_parsing", "not_a_list", "replies"),
             yours=_your_recommender_share),
    Headline("Beyond the papers: part V", "Human labels the best judge is worth, beside 100 labels",
             _labels_worth_at_100, yours=lambda load, judge: _labels_worth_at_100(load, f"{judge.display_label} ")),
)


def your_judge_column(judge: JudgeSpec) -> str:
    """The headline table's column of a reader's judge: its label, the name the chapters' tables give it."""
    return judge.display_label


def headlines(default: Loader, variant: Loader | None = None, judges: Sequence[JudgeSpec] = ()) -> pd.DataFrame:
    """One row per headline number (``HEADLINES``): the paper's (from the default build's copy of its table) and the
    default build's; in a variant (``variant``: its tables), one column per reader's judge of ``judges``
    (``your_judge_column``) with that judge's own number, or without judges (a scale profile alone)
    ``this_variant``, the variant's build of the same rows. A number a build does not have is NaN, shown as
    absent."""
    if variant is None and judges:
        raise ValueError("headlines: a reader's judges' numbers are read from a variant's tables; none given")
    columns = [*HEADLINE_COLUMNS, *([your_judge_column(judge) for judge in judges] if judges else
                                    [THIS_VARIANT] if variant is not None else [])]
    clashing = sorted(set(HEADLINE_COLUMNS) & set(columns[len(HEADLINE_COLUMNS):]))
    if clashing:
        raise ValueError(f"headlines: a reader's judge is labelled {clashing}, a column of the table; relabel it")
    rows = []
    for headline in HEADLINES:
        row = {"paper": headline.paper, "number": headline.number,
               "paper_value": _value(headline.printed, default), "default_judge": _value(headline.ours, default)}
        for judge in judges:
            row[your_judge_column(judge)] = _value(headline.yours and partial(headline.yours, judge=judge), variant)
        if variant is not None and not judges:
            row[THIS_VARIANT] = _value(headline.ours, variant)
        rows.append(row)
    return pd.DataFrame(rows, columns=columns)


def headline_labels(judges: Sequence[JudgeSpec] = ()) -> dict[str, str]:
    """Column headers of the headline table (``headlines``): the committed book's numbers, then each reader's
    judge's, or the variant's build."""
    return {"paper": "Paper", "number": "Number", "paper_value": "Paper's value", "default_judge": "This book",
            THIS_VARIANT: "This variant",
            **{your_judge_column(judge): f"Your judge: {judge.display_label}" for judge in judges}}


# ------------------------------------------------------------------------------------------------ claim by claim
#: What became of a claim in this build.
REPRODUCED, PARTLY, NOT_REPRODUCED, NOT_TESTABLE = "reproduced", "partly", "not reproduced", "not testable here"
STATUSES = (REPRODUCED, PARTLY, NOT_REPRODUCED, NOT_TESTABLE, NOT_RUN)
CLAIM_COLUMNS = ["paper", "claim", "status", "evidence", "chapter", "table"]
#: The claims that need a capable LLM judge or recommender: the offline build cannot test them, whatever it computes.
NEEDS_A_CAPABLE_LLM = "needs a capable LLM; the judges here are tiny local models"
#: A printed value counts as reproduced when ours is within this many points (Zhang et al.'s Table 1, in %).
CLOSE_POINTS = 1.5


def _share(holding: int, total: int) -> str:
    return REPRODUCED if holding == total else PARTLY if holding else NOT_REPRODUCED


def _proxies_weak(load: Loader) -> tuple[str, str]:
    values = kang_proxy_pearson(load)
    weak = all(abs(v) < WEAK_PEARSON_PCT for v in values.values())
    return (REPRODUCED if weak else NOT_REPRODUCED,
            ", ".join(f"{name} {fmt(v)}%" for name, v in values.items())
            + f" ({'all' if weak else 'not all'} below {WEAK_PEARSON_PCT:.0f}% in absolute value)")


def _table2_significant(load: Loader) -> tuple[str, str]:
    checked = load("proxy_vs_llm", "paper_claim_significance")
    rows = checked[checked["family"] != "Random"]
    failing = int((~rows["significant"].astype(bool)).sum())
    return (REPRODUCED if failing == 0 else NOT_REPRODUCED,
            f"with the paper's own n, {failing} of {len(rows)} printed correlations are not significant at p < 0.05")


def _g_distribution(load: Loader) -> tuple[str, str]:
    closest = named_row(load("prompt_strategies", "ground_truth_search"), "rank", 1,
                        "prompt_strategies/ground_truth_search")
    distance = int(closest["distance"])
    return (REPRODUCED if distance == 0 else NOT_REPRODUCED,
            f"the closest of the readings searched, {closest['candidate']}, is {distance} answers off")


def _accuracy_order(load: Loader) -> tuple[str, str]:
    order = named_row(load("recommender_reevaluation", "order_vs_paper_1m"), "metric", "n_acc",
                      "recommender_reevaluation/order_vs_paper_1m")
    agrees = float(order["tau"]) > 0 and float(order["p"]) < 0.05
    return (REPRODUCED if agrees else NOT_REPRODUCED,
            f"Kendall's τ {fmt(order['tau'], 2)} (p {fmt(order['p'], 2)}) between our order of the six on ML-1M "
            "and the paper's (NDCG_acc@20)")


def _zhang_rows(names: tuple[str, ...]) -> Callable[[Loader], tuple[str, str]]:
    def judge(load: Loader) -> tuple[str, str]:
        gaps = load("explanation_evaluators", "table1_agreement_by_row")
        mean = {name: float(named_row(gaps, "evaluator", name, "explanation_evaluators/table1_agreement_by_row")[
            "mean_abs_difference"]) for name in names}
        close = sum(value <= CLOSE_POINTS for value in mean.values())
        return (_share(close, len(names)),
                "mean gap to the printed cells: " + ", ".join(f"{n} {fmt(v, 3)}" for n, v in mean.items())
                + f" points ({close} of {len(names)} within {CLOSE_POINTS})")
    return judge


def _surprise_order(load: Loader) -> tuple[str, str]:
    ordering = load("normalised_surprise", "ordering_check")
    holding = int(ordering["holds_on_means"].astype(bool).sum())
    return (_share(holding, len(ordering)),
            f"holds on the means in {holding} of {len(ordering)} model × distance × inequality comparisons "
            "(ml-latest-small)")


def _untestable(why: str) -> Callable[[Loader], tuple[str, str]]:
    return lambda load: (NOT_TESTABLE, why)


@dataclass(frozen=True)
class Claim:
    paper: str
    claim: str
    chapter: str
    table: str
    judge: Callable[[Loader], tuple[str, str]]

    def row(self, load: Loader) -> dict[str, str]:
        try:
            status, evidence = self.judge(load)
        except FileNotFoundError as missing:
            status, evidence = NOT_RUN, f"{missing}"
        return {"paper": self.paper, "claim": self.claim, "status": status, "evidence": evidence,
                "chapter": self.chapter, "table": self.table}


CLAIMS = (
    Claim("Kang et al. 2025", "The proxy metrics agree only weakly with users' serendipity ratings (Table 2)",
          "proxy_vs_llm", "agreement_all_answers", _proxies_weak),
    Claim("Kang et al. 2025", "Every Pearson correlation of Table 2 is significant at p < 0.05 (section 4.1)",
          "proxy_vs_llm", "paper_claim_significance", _table2_significant),
    Claim("Kang et al. 2025", "Zero-shot LLM judges beat the best proxy by about 100% in Pearson (section 5.1)",
          "proxy_vs_llm", "paper_claim_gain_over_sog", _untestable(NEEDS_A_CAPABLE_LLM)),
    Claim("Kang et al. 2025", "Auxiliary data in the prompt makes the judge agree better with users (RQ2)",
          "auxiliary_data", "agreement_by_setting", _untestable(NEEDS_A_CAPABLE_LLM)),
    Claim("Kang et al. 2025", "Averaging several LLM judges agrees better with users than one (RQ3)",
          "llm_ensembles", "table5_ours", _untestable(NEEDS_A_CAPABLE_LLM)),
    Claim("Tokutake et al. 2025", "The ground truth g has the distribution of section 4.1",
          "prompt_strategies", "ground_truth_search", _g_distribution),
    Claim("Tokutake et al. 2025", "Chain-of-thought makes the best serendipity judge (Table 1)",
          "prompt_strategies", "metrics", _untestable(NEEDS_A_CAPABLE_LLM)),
    Claim("Tokutake et al. 2025", "The six recommenders rank by accuracy on ML-1M as in Table 3",
          "recommender_reevaluation", "order_vs_paper_1m", _accuracy_order),
    Claim("Tokutake et al. 2025", "An LLM judge ranks the recommenders' serendipity as in Table 3",
          "recommender_reevaluation", "table3_latest-small", _untestable(NEEDS_A_CAPABLE_LLM)),
    Claim("Zhang et al. 2024", "The annotator rows of Table 1", "explanation_evaluators", "table1_agreement_by_row",
          _zhang_rows(("Annotator-1", "Annotator-2", "Average"))),
    Claim("Zhang et al. 2024", "The BLEU and ROUGE rows of Table 1", "explanation_evaluators",
          "table1_agreement_by_row", _zhang_rows(("BLEU-1", "BLEU-4", "ROUGE-1-F", "ROUGE-L-F"))),
    Claim("Zhang et al. 2024", "LLMs evaluate explanations as well as or better than the reference metrics (Table 1)",
          "explanation_evaluators", "llm_runs", _untestable(NEEDS_A_CAPABLE_LLM)),
    Claim("Lima & Peres", "Normalised surprise orders MSI ≥ kNN ≥ LSI (Table 2)", "normalised_surprise",
          "ordering_check", _surprise_order),
    Claim("Lima & Peres", "The magnitudes of Table 2 on MovieLens-1M with movie descriptions", "normalised_surprise",
          "table2_vs_paper", _untestable("the descriptions of MovieLens-1M used by the paper are not available")),
    Claim("Khirbat et al. 2024", "An LLM recommender's lists move under semantics-preserving prompt changes "
          "(Tables 2–4)", "metamorphic_recommender", "reply_parsing", _untestable(NEEDS_A_CAPABLE_LLM)),
)


def claim_status(load: Loader = load_table) -> pd.DataFrame:
    """One row per claim of the papers (columns ``CLAIM_COLUMNS``): its status in this build (``STATUSES``), the
    numbers that decide it, and the chapter and result table they come from."""
    return pd.DataFrame([claim.row(load) for claim in CLAIMS], columns=CLAIM_COLUMNS)


def claim_matrix_markdown(claims: pd.DataFrame) -> str:
    """The claims as a three-column MyST table (claim, status, evidence); each claim names its paper and links to
    its chapter and the CSV its evidence comes from."""
    lines = ["| Claim | Status | Evidence |", "|---|---|---|"]
    for row in claims.itertuples(index=False):
        claim = (f"**{row.paper}.** {row.claim} ({{doc}}`chapter <{row.chapter}>`, "
                 f"{{download}}`table <../../results/{row.chapter}/{row.table}.csv>`)")
        cells = [claim, f"**{row.status}**", row.evidence]
        lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)
