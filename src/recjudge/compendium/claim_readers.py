"""The claims' readers: for each claim of the registry (:mod:`recjudge.compendium.claims`), the function that reads
the build's result tables and returns its :class:`~recjudge.compendium.claim_evidence.Evidence`, with the helpers they
share and the thresholds this book sets where no paper states one.

Every number is selected by name (:func:`~recjudge.compendium.claim_evidence.named_row`), so a reordered table cannot
put another number in a claim; a table the build did not write raises ``FileNotFoundError``, which makes the claim
"not run in this build".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import pandas as pd

from recjudge import papers
from recjudge.compendium import trust_rules
from recjudge.compendium.claim_evidence import (
    NEEDS_A_CAPABLE_LLM,
    Check,
    Difference,
    Evidence,
    Loader,
    SampleNeed,
    named_row,
)
from recjudge.compendium.pages import fmt, span, unless_too_few
from recjudge.metaeval import power
from recjudge.metaeval.baselines import MEAN, MODE, RANDOM
from recjudge.metaeval.papers_vs_baselines import tokutake_baselines, tokutake_table1_vs_baselines
from recjudge.prompts.explanations import distinct_runs

#: This book's own thresholds (no paper states one): |Pearson| below this (in %) is called weak agreement ...
WEAK_PEARSON_PCT = 20.0
#: ... a printed cell counts as recomputed when ours is within this many points (Zhang et al.'s Table 1, in %) ...
CLOSE_POINTS = 1.5
#: ... and a coefficient of variation of at least this (in %) is a non-negligible effect of a modelling choice.
NON_NEGLIGIBLE_CV_PCT = 10.0
#: Kang et al.'s "about 100%" gain over SOG, read generously as this range (in %).
ABOUT_100_PCT = (75.0, 125.0)
#: Tokutake et al. tuned every recommender with this many TPE trials per fold.
PAPER_TRIALS = 100

#: The book's own LLM judge, as the chapters' tables name it: in its label, in a run table, and by its model. A
#: variant's tables hold a reader's judge's rows beside it; a claim reads the book's judge's rows only.
BOOK_JUDGE = "SmolLM2-135M"
BOOK_JUDGE_MODEL = "smollm2-135m-instruct-q4_1"
BOOK_JUDGE_RUNS = f"local:{BOOK_JUDGE_MODEL}"


def _book_judge_rows(table: pd.DataFrame, column: str, name: str, *, prefix: bool = False) -> pd.DataFrame:
    """The rows of the book's own judge (``column`` equal to ``name``, or starting with it when ``prefix``); a table
    without ``column`` holds no other judge's rows."""
    if column not in table.columns:
        return table
    values = table[column].astype(str)
    return table[values.str.startswith(name) if prefix else values == name]



#: Tokutake et al.'s prompt strategies, in the paper's order.
STRATEGIES = ("Base", "LS", "CoT", "LtM")


def in_order(table: pd.DataFrame, column: str, order: Sequence[str]) -> pd.DataFrame:
    """The rows of ``table`` in the given order of ``column`` (rows of other values after them, sorted), so that
    a text listing them does not depend on the table's row order."""
    rank = {value: i for i, value in enumerate(order)}
    return table.assign(_rank=table[column].map(rank)).sort_values(["_rank", column]).drop(columns="_rank")

def with_interval(value: float, low: float, high: float, decimals: int = 1, unit: str = "") -> str:
    """"9.3% [5.2, 13.5]": a number and its 95% interval for prose; the interval left out when it is undefined."""
    text = f"{fmt(value, decimals)}{unit}"
    if pd.notna(low) and pd.notna(high):
        text += f" [{fmt(low, decimals)}, {fmt(high, decimals)}]"
    return text


#: The proxies of Kang et al.'s Table 2.
KANG_PROXIES = ("SOG", "SNPR", "PURS", "DESR")


def _pearson(row: pd.Series) -> str:
    interval = with_interval(row["pearson_pct"], row["pearson_ci_low"], row["pearson_ci_high"], unit="%")
    return f"{row['method']} {interval}"


def _proxies(load: Loader) -> tuple[pd.DataFrame, pd.DataFrame]:
    agreement = load("proxy_vs_llm", "agreement_all_answers")
    ours = pd.DataFrame([named_row(agreement, "method", name, "proxy_vs_llm/agreement_all_answers")
                         for name in KANG_PROXIES])
    return agreement, ours


_PAPER_TABLE2 = "proxy_vs_llm/paper_table2"
_OUR_DATA = Difference("data", "Serendipity-2018 only (histories from the survey itself)",
                       "Taobao Serendipity and Serendipity-2018 (histories from the logs)")
#: Every Kang proxy and prompt reads a history: the public Serendipity-2018 lacks the logs (training.csv).
_SURVEY_HISTORY = Difference("history", "at most 4 of the user's earlier survey answers",
                             "the last 10 logged items before the target")
