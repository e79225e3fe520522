"""The claims' readers: for each claim of the registry (:mod:`recjudge.compendium.claims`), the function that reads
the build's result tables and returns its :class:`~recjudge.compendium.claim_evidence.Evidence`, with the helpers they
share and the thresholds this book sets where no paper states one.

Every number is selected by name (:func:`~recjudge.compendium.claim_evidence.named_row`), so a reordered table cannot
put another number in a claim; a table the build did not write raises ``FileNotFoundError``, which makes the claim
"not run in this build".
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence

import pandas as pd

from recjudge import papers
from recjudge.compendium import trust_rules
from recjudge.compendium.claim_evidence import (
    NEEDS_A_CAPABLE_LLM,
    READER_JUDGES,
    SOME,
    TINY_JUDGES,
    Check,
    Difference,
    Evidence,
    Loader,
    SampleNeed,
    holding,
    named_row,
)
from recjudge.compendium.claim_intervals import (
    R_AB_WORDS,
    against_random,
    bootstrap_interval,
    contrast_check,
    labels_saved_per_100,
    labels_worth_words,
    points,
    saved_interval,
    with_interval,
)
from recjudge.compendium.comparisons import (
    ABOUT_100_PCT,
    NEEDS_SEVERAL_JUDGES,
    NONE_SETTING,
    ZHANG_ASPECTS,
    gain_check,
    reader_evaluators_versus,
    reader_gaps_to_cot,
    reader_rankings,
    reader_settings_versus_none,
    reader_versus_sog,
    readers_average_checks,
    versus_check,
)
from recjudge.compendium.pages import fmt, span, unless_too_few
from recjudge.metaeval import paper_judges
from recjudge.metaeval.baselines import MEAN, MODE, RANDOM, three_class
from recjudge.metaeval.dependent import (
    contrast_interval,
    n_for_dependent_difference,
    paired_mean_interval,
    ratio_interval,
)
from recjudge.metaeval.papers_vs_baselines import tokutake_baselines, tokutake_table1_vs_baselines
from recjudge.prompts.explanations import distinct_runs

#: This book's own thresholds (no paper states one): |Pearson| below this (in %) is called weak agreement ...
WEAK_PEARSON_PCT = 20.0
#: ... a printed cell counts as recomputed when ours is within this many points (Zhang et al.'s Table 1, in %) ...
CLOSE_POINTS = 1.5
#: ... and a coefficient of variation of at least this (in %) is a non-negligible effect of a modelling choice.
NON_NEGLIGIBLE_CV_PCT = 10.0
#: Tokutake et al. tuned every recommender with this many TPE trials per fold.
PAPER_TRIALS = 100
#: Tokutake et al.'s range of Avg. Score@20 that "aligns with" g (section 5.2, finding (3)) ...
TOKUTAKE_AVG_SCORE_RANGE = (2.1, 2.4)
#: ... and the MAE below which their CoT judge "can effectively distinguish" serendipitous items (section 4.2).
TOKUTAKE_MAE_BOUND = 1.0

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



def r_with_interval(pct: float, low_pct: float, high_pct: float) -> str:
    """"r = 0.09 [0.04, 0.14]": a Pearson correlation held in per cent, as a reader meets it first (r, with its
    95% interval when defined)."""
    return "r = " + with_interval(pct / 100, low_pct / 100, high_pct / 100, decimals=2)


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
#: Kang et al.'s judges are capable LLMs; this book's are tiny.
_KANG_MODEL_CLASS = Difference("model class", "tiny local models (SmolLM2-135M and others under 2B parameters)",
                               "Qwen2.5, GPT-4 and LLaMA2")
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


def _proxies_weak(load: Loader, readers: Sequence[str] = ()) -> Evidence:
    agreement, ours = _proxies(load)
    printed = {name: _printed_pearson(load, name) for name in KANG_PROXIES}
    strongest = ours.loc[ours["pearson_pct"].abs().idxmax()]
    interval = r_with_interval(strongest["pearson_pct"], strongest["pearson_ci_low"], strongest["pearson_ci_high"])
    return Evidence(
        paper_numbers="Serendipity-2018: " + ", ".join(f"{name} {fmt(v, 2)}%" for name, v in printed.items()),
        ours=", ".join(_pearson(row) for _, row in ours.iterrows())
             + f" (95% intervals resample {resampled(agreement)})",
        key=f"the strongest proxy (selected among {len(ours)}), {strongest['method']}, correlates with users at "
            f"{interval} on {int(strongest['n']):,} answers (Pearson; the interval resamples {resampled(agreement)})",
        n=int(strongest["n"]), interval=(float(strongest["pearson_ci_low"]), float(strongest["pearson_ci_high"])),
        checks=tuple(Check(row["method"], abs(float(row["pearson_pct"])), high=WEAK_PEARSON_PCT)
                     for _, row in ours.iterrows()),
        paper_checks=tuple(Check(f"printed {name}", abs(v), high=WEAK_PEARSON_PCT) for name, v in printed.items()),
        differences=(_OUR_DATA, _SURVEY_HISTORY,
                     Difference("threshold", f"weak means |Pearson| < {WEAK_PEARSON_PCT:.0f}% (this book's own)",
                                "no threshold stated")))


def _proxies_beat_random(load: Loader, readers: Sequence[str] = ()) -> Evidence:
    agreement, ours = _proxies(load)
    rnd = named_row(agreement, "method", "Random", "proxy_vs_llm/agreement_all_answers")
    random_pearson = float(rnd["pearson_pct"])
    printed_random = _printed_pearson(load, "Random")
    return Evidence(
        paper_numbers=f"Serendipity-2018: Random {fmt(printed_random, 2)}%; "
                      + ", ".join(f"{name} {fmt(_printed_pearson(load, name), 2)}%" for name in KANG_PROXIES),
        key=against_random(ours, random_pearson),
        ours=f"{_pearson(rnd)} ({int(rnd['seeds']):,} seeds); "
             + ", ".join(_pearson(row) for _, row in ours.iterrows())
             + f" (95% intervals resample {resampled(agreement)})",
        n=int(ours["n"].min()),
        checks=tuple(Check(row["method"], float(row["pearson_pct"]), low=random_pearson,
                           interval_at=bootstrap_interval(row["pearson_pct"], row["pearson_ci_low"],
                                                          row["pearson_ci_high"]))
                     for _, row in ours.iterrows()),
        paper_checks=tuple(Check(f"printed {name}", _printed_pearson(load, name), low=printed_random)
                           for name in KANG_PROXIES),
        differences=(_OUR_DATA, _SURVEY_HISTORY,))


def _table2_significant(load: Loader, readers: Sequence[str] = ()) -> Evidence:
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




def _gains(load: Loader) -> pd.DataFrame:
    gains = load("proxy_vs_llm", "paper_claim_gain_over_sog").sort_values(["dataset", "judge"])
    return gains.assign(n=gains["dataset"].map(paper_judges.KANG_RATINGS))


def _weakest_need(rows: pd.DataFrame, better: str, worse: str, n_here: int, effect: str) -> SampleNeed:
    """The answers the smallest of ``rows``' leads (``better`` over ``worse``, Pearson %) needs on the same answers,
    at r₁₂ = 0; ``n_here``: the answers this build's judges were asked."""
    gaps = (rows[better] - rows[worse]).abs()
    weakest = rows.loc[gaps.idxmin()]
    need = n_for_dependent_difference(weakest[better] / 100, weakest[worse] / 100)
    available = int(weakest["n"]) if "n" in rows else None
    return SampleNeed(n_here, need, f"{effect} ({fmt(weakest[worse], 1)}% → {fmt(weakest[better], 1)}%)",
                      "two correlations on the same answers, r₁₂ = 0, 80% power, α = 0.05", available)


