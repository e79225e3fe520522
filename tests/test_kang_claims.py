"""Kang et al.'s claims about their Table 2, checked with their own numbers (recjudge.serendipity.claims)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from recjudge.serendipity import claims
from recjudge.serendipity.ground_truth import kang2025_table2


def test_the_p_value_of_r_and_n_is_scipys_pearsonr():
    rng = np.random.default_rng(0)
    x = rng.normal(size=300)
    y = 0.1 * x + rng.normal(size=300)
    found = stats.pearsonr(x, y)
    assert float(claims.pearson_p_value(found.statistic, 300)) == pytest.approx(found.pvalue, rel=1e-6)


def test_the_critical_r_is_where_p_crosses_alpha():
    r = claims.critical_pearson(2150)
    assert r == pytest.approx(0.0423, abs=2e-4)
    assert float(claims.pearson_p_value(r, 2150)) == pytest.approx(0.05)


def test_the_papers_smallest_correlations_cannot_be_significant():
    checked = claims.significance_check(kang2025_table2()).set_index(["dataset", "family", "method"])
    snpr = checked.loc[("Serendipity-2018", "Proxy Metrics", "SNPR")]
    assert snpr["pearson_pct"] == pytest.approx(0.0509) and not snpr["significant"]
    assert checked.loc[("Serendipity-2018", "LLM zero-shot", "GPT-4"), "significant"]


def test_the_100_percent_claim_is_computed_per_judge_and_dataset():
    gains = claims.zero_shot_gain_over_sog(kang2025_table2()).set_index(["dataset", "judge"])
    assert gains.loc[("Serendipity-2018", "Qwen2.5-14B"), "gain_over_sog_pct"] == pytest.approx(
        100 * (6.2096 / 5.7226 - 1))
    assert len(gains) == 4


def test_an_unknown_dataset_is_named():
    table = pd.DataFrame({"dataset": ["Other"], "family": ["Random"], "method": ["Random"], "pearson_pct": [1.0]})
    with pytest.raises(KeyError, match="Other"):
        claims.significance_check(table)


def test_weight_sensitivity_covers_the_grid_and_meets_where_the_proxies_coincide():
    from recjudge.serendipity import proxies

    rng = np.random.default_rng(3)
    n = 200
    components = pd.DataFrame({name: rng.uniform(size=n) for name in proxies.COMPONENTS})
    truth = pd.Series(rng.uniform(1, 5, n))
    table = proxies.weight_sensitivity(components, truth)
    assert len(proxies.sog_weight_grid(0.25)) == 35 and (table["proxy"] == "SOG").sum() == 35
    assert table.groupby("proxy")["default"].sum().to_dict() == {"SNPR": 1, "SOG": 1}
    by_choice = table.set_index("weights")["pearson_pct"]
    # SNPR at lambda 1 and SOG with all weight on relevance are both relevance alone.
    assert by_choice["λ 1"] == pytest.approx(
        by_choice["relevance 1, diversity 0, history_dissimilarity 0, unpopularity 0"])
    with pytest.raises(ValueError, match="divide 1"):
        proxies.sog_weight_grid(0.3)


def test_the_g_distribution_summary_is_the_weighted_mean_of_the_printed_counts():
    found = claims.g_distribution_summary({1: 1, 2: 2, 4: 1})
    assert found["n"] == 4 and found["mean"] == pytest.approx(9 / 4)
    assert found["sd"] == pytest.approx(np.std([1, 2, 2, 4], ddof=1))
    assert found["share_serendipitous"] == pytest.approx(0.25)
    printed = claims.g_distribution_summary()
    assert printed["n"] == 2150 and printed["mean"] == pytest.approx(5020 / 2150)
