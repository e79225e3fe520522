"""Kang et al.'s own claims about their Table 2, checked with their own numbers.

- §4.1: "all reported Pearson correlation coefficients are statistically significant at the p < 0.05 level". A
  Pearson r over n pairs has the two-sided p-value of t = r·√(n − 2)/√(1 − r²) with n − 2 degrees of freedom; with
  the paper's Table 1 counts of serendipity ratings (2,150 for Serendipity-2018, 11,383 for Taobao) a small |r| cannot
  reach p < 0.05 (``pearson_p_value``, ``critical_pearson``).
- §5.1: "In zero-shot settings, LLMs such as Qwen2.5-14B and GPT-4 surpass conventional metrics across both datasets
  by approximately 100% in Pearson correlation compared to the best proxy metric (SOG)" (``zero_shot_gain_over_sog``).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy import stats

#: Serendipity ratings per dataset, Kang et al.'s Table 1 (the n of every Table 2 correlation).
KANG_TABLE1_RATINGS: Mapping[str, int] = {"Serendipity-2018": 2150, "Taobao Serendipity": 11383}
#: The judges the §5.1 sentence names.
NAMED_ZERO_SHOT = ("Qwen2.5-14B", "GPT-4")


def pearson_p_value(r: float | np.ndarray, n: int) -> np.ndarray:
    """Two-sided p-value of a Pearson correlation ``r`` over ``n`` pairs (the t test of H0: ρ = 0)."""
    r = np.asarray(r, dtype=float)
    t = r * np.sqrt((n - 2) / (1 - r ** 2))
    return 2 * stats.t.sf(np.abs(t), n - 2)


def critical_pearson(n: int, alpha: float = 0.05) -> float:
    """The smallest |r| over ``n`` pairs that is significant at ``alpha`` (two-sided)."""
    t = stats.t.isf(alpha / 2, n - 2)
    return float(t / np.sqrt(n - 2 + t ** 2))


def significance_check(table2: pd.DataFrame, ratings: Mapping[str, int] = KANG_TABLE1_RATINGS,
                       alpha: float = 0.05) -> pd.DataFrame:
    """Every Table 2 row with n, its p-value and whether it is significant at ``alpha``."""
    rows = table2.assign(n=table2["dataset"].map(ratings))
    if rows["n"].isna().any():
        raise KeyError(f"no rating count for dataset(s) {sorted(set(rows.loc[rows['n'].isna(), 'dataset']))}")
    rows["n"] = rows["n"].astype(int)
    rows["critical_pearson_pct"] = [100 * critical_pearson(n, alpha) for n in rows["n"]]
    rows["p_value"] = [float(pearson_p_value(r / 100, n)) for r, n in zip(rows["pearson_pct"], rows["n"])]
    rows["significant"] = rows["p_value"] < alpha
    return rows[["dataset", "family", "method", "pearson_pct", "n", "critical_pearson_pct", "p_value", "significant"]]


def zero_shot_gain_over_sog(table2: pd.DataFrame, judges: tuple[str, ...] = NAMED_ZERO_SHOT) -> pd.DataFrame:
    """Per dataset and named zero-shot judge: its Pearson, SOG's, and the relative gain (%) over SOG."""
    rows = []
    for dataset, part in table2.groupby("dataset", sort=False):
        sog = part[(part["family"] == "Proxy Metrics") & (part["method"] == "SOG")]["pearson_pct"]
        if len(sog) != 1:
            raise KeyError(f"Table 2, {dataset}: expected one SOG row, found {len(sog)}")
        for judge in judges:
            found = part[(part["family"] == "LLM zero-shot") & (part["method"] == judge)]["pearson_pct"]
            if len(found) != 1:
                raise KeyError(f"Table 2, {dataset}: expected one zero-shot {judge} row, found {len(found)}")
            rows.append({"dataset": dataset, "judge": judge, "pearson_pct": float(found.iloc[0]),
                         "sog_pearson_pct": float(sog.iloc[0]),
                         "gain_over_sog_pct": 100 * (float(found.iloc[0]) / float(sog.iloc[0]) - 1)})
    return pd.DataFrame(rows)


#: Tokutake et al. §4: the distribution of the five-level ground truth g on Serendipity-2018, as printed.
TOKUTAKE_G_COUNTS: Mapping[int, int] = {1: 321, 2: 1022, 3: 586, 4: 208, 5: 13}


def g_distribution_summary(counts: Mapping[int, int] = TOKUTAKE_G_COUNTS) -> dict[str, float]:
    """n, mean, standard deviation and share of g ≥ 4 (Tokutake's "serendipitous") of a printed distribution."""
    levels = np.array(list(counts), dtype=float)
    weights = np.array(list(counts.values()), dtype=float)
    n = weights.sum()
    mean = float((levels * weights).sum() / n)
    sd = float(np.sqrt((weights * (levels - mean) ** 2).sum() / (n - 1)))
    return {"n": int(n), "mean": mean, "sd": sd, "share_serendipitous": float(weights[levels >= 4].sum() / n)}


def avg_score_alignment(table3: pd.DataFrame, counts: Mapping[int, int] = TOKUTAKE_G_COUNTS) -> pd.DataFrame:
    """Tokutake's Table 3 Avg. Score@20 per dataset and recommender beside the mean of g, and their difference."""
    g = g_distribution_summary(counts)
    out = table3[["dataset", "recommender", "avg_score"]].copy()
    out["g_mean"] = g["mean"]
    out["difference"] = out["avg_score"] - g["mean"]
    return out