#: The re-evaluation's judge prompt.
_BASIC_PROMPT = Difference("prompt", "Kang et al.'s basic prompt, expected score over the tokens 1–5",
                           "the CoT prompt (Tokutake et al.'s best in Table 1)")


def resampled(table: pd.DataFrame) -> str:
    """What a chapter's 95% intervals resample: "users" when its agreement table says it resampled users (column
    ``interval_resamples``), else "answers"."""
    if "interval_resamples" in table.columns and (table["interval_resamples"] == "user_id").any():
        return "users"
    return "answers"


def _printed_pearson(load: Loader, method: str) -> float:
    return float(named_row(load("proxy_vs_llm", "paper_table2"), "method", method, _PAPER_TABLE2)["pearson_pct"])


def _proxies_weak(load: Loader) -> Evidence:
    agreement, ours = _proxies(load)
    printed = {name: _printed_pearson(load, name) for name in KANG_PROXIES}
    strongest = ours.loc[ours["pearson_pct"].abs().idxmax()]
    interval = with_interval(strongest["pearson_pct"], strongest["pearson_ci_low"], strongest["pearson_ci_high"],
                             unit="%")
    return Evidence(
        paper_numbers="Serendipity-2018: " + ", ".join(f"{name} {fmt(v, 2)}%" for name, v in printed.items()),
        ours=", ".join(_pearson(row) for _, row in ours.iterrows())
             + f" (95% intervals resample {resampled(agreement)})",
        key=f"the strongest proxy (selected among {len(ours)}), {strongest['method']}, correlates {interval} "
            f"with users on {int(strongest['n']):,} answers (Pearson; the interval resamples {resampled(agreement)})",
        n=int(strongest["n"]), interval=(float(strongest["pearson_ci_low"]), float(strongest["pearson_ci_high"])),
        checks=tuple(Check(row["method"], abs(float(row["pearson_pct"])), high=WEAK_PEARSON_PCT)
                     for _, row in ours.iterrows()),
        paper_checks=tuple(Check(f"printed {name}", abs(v), high=WEAK_PEARSON_PCT) for name, v in printed.items()),
        differences=(_OUR_DATA, _SURVEY_HISTORY,
                     Difference("threshold", f"weak means |Pearson| < {WEAK_PEARSON_PCT:.0f}% (this book's own)",
                                "no threshold stated")))


def _proxies_beat_random(load: Loader) -> Evidence:
    agreement, ours = _proxies(load)
    rnd = named_row(agreement, "method", "Random", "proxy_vs_llm/agreement_all_answers")
    random_pearson = float(rnd["pearson_pct"])
    printed_random = _printed_pearson(load, "Random")
    return Evidence(
        paper_numbers=f"Serendipity-2018: Random {fmt(printed_random, 2)}%; "
                      + ", ".join(f"{name} {fmt(_printed_pearson(load, name), 2)}%" for name in KANG_PROXIES),
        key=_below_random(ours, random_pearson),
        ours=f"{_pearson(rnd)} ({int(rnd['seeds']):,} seeds); "
             + ", ".join(_pearson(row) for _, row in ours.iterrows())
             + f" (95% intervals resample {resampled(agreement)})",
        n=int(ours["n"].min()),
        checks=tuple(Check(row["method"], float(row["pearson_pct"]), low=random_pearson)
                     for _, row in ours.iterrows()),
        paper_checks=tuple(Check(f"printed {name}", _printed_pearson(load, name), low=printed_random)
                           for name in KANG_PROXIES),
        differences=(_OUR_DATA, _SURVEY_HISTORY,))


def _below_random(proxies: pd.DataFrame, random_pearson: float) -> str:
    below = proxies[proxies["pearson_pct"] < random_pearson]
    if below.empty:
        return f"every proxy correlates with users above Random's {fmt(random_pearson)}%"
    return (", ".join(f"{row['method']} ({fmt(row['pearson_pct'])}%)" for _, row in below.iterrows())
            + f" correlate{'s' if len(below) == 1 else ''} with users below Random's {fmt(random_pearson)}%")


def _table2_significant(load: Loader) -> Evidence:
    checked = load("proxy_vs_llm", "paper_claim_significance")
    rows = checked[checked["family"] != "Random"].sort_values(["dataset", "method"])
    checks = tuple(Check(f"{row['method']} ({row['dataset']})", float(row["p_value"]), high=0.05)
                   for _, row in rows.iterrows())
    failing = sum(not check.holds() for check in checks)
    return Evidence(
        paper_numbers=f"{len(rows)} printed correlations (Taobao n = {int(rows['n'].max()):,}, Serendipity-2018 "
                      f"n = {int(rows['n'].min()):,})",
        ours=f"with the paper's own n, {failing} of {len(rows)} printed correlations are not significant at "
             "p < 0.05",
        key=f"by the paper's own n, {failing} of its {len(rows)} correlations are not significant at p < 0.05",
        paper_checks=checks)


