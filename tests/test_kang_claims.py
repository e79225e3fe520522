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