def _llms_beat_sog(load: Loader, readers: Sequence[str] = ()) -> Evidence:
    gains = _gains(load)
    checks = tuple(contrast_check(f"{row['judge']} on {row['dataset']}", row["pearson_pct"], row["sog_pearson_pct"],
                                  int(row["n"])) for _, row in gains.iterrows())
    clear = [check for check in checks if check.holds()]
    sample = load("proxy_vs_llm", "agreement_sample")
    yours = tuple(versus_check(f"{label} − SOG", judge, sog)
                  for label, judge, sog in reader_versus_sog(load, readers))
    return Evidence(
        paper_numbers="; ".join(f"{row['judge']} on {row['dataset']}: {fmt(row['pearson_pct'], 2)}% vs SOG "
                                f"{fmt(row['sog_pearson_pct'], 2)}% (n = {int(row['n']):,})"
                                for _, row in gains.iterrows()),
        ours=("the LLMs' lead over SOG by the paper's own Table 2: "
              + ", ".join(f"{check.name} {points(check)}" for check in checks)
              + f" (95% intervals; {R_AB_WORDS})"
              + ("; your judges' lead over SOG on the chapter's sample: "
                 + ", ".join(f"{check.name} {points(check)}" for check in yours) if yours else "")),
        key=(f"by the paper's own numbers at its n, the LLMs' lead over SOG is clear in {len(clear)} of "
             f"{len(checks)} cells" + (f" ({'; '.join(f'{c.name}, {points(c)}' for c in clear)})" if clear
                                       else "") + "; the others' intervals hold 0"),
        paper_checks=checks,
        checks=yours,
        missing="" if yours else NEEDS_A_CAPABLE_LLM,
        judges=READER_JUDGES if yours else TINY_JUDGES,
        sample=_weakest_need(gains, "pearson_pct", "sog_pearson_pct", int(sample["n"].max()),
                             "the smallest of the paper's leads over SOG"))


#: Kang et al.'s "approximately 100%" gain over SOG (in %) (the range it is read as: ``ABOUT_100_PCT``).
CLAIMED_GAIN_PCT = 100.0