def _gain_over_sog(load: Loader) -> Evidence:
    gains = load("proxy_vs_llm", "paper_claim_gain_over_sog").sort_values(["dataset", "judge"])
    low, high = ABOUT_100_PCT
    return Evidence(
        paper_numbers="; ".join(f"{row['judge']} on {row['dataset']}: {fmt(row['pearson_pct'], 2)}% vs SOG "
                                f"{fmt(row['sog_pearson_pct'], 2)}%" for _, row in gains.iterrows()),
        ours=("gain over SOG by the paper's own Table 2: "
              + ", ".join(f"{row['judge']} {row['dataset']} +{fmt(row['gain_over_sog_pct'], 1)}%"
                          for _, row in gains.iterrows())
              + f"; 'about 100%' read as {low:.0f}–{high:.0f}%"),
        key=f"by the paper's own Table 2 the gains over SOG are {fmt(gains['gain_over_sog_pct'].min(), 0)}% to "
            f"{fmt(gains['gain_over_sog_pct'].max(), 0)}%, about 100% in "
            f"{int(gains['gain_over_sog_pct'].between(low, high).sum())} of {len(gains)} cases",
        paper_checks=tuple(Check(f"{row['judge']} on {row['dataset']}", float(row["gain_over_sog_pct"]), low, high)
                           for _, row in gains.iterrows()),
        missing=NEEDS_A_CAPABLE_LLM)


def _auxiliary_data(load: Loader) -> Evidence:
    settings = _book_judge_rows(load("auxiliary_data", "agreement_by_setting"), "judge", BOOK_JUDGE, prefix=True)
    versus = load("auxiliary_data", "tables45_vs_paper")
    none = named_row(versus, "method", "none (NA)", "auxiliary_data/tables45_vs_paper")
    best = named_row(versus, "method", "Auxiliary Data", "auxiliary_data/tables45_vs_paper")
    others = settings[settings["method"] != "none (NA)"]
    differ = int((others["p_pearson_vs_ref"] < 0.05).sum())
    return Evidence(
        paper_numbers=f"Qwen2.5-14B few-shot: none {fmt(none['paper_pearson_pct'], 2)}%, best auxiliary data "
                      f"{fmt(best['paper_pearson_pct'], 2)}%",
        ours=f"SmolLM2-135M: {differ} of {len(others)} settings differ from none at p < 0.05",
        n=int(none["n"]),
        differences=(_SURVEY_HISTORY, Difference("scoring", "expected score over the tokens 1–5", "integer score"),
                     Difference("model class", "SmolLM2-135M", "Qwen2.5 and GPT-4"),
                     Difference("sample", f"{int(none['n'])} answers", "all answers")),
        missing=NEEDS_A_CAPABLE_LLM,
        sample=_correlation_gain_need(int(none["n"]), float(none["paper_pearson_pct"]),
                                      float(best["paper_pearson_pct"]), _serendipity_2018_answers()))


def _correlation_gain_need(n_here: int, before_pct: float, after_pct: float,
                           available: int | None = None) -> SampleNeed:
    """The answers a paper's gain in Pearson (``before_pct`` → ``after_pct``) needs, by Fisher z on two independent
    samples (this book's reading: the paper does not say how its settings share answers)."""
    return SampleNeed(n_here, power.n_for_correlation_difference(before_pct / 100, after_pct / 100),
                      f"the paper's gain of {fmt(after_pct - before_pct, 1)} points in Pearson ({fmt(before_pct, 1)}% "
                      f"→ {fmt(after_pct, 1)}%)", "Fisher z, two independent samples, 80% power, α = 0.05",
                      available)


def _serendipity_2018_answers() -> int:
    """Serendipity-2018's survey answers in all (the sum of Tokutake et al.'s printed distribution of g)."""
    from recjudge import papers

    return int(papers.table("tokutake2025framework_g_distribution")["answers"].sum())


def splits(cell: str) -> str:
    """"13 distinct cells in 20 splits": how a held-out row of the ensembles' table was chosen, without its
    "chosen per split (...)" wrapper."""
    inner = re.fullmatch(r"chosen per split \((.*)\)", cell)
    return inner.group(1) if inner else cell


def answers_per_half(row: pd.Series) -> str:
    """The answers of one held-out half, from a held-out row's fewest (``n``) and most (``n_max``) over the splits:
    "6", or "5–6" (halves of an odd number of users differ); counts, never a mean such as 5.5."""
    low, high = int(row["n"]), int(row["n_max"])
    return f"{low}" if low == high else f"{low}–{high}"


