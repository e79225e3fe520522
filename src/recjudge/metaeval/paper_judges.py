"""Every judge whose agreement with users a paper prints, on one scale: Pearson with its interval at the paper's own
n, and which correlation the number is.

Rows (:func:`paper_judges`, columns :data:`COLUMNS`):

- Kang et al., Table 2 (Random, the proxies, the LLM-based baselines, zero- and few-shot LLMs) and Tables 4–5 (the
  few-shot Qwen2.5-14B judge with interaction data and auxiliary data, and the three-judge ensemble), on both
  datasets; n: the ratings of their Table 1 (2,150 for Serendipity-2018, 11,383 for Taobao Serendipity).
- Zhang et al., Table 1, dataset level: every evaluator (Random, BLEU/ROUGE, the two annotators and their average,
  each LLM with the single- and multiple-aspect prompt), per aspect and the printed Average column; n: the paper's
  "around 2,500 text entries".

Which correlation a row is (``reading``) decides what may be read from it. A *pooled* correlation over every answer
(Zhang's dataset level; Kang's Taobao rows, one answer per user) is the ρ of the ρ² rule (part V: a judge correlating ρ
with the users saves a share ρ² of the labels a given precision needs), so only such rows are priced in labels. Kang's
Serendipity-2018 rows may be a mean of per-user correlations (the proxy chapter finds the paper's proxies closer to
that reading), and Zhang's Average column is a mean of four aspects' correlations, not one correlation: both are
shown, with an interval of the pooled reading where one exists, and never priced.
"""

from __future__ import annotations

import math

import pandas as pd

from recjudge import papers
from recjudge.metaeval.dependent import correlation_interval

#: Kang et al.'s Table 1: the serendipity ratings of each dataset, the n of their correlations.
KANG_RATINGS = {"Serendipity-2018": 2150, "Taobao Serendipity": 11383}
#: Zhang et al.'s text entries ("around 2,500", section 2.2.1): the n of their dataset-level correlations.
ZHANG_ENTRIES = 2500
#: The three-judge ensemble of Kang et al.'s Table 5 (their caption: Qwen2.5-14B, Qwen2.5-72B and GPT-4, few-shot).
KANG_ENSEMBLE = "mean of Qwen2.5-14B, Qwen2.5-72B, GPT-4 few-shot"
#: Kang et al.'s judge of Tables 4–5.
KANG_LATER_JUDGE = "Qwen2.5-14B few-shot"

POOLED = "pooled"
POOLED_ONE_PER_USER = "pooled (one answer per user)"
PER_USER_OR_POOLED = "pooled or a mean of per-user correlations (the paper does not say)"
MEAN_OF_ASPECTS = "mean of the four aspects' correlations"
#: The readings that are one correlation over every answer: the ρ of the ρ² rule.
POOLED_READINGS = (POOLED, POOLED_ONE_PER_USER)

#: What each kind of row is.
LLM, ANNOTATOR, REFERENCE_METRIC, PROXY, RANDOM = ("LLM judge", "human annotator", "reference metric",
                                                   "proxy metric", "Random")
_KANG_KIND = {"Random": RANDOM, "Proxy Metrics": PROXY, "LLM-based Baseline": LLM, "LLM zero-shot": LLM,
              "LLM few-shot": LLM}
#: Zhang et al.'s row of the annotators' mean rating: a human reading, but no annotator of its own.
ANNOTATORS_MEAN = "Average"
_ZHANG_NOT_LLM = {"Random": RANDOM, "BLEU-1": REFERENCE_METRIC, "BLEU-4": REFERENCE_METRIC,
                  "ROUGE-1-F": REFERENCE_METRIC, "ROUGE-L-F": REFERENCE_METRIC, "Annotator-1": ANNOTATOR,
                  "Annotator-2": ANNOTATOR, ANNOTATORS_MEAN: ANNOTATOR}

COLUMNS = ["paper", "table", "dataset", "judge", "kind", "prompt", "aspect", "reading", "pearson_pct", "n",
           "pearson_ci_low", "pearson_ci_high", "labels_saved_pct"]


