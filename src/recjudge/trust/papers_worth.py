"""What the papers' own judges are worth in human labels, from the correlations the papers print.

Part V prices a judge by the ρ² rule (:func:`recjudge.trust.ppi.labels_worth_by_correlation`): with many unlabelled
answers and PPI++'s optimal λ, n labels and a judge correlating ρ with the humans are worth n / (1 − ρ²) labels alone,
so the judge saves a share ρ² of the labels a given precision needs. ρ is one correlation over every answer, so the
rule is applied only to the LLM rows the papers print that are one (``recjudge.metaeval.paper_judges``): Kang et al.'s
Taobao rows (one answer per user; Tables 2, 4 and 5) and Zhang et al.'s dataset-level rows, per aspect (Table 1).
Kang et al.'s Serendipity-2018 rows may be means of per-user correlations and Zhang et al.'s Average column is a mean
of four aspects' correlations: neither is a ρ, so neither is priced.

Beside each: the smallest correlation the paper's n detects with 80% power (Fisher z), and the n its own correlation
needs (:mod:`recjudge.metaeval.power`).
"""

from __future__ import annotations

import pandas as pd

from recjudge.metaeval.paper_judges import pooled_llm_rows
from recjudge.metaeval.power import detectable_correlation, n_for_correlation
from recjudge.trust.ppi import labels_worth_by_correlation

COLUMNS = ["paper", "table", "dataset", "judge", "prompt", "aspect", "reading", "pearson_pct", "pearson_ci_low",
           "pearson_ci_high", "n", "labels_saved_pct", "labels_worth_at_n", "labels_needed_with_judge",
           "detectable_pearson_pct", "n_needed_to_detect"]


def paper_judges_worth() -> pd.DataFrame:
    """Every pooled LLM row of the papers' agreement tables priced in labels by the ρ² rule at the paper's n
    (columns :data:`COLUMNS`): the share of labels saved (100 ρ²), what the paper's n labels plus the judge are
    worth, the labels the judge leaves to collect for the precision of n labels, the correlation the paper's n
    detects with 80% power and the n the row's own correlation needs (a negative correlation saves labels too: ρ²
    counts)."""
    rows = pooled_llm_rows()
    rho = rows["pearson_pct"] / 100
    out = rows.assign(
        labels_worth_at_n=[labels_worth_by_correlation(int(n), float(r)) for n, r in zip(rows["n"], rho)],
        labels_needed_with_judge=rows["n"] * (1 - rho ** 2),
        detectable_pearson_pct=[100 * detectable_correlation(int(n)) for n in rows["n"]],
        n_needed_to_detect=[n_for_correlation(float(r)) if r != 0 else pd.NA for r in rho])
    return out[COLUMNS].reset_index(drop=True)


def strongest(table: pd.DataFrame | None = None, aspect: str | None = None) -> pd.Series:
    """The pooled LLM row with the highest |Pearson| (of one ``aspect``, e.g. "serendipity", when given): the
    papers' strongest judge wherever the book names it."""
    table = paper_judges_worth() if table is None else table
    if aspect is not None:
        table = table[table["aspect"] == aspect]
    return table.loc[table["pearson_pct"].abs().idxmax()]


__all__ = ["COLUMNS", "paper_judges_worth", "strongest"]