def _ensembles(load: Loader) -> Evidence:
    table5 = load("llm_ensembles", "table5_ours")
    held = named_row(table5, "method", "Multi-LLM & Auxiliary Data, held out", "llm_ensembles/table5_ours")
    printed = papers.table("kang2025serendipity_tables4_5").query("table == 5 and dataset == 'Serendipity-2018'")
    return Evidence(
        paper_numbers="Table 5, Serendipity-2018 (Pearson): " + ", ".join(
            f"{row['method']} {fmt(row['pearson_pct'], 2)}%" for _, row in printed.iterrows()),
        key=unless_too_few(f"chosen on half of the users, the tiny judges' best ensemble agrees "
                           f"{fmt(held['pearson_pct'])}% (Pearson) with the other half", int(held["n"]),
                           detail=f"{answers_per_half(held)} per held-out half"),
        n=int(held["n"]),
        ours=f"tiny judges' ensemble on held-out users: {fmt(held['pearson_pct'])}% ({splits(held['cell'])}; about "
             f"{answers_per_half(held)} answers per held-out half)",
        differences=(_SURVEY_HISTORY, Difference("model class", "tiny local models", "GPT-4, Qwen2.5, LLaMA2")),
        missing=NEEDS_A_CAPABLE_LLM,
        sample=_correlation_gain_need(int(held["n"]), *_kang_table5_gain(), _serendipity_2018_answers()))


def _kang_table5_gain() -> tuple[float, float]:
    """Kang et al.'s Table 5 on Serendipity-2018: Pearson (%) with auxiliary data, and with several LLMs as well."""
    from recjudge import papers

    table5 = papers.table("kang2025serendipity_tables4_5")
    rows = table5[(table5["table"] == 5) & (table5["dataset"] == "Serendipity-2018")].set_index("method")
    return float(rows.loc["Auxiliary Data", "pearson_pct"]), float(rows.loc["Multi-LLM & Auxiliary Data",
                                                                           "pearson_pct"])


def _g_distribution(load: Loader) -> Evidence:
    search = load("prompt_strategies", "ground_truth_search")
    closest = named_row(search, "rank", 1, "prompt_strategies/ground_truth_search")
    distance = int(closest["distance"])
    return Evidence(
        paper_numbers="the counts of g = 1…5 printed in section 4.1",
        ours=f"{len(search):,} readings of the survey searched; the closest, {closest['candidate']}, has an L1 "
             f"distance of {distance} between its histogram and the printed one (sum of the count differences)",
        key=f"the closest of {len(search):,} readings of the survey has an L1 distance of {distance} from the printed "
            "histogram of g (the sum of the count differences)",
        checks=(Check("L1 distance of the closest reading", distance, high=0),))


def _avg_score_vs_g(load: Loader) -> Evidence:
    alignment = load("recommender_reevaluation", "paper_claim_avg_score_vs_g").sort_values(["dataset", "recommender"])
    g_mean = float(alignment["g_mean"].iloc[0])
    table3 = _book_judge_rows(load("recommender_reevaluation", "table3_latest-small"), "judge", BOOK_JUDGE_MODEL)
    ours = table3[table3["recommender"] != "Random"]["avg_score_mean"]
    users, per_fold = _judged_users(table3)
    return Evidence(
        paper_numbers=f"Avg. Score@20 {fmt(alignment['avg_score'].min(), 3)}–{fmt(alignment['avg_score'].max(), 3)} "
                      f"over {len(alignment)} dataset × recommender cells; g's mean {fmt(g_mean, 3)}",
        ours=f"SmolLM2-135M's Avg. score (expected) {fmt(ours.min(), 2)}–{fmt(ours.max(), 2)} on {per_fold} judged "
             f"user(s) per fold; a judge that answered {fmt(g_mean, 2)} for every item would match g's mean as well",
        key=f"a judge answering {fmt(g_mean, 2)} for every item matches g's mean exactly; by the paper's own "
            f"Table 1 its Table 3 judge (GPT-4o-mini, CoT) errs {_more_or_less('GPT-4o-mini')} on g than answering "
            f"{_tokutake_baselines().loc[MODE, 'answer']} every time ({_cot_versus_constant('GPT-4o-mini')})",
        n=users,
        paper_checks=(*(Check(f"{row['dataset']} {row['recommender']}", float(row["avg_score"]), 2.1, 2.4)
                        for _, row in alignment.iterrows()), Check("g's mean", g_mean, 2.1, 2.4),
                      *_beats_the_constant("GPT-4o-mini", "CoT")),
        baselines=_tokutake_baseline_words(),
        differences=(_BASIC_PROMPT,),
        missing=NEEDS_A_CAPABLE_LLM)


def _tokutake_baselines() -> pd.DataFrame:
    return tokutake_baselines().set_index("baseline")


