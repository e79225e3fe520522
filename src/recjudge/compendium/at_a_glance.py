"""The at-a-glance page: one row per paper and research question, every number read from the chapters' result tables.

Each row has a builder that takes a table loader (``load(chapter, table) -> DataFrame``, by default
:func:`recjudge.compendium.results.load_table`) and states what this book ran (``here``) and what it measured
(``measured``), selecting every number **by name** (a method, a run, a rank), never by the position of a row. The
row's verdicts are not written here: they are the verdicts of its claims in the registry
(:mod:`recjudge.compendium.claims`), chosen there by one rule. A row whose tables are missing says "not run in this
build" and names the missing table instead of disappearing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TypeVar

import pandas as pd

from recjudge.compendium import claim_readers, claims, pages, trust_rules
from recjudge.compendium.claim_evidence import NOT_RUN, named_row
from recjudge.compendium.claim_readers import with_interval
from recjudge.compendium.pages import fmt
from recjudge.compendium.results import load_table
from recjudge.llm.judge_spec import JudgeSpec

Loader = Callable[[str, str], pd.DataFrame]
T = TypeVar("T")
COLUMNS = ["paper", "question", "here", "paper_answer", "verdicts", "measured"]
#: Where a row has no claim of a paper in the registry (a question of this book's own).
NO_CLAIM = "– (a question of this book, no claim of a paper)"


@dataclass(frozen=True)
class GlanceRow:
    """One paper and question: ``build`` says what this book ran and measured, ``paper_answer`` the paper's own
    answer to the question, from the numbers it prints (the chapter's copy of its table) where it prints them."""

    paper: str
    question: str
    build: Callable[[Loader], dict[str, str]]
    paper_answer: Callable[[Loader], str]

    def row(self, load: Loader) -> dict[str, str]:
        try:
            found = self.build(load)
        except FileNotFoundError as missing:
            found = {"here": NOT_RUN, "measured": f"{NOT_RUN}: {missing}"}
        try:
            answer = self.paper_answer(load)
        except FileNotFoundError as missing:
            answer = f"{NOT_RUN}: {missing}"
        return {"paper": self.paper, "question": self.question, "paper_answer": answer, **found}


# ------------------------------------------------------------------------------------------ the papers' own answers
def kang_rq1_answer(load: Loader) -> str:
    paper = load("proxy_vs_llm", "paper_table2")

    def printed(method: str) -> str:
        return fmt(float(named_row(paper, "method", method, "proxy_vs_llm/paper_table2")["pearson_pct"]), 2)

    return (f"Yes: GPT-4 few-shot correlates {printed('GPT-4 (few-shot)')}% with users' ratings, the best proxy (SOG) "
            f"{printed('SOG')}% (Pearson, Serendipity-2018, Table 2)")


def kang_rq2_rq3_answer(load: Loader) -> str:
    versus = load("auxiliary_data", "tables45_vs_paper")

    def printed(method: str) -> str:
        return fmt(float(named_row(versus, "method", method, "auxiliary_data/tables45_vs_paper")["paper_pearson_pct"]),
                   2)

    return (f"Yes: auxiliary data lifts Qwen2.5-14B few-shot from {printed('none (NA)')}% to "
            f"{printed('Auxiliary Data')}%, and averaging several LLMs lifts it further (Pearson, Serendipity-2018, "
            "Table 5)")


def tokutake_strategies_answer(load: Loader) -> str:
    table1 = load("prompt_strategies", "paper_table1")
    best = table1.loc[table1["mae_gpt"].idxmin()]
    return (f"{best['template']}: GPT-4o-mini's MAE {fmt(best['mae_gpt'], 3)} is the lowest of the "
            f"{len(table1)} strategies (Table 1)")


def tokutake_reevaluation_answer(load: Loader) -> str:
    alignment = load("recommender_reevaluation", "paper_claim_avg_score_vs_g")
    return (f"GPT-4o-mini scores the recommenders' lists {fmt(alignment['avg_score'].min(), 2)}–"
            f"{fmt(alignment['avg_score'].max(), 2)} (Avg. Score@20, Table 3), which the paper reads as aligned with "
            f"the users' mean g of {fmt(float(alignment['g_mean'].iloc[0]), 2)}, so the judge reflects real users")


def zhang_answer(load: Loader) -> str:
    load("explanation_evaluators", "table1_agreement_by_row")
    return "Yes: LLM evaluators agree with users and annotators as well as or better than BLEU and ROUGE (Table 1)"


def lima_answer(load: Loader) -> str:
    table2 = load("normalised_surprise", "table2_paper")
    ordered = int(((table2["MSI_mean"] >= table2["kNN_mean"]) & (table2["kNN_mean"] >= table2["LSI_mean"])).sum())
    return (f"MSI ≥ kNN ≥ LSI in {ordered} of {len(table2)} item model × distance cells (means, MovieLens-1M, "
            "Table 2)")


def khirbat_answer(load: Loader) -> str:
    load("metamorphic_recommender", "table4_relations")
    return "No: GPT-3.5-turbo's lists change under every semantics-preserving relation (p < 0.0001, Table 4)"


def trust_answer(load: Loader) -> str:
    load("trust_judges", "labels_worth")
    return "– (no paper asks)"


def _pearson(row: pd.Series) -> str:
    return with_interval(row["pearson_pct"], row["pearson_ci_low"], row["pearson_ci_high"], unit="%")


def kang_rq1(load: Loader) -> dict[str, str]:
    agreement = load("proxy_vs_llm", "agreement_all_answers")
    paper = load("proxy_vs_llm", "paper_table2")
    sample = load("proxy_vs_llm", "agreement_sample")

    def ours(method: str) -> pd.Series:
        return named_row(agreement, "method", method, "proxy_vs_llm/agreement_all_answers")

    def printed(method: str) -> float:
        return float(named_row(paper, "method", method, "proxy_vs_llm/paper_table2")["pearson_pct"])

    sog, rnd, gpt = ours("SOG"), ours("Random"), ours("gpt-3.5-turbo (recorded)")
    sample_n = int(named_row(sample, "method", "Random", "proxy_vs_llm/agreement_sample")["n"])
    return {
        "here": f"Serendipity-2018 ({int(sog['n']):,} answers; histories from the survey itself), proxies, Random "
                f"over {int(rnd['seeds']):,} seeds, recorded gpt-3.5-turbo, SmolLM2-135M on {sample_n} answers",
        "measured": f"Pearson with users on {int(sog['n']):,} answers (95% intervals resample "
                    f"{claim_readers.resampled(agreement)}): SOG "
                    f"{_pearson(sog)} (paper {fmt(printed('SOG'), 2)}%), Random {_pearson(rnd)} (paper "
                    f"{fmt(printed('Random'), 2)}%); recorded gpt-3.5-turbo {_pearson(gpt)} with another prompt than "
                    f"the paper's (paper's best LLM: GPT-4 few-shot {fmt(printed('GPT-4 (few-shot)'), 2)}%)",
    }


def kang_rq2_rq3(load: Loader) -> dict[str, str]:
    settings = load("auxiliary_data", "agreement_by_setting")
    versus = load("auxiliary_data", "tables45_vs_paper")
    fit = load("auxiliary_data", "taobao_fit")
    table5 = load("llm_ensembles", "table5_ours")
    none = named_row(settings, "method", "none (NA)", "auxiliary_data/agreement_by_setting")
    others = settings[settings["method"] != "none (NA)"]
    significant = int((others["p_pearson_vs_ref"] < 0.05).sum())

    def fitted(model: str) -> pd.Series:
        return named_row(fit[fit["kind"] == "OLS"], "model", model, "auxiliary_data/taobao_fit (OLS)")

    def table5_row(method: str) -> pd.Series:
        return named_row(table5, "method", method, "llm_ensembles/table5_ours")

    curiosity, big_five = float(fitted("curiosity")["explained"]), float(fitted("big_five")["explained"])
    best, held = table5_row("Multi-LLM & Auxiliary Data"), table5_row("Multi-LLM & Auxiliary Data, held out")
    held_none = table5_row("none (NA), same held-out halves")
    data_held = named_row(versus, "method", "Auxiliary Data, held out", "auxiliary_data/tables45_vs_paper")
    sizes = load("llm_ensembles", "by_ensemble_size")
    singles = sizes[(sizes["family"] == "LLM judges") & (sizes["n"] == 1) & (sizes["metric"] == "pearson_pct")]
    if len(singles) != 1:
        raise KeyError("llm_ensembles/by_ensemble_size: expected one row of single LLM judges (Pearson)")
    n_judges = int(singles["n_ensembles"].iloc[0])
    return {
        "here": f"{len(others)} auxiliary-data settings beside no auxiliary data on {int(none['n'])} Serendipity-2018 "
                f"answers (SmolLM2-135M, 5-shot); every subset of {n_judges} LLM judges; beside them, a different "
                "question from Kang's Figure 1 (traits as regressors, not trait text in a prompt): on Taobao's "
                f"{int(fitted('curiosity')['n']):,} users curiosity "
                f"explains {'more' if curiosity > big_five else 'no more'} of the serendipity ratings than the "
                f"Big-Five (OLS R² {fmt(curiosity, 3)} vs {fmt(big_five, 3)})",
        "measured": f"{significant} of {len(others)} settings differ from none at p < 0.05 (none: "
                    f"{_pearson(none)} on n = {int(none['n'])}); the best cell on the same {int(best['n'])} "
                    f"answers ({best['cell']}) reaches {fmt(best['pearson_pct'])}%, a maximum selected in sample; "
                    "chosen on half of the users and measured on the other half "
                    f"({claim_readers.splits(held['cell'])}; {claim_readers.answers_per_half(held)} answers per half), "
                    f"the chosen cell gives {fmt(held['pearson_pct'])}% on average, auxiliary data alone "
                    f"{fmt(data_held['pearson_pct'])}%, and no auxiliary data on the same halves "
                    f"{fmt(held_none['pearson_pct'])}%",
    }


def tokutake_strategies(load: Loader) -> dict[str, str]:
    metrics = claim_readers.in_order(load("prompt_strategies", "metrics"), "template", claim_readers.STRATEGIES)
    paper = load("prompt_strategies", "paper_table1")
    search = load("prompt_strategies", "ground_truth_search")
    closest = named_row(search, "rank", 1, "prompt_strategies/ground_truth_search")
    parsed = metrics[metrics["n"] > 0]
    unparsed = metrics[metrics["n"] == 0]["template"].tolist()
    maes = ", ".join(f"{row['template']} {fmt(row['mae'], 1)} (n = {int(row['n'])})" for _, row in parsed.iterrows())
    no_reply = f"; no {' or '.join(unparsed)} reply held a score" if unparsed else ""
    return {
        "here": f"Base, LS, CoT and LtM (10-shot, reconstructed) with SmolLM2-135M on "
                f"{int((metrics['n'] + metrics['n_unparsable']).max())} Serendipity-2018 answers; {len(search):,} "
                "readings of the ground truth searched",
        "measured": f"the closest reading of g is at an L1 distance of {int(closest['distance'])} from the printed "
                    f"histogram; the tiny model's MAE on its parsed replies: {maes or 'none'}{no_reply} (paper, "
                    f"GPT-4o-mini: {fmt(paper['mae_gpt'].min(), 2)} to {fmt(paper['mae_gpt'].max(), 2)})",
    }


def tokutake_reevaluation(load: Loader) -> dict[str, str]:
    versus = load("recommender_reevaluation", "vs_random_latest-small")
    table3 = load("recommender_reevaluation", "table3_latest-small")
    cost = load("recommender_reevaluation", "judge_cost_latest-small")
    cost_name = "recommender_reevaluation/judge_cost_latest-small"
    judged = named_row(cost, "run", "this chapter (judged users)", cost_name)
    everyone = named_row(cost, "run", "all test users, every recommender", cost_name)
    integer = load("recommender_reevaluation", "table3_integer_latest-small")
    versus_1m = load("recommender_reevaluation", "vs_random_1m")
    non_random = table3[table3["recommender"] != "Random"]
    integer_non_random = integer[integer["recommender"] != "Random"]
    top_precision = float(integer_non_random["precision_ser_mean"].max())
    ranking = ("read as the paper's judge answers (its most likely score, an integer), the tiny judge scores no item "
               "4 or more (Precision_ser 0 for all)" if top_precision == 0 else
               f"read as integers, Precision_ser reaches {fmt(100 * top_precision, 1)}% at most")
    one_token = int(everyone["output_tokens"]) == int(everyone["judgments"])
    return {
        "here": f"{len(non_random)} recommenders on ml-latest-small, global temporal split, three folds "
                f"({int(versus['n_users'].max())} test users); SmolLM2-135M judged {int(judged['judgments'])} "
                f"(user, item) pairs of {int(judged['users'])} test users",
        "measured": f"{int((versus['recall10_p'] < 0.05).sum())} of {len(versus)} recommenders beat Random on "
                    f"Recall@10 (p < 0.05) on ml-latest-small, {int((versus_1m['recall10_p'] < 0.05).sum())} of "
                    f"{len(versus_1m)} on ML-1M; {ranking}; Avg. score (expected) "
                    f"{fmt(non_random['avg_score_mean'].min(), 2)}–{fmt(non_random['avg_score_mean'].max(), 2)}; "
                    f"judging every test user with GPT-4o-mini would cost "
                    + (f"at least ${fmt(everyone['gpt4o_mini_usd'], 2)} (one output token per judgment)" if one_token
                       else f"about ${fmt(everyone['gpt4o_mini_usd'], 2)}"),
    }


def zhang_explanations(load: Loader) -> dict[str, str]:
    gaps = load("explanation_evaluators", "table1_agreement_by_row")
    runs = load("explanation_evaluators", "llm_runs")
    overview = load("explanation_evaluators", "data_overview")
    gaps_name = "explanation_evaluators/table1_agreement_by_row"
    texts = named_row(overview, "quantity", "rated explanations", "explanation_evaluators/data_overview")["value"]
    annotators = gaps[gaps["evaluator"].isin(["Annotator-1", "Annotator-2", "Average"])]
    bleu4 = float(named_row(gaps, "evaluator", "BLEU-4", gaps_name)["mean_abs_difference"])
    statements = load("explanation_evaluators", "authors_prompt_statements")
    aspect_of = dict(zip(statements["questionnaire_statement"], statements["aspect"]))
    wrong = statements[~statements["asks_its_aspect"].astype(bool)]
    slip = "".join(f" (their multiple-aspect {row['line']} line states {aspect_of.get(row['statement_asked'], 'no')} "
                   f"instead of {row['aspect']})" for _, row in wrong.iterrows())
    held, replies = claim_readers.evaluator_replies(load)
    return {
        "here": f"the full study of Lu et al. ({int(texts):,} texts) for the reference rows; SmolLM2-135M on "
                f"{int(runs['n_texts'].max())} texts, with our reconstructed prompts and with the authors' own"
                f"{slip}",
        "measured": f"annotator rows: all {int(annotators['cells'].sum())} cells within "
                    f"{fmt(annotators['max_abs_difference'].max(), 3)} points; BLEU-4 mean gap {fmt(bleu4, 1)} points "
                    f"(the paper's tokenisation is unknown); {held:,} of the tiny model's {replies:,} replies held a "
                    "score (every run, the authors' prompt included)",
    }


def lima_surprise(load: Loader) -> dict[str, str]:
    ordering = load("normalised_surprise", "ordering_check")
    cells = ordering[["model", "distance"]].drop_duplicates()
    holding = int(ordering["holds_on_means"].astype(bool).sum())
    return {
        "here": "ml-latest-small (embedded sample), item models C, P, U, N, exact and greedy limits",
        "measured": f"MSI ≥ kNN ≥ LSI on the means: {holding} of {len(ordering)} inequalities ({len(cells)} model × "
                    f"distance cells × {ordering['inequality'].nunique()} inequalities); the magnitudes of Table 2 "
                    "come from another dataset (MovieLens-1M with descriptions is not available here)",
    }


#: The judges of the robustness chapter, by the table each writes (synthetic survey, Serendipity-2018, Lu et al.).
ROBUSTNESS_TABLES = ("kang_basic", "tokutake_cot", "kang_basic_serendipity_2018", "tokutake_cot_serendipity_2018",
                     "explanation_zhang")
#: The robustness chapter's Kang basic judge on real answers: its label and the data it ran on, as its table names them.
ROBUSTNESS_REAL_JUDGE = "Kang basic (Serendipity-2018)"
ROBUSTNESS_REAL_DATA = "Serendipity-2018 (mirror)"


def khirbat_metamorphic(load: Loader) -> dict[str, str]:
    parsing = load("metamorphic_recommender", "reply_parsing")
    robust = pd.concat([load("judge_robustness", f"robustness_{judge}") for judge in ROBUSTNESS_TABLES],
                       ignore_index=True)
    kang = robust[(robust["judge"] == ROBUSTNESS_REAL_JUDGE) & (robust["data"] == ROBUSTNESS_REAL_DATA)]
    if kang.empty:
        raise KeyError(f"judge_robustness/robustness_kang_basic_serendipity_2018: no rows of the judge "
                       f"{ROBUSTNESS_REAL_JUDGE!r} on {ROBUSTNESS_REAL_DATA!r}")
    scored = kang.dropna(subset=["verdict_flip_rate"])
    change, flips = scored["mean_abs_change"], scored["verdict_flip_rate"]
    flipped = ("no verdict flips" if flips.max() == 0 else
               f"verdicts flip in {fmt(100 * flips.min(), 0)}–{fmt(100 * flips.max(), 0)}% of the cases")
    per_judge = robust.drop_duplicates("judge")
    on = " (" + "; ".join(f"{judge} on {data}" for judge, data in zip(per_judge["judge"], per_judge["data"])) + ")"
    n = (f"n = {int(scored['scored'].min())}" if scored["scored"].nunique() == 1 else
         f"n = {int(scored['scored'].min())}–{int(scored['scored'].max())}")
    return {
        "here": f"the paper's prompt and relations with SmolLM2-135M ({int(parsing['replies'].sum())} replies); "
                f"{robust['relation'].nunique()} relations applied to {robust['judge'].nunique()} of this book's "
                f"judges{on}",
        "measured": f"{int(parsing['not_a_list'].sum())} of {int(parsing['replies'].sum())} replies of the tiny "
                    "model are not a list of titles, so list similarity is 0 or undefined; this book's extension to "
                    f"its own judges: under relations that should not matter the Kang basic judge's scores on a "
                    f"sample of Serendipity-2018 answers move by {fmt(change.min(), 2)}–{fmt(change.max(), 2)} on "
                    f"average on the 1–5 scale ({flipped}; {n} scored answers per relation, {len(scored)} "
                    "relations; SmolLM2-135M's replies)",
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
    try:
        better = trust_rules.judges_beating_constant(errors)
        trust_rules.saves_labels(best, 100)
    except KeyError as stale:  # tables written before the rules' intervals existed: the chapter has to run again
        raise FileNotFoundError(f"trust_judges tables older than their intervals ({stale}); rerun the chapter") \
            from stale
    worth = (f"{best['labels_worth']:.0f} [{best['labels_worth_mc_low']:.0f}, {best['labels_worth_mc_high']:.0f}] "
             "labels alone")
    return {
        "here": f"calibration, prediction-powered inference (PPI++) and audits of {len(at_100)} judges and proxies "
                f"on Serendipity-2018 ({int(at_100['population'].max()):,} answers)",
        "measured": "with 100 human labels, "
                    + (f"the predictor worth the most labels here (selected among {len(at_100)}: {best['judge']}) "
                       f"makes PPI++ "
                       f"worth {worth}" if trust_rules.saves_labels(best, 100) else
                       f"no predictor saves a whole label beyond the simulation's noise and its tuning bias (the "
                       f"largest worth, selected among {len(at_100)}: {best['judge']}, {worth})")
                    + "; calibrated, "
                    + (f"{', '.join(better)} beat{'s' if len(better) == 1 else ''} a constant answer's MAE on "
                       f"the same answers by more than {trust_rules.MAE_MARGIN} beyond its noise" if better else
                       f"no judge beats a constant answer's MAE on the same answers by more than "
                       f"{trust_rules.MAE_MARGIN} beyond its noise")
                    + f"; the papers' best reported judge ({paper_best['paper_judge']}, Pearson "
                      f"{fmt(paper_best['pearson_pct'], 2)}%) would be worth "
                      f"{paper_best['labels_worth_by_rho2']:,.0f} labels per 1,000 by the ρ² rule",
    }


ROWS = (
    GlanceRow("Kang et al. 2025, RQ1", "Do LLM judges track users' serendipity ratings better than proxy metrics?",
              kang_rq1, kang_rq1_answer),
    GlanceRow("Kang et al. 2025, RQ2–RQ3",
              "Does auxiliary data in the prompt, or averaging several LLMs, make the judge better?", kang_rq2_rq3,
              kang_rq2_rq3_answer),
    GlanceRow("Tokutake et al. 2025", "Which prompt strategy makes the best serendipity judge?", tokutake_strategies,
              tokutake_strategies_answer),
    GlanceRow("Tokutake et al. 2025, re-evaluation",
              "How do recommenders rank when an LLM judge scores the serendipity of their lists?",
              tokutake_reevaluation, tokutake_reevaluation_answer),
    GlanceRow("Zhang et al. 2024",
              "Can LLMs evaluate recommendation explanations as users would (3-level meta-evaluation)?",
              zhang_explanations, zhang_answer),
    GlanceRow("Lima & Peres",
              "How far can a recommender's surprise go, and does normalised surprise order MSI ≥ kNN ≥ LSI?",
              lima_surprise, lima_answer),
    GlanceRow("Khirbat et al. 2024",
              "Is an LLM recommender robust to semantics-preserving changes of its prompt (metamorphic testing)? "
              "And this book's own judges?", khirbat_metamorphic, khirbat_answer),
    GlanceRow("Beyond the papers: part V", "What is an LLM judge worth in human labels, and can its number be "
              "trusted?", trust_worth, trust_answer),
)


def caveat(readers: Sequence[JudgeSpec] = ()) -> str:
    """The page's caveat: the book's claims rest on a tiny judge; under a reader's judges (``readers``), where theirs
    stand instead of a statement that nothing capable judged here."""
    text = ("SmolLM2-135M judges near noise level: wherever a claim of a paper is about what a capable LLM can do, "
            "this book says it could not be tested offline rather than reporting the tiny model's numbers as a "
            "replication.")
    if readers:
        text += (" The claims below are the committed book's; your judge's numbers stand in the last table, each with "
                 "its n and 95% interval, and its chapters' verdicts say whose numbers they read.")
    return text


def findings(load: Loader = load_table) -> pd.DataFrame:
    """The page's table: one row per paper and question (columns ``COLUMNS``), its verdicts those of its claims in
    the registry, each "claim: verdict"."""
    records = claims.registry(load)
    rows = []
    for glance in ROWS:
        mine = records[records["finding"] == glance.paper]
        verdicts = "; ".join(f"{row.claim}: {row.verdict}" for row in mine.itertuples(index=False))
        rows.append({**glance.row(load), "verdicts": verdicts or NO_CLAIM})
    return pd.DataFrame(rows, columns=COLUMNS)


# ---------------------------------------------------------------------------------------------- headline numbers
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
    judged = sample[sample["method"].isin(set(load("proxy_vs_llm", "judge_runs")["method"]))].dropna(
        subset=["pearson_pct"])
    best = judged.loc[judged["pearson_pct"].idxmax()]
    return Detail(float(best["n"]), float(best["pearson_ci_low"]), float(best["pearson_ci_high"]),
                  _with_resampling(f"selected: the highest of {len(judged)} LLM judge runs on the same answers "
                                   f"({best['method']}); no held-out value", sample))


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
    return Detail(float(chosen["n"]), float(chosen["pearson_ci_low"]), float(chosen["pearson_ci_high"]),
                  f"selected: the highest of {len(others)} settings ({best['best_setting']}) on the same answers; "
                  f"chosen on half of the users and measured on the other half: {fmt(held['pearson_pct'])}%")


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


HEADLINES = (
    Headline("Kang et al. 2025, RQ1", "Pearson (%) of the SOG proxy with users, all answers",
             _column("proxy_vs_llm", "agreement_all_answers", "pearson_pct", "method", "SOG"),
             _column("proxy_vs_llm", "paper_table2", "pearson_pct", "method", "SOG"),
             detail=_row_detail("proxy_vs_llm", "agreement_all_answers", "method", "SOG"),
             model="no LLM: the SOG proxy"),
    Headline("Kang et al. 2025, RQ1", "Pearson (%) of the best LLM judge with users (the chapter's sample; the "
             "paper's best LLM, GPT-4 few-shot, on all answers)", _best_llm_judge, _best_llm_printed,
             _your_best_llm_judge, detail=_best_judge_detail, model=_best_llm_judge_name,
             your_detail=lambda load, judge: _pearson_detail(_your_best_llm_judge_row(load, judge))),
    Headline("Kang et al. 2025, RQ2", "Pearson (%) of the judge without auxiliary data",
             _column("auxiliary_data", "tables45_vs_paper", "pearson_pct", "method", "none (NA)"),
             _column("auxiliary_data", "tables45_vs_paper", "paper_pearson_pct", "method", "none (NA)"),
             _your_setting("none (NA)"), detail=_no_auxiliary_detail,
             your_detail=lambda load, judge: _pearson_detail(_your_setting_row(load, judge, "none (NA)"))),
    Headline("Kang et al. 2025, RQ2", "Pearson (%) with the best auxiliary data (selected in sample)",
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