def _gain_about_100(load: Loader, readers: Sequence[str] = ()) -> Evidence:
    gains = _gains(load)
    low, high = ABOUT_100_PCT
    checks = []
    for _, row in gains.iterrows():
        def interval_at(level: float, r_a: float = row["pearson_pct"] / 100, r_b: float = row["sog_pearson_pct"] / 100,
                        n: int = int(row["n"])) -> tuple[float, float]:
            _, below, above = ratio_interval(r_a, r_b, n, level=level)
            return 100 * (below - 1), 100 * (above - 1)

        checks.append(Check(f"{row['judge']} on {row['dataset']}", 100 * (row["pearson_pct"] / row["sog_pearson_pct"]
                                                                          - 1), low, high, interval_at=interval_at))
    yours = tuple(gain_check(f"{label} over SOG", judge, sog) for label, judge, sog in
                  reader_versus_sog(load, readers))
    return Evidence(
        paper_numbers="; ".join(f"{row['judge']} on {row['dataset']}: {fmt(row['pearson_pct'], 2)}% vs SOG "
                                f"{fmt(row['sog_pearson_pct'], 2)}%" for _, row in gains.iterrows()),
        ours=("gain over SOG by the paper's own Table 2: "
              + ", ".join(f"{check.name} +{fmt(check.value, 1)}% [{_gain_end(check.interval[0])}, "
                          f"{_gain_end(check.interval[1])}]" for check in checks)
              + f" (95% intervals, Fieller; {R_AB_WORDS}); 'about {fmt(CLAIMED_GAIN_PCT, 0)}%' read as "
                f"{low:.0f}–{high:.0f}%"),
        key=(f"by the paper's own Table 2 the gains over SOG are {fmt(min(c.value for c in checks), 0)}% to "
             f"{fmt(max(c.value for c in checks), 0)}%, and no cell's interval is narrow enough to say whether the "
             f"gain is about {fmt(CLAIMED_GAIN_PCT, 0)}%" if all(c.state() == "undecided" for c in checks) else
             f"by the paper's own Table 2 the gains over SOG are {fmt(min(c.value for c in checks), 0)}% to "
             f"{fmt(max(c.value for c in checks), 0)}%"),
        paper_checks=tuple(checks),
        checks=yours,
        missing="" if yours else NEEDS_A_CAPABLE_LLM,
        judges=READER_JUDGES if yours else TINY_JUDGES,
        sample=_gain_need(gains, int(load("proxy_vs_llm", "agreement_sample")["n"].max())))


def _gain_need(gains: pd.DataFrame, n_here: int) -> SampleNeed:
    """The answers on which a gain of exactly 100% over SOG's strongest printed correlation would have an interval
    inside 'about 100%' (:data:`ABOUT_100_PCT`), with 80% power."""
    from recjudge.metaeval.dependent import n_for_ratio_within

    strongest = gains.loc[gains["sog_pearson_pct"].idxmax()]
    low, high = ABOUT_100_PCT
    need = n_for_ratio_within(float(strongest["sog_pearson_pct"]) / 100, 1 + CLAIMED_GAIN_PCT / 100, 1 + low / 100,
                              1 + high / 100)
    return SampleNeed(n_here, need, f"a gain of {fmt(CLAIMED_GAIN_PCT, 0)}% over SOG's "
                                    f"{fmt(strongest['sog_pearson_pct'], 1)}% within "
                                    f"{low:.0f}–{high:.0f}%", "Fieller's interval, r₁₂ = 0, 80% power, α = 0.05",
                      int(strongest["n"]))


def _gain_end(value: float) -> str:
    return "−∞" if value == -math.inf else "+∞" if value == math.inf else f"{'+' if value > 0 else ''}{fmt(value, 0)}%"


def _kang_table5() -> pd.DataFrame:
    """Kang et al.'s Table 5, one row per dataset: Pearson (%) without auxiliary data, with it, and with several
    LLMs and it, and the dataset's n."""
    table5 = papers.table("kang2025serendipity_tables4_5").query("table == 5")
    wide = table5.pivot(index="dataset", columns="method", values="pearson_pct")
    return wide.assign(n=wide.index.map(paper_judges.KANG_RATINGS)).sort_index()


def _auxiliary_data(load: Loader, readers: Sequence[str] = ()) -> Evidence:
    by_setting = load("auxiliary_data", "agreement_by_setting")
    settings = _book_judge_rows(by_setting, "judge", BOOK_JUDGE, prefix=True)
    others = settings[settings["method"] != NONE_SETTING]
    differ = int((others["p_pearson_vs_ref"] < 0.05).sum())
    table5 = _kang_table5()
    checks = tuple(contrast_check(f"Qwen2.5-14B few-shot on {dataset}", row["Auxiliary Data"], row["NA"],
                                  int(row["n"])) for dataset, row in table5.iterrows())
    yours = reader_settings_versus_none(by_setting, readers)
    # the answers judged in every setting: the reader's judges', whose numbers decide, else the book's judge's
    judged = by_setting[by_setting["judge"] == readers[0]] if yours else settings
    n = int(named_row(judged, "method", NONE_SETTING, "auxiliary_data/agreement_by_setting")["n"])
    return Evidence(
        paper_numbers="Table 5, Qwen2.5-14B few-shot, without → with auxiliary data: " + "; ".join(
            f"{dataset} {fmt(row['NA'], 2)}% → {fmt(row['Auxiliary Data'], 2)}% (n = {int(row['n']):,})"
            for dataset, row in table5.iterrows()),
        ours=("the gain by the paper's own numbers: " + ", ".join(f"{c.name} {points(c)}" for c in checks)
              + f" (95% intervals; {R_AB_WORDS}). SmolLM2-135M, context only: {differ} of "
              f"{len(others)} settings differ from none at p < 0.05 on {n} answers"),
        key=_contrast_key(checks, "auxiliary data's gain"),
        n=n,
        paper_checks=checks,
        differences=(_SURVEY_HISTORY, Difference("scoring", "expected score over the tokens 1–5", "integer score"),
                     _KANG_MODEL_CLASS,
                     Difference("sample of RQ2", f"{n} answers judged in every auxiliary-data setting",
                                "all answers")),
        checks=yours, quantifier=SOME,
        missing="" if yours else NEEDS_A_CAPABLE_LLM,
        judges=READER_JUDGES if yours else TINY_JUDGES,
        sample=_dependent_need(n, *_kang_table5_gain(before="NA", after="Auxiliary Data"),
                               _serendipity_2018_answers(), "the paper's gain"))