def _tokutake_baseline_words() -> str:
    """The constant answers and Random on Tokutake et al.'s printed g, in words."""
    base = _tokutake_baselines()
    mode, mean, rnd = base.loc[MODE], base.loc[MEAN], base.loc[RANDOM]
    return (f"on the paper's printed g (n = {int(mode['n']):,}), answering {mode['answer']} for every item (the most "
            f"frequent level, chosen leaving each answer out) has MAE {fmt(mode['mae'], 3)} and three-class accuracy "
            f"{fmt(mode['accuracy_pct'], 1)}%; answering the mean ({mean['answer']}) MAE {fmt(mean['mae'], 3)}, "
            f"{fmt(mean['accuracy_pct'], 1)}%; Random MAE {fmt(rnd['mae'], 3)}, {fmt(rnd['accuracy_pct'], 1)}% "
            "(expected)")


def _table1_row(model: str, strategy: str) -> pd.Series:
    rows = tokutake_table1_vs_baselines()
    return rows[(rows["model"] == model) & (rows["strategy"] == strategy)].iloc[0]


def _more_or_less(model: str) -> str:
    """"more" when answering the most frequent level of g has a lower MAE than ``model``'s CoT row, else "less"."""
    return "more" if bool(_table1_row(model, "CoT")["constant_beats_mae"]) else "less"


def _cot_versus_constant(model: str) -> str:
    row = _table1_row(model, "CoT")
    return (f"MAE {fmt(row['mae'], 3)} vs {fmt(row['constant_mode_mae'], 3)}, accuracy "
            f"{fmt(row['accuracy_pct'], 2)}% vs {fmt(row['constant_mode_accuracy_pct'], 1)}%")


def _beats_the_constant(model: str, strategy: str) -> tuple[Check, Check]:
    """Checks that a Table 1 row of Tokutake et al. beats answering the most frequent level of g, on MAE and on
    three-class accuracy (the paper's own numbers: its Table 1 and its printed distribution of g)."""
    row = _table1_row(model, strategy)
    answer = row["constant_mode_answer"]
    return (Check(f"{model} {strategy}'s MAE below answering {answer} ({fmt(row['constant_mode_mae'], 3)})",
                  float(row["mae"]), high=float(row["constant_mode_mae"])),
            Check(f"{model} {strategy}'s accuracy above answering {answer} "
                  f"({fmt(row['constant_mode_accuracy_pct'], 1)}%)", float(row["accuracy_pct"]),
                  low=float(row["constant_mode_accuracy_pct"])))


def _judged_users(table3: pd.DataFrame) -> tuple[int, str]:
    """The users the judge scored in a re-evaluation table (its ``n_users``, "1/1/1": per fold), summed over the
    folds, for the recommender with the fewest, and per fold in words ("1", "2–3")."""
    per_fold = [[int(users) for users in str(cell).split("/")] for cell in table3["n_users"]]
    fewest = min(per_fold, key=sum)
    low, high = min(fewest), max(fewest)
    return sum(fewest), f"{low}" if low == high else f"{low}–{high}"


def _strategies(load: Loader) -> Evidence:
    metrics = in_order(_book_judge_rows(load("prompt_strategies", "metrics"), "judge", BOOK_JUDGE), "template",
                       STRATEGIES)
    parsed = metrics[metrics["n"] > 0]
    table1 = tokutake_table1_vs_baselines()
    lowest = tuple(Check(f"{model}'s CoT has the lowest MAE of the {len(rows)} prompts",
                         float(rows.loc[rows["strategy"] == "CoT", "mae"].iloc[0]), high=float(rows["mae"].min()))
                   for model, rows in table1.groupby("model", sort=True))
    against_constant = tuple(check for model in sorted(table1["model"].unique())
                             for check in _beats_the_constant(model, "CoT"))
    best = _table1_row("GPT-4o-mini", "CoT")
    return Evidence(
        paper_numbers="MAE and three-class accuracy by prompt (Table 1): GPT-4o-mini CoT "
                      f"{fmt(best['mae'], 3)}, {fmt(best['accuracy_pct'], 2)}% (the paper's best)",
        key=f"the paper's best judge, GPT-4o-mini with CoT, errs {_more_or_less('GPT-4o-mini')} on its own g than "
            f"answering {best['constant_mode_answer']} for every item ({_cot_versus_constant('GPT-4o-mini')})",
        paper_checks=lowest + against_constant,
        baselines=_tokutake_baseline_words(),
        ours=("SmolLM2-135M's MAE " + ", ".join(f"{row['template']} {fmt(row['mae'], 2)} (n = {int(row['n'])})"
                                               for _, row in parsed.iterrows())
              if len(parsed) else "no reply of SmolLM2-135M held a score"),
        missing=NEEDS_A_CAPABLE_LLM)