def _kang() -> pd.DataFrame:
    table2 = papers.table("kang2025serendipity_table2")
    prompt = table2["family"].map({"LLM zero-shot": "zero-shot", "LLM few-shot": "few-shot",
                                   "LLM-based Baseline": "its own prompt"}).fillna("")
    table2 = table2.assign(table="Table 2", kind=table2["family"].map(_KANG_KIND), judge=table2["method"],
                           prompt=prompt)
    later = papers.table("kang2025serendipity_tables4_5")
    ensemble = later["method"].str.startswith("Multi-LLM")
    setting = later["method"].replace({"NA": "no interactions / no auxiliary data"})
    later = later.assign(table="Table " + later["table"].astype(str), kind=LLM,
                         judge=ensemble.map({True: KANG_ENSEMBLE, False: KANG_LATER_JUDGE}),
                         prompt="few-shot, " + setting)
    rows = pd.concat([table2, later], ignore_index=True)
    return rows.assign(paper="Kang et al. 2025", aspect="serendipity", n=rows["dataset"].map(KANG_RATINGS),
                       reading=rows["dataset"].map({"Taobao Serendipity": POOLED_ONE_PER_USER,
                                                    "Serendipity-2018": PER_USER_OR_POOLED}))


def _zhang() -> pd.DataFrame:
    table1 = papers.table("zhang2024explanations_table1")
    prompt = table1["evaluator"].str.extract(r"\((S|M)\)$")[0].map({"S": "single-aspect prompt",
                                                                     "M": "multiple-aspect prompt"})
    return pd.DataFrame({
        "paper": "Zhang et al. 2024", "table": "Table 1 (dataset level)",
        "dataset": "Lu et al.'s explanations", "judge": table1["evaluator"],
        "kind": table1["evaluator"].map(_ZHANG_NOT_LLM).fillna(LLM), "prompt": prompt.fillna(""),
        "aspect": table1["aspect"], "pearson_pct": table1["dataset"], "n": ZHANG_ENTRIES,
        "reading": table1["aspect"].map(lambda aspect: MEAN_OF_ASPECTS if aspect == "average" else POOLED)})


def labels_saved_pct(pearson_pct: float) -> float:
    """The share of human labels (%) a judge correlating ρ with the users saves by the ρ² rule: 100 ρ²."""
    return (pearson_pct / 100) ** 2 * 100


def paper_judges() -> pd.DataFrame:
    """Every judge row the papers print (module docstring), with its 95% interval at the paper's n (Fisher z; of the
    pooled reading where the row may be another) and, for pooled correlations only, the share of labels saved."""
    rows = pd.concat([_kang(), _zhang()], ignore_index=True)
    intervals = [correlation_interval(r / 100, int(n)) for r, n in zip(rows["pearson_pct"], rows["n"])]
    pooled = rows["reading"].isin(POOLED_READINGS)
    rows = rows.assign(pearson_ci_low=[100 * low for low, _ in intervals],
                       pearson_ci_high=[100 * high for _, high in intervals],
                       labels_saved_pct=[labels_saved_pct(r) if keep else math.nan
                                         for r, keep in zip(rows["pearson_pct"], pooled)])
    return rows[COLUMNS].reset_index(drop=True)


def pooled_llm_rows() -> pd.DataFrame:
    """The LLM rows that are one pooled correlation each: the rows the ρ² rule prices."""
    rows = paper_judges()
    return rows[(rows["kind"] == LLM) & rows["reading"].isin(POOLED_READINGS)].reset_index(drop=True)


def annotators(rows: pd.DataFrame) -> int:
    """How many human annotators ``rows`` (``paper_judges`` rows) hold: their annotator judges but the mean of
    them."""
    names = rows.loc[rows["kind"] == ANNOTATOR, "judge"]
    return names[names != ANNOTATORS_MEAN].nunique()


__all__ = ["ANNOTATOR", "ANNOTATORS_MEAN", "COLUMNS", "KANG_ENSEMBLE", "KANG_LATER_JUDGE", "KANG_RATINGS", "LLM",
           "MEAN_OF_ASPECTS", "PER_USER_OR_POOLED", "POOLED", "POOLED_ONE_PER_USER", "POOLED_READINGS", "PROXY",
           "RANDOM", "REFERENCE_METRIC", "ZHANG_ENTRIES", "annotators", "labels_saved_pct", "paper_judges",
           "pooled_llm_rows"]