def _contrast_key(checks: Sequence[Check], what: str) -> str:
    """"by the paper's own numbers at its n, auxiliary data's gain is clear in 2 of 2 datasets (...)"."""
    clear = [check for check in checks if check.holds()]
    cells = "; ".join(f"{check.name}, {points(check)}" for check in (clear or checks))
    return (f"by the paper's own numbers at its n, {what} is clear in {len(clear)} of {len(checks)} "
            f"{'cell' if len(checks) == 1 else 'cells'} ({cells})")


def _dependent_need(n_here: int, before_pct: float, after_pct: float, available: int | None,
                    effect: str) -> SampleNeed:
    """The answers (each judged both ways) a paper's change in Pearson (``before_pct`` → ``after_pct``) needs on the
    same answers, at r₁₂ = 0 (the least favourable value; a judge's scores in the two settings will correlate, and
    then fewer answers do)."""
    return SampleNeed(n_here, n_for_dependent_difference(after_pct / 100, before_pct / 100),
                      f"{effect} of {fmt(after_pct - before_pct, 1)} points in Pearson ({fmt(before_pct, 1)}% → "
                      f"{fmt(after_pct, 1)}%)",
                      "two correlations on the same answers, r₁₂ = 0, 80% power, α = 0.05", available)


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


def _ensembles(load: Loader, readers: Sequence[str] = ()) -> Evidence:
    table5 = load("llm_ensembles", "table5_ours")
    held = named_row(table5, "method", "Multi-LLM & Auxiliary Data, held out", "llm_ensembles/table5_ours")
    printed = _kang_table5()
    checks = tuple(contrast_check(f"{dataset}", row["Multi-LLM & Auxiliary Data"], row["Auxiliary Data"],
                                  int(row["n"])) for dataset, row in printed.iterrows())
    tiny = unless_too_few(f"chosen on half of the users, the tiny judges' best ensemble agrees "
                          f"{fmt(held['pearson_pct'])}% (Pearson) with the other half", int(held["n"]),
                          detail=f"{answers_per_half(held)} per held-out half")
    yours = readers_average_checks(load, readers)
    n = int(held["n"]) if not yours else int(min(load("llm_ensembles", "readers_average")["n_with_versus"]))
    return Evidence(
        paper_numbers="Table 5, one judge with auxiliary data → three judges averaged: " + "; ".join(
            f"{dataset} {fmt(row['Auxiliary Data'], 2)}% → {fmt(row['Multi-LLM & Auxiliary Data'], 2)}%"
            for dataset, row in printed.iterrows()),
        key=_contrast_key(checks, "averaging's gain"),
        n=n,
        ours=("the gain by the paper's own numbers: " + ", ".join(f"{c.name} {points(c)}" for c in checks)
              + f" (95% intervals; {R_AB_WORDS}: the ensemble holds the single judge, so its true r₁₂ "
              f"is high and the intervals narrower). Tiny judges, context only: {tiny} ({splits(held['cell'])})"
              + ("; the mean of your judges against each: " + ", ".join(f"{c.name} {points(c)}" for c in yours)
                 if yours else "")),
        paper_checks=checks,
        checks=yours,
        differences=(_SURVEY_HISTORY, _KANG_MODEL_CLASS),
        missing="" if yours else NEEDS_SEVERAL_JUDGES if readers else NEEDS_A_CAPABLE_LLM,
        judges=READER_JUDGES if yours else TINY_JUDGES,
        sample=_dependent_need(n, *_kang_table5_gain(), _serendipity_2018_answers(), "the paper's gain"))


def _kang_table5_gain(before: str = "Auxiliary Data", after: str = "Multi-LLM & Auxiliary Data"
                      ) -> tuple[float, float]:
    """Kang et al.'s Table 5 on Serendipity-2018: Pearson (%) of two of its rows (by default with auxiliary data,
    and with several LLMs as well)."""
    row = _kang_table5().loc["Serendipity-2018"]
    return float(row[before]), float(row[after])


def _g_distribution(load: Loader, readers: Sequence[str] = ()) -> Evidence:
    search = load("prompt_strategies", "ground_truth_search")
    closest = named_row(search, "rank", 1, "prompt_strategies/ground_truth_search")
    distance = int(closest["distance"])
    return Evidence(
        paper_numbers="the counts of g printed in section 4.1: " + ", ".join(
            f"g = {int(row['level'])}: {int(row['answers']):,}"
            for _, row in papers.table("tokutake2025framework_g_distribution").iterrows()),
        ours=f"{len(search):,} readings of the survey searched; the closest, {closest['candidate']}, has an L1 "
             f"distance of {distance} between its histogram and the printed one (sum of the count differences)",
        key=f"the closest of {len(search):,} readings of the survey has an L1 distance of {distance} from the printed "
            "histogram of g (the sum of the count differences)",
        checks=(Check("L1 distance of the closest reading", distance, high=0),))


