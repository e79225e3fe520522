"""Lima & Peres's discussion statistics recomputed from their own Table 2 (recjudge.surprise.paper_tables)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recjudge.surprise import paper_tables


def test_the_printed_coefficients_of_variation_follow_from_the_printed_table():
    found = paper_tables.coefficients_of_variation(paper_tables.lima_peres_table2_long())
    assert found["cv_pct"].round(1).tolist() == found["printed_cv_pct"].tolist()


def test_a_coefficient_of_variation_is_the_sample_sd_over_the_mean():
    long = pd.DataFrame({"model": ["C", "P", "U"], "distance": "cosine", "recommender": "kNN",
                         "mean": [0.2, 0.4, 0.6]})
    row = paper_tables.coefficients_of_variation(long).iloc[0]
    assert row["cells"] == 3 and row["cv_pct"] == pytest.approx(100 * np.std([0.2, 0.4, 0.6], ddof=1) / 0.4)
    assert np.isnan(paper_tables.coefficients_of_variation(long).iloc[2]["cv_pct"])  # model U: one cell only