def _serendipity_ranking(load: Loader) -> Evidence:
    table3 = _book_judge_rows(load("recommender_reevaluation", "table3_latest-small"), "judge", BOOK_JUDGE_MODEL)
    scores = table3[table3["recommender"] != "Random"]["avg_score_mean"]
    users, per_fold = _judged_users(table3)
    ours = (f"SmolLM2-135M's Avg. score (expected) {fmt(scores.min(), 2)}–{fmt(scores.max(), 2)} on "
            f"ml-latest-small ({per_fold} judged user(s) per fold)")
    return Evidence(
        paper_numbers="GPT-4o-mini's Precision/NDCG_ser@20 and Avg. Score@20 by recommender",
        ours=ours, key=unless_too_few(ours, users, "judged users", f"{per_fold} per fold"), n=users,
        differences=(Difference("data", "ml-latest-small", "ML-1M, Goodreads, Amazon"), _BASIC_PROMPT),
        missing=NEEDS_A_CAPABLE_LLM)


def _accuracy_order(load: Loader) -> Evidence:
    order = named_row(load("recommender_reevaluation", "order_vs_paper_1m"), "metric", "n_acc",
                      "recommender_reevaluation/order_vs_paper_1m")
    tuned = load("recommender_reevaluation", "tuned_values_1m")
    six = tuned[tuned["recommender"].isin(["BPRMF", "SASRec", "KFN", "UAUM", "DESR", "PURS"])]
    trials = six.groupby("recommender")["trials"].max()
    short = trials[trials < PAPER_TRIALS]
    budget = span(short.min(), short.max(), 0) if len(short) else ""
    tau, p = float(order["tau"]), float(order["p"])
    # the claim is a positive association: the one-sided p-value of Kendall's two-sided test
    one_sided = p / 2 if tau > 0 else 1 - p / 2
    return Evidence(
        key=f"Kendall's τ between our order and the paper's is {fmt(tau, 2)} ({int(order['n'])} recommenders)",
        paper_numbers=f"{order['paper_order']} (NDCG_acc@20)",
        ours=f"{order['our_order']}; Kendall's τ {fmt(order['tau'], 2)} (p {fmt(order['p'], 2)}, n = "
             f"{int(order['n'])} recommenders)",
        n=int(order["n"]),
        checks=(Check("one-sided p of τ > 0", one_sided, high=0.05),),
        differences=(Difference("tuning budget", f"{budget} TPE trials per fold" if budget else
                                f"at least {PAPER_TRIALS} trials", f"{PAPER_TRIALS} trials per fold",
                                blocks=not short.empty),))


def _zhang_rows(names: tuple[str, ...]) -> Callable[[Loader], Evidence]:
    def read(load: Loader) -> Evidence:
        gaps = load("explanation_evaluators", "table1_agreement_by_row")
        where = "explanation_evaluators/table1_agreement_by_row"
        rows = {name: named_row(gaps, "evaluator", name, where) for name in names}
        return Evidence(
            paper_numbers=f"{sum(int(row['cells']) for row in rows.values())} printed cells",
            ours="mean gap to the printed cells: " + ", ".join(
                f"{name} {fmt(row['mean_abs_difference'], 2)}" for name, row in rows.items())
                 + f" points (within {CLOSE_POINTS} counts as recomputed: this book's threshold)",
            key=_gaps_in_words(rows),
            checks=tuple(Check(name, float(row["mean_abs_difference"]), high=CLOSE_POINTS)
                         for name, row in rows.items()))
    return read


def _gaps_in_words(rows: dict[str, pd.Series]) -> str:
    """"all 36 printed cells recomputed within 0.005 points" when every cell is within this book's threshold, else
    the rows' mean gaps."""
    cells = sum(int(row["cells"]) for row in rows.values())
    largest = max(float(row["max_abs_difference"]) for row in rows.values())
    if largest <= CLOSE_POINTS:
        return f"all {cells} printed cells recomputed within {fmt(largest, 3)} points"
    gaps = [float(row["mean_abs_difference"]) for row in rows.values()]
    return f"mean gaps of {span(min(gaps), max(gaps), 1)} points to the {cells} printed cells"


def evaluator_replies(load: Loader) -> tuple[int, int]:
    """Zhang et al.'s chapter: (replies that held a score, replies) of every LLM evaluator run of the book's own
    judge, with our reconstructed prompts and with the authors' own; a reply read two ways counts once, as its first
    reading (``distinct_runs``)."""
    runs = pd.concat([_book_judge_rows(load("explanation_evaluators", "llm_runs"), "model", BOOK_JUDGE_RUNS),
                      _book_judge_rows(load("explanation_evaluators", "authors_runs"), "model", BOOK_JUDGE_RUNS)],
                     ignore_index=True)
    runs = distinct_runs(runs)
    total = int(runs["n_replies"].sum())
    return total - int(runs["n_unparsable"].sum()), total


