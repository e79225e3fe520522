"""The effects a planted judge carries, read from the papers' printed tables (``recjudge.papers``): what "the paper's
effect" is for each claim a reader's judge can decide. A planted value scales every effect at once: ``null`` is none
(0), ``paper`` the printed size (1), a number that many times it (:func:`planted_scale`).

- Kang et al., RQ1: GPT-4's zero-shot gain over SOG on Serendipity-2018 (Table 2), as a ratio of correlations, set on
  this book's SOG: the null judge correlates with the users exactly as SOG does over every answer.
- Kang et al., RQ2: the gain of the 5-shot judge with auxiliary data over the same judge without (Table 5,
  Serendipity-2018), in points of Pearson.
- Kang et al., RQ3: the ratio of the three-judge average's correlation to the single judge's (Table 5,
  Serendipity-2018). The null: averaging gains nothing over the best judge.
- Tokutake et al., Table 1: GPT-4o-mini's MAE and three-class accuracy with each prompt. The null: every prompt as
  CoT.
- Tokutake et al., Table 3: GPT-4o-mini's Avg. Score@20 of each recommender on ML-1M. The null: every recommender
  alike.
- Zhang et al., Table 1: GPT-4 (multiple aspects)'s dataset-level correlation with each aspect, as a lead over
  ROUGE-1-F, set on this book's ROUGE-1-F. The null: the judge correlates as ROUGE-1-F does.
- Part V's claim that a judge saves labels reads the RQ1 judge's correlation (its 5-shot prompt).
"""

from __future__ import annotations

import functools
import math
import re

import pandas as pd

from recjudge import papers

NULL, PAPER = "null", "paper"
#: The planted values every table and chapter shows; a number is accepted too (:func:`planted_scale`).
PLANTED_VALUES = (NULL, PAPER)
_NUMBER = re.compile(r"^\d+(?:\.\d+)?$")

#: The dataset whose printed numbers set the Serendipity effects (the one this book's answers come from).
SERENDIPITY_2018 = "Serendipity-2018"
#: The papers' judges whose numbers set the effects.
KANG_JUDGE, TOKUTAKE_JUDGE, ZHANG_JUDGE = "GPT-4", "gpt", "GPT4 (M)"
TOKUTAKE_BEST = "cot"
#: Tokutake et al.'s strategies as their Table 1 names them.
STRATEGY_NAMES = {"base": "Base", "ls": "LS", "cot": "CoT", "ltm": "LtM"}


def planted_scale(value: str) -> float:
    """0 for ``null``, 1 for ``paper``, the number for a number ("2", "0.5"); ValueError otherwise."""
    if value == NULL:
        return 0.0
    if value == PAPER:
        return 1.0
    if _NUMBER.match(value) and math.isfinite(float(value)):
        return float(value)
    raise ValueError(f"a planted value is {NULL!r}, {PAPER!r} or a non-negative number, got {value!r}")


@functools.lru_cache(maxsize=1)
def kang_zero_shot_gain() -> float:
    """GPT-4 zero-shot's correlation over SOG's on Serendipity-2018 (Table 2), minus 1."""
    table2 = papers.table("kang2025serendipity_table2").query("dataset == @SERENDIPITY_2018")
    zero = table2[(table2["family"] == "LLM zero-shot") & (table2["method"] == KANG_JUDGE)]["pearson_pct"].iloc[0]
    sog = table2[table2["method"] == "SOG"]["pearson_pct"].iloc[0]
    return float(zero / sog - 1)


def _kang_table5() -> pd.Series:
    table5 = papers.table("kang2025serendipity_tables4_5").query("table == 5 and dataset == @SERENDIPITY_2018")
    return table5.set_index("method")["pearson_pct"]


@functools.lru_cache(maxsize=1)
def kang_auxiliary_gain() -> float:
    """The 5-shot judge's gain with auxiliary data on Serendipity-2018 (Table 5), as a correlation (not %)."""
    table5 = _kang_table5()
    return float(table5["Auxiliary Data"] - table5["NA"]) / 100


@functools.lru_cache(maxsize=1)
def kang_ensemble_ratio() -> float:
    """The three-judge average's correlation over the single judge's with auxiliary data (Table 5)."""
    table5 = _kang_table5()
    return float(table5["Multi-LLM & Auxiliary Data"] / table5["Auxiliary Data"])


@functools.lru_cache(maxsize=1)
def tokutake_errors() -> pd.DataFrame:
    """GPT-4o-mini's MAE and three-class accuracy (a share) per strategy (Table 1): index base, ls, cot, ltm."""
    table1 = papers.table("tokutake2025framework_table1").set_index("strategy")
    return pd.DataFrame({"mae": table1[f"mae_{TOKUTAKE_JUDGE}"],
                         "accuracy": table1[f"accuracy_{TOKUTAKE_JUDGE}"] / 100})


@functools.lru_cache(maxsize=1)
def tokutake_avg_scores() -> pd.Series:
    """GPT-4o-mini's Avg. Score@20 per recommender on ML-1M (Table 3)."""
    table3 = papers.table("tokutake2025framework_table3").query("dataset == 'ML-1M'")
    return table3.set_index("recommender")["avg_score"].astype(float)


@functools.lru_cache(maxsize=1)
def zhang_leads() -> pd.Series:
    """GPT-4 (multiple aspects)'s dataset-level correlation with each aspect minus ROUGE-1-F's (Table 1), as
    correlations (not %)."""
    table1 = papers.table("zhang2024explanations_table1")
    wide = table1.pivot(index="evaluator", columns="aspect", values="dataset")
    return ((wide.loc[ZHANG_JUDGE] - wide.loc["ROUGE-1-F"]) / 100).drop("average")
