"""The at-a-glance page: one row per paper and research question, every number read from the chapters' result tables.

Each row has a builder that takes a table loader (``load(chapter, table) -> DataFrame``, by default
:func:`recjudge.compendium.results.load_table`) and states what this book ran (``here``) and what it measured
(``measured``), selecting every number **by name** (a method, a run, a rank), never by the position of a row. The
row's verdicts are not written here: they are the verdicts of its claims in the registry
(:mod:`recjudge.compendium.claims`), chosen there by one rule. A row whose tables are missing says "not run in this
build" and names the missing table instead of disappearing.

The page's headline numbers (the paper's, the book's judge's with n and interval, a variant's) are
:mod:`recjudge.compendium.headline_numbers`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from recjudge.compendium import claim_readers, claims, pages, trust_rules
from recjudge.compendium.claim_evidence import NOT_RUN, named_row
from recjudge.compendium.claim_intervals import fisher_pct, with_interval

# The page reads its headline numbers through this module (``at_a_glance.headlines``); they live in headline_numbers.
from recjudge.compendium.headline_numbers import (  # noqa: F401
    MIN_ANSWERS,
    headline_labels,
    headlines,
    headlines_shown,
)
from recjudge.compendium.pages import fmt
from recjudge.compendium.results import load_table
from recjudge.llm.judge_spec import JudgeSpec

Loader = Callable[[str, str], pd.DataFrame]
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
    """The paper's answer from its Table 1 (dataset level, Average column): how many of its LLM rows reach the best
    of BLEU and ROUGE, and how many the annotators' averaged labels, each against the users' ratings (the table
    sets no LLM against the annotators)."""
    load("explanation_evaluators", "table1_agreement_by_row")
    table = claim_readers.zhang_dataset_level()
    references = table.loc[["BLEU-1", "BLEU-4", "ROUGE-1-F", "ROUGE-L-F"], "average"]
    best, annotators = references.idxmax(), float(table.loc["Average", "average"])
    llms = table[table.index.str.contains(r"\((?:S|M)\)$")]["average"]
    at_or_above = llms[llms >= references.max()]
    return (f"Certain LLMs: {len(at_or_above)} of its {len(llms)} LLM rows agree with the users at least as well as "
            f"{best} ({fmt(references.max(), 2)}%), the best of BLEU and ROUGE, and "
            f"{int((llms >= annotators).sum())} as well as the annotators' averaged labels ({fmt(annotators, 2)}%) "
            "(Pearson, dataset level, mean over the aspects, Table 1)")


def lima_answer(load: Loader) -> str:
    table2 = load("normalised_surprise", "table2_paper")
    ordered = int(((table2["MSI_mean"] >= table2["kNN_mean"]) & (table2["kNN_mean"] >= table2["LSI_mean"])).sum())
    return (f"MSI ≥ kNN ≥ LSI in {ordered} of {len(table2)} item model × distance cells (means, MovieLens-1M, "
            "Table 2)")


def khirbat_answer(load: Loader) -> str:
    load("metamorphic_recommender", "table4_relations")
    return ("No: GPT-3.5-turbo's lists change under every semantics-preserving relation "
            f"(p < {KHIRBAT_PRINTED_P:g}, Table 4)")


#: The p-value Khirbat et al. print for every relation of their Table 4 ("p < 0.0001"): a bound, not a table cell.
KHIRBAT_PRINTED_P = 0.0001


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
                    f"the paper's (the best LLM of the paper's Table 2, without auxiliary data: GPT-4 few-shot "
                    f"{fmt(printed('GPT-4 (few-shot)'), 2)}%)",
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
                    f"answers ({best['cell']}) reaches {fisher_pct(best['pearson_pct'], int(best['n']))}, a maximum "
                    f"selected among the grid's cells in sample (so its interval, Fisher's z, flatters it); chosen "
                    f"on half of the users and measured on the other half ({claim_readers.splits(held['cell'])}): "
                    + pages.unless_too_few(
                        f"the chosen cell gives {fmt(held['pearson_pct'])}% on average, auxiliary data alone "
                        f"{fmt(data_held['pearson_pct'])}%, and no auxiliary data on the same halves "
                        f"{fmt(held_none['pearson_pct'])}%", int(held["n"]),
                        detail=f"{claim_readers.answers_per_half(held)} per held-out half"),
    }


def tokutake_strategies(load: Loader) -> dict[str, str]:
    metrics = claim_readers.in_order(load("prompt_strategies", "metrics"), "template", claim_readers.STRATEGIES)
    paper = load("prompt_strategies", "paper_table1")
    search = load("prompt_strategies", "ground_truth_search")
    closest = named_row(search, "rank", 1, "prompt_strategies/ground_truth_search")
    parsed = metrics[metrics["n"] > 0]
    unparsed = metrics[metrics["n"] == 0]["template"].tolist()
    maes = claim_readers.parsed_maes(parsed) if len(parsed) else ""
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
    users, per_fold = claim_readers.judged_users(table3)
    return {
        "here": f"{len(non_random)} recommenders on ml-latest-small, global temporal split, three folds "
                f"({int(versus['n_users'].max())} test users); SmolLM2-135M judged {int(judged['judgments'])} "
                f"(user, item) pairs of {int(judged['users'])} test users",
        "measured": f"{int((versus['recall10_p'] < 0.05).sum())} of {len(versus)} recommenders have a higher "
                    f"Recall@10 than Random at p < 0.05 on ml-latest-small, "
                    f"{int((versus_1m['recall10_p'] < 0.05).sum())} of {len(versus_1m)} on ML-1M; the tiny judge's "
                    "scores: "
                    + pages.unless_too_few(
                        f"{ranking}; Avg. score (expected) {fmt(non_random['avg_score_mean'].min(), 2)}–"
                        f"{fmt(non_random['avg_score_mean'].max(), 2)}", users, "judged users",
                        f"{per_fold} per fold")
                    + "; judging every test user with GPT-4o-mini would cost "
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
                    f"need {claim_readers.ML1M_AS_THE_PAPER_USED_IT}",
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
    # whether a flip could happen is the robustness chapter's to say, from the cases' scores; the row says how many
    flipped = ("no verdict flipped" if flips.max() == 0 else
               f"verdicts flip in {fmt(100 * flips.min(), 0)}–{fmt(100 * flips.max(), 0)}% of the cases")
    per_judge = robust.drop_duplicates("judge")
    on = " (" + "; ".join(f"{judge} on {data}" for judge, data in zip(per_judge["judge"], per_judge["data"])) + ")"
    n_words = pages.span(scored["scored"].min(), scored["scored"].max(), 0)
    n = f"n = {n_words}"
    return {
        "here": f"the paper's prompt and relations with SmolLM2-135M ({int(parsing['replies'].sum())} replies); "
                f"{robust['relation'].nunique()} relations applied to {robust['judge'].nunique()} of this book's "
                f"judges{on}",
        "measured": f"{int(parsing['not_a_list'].sum())} of {int(parsing['replies'].sum())} replies of the tiny "
                    "model are not a list of titles, so list similarity is 0 or undefined; this book's extension to "
                    f"its own judges: under relations that should not matter the Kang basic judge's scores on a "
                    "sample of Serendipity-2018 answers: "
                    + pages.unless_too_few(
                        f"move by {fmt(change.min(), 2)}–{fmt(change.max(), 2)} on average on the 1–5 scale "
                        f"({flipped}; {n} scored answers per relation, {len(scored)} relations)",
                        int(scored["scored"].min()), detail=f"{n_words} scored answers per relation")
                    + "; SmolLM2-135M's replies",
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
                    + f"{trust_rules.beating_words(better)} a constant answer's MAE on the same answers by more "
                      f"than {trust_rules.MAE_MARGIN} beyond its noise"
                    + f"; the strongest pooled correlation a paper prints for a serendipity judge "
                      f"({paper_best['paper_judge']}, r = {fmt(paper_best['pearson_pct'] / 100, 2)}) would be worth "
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


#: Where the at-a-glance run writes the record of reading-rule changes by rule (``book/reproducibility.md`` includes
#: it): the chapters' pages name a change by its rule and point there.
READING_CHANGES_FILE = "reading_changes.md"


def write_reading_changes(notebook: str) -> Path:
    """Write every recorded change of the reply-reading rules (``llm.reading_changes.record_markdown``) next to the
    run's tables; returns the file."""
    from recjudge.compendium.results import results_path
    from recjudge.llm import reading_changes

    path = results_path(notebook, "findings").parent / READING_CHANGES_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(reading_changes.record_markdown(), encoding="utf-8")
    return path


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


def show_findings(glance: pd.DataFrame):
    """The page's "Paper by paper" table: the paper and its question in one cell, so that the four columns a reader
    reads across (data here, the paper's answer, our verdicts, what we measured) fit the text column."""
    from recjudge.compendium.tables import format_table

    shown = glance.assign(paper=glance["paper"] + ": " + glance["question"]).drop(columns="question")
    return format_table(shown, labels={"paper": "Paper and question", "here": "Data and judges here",
                                       "paper_answer": "The paper's answer", "verdicts": "Our verdicts on its claims",
                                       "measured": "What this book measured"})