def _llm_evaluators(load: Loader) -> Evidence:
    held, total = evaluator_replies(load)
    printed = papers.table("zhang2024explanations_table1")
    average = printed[printed["aspect"] == "average"].set_index("evaluator")["dataset"]
    llms = average[average.index.str.endswith(")")]
    references = average[average.index.str.startswith(("BLEU", "ROUGE"))]
    return Evidence(paper_numbers=f"Table 1, Average column, dataset level: the best LLM {llms.idxmax()} "
                                  f"{fmt(llms.max(), 2)}%, the best reference metric {references.idxmax()} "
                                  f"{fmt(references.max(), 2)}% (Pearson)",
                    ours=f"SmolLM2-135M: {held:,} of {total:,} distinct replies held a score (every run, the authors' "
                         "prompt included; a reply read two ways counted once)", n=total, missing=NEEDS_A_CAPABLE_LLM,
                    sample=_correlation_gain_need(held, *_zhang_best_llm_over_metrics()))


def _zhang_best_llm_over_metrics() -> tuple[float, float]:
    """Zhang et al.'s Table 1, dataset level, average of the aspects: the best reference metric's Pearson (%) and the
    best LLM evaluator's."""
    from recjudge import papers

    table1 = papers.table("zhang2024explanations_table1")
    average = table1[table1["aspect"] == "average"].set_index("evaluator")["dataset"]
    metrics = average[["BLEU-1", "BLEU-4", "ROUGE-1-F", "ROUGE-L-F"]]
    llms = average[average.index.str.contains(r"\((?:S|M)\)$")]
    return float(metrics.max()), float(llms.max())


_LATEST_SMALL = Difference("data", "ml-latest-small (embedded sample)", "MovieLens-1M with movie descriptions")
#: Lima & Peres: "at least 30 intervals of at least 30 users" (Table 2's setting).
PAPER_MIN_USERS = PAPER_INTERVALS = 30


def _lima_frames(load: Loader) -> Difference:
    """The time frames Lima & Peres's chapter used (its threshold of common users and the intervals it kept)."""
    scope = load("normalised_surprise", "experiment2_scope").iloc[0]
    return Difference("time frames", f"{int(scope['intervals_used'])} intervals of at least "
                                     f"{int(scope['min_common_users'])} common users",
                      f"at least {PAPER_INTERVALS} intervals of at least {PAPER_MIN_USERS} users")


def _lima_table2_means() -> str:
    """Lima & Peres's Table 2 as printed: the range of each recommender's mean normalised surprise over the cells."""
    printed = papers.table("lima_limits_to_surprise_table2")
    return "Table 2, mean normalised surprise over " + f"{len(printed)} item model × distance cells: " + ", ".join(
        f"{name} {fmt(printed[f'{name}_mean'].min(), 3)}–{fmt(printed[f'{name}_mean'].max(), 3)}"
        for name in ("MSI", "kNN", "LSI"))


def _surprise_order(load: Loader) -> Evidence:
    ordering = load("normalised_surprise", "ordering_check").sort_values(["model", "distance", "inequality"])
    cells = ordering[["model", "distance"]].drop_duplicates()
    return Evidence(
        paper_numbers=_lima_table2_means(),
        ours=f"{int(ordering['holds_on_means'].astype(bool).sum())} of {len(ordering)} inequalities hold on the "
             f"means ({len(cells)} model × distance cells × {ordering['inequality'].nunique()} inequalities)",
        key=f"the order holds on the means in {int(ordering['holds_on_means'].astype(bool).sum())} of "
            f"{len(ordering)} comparisons (every item model and distance)",
        checks=tuple(Check(f"{row['model']} {row['distance']} {row['inequality']}", float(row["mean_difference"]),
                           low=0.0) for _, row in ordering.iterrows()),
        differences=(_LATEST_SMALL, _lima_frames(load)))


def _magnitudes(load: Loader) -> Evidence:
    load("normalised_surprise", "table2_vs_paper")
    return Evidence(paper_numbers=_lima_table2_means(), differences=(_LATEST_SMALL, _lima_frames(load)),
                    missing="MovieLens-1M's movie descriptions used by the paper")


def _coefficients_of_variation(load: Loader) -> Evidence:
    cv = load("normalised_surprise", "paper_claim_coefficients_of_variation").sort_values(["varies", "fixed"])

    def name(row: pd.Series) -> str:
        return f"{row['varies']} ({row['fixed']})"

    return Evidence(
        paper_numbers=", ".join(f"{name(row)} {fmt(row['printed_cv_pct'], 1)}%" for _, row in cv.iterrows()),
        ours=", ".join(f"{name(row)} {fmt(row['cv_pct_ours'], 1)}%" for _, row in cv.iterrows())
             + f" (kNN; non-negligible read as at least {NON_NEGLIGIBLE_CV_PCT:.0f}%: this book's threshold)",
        key=f"coefficients of variation of {fmt(cv['cv_pct_ours'].min(), 1)}% to {fmt(cv['cv_pct_ours'].max(), 1)}% "
            "here",
        checks=tuple(Check(name(row), float(row["cv_pct_ours"]), low=NON_NEGLIGIBLE_CV_PCT)
                     for _, row in cv.iterrows()),
        paper_checks=tuple(Check(f"recomputed {name(row)}", float(row["cv_pct_paper_table"]),
                                 float(row["printed_cv_pct"]) - 0.05, float(row["printed_cv_pct"]) + 0.05)
                           for _, row in cv.iterrows()),
        differences=(_LATEST_SMALL, _lima_frames(load)))


