"""What the papers' own judges are worth in human labels, from the correlations the papers print.

Part V prices a judge by the ρ² rule (:func:`recjudge.trust.ppi.labels_worth_by_correlation`): with many unlabelled
answers and PPI++'s optimal λ, n labels and a judge correlating ρ with the humans are worth n / (1 − ρ²) labels alone,
so the judge saves a share ρ² of the labels a given precision needs. Here the rule is applied to every LLM row of the
papers' agreement tables, with the paper's own n:

- Kang et al., Table 2 (every LLM row: LLM-based baselines, zero- and few-shot judges) and Tables 4–5; n: the
  serendipity ratings of their Table 1 (2,150 for Serendipity-2018, 11,383 for Taobao);
- Zhang et al., Table 1 (every LLM evaluator, its printed Average over the four aspects at the dataset level); n: the
  paper's "around 2,500 text entries".

Beside each: the smallest correlation the paper's n detects with 80% power (Fisher z), and the n its own correlation
needs (:mod:`recjudge.metaeval.power`).
"""

from __future__ import annotations

import pandas as pd

from recjudge import papers
from recjudge.metaeval.power import detectable_correlation, n_for_correlation
from recjudge.serendipity.claims import KANG_TABLE1_RATINGS
from recjudge.trust.ppi import labels_worth_by_correlation

#: Zhang et al.'s text entries ("around 2,500", section 2.2.1): the n of their dataset-level correlations.
ZHANG_ENTRIES = 2500
#: Kang et al.'s Table 5 ensemble (their caption: Qwen2.5-14B, Qwen2.5-72B and GPT-4, few-shot).
ENSEMBLE = "mean of Qwen2.5-14B, Qwen2.5-72B, GPT-4 few-shot"
#: Kang et al.'s Table 2 families that are LLM judges.
KANG_LLM_FAMILIES = ("LLM-based Baseline", "LLM zero-shot", "LLM few-shot")
#: Zhang et al.'s Table 1 rows that are not LLM evaluators.
ZHANG_NOT_LLM = ("Random", "BLEU-1", "BLEU-4", "ROUGE-1-F", "ROUGE-L-F", "Annotator-1", "Annotator-2", "Average")
COLUMNS = ["paper", "table", "dataset", "judge", "pearson_pct", "n", "labels_saved_pct", "labels_worth_at_n",
           "labels_needed_with_judge", "detectable_pearson_pct", "n_needed_to_detect"]


def _kang() -> pd.DataFrame:
    table2 = papers.table("kang2025serendipity_table2")
    table2 = table2[table2["family"].isin(KANG_LLM_FAMILIES)].assign(
        table="Table 2", judge=lambda t: t["family"] + ": " + t["method"])
    later = papers.table("kang2025serendipity_tables4_5")
    # the paper's judge for Tables 4-5 is Qwen2.5-14B few-shot; its Table 5 ensemble averages three judges
    judge = later["method"].str.startswith("Multi-LLM").map({True: ENSEMBLE, False: "Qwen2.5-14B few-shot"})
    later = later.assign(table="Table " + later["table"].astype(str),
                         judge=judge + ": " + later["method"].replace({"NA": "no interactions / no auxiliary data"}))
    rows = pd.concat([table2, later], ignore_index=True)
    return rows.assign(paper="Kang et al. 2025", n=rows["dataset"].map(KANG_TABLE1_RATINGS))


def _zhang() -> pd.DataFrame:
    table1 = papers.table("zhang2024explanations_table1")
    rows = table1[(table1["aspect"] == "average") & ~table1["evaluator"].isin(ZHANG_NOT_LLM)]
    return pd.DataFrame({"paper": "Zhang et al. 2024", "table": "Table 1 (average of the aspects)",
                         "dataset": "Lu et al.'s explanations (dataset level)", "judge": rows["evaluator"],
                         "pearson_pct": rows["dataset"], "n": ZHANG_ENTRIES})


def paper_judges_worth() -> pd.DataFrame:
    """Every LLM row of the papers' agreement tables priced in labels by the ρ² rule at the paper's n (columns
    :data:`COLUMNS`): the share of labels saved (100 ρ²), what the paper's n labels plus the judge are worth, the
    labels the judge leaves to collect for the precision of n labels, the correlation the paper's n detects with 80%
    power and the n the row's own correlation needs (a negative correlation saves labels too: ρ² counts)."""
    rows = pd.concat([_kang(), _zhang()], ignore_index=True)
    rho = rows["pearson_pct"] / 100
    out = rows.assign(
        labels_saved_pct=100 * rho ** 2,
        labels_worth_at_n=[labels_worth_by_correlation(int(n), float(r)) for n, r in zip(rows["n"], rho)],
        labels_needed_with_judge=rows["n"] * (1 - rho ** 2),
        detectable_pearson_pct=[100 * detectable_correlation(int(n)) for n in rows["n"]],
        n_needed_to_detect=[n_for_correlation(float(r)) if r != 0 else pd.NA for r in rho])
    return out[COLUMNS].reset_index(drop=True)


__all__ = ["COLUMNS", "ZHANG_ENTRIES", "paper_judges_worth"]