def _avg_score_vs_g(load: Loader, readers: Sequence[str] = ()) -> Evidence:
    alignment = load("recommender_reevaluation", "paper_claim_avg_score_vs_g").sort_values(["dataset", "recommender"])
    g_mean = float(alignment["g_mean"].iloc[0])
    table3 = _book_judge_rows(load("recommender_reevaluation", "table3_latest-small"), "judge", BOOK_JUDGE_MODEL)
    ours = table3[table3["recommender"] != "Random"]["avg_score_mean"]
    users, per_fold = judged_users(table3)
    return Evidence(
        paper_numbers=f"Avg. Score@20 {fmt(alignment['avg_score'].min(), 3)}–{fmt(alignment['avg_score'].max(), 3)} "
                      f"over {len(alignment)} dataset × recommender cells; g's mean {fmt(g_mean, 3)}",
        ours=("SmolLM2-135M's Avg. score (expected): "
              + unless_too_few(f"{fmt(ours.min(), 2)}–{fmt(ours.max(), 2)} on {per_fold} judged user(s) per fold",
                               users, "judged users", f"{per_fold} per fold")
              + f"; a judge that answered {fmt(g_mean, 2)} for every item would match g's mean as well"),
        key=f"a judge answering {fmt(g_mean, 2)} for every item matches g's mean exactly; by the paper's own "
            f"Table 1 its Table 3 judge (GPT-4o-mini, CoT) errs {_more_or_less('GPT-4o-mini')} on g than answering "
            f"{_tokutake_baselines().loc[MODE, 'answer']} every time ({_cot_versus_constant('GPT-4o-mini')})",
        n=users,
        paper_checks=(*(Check(f"{row['dataset']} {row['recommender']}", float(row["avg_score"]),
                              *TOKUTAKE_AVG_SCORE_RANGE) for _, row in alignment.iterrows()),
                      Check("g's mean", g_mean, *TOKUTAKE_AVG_SCORE_RANGE),
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


def judged_users(table3: pd.DataFrame) -> tuple[int, str]:
    """The users the judge scored in a re-evaluation table (its ``n_users``, "1/1/1": per fold), summed over the
    folds, for the recommender with the fewest, and per fold in words ("1", "2–3")."""
    per_fold = [[int(users) for users in str(cell).split("/")] for cell in table3["n_users"]]
    fewest = min(per_fold, key=sum)
    low, high = min(fewest), max(fewest)
    return sum(fewest), f"{low}" if low == high else f"{low}–{high}"


def _tokutake_n() -> int:
    """The answers Tokutake et al.'s Table 1 scores: their printed distribution of g."""
    return _serendipity_2018_answers()


def _cot_lowest_mae(load: Loader, readers: Sequence[str] = ()) -> Evidence:
    metrics = in_order(_book_judge_rows(load("prompt_strategies", "metrics"), "judge", BOOK_JUDGE), "template",
                       STRATEGIES)
    parsed = metrics[metrics["n"] > 0]
    table1 = tokutake_table1_vs_baselines()
    n = _tokutake_n()
    others = table1[table1["strategy"] != "CoT"]
    cot = table1[table1["strategy"] == "CoT"].set_index("model")
    checks = []
    for _, row in others.sort_values(["model", "strategy"]).iterrows():
        best = cot.loc[row["model"]]
        def interval_at(level: float, worse: float = float(row["mae"]), better: float = float(best["mae"])
                        ) -> tuple[float, float]:
            return paired_mean_interval(worse, better, n, top=4, level=level)[1:]

        checks.append(Check(f"{row['model']}: {row['strategy']} − CoT", float(row["mae"]) - float(best["mae"]),
                            low=0.0, interval_at=interval_at))
    clear = sum(check.holds() for check in checks)
    yours = reader_gaps_to_cot(load("prompt_strategies", "metrics"), readers)
    return Evidence(
        paper_numbers="MAE by prompt (Table 1): " + "; ".join(
            f"{model} " + ", ".join(f"{r['strategy']} {fmt(r['mae'], 3)}" for _, r in rows.iterrows())
            for model, rows in table1.groupby("model", sort=True)) + f" (n = {n:,})",
        key=(f"by the paper's own Table 1 at its n, CoT's MAE is below every other prompt's for both judges in "
             f"{clear} of {len(checks)} comparisons, even with the widest spread the unprinted errors could have"),
        ours=("MAE of each other prompt minus CoT's: " + ", ".join(
            f"{c.name} {'+' if c.value > 0 else ''}{fmt(c.value, 3)} [{fmt(c.interval[0], 3)}, {fmt(c.interval[1], 3)}]"
            for c in checks) + " (95% intervals at the widest spread errors on 0–4 can have). "
            + ("SmolLM2-135M, context only: MAE " + parsed_maes(parsed) if len(parsed) else
               "No reply of SmolLM2-135M held a score")),
        paper_checks=tuple(checks),
        checks=yours,
        missing="" if yours else NEEDS_A_CAPABLE_LLM,
        judges=READER_JUDGES if yours else TINY_JUDGES)


def parsed_maes(parsed: pd.DataFrame) -> str:
    """"Base 1.42 [1.00, 1.83] (n = 12), CoT 0.93 [...] (n = 15); each on the answers whose reply held a score, which
    differ between prompts": a tiny judge's MAEs by prompt, each over its own parsed replies, so that no reader sets
    them beside each other as if they were measured on the same answers."""
    maes = ", ".join(f"{row['template']} {with_interval(row['mae'], row['mae_ci_low'], row['mae_ci_high'], 2)} "
                     f"(n = {int(row['n'])})" for _, row in parsed.iterrows())
    same = parsed["n"].nunique() == 1 and "n_paired" in parsed and (parsed["n_paired"] == parsed["n"]).all()
    return maes + ("" if same or len(parsed) == 1 else
                   "; each on the answers whose reply held a score, which differ between prompts, so these MAEs are "
                   "not measured on the same answers")


def _mae_below_one_shows_serendipity(load: Loader, readers: Sequence[str] = ()) -> Evidence:
    load("prompt_strategies", "metrics")
    best = _table1_row("GPT-4o-mini", "CoT")
    base = _tokutake_baselines().loc[MODE]
    n = _tokutake_n()
    spread = _constant_spread()
    mae = paired_mean_interval(float(best["mae"]), float(base["mae"]), n, top=4, sd_b=spread["mae"])
    hits = paired_mean_interval(float(best["accuracy_pct"]) / 100, float(base["accuracy_pct"]) / 100, n, top=1,
                                sd_b=spread["accuracy"])
    checks = (Check(f"GPT-4o-mini CoT's MAE below answering {base['answer']} ({fmt(base['mae'], 3)})", mae[0],
                    high=0.0, interval_at=lambda level: paired_mean_interval(
                        float(best["mae"]), float(base["mae"]), n, top=4, sd_b=spread["mae"], level=level)[1:]),
              Check(f"GPT-4o-mini CoT's accuracy above answering {base['answer']} ({fmt(base['accuracy_pct'], 1)}%)",
                    100 * hits[0], low=0.0, interval_at=lambda level: tuple(100 * end for end in paired_mean_interval(
                        float(best["accuracy_pct"]) / 100, float(base["accuracy_pct"]) / 100, n, top=1,
                        sd_b=spread["accuracy"], level=level)[1:])))
    return Evidence(
        paper_numbers=f"GPT-4o-mini with CoT: MAE {fmt(best['mae'], 3)} (below {fmt(TOKUTAKE_MAE_BOUND, 1)}), "
                      "three-class accuracy "
                      f"{fmt(best['accuracy_pct'], 2)}% (Table 1, n = {n:,})",
        key=f"the paper's judge with the lowest MAE, GPT-4o-mini with CoT, errs {_more_or_less('GPT-4o-mini')} on "
            f"its own g than answering {best['constant_mode_answer']} for every item "
            f"({_cot_versus_constant('GPT-4o-mini')}), and a constant tells no item from another",
        ours=(f"GPT-4o-mini CoT minus answering {base['answer']}: MAE {'+' if mae[0] > 0 else ''}{fmt(mae[0], 3)} "
              f"[{fmt(mae[1], 3)}, {fmt(mae[2], 3)}], accuracy {fmt(100 * hits[0], 1)} points "
              f"[{fmt(100 * hits[1], 1)}, {fmt(100 * hits[2], 1)}] (95% intervals; the judge's "
              "unprinted errors at their widest spread, the constant's from the printed g)"),
        paper_checks=checks,
        baselines=_tokutake_baseline_words())


def _constant_spread() -> dict[str, float]:
    """The standard deviations of answering the most frequent level of the printed g: of its absolute errors and of
    its three-class hits (both known exactly from the printed distribution)."""
    from recjudge.metaeval.papers_vs_baselines import tokutake_g_counts

    counts = tokutake_g_counts()
    answer = float(_tokutake_baselines().loc[MODE, "answer"])
    weights = counts / counts.sum()
    errors = (counts.index.to_series() - answer).abs()
    hits = pd.Series(three_class(counts.index.to_numpy()) == three_class([answer])[0], index=counts.index, dtype=float)
    return {"mae": float(((errors - (weights * errors).sum()) ** 2 * weights).sum() ** 0.5),
            "accuracy": float(((hits - (weights * hits).sum()) ** 2 * weights).sum() ** 0.5)}


def _serendipity_ranking(load: Loader, readers: Sequence[str] = ()) -> Evidence:
    every = load("recommender_reevaluation", "table3_latest-small")
    table3 = _book_judge_rows(every, "judge", BOOK_JUDGE_MODEL)
    yours = reader_rankings(load, readers)
    # the users judged: the reader's judges', whose numbers decide, else the book's judge's
    users, per_fold = judged_users(every[every["judge"] == readers[0]] if yours else table3)
    scores = table3[table3["recommender"] != "Random"]["avg_score_mean"]
    tiny = (f"SmolLM2-135M's Avg. score (expected) {fmt(scores.min(), 2)}–{fmt(scores.max(), 2)} on "
            f"ml-latest-small ({per_fold} judged user(s) per fold)" if scores.notna().any() else
            f"ml-latest-small, {per_fold} judged user(s) per fold")
    ours = unless_too_few(tiny, users, "judged users", f"{per_fold} per fold")
    printed = load("recommender_reevaluation", "paper_table3_ml1m")
    printed = printed[printed["dataset"] == "ML-1M"].sort_values("recommender")
    return Evidence(
        paper_numbers="GPT-4o-mini's Avg. Score@20 on ML-1M (Table 3): " + ", ".join(
            f"{row['recommender']} {fmt(row['avg_score'], 3)}" for _, row in printed.iterrows())
            + "; Precision_ser@20 (%): " + ", ".join(f"{row['recommender']} {fmt(row['p_ser'], 2)}"
                                                     for _, row in printed.iterrows()),
        ours=ours + ("; your judges' Kendall's τ with the printed order: " + ", ".join(
            f"{c.name} {fmt(c.value, 2)} [{fmt(c.interval[0], 2)}, {fmt(c.interval[1], 2)}]" for c in yours)
            if yours else ""),
        key=ours, n=users,
        differences=(Difference("data", "ml-latest-small", "ML-1M, Goodreads, Amazon"), _BASIC_PROMPT),
        checks=yours, quantifier=SOME,
        missing="" if yours else NEEDS_A_CAPABLE_LLM,
        judges=READER_JUDGES if yours else TINY_JUDGES)


def _accuracy_order(load: Loader, readers: Sequence[str] = ()) -> Evidence:
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
    def read(load: Loader, readers: Sequence[str] = ()) -> Evidence:
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




def zhang_dataset_level() -> pd.DataFrame:
    """Zhang et al.'s Table 1 at the dataset level: evaluator × aspect (the four aspects and "average"), Pearson %."""
    table1 = papers.table("zhang2024explanations_table1")
    return table1.pivot(index="evaluator", columns="aspect", values="dataset")


def average_contrast_check(name: str, ours: pd.Series, theirs: pd.Series, n: int) -> Check:
    """That an evaluator's mean over the four aspects of its correlation with the users (Zhang et al.'s Average
    column, ``ours``) exceeds another's (``theirs``) on the same ``n`` texts: the difference of the printed averages,
    with an interval whose half-width is the mean of the four aspects' half-widths (``contrast_interval`` at r₁₂ =
    0), never narrower than the true one (the standard deviation of a mean is at most the mean of its terms')."""
    difference = float(ours["average"] - theirs["average"])

    def interval_at(level: float) -> tuple[float, float]:
        halves = [(high - low) / 2 for _, low, high in (contrast_interval(ours[a] / 100, theirs[a] / 100, n,
                                                                          level=level) for a in ZHANG_ASPECTS)]
        half = 100 * sum(halves) / len(halves)
        return difference - half, difference + half

    return Check(name, difference, low=0.0, interval_at=interval_at)


def _zhang_llms(table: pd.DataFrame) -> pd.DataFrame:
    return table[table.index.str.contains(r"\((?:S|M)\)$")].sort_index()


def _certain_llms_vs_metrics(load: Loader, readers: Sequence[str] = ()) -> Evidence:
    held, total = evaluator_replies(load)
    table = zhang_dataset_level()
    references = table.loc[["BLEU-1", "BLEU-4", "ROUGE-1-F", "ROUGE-L-F"]]
    best_reference = references["average"].idxmax()
    llms = _zhang_llms(table)
    n = paper_judges.ZHANG_ENTRIES
    checks = tuple(average_contrast_check(name, row, table.loc[best_reference], n) for name, row in llms.iterrows())
    better = holding(checks, SOME)
    yours = reader_evaluators_versus(load, readers, best_reference)
    return Evidence(
        paper_numbers=(f"Table 1, Average column, dataset level (n ≈ {n:,} texts): the best reference metric "
                       f"{best_reference} {fmt(table.loc[best_reference, 'average'], 2)}%; the {len(llms)} LLM rows "
                       f"{fmt(llms['average'].min(), 2)}%–{fmt(llms['average'].max(), 2)}%, "
                       f"{int((llms['average'] >= table.loc[best_reference, 'average']).sum())} of them at or above "
                       f"{best_reference}"),
        ours=("each LLM row's Average minus " + best_reference + "'s: " + ", ".join(
            f"{c.name} {points(c)}" for c in checks) + f" (95% intervals; {R_AB_WORDS}). "
            f"SmolLM2-135M, context only: {held:,} of {total:,} distinct replies held a score"
            + (f"; your evaluators' mean over the aspects minus {best_reference}'s on the same texts: "
               + ", ".join(f"{c.name} {points(c)}" for c in yours) if yours else "")),
        key=(f"by the paper's own Table 1 at its n, {len(better)} of its {len(checks)} LLM rows "
             f"{'has' if len(better) == 1 else 'have'} an Average "
             f"above {best_reference}'s with an interval above 0 (the {len(checks)} intervals taken together)"
             + (f" ({'; '.join(f'{c.name}, {points(c)}' for c in better)})" if better else "")),
        paper_checks=checks, paper_quantifier=SOME,
        checks=yours, quantifier=SOME,
        n=min((int(n) for n in load("explanation_evaluators", "readers_versus_reference")["n"]), default=None)
        if yours else None,
        missing="" if yours else NEEDS_A_CAPABLE_LLM,
        judges=READER_JUDGES if yours else TINY_JUDGES)


def _llms_vs_annotators(load: Loader, readers: Sequence[str] = ()) -> Evidence:
    load("explanation_evaluators", "table1_agreement_by_row")
    table = zhang_dataset_level()
    annotators = table.loc["Average"]
    gpt4 = table.loc[[name for name in table.index if name.startswith("GPT4")]].sort_index()
    n = paper_judges.ZHANG_ENTRIES
    checks = tuple(average_contrast_check(name, row, annotators, n) for name, row in gpt4.iterrows())
    return Evidence(
        paper_numbers=(f"Table 1, Average column, dataset level: the two annotators' averaged labels "
                       f"{fmt(annotators['average'], 2)}%, " + ", ".join(
                           f"{name} {fmt(row['average'], 2)}%" for name, row in gpt4.iterrows())),
        ours=("GPT-4's Average minus the annotators': " + ", ".join(f"{c.name} {points(c)}" for c in checks)
              + f" (95% intervals; {R_AB_WORDS})"),
        key=_contrast_key(checks, "GPT-4's lead over the annotators"),
        paper_checks=checks,
        missing=NEEDS_A_CAPABLE_LLM,
        judges=TINY_JUDGES,
        sample=_dependent_need(int(load("explanation_evaluators", "llm_sample")["texts"].max()),
                               float(annotators["average"]), float(gpt4["average"].max()), n,
                               "the paper's lead"))


_LATEST_SMALL = Difference("data", "ml-latest-small (embedded sample)", "MovieLens-1M with movie descriptions")
#: Lima & Peres: "at least 30 intervals of at least 30 users" (Table 2's setting).
PAPER_MIN_USERS = PAPER_INTERVALS = 30


#: What Lima & Peres's magnitudes need that no copy here holds: data, not a judge.
ML1M_AS_THE_PAPER_USED_IT = ("MovieLens-1M's complete ratings (the data mirror's copy lacks ratings.dat, so its "
                             "earlier ratings of 1 to 3) and the short movie descriptions the paper collected for it")


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


def _surprise_order(load: Loader, readers: Sequence[str] = ()) -> Evidence:
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


def _magnitudes(load: Loader, readers: Sequence[str] = ()) -> Evidence:
    load("normalised_surprise", "table2_vs_paper")
    return Evidence(paper_numbers=_lima_table2_means(), differences=(_LATEST_SMALL, _lima_frames(load)),
                    missing=ML1M_AS_THE_PAPER_USED_IT)


def _coefficients_of_variation(load: Loader, readers: Sequence[str] = ()) -> Evidence:
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


def _metamorphic_lists(load: Loader, readers: Sequence[str] = ()) -> Evidence:
    parsing = load("metamorphic_recommender", "reply_parsing")
    printed = papers.table("khirbat2024metamorphic_table4")
    return Evidence(paper_numbers="Table 4, GPT-3.5-turbo's Kendall's τ to the reference list: " + ", ".join(
                        f"{row['relation']} {fmt(row['kendall_tau'], 4)}" for _, row in printed.iterrows()),
                    ours=f"SmolLM2-135M: {int(parsing['not_a_list'].sum())} of {int(parsing['replies'].sum())} "
                         "replies are not a list of titles",
                    missing=NEEDS_A_CAPABLE_LLM)


def _authors_prompt_aspects(load: Loader, readers: Sequence[str] = ()) -> Evidence:
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


def _whose(kind: str | None, judge: str) -> str:
    """Whose number a part V judge's is, by its kind: the book's tiny local judges', a reader's judges', or a recorded
    LLM's (its own name)."""
    return {"local LLM": TINY_JUDGES, "reader's LLM": READER_JUDGES}.get(kind or "", judge)


def _labels_saved(load: Loader, readers: Sequence[str] = ()) -> Evidence:
    worth = load("trust_judges", "labels_worth")
    judges = load("trust_judges", "judges")
    kinds = dict(zip(judges["judge"], judges["kind"]))
    mean = worth[(worth["estimand"] == "mean serendipity") & (worth["n"] == TRUST_LABELS)]
    llms = mean[mean["judge"].map(kinds).fillna("").str.contains("LLM")].sort_values("judge")
    if llms.empty:
        raise KeyError(f"trust_judges/labels_worth: no LLM judge's row for the mean at n = {TRUST_LABELS}")
    rows = paper_judges.pooled_llm_rows()
    paper_checks = tuple(
        Check(f"{row['judge']}, {row['aspect']}, {row['dataset']}", labels_saved_per_100(row["pearson_pct"] / 100),
              low=SAVED_LABELS, interval_at=saved_interval(row["pearson_pct"], int(row["n"])))
        for _, row in rows.iterrows())
    best = max(paper_checks, key=lambda check: check.interval[0])
    saving = len(holding(paper_checks, SOME))
    # The book's local judges are tiny: context. The recorded gpt-3.5-turbo judgments are a capable LLM's. Each
    # judge's labels saved are read as the papers' rows are, by the ρ² rule with its correlation's interval on the
    # answers it scored: a correlation measured on a few hundred answers is no exact number (the simulated worth
    # of the same judge, beside it in the text, is worth in this one population)
    ours = tuple(Check(str(row["judge"]), labels_saved_per_100(float(row["pearson"])), low=SAVED_LABELS,
                       interval_at=saved_interval(100 * float(row["pearson"]), int(row["population"])),
                       by=_whose(kinds.get(row["judge"]), str(row["judge"])), n=int(row["population"]))
                 for _, row in llms.iterrows())
    here = llms.loc[llms["labels_worth"].idxmax()]
    return Evidence(
        paper_numbers=(f"{len(rows)} pooled correlations of an LLM judge with users (Kang et al.'s Taobao rows, one "
                       "answer per user; Zhang et al.'s dataset-level rows per aspect)"),
        ours=("labels worth beyond 100 per 100 labels, by the ρ² rule at the papers' n: "
              f"{saving} of {len(paper_checks)} pooled LLM rows save at least {fmt(SAVED_LABELS, 0)} with "
              f"their 95% intervals taken together; the most certain, {best.name}, {fmt(best.value, 1)} "
              f"[{fmt(best.interval[0], 1)}, {fmt(best.interval[1], 1)}]. Here, with {TRUST_LABELS} human labels, "
              "PPI++ with each LLM judge's scores is worth "
              + ", ".join(f"{row['judge']} {labels_worth_words(row)}" for _, row in llms.iterrows())
              + " labels (the tiny local judges are context; one whole label saved counts: this book's threshold)"),
        key=(f"by the papers' own pooled correlations, {saving} of {len(paper_checks)} LLM rows save at least "
             f"{fmt(SAVED_LABELS, 0)} label per 100 (most certainly {best.name}: {fmt(best.value, 1)} "
             f"[{fmt(best.interval[0], 1)}, {fmt(best.interval[1], 1)}]); here the LLM judge worth the most labels "
             f"(selected among {len(llms)}: {here['judge']}) is worth {labels_worth_words(here)} labels per "
             f"{TRUST_LABELS}, which saves {fmt(max(trust_rules.saved_labels(here, TRUST_LABELS), 0.0), 1)} by this "
             "book's reading (the lower of the simulation's bound and the ρ² rule)"),
        n=TRUST_LABELS,
        checks=ours, quantifier=SOME,
        paper_checks=paper_checks, paper_quantifier=SOME,
        judges=TINY_JUDGES,
        differences=(Difference("model class", "tiny local models and recorded gpt-3.5-turbo",
                                "Qwen, GPT-4 and others, priced here by the ρ² rule from their correlations"),))