def _metamorphic_lists(load: Loader) -> Evidence:
    parsing = load("metamorphic_recommender", "reply_parsing")
    printed = papers.table("khirbat2024metamorphic_table4")
    return Evidence(paper_numbers="Table 4, GPT-3.5-turbo's Kendall's τ to the reference list: " + ", ".join(
                        f"{row['relation']} {fmt(row['kendall_tau'], 4)}" for _, row in printed.iterrows()),
                    ours=f"SmolLM2-135M: {int(parsing['not_a_list'].sum())} of {int(parsing['replies'].sum())} "
                         "replies are not a list of titles",
                    missing=NEEDS_A_CAPABLE_LLM)


def _authors_prompt_aspects(load: Loader) -> Evidence:
    statements = load("explanation_evaluators", "authors_prompt_statements").sort_values("aspect")
    asks = statements["asks_its_aspect"].astype(bool)
    aspect_of = dict(zip(statements["questionnaire_statement"], statements["aspect"]))
    wrong = statements[~asks]
    return Evidence(
        paper_numbers=f"the authors' prompt: one line per aspect ({', '.join(statements['aspect'])})",
        ours=(f"{int(asks.sum())} of {len(statements)} lines state their aspect's questionnaire statement"
              + "".join(f"; the {row['line']} line states the {aspect_of.get(row['statement_asked'], 'no')} "
                        f"statement (“{row['statement_asked']}”)" for _, row in wrong.iterrows())),
        key=("every aspect's line asks its own questionnaire statement" if wrong.empty else
             "; ".join(f"the prompt never asks about {row['aspect']} (its {row['line']} line repeats the "
                       f"{aspect_of.get(row['statement_asked'], 'no')} statement, “{row['statement_asked']}”)"
                       for _, row in wrong.iterrows())),
        paper_checks=tuple(Check(f"{row['line']} line", float(bool(row["asks_its_aspect"])), low=1.0)
                           for _, row in statements.iterrows()),
        paper_text=True)


#: A judge is said to save human labels when, with this many labels, PPI++ with its scores is worth at least ...
TRUST_LABELS = 100
#: ... this many labels more than the labels alone (this book's own threshold: one whole label).
SAVED_LABELS = trust_rules.SAVED_LABELS


def _labels_saved(load: Loader) -> Evidence:
    worth = load("trust_judges", "labels_worth")
    kinds = dict(zip(*(load("trust_judges", "judges")[column] for column in ("judge", "kind"))))
    mean = worth[(worth["estimand"] == "mean serendipity") & (worth["n"] == TRUST_LABELS)]
    llms = mean[mean["judge"].map(kinds).fillna("").str.contains("LLM")].sort_values("judge")
    if llms.empty:
        raise KeyError(f"trust_judges/labels_worth: no LLM judge's row for the mean at n = {TRUST_LABELS}")
    best = llms.loc[llms["labels_worth"].idxmax()]
    gains = llms["labels_worth"] - TRUST_LABELS
    return Evidence(
        ours=f"with {TRUST_LABELS} human labels, PPI++ with each LLM judge's scores is worth "
             + ", ".join(f"{row['judge']} {fmt(row['labels_worth'], 1)}" for _, row in llms.iterrows())
             + " labels (one whole label saved counts: this book's threshold)",
        key=(f"with {TRUST_LABELS} human labels, the most useful of {len(llms)} LLM judges here (selected: "
             f"{best['judge']}) "
             f"is worth {fmt(best['labels_worth'], 1)} labels, {fmt(float(gains.max()), 1)} more than the labels "
             "alone" + (f": no saving (under this book's threshold of {fmt(SAVED_LABELS, 0)} whole label)"
                        if float(gains.max()) < SAVED_LABELS else "")),
        n=TRUST_LABELS,
        # The saving is read as the part V rule reads it (trust_rules.saved_labels: beyond the simulation's noise
        # and its tuning bias); a table written before the Monte Carlo interval existed gives the worth itself.
        checks=tuple(Check(str(row["judge"]), trust_rules.saved_labels(row, TRUST_LABELS)
                           if "labels_worth_mc_low" in row else float(row["labels_worth"]) - TRUST_LABELS,
                           low=SAVED_LABELS) for _, row in llms.iterrows()),
        differences=(Difference("model class", "tiny local models and recorded gpt-3.5-turbo",
                                "no paper measures what its judge is worth in labels"),))

