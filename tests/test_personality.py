"""CEI-II and TIPI scoring against hand-computed answers, and the regressions on a planted effect."""

import numpy as np
import pandas as pd
import pytest

from recjudge.serendipity import personality as pers


def _survey(c, p):
    row = {f"c{i}": v for i, v in enumerate(c, start=1)}
    row.update({f"p{i}": v for i, v in enumerate(p, start=1)})
    return pd.DataFrame([row])


def test_cei_ii_subscales_are_sums_of_odd_and_even_items():
    survey = _survey(c=[1, 2, 3, 4, 5, 1, 2, 3, 4, 5], p=[4] * 10)
    scores = pers.score_cei_ii(survey).iloc[0]
    # Stretching = items 1, 3, 5, 7, 9 = 1 + 3 + 5 + 2 + 4 = 15; Embracing = 2, 4, 6, 8, 10 = 2 + 4 + 1 + 3 + 5 = 15
    assert scores["stretching"] == 15
    assert scores["embracing"] == 15
    assert scores["curiosity_total"] == 30
    scores = pers.score_cei_ii(_survey(c=[5, 1] * 5, p=[4] * 10)).iloc[0]
    assert (scores["stretching"], scores["embracing"]) == (25, 5)


def test_tipi_reverse_keys_by_hand():
    # P1..P10 = 7, 1, 6, 2, 5, 3, 4, 4, 2, 6
    survey = _survey(c=[3] * 10, p=[7, 1, 6, 2, 5, 3, 4, 4, 2, 6])
    traits = pers.score_tipi(survey).iloc[0]
    assert traits["extraversion"] == pytest.approx((7 + (8 - 3)) / 2)          # 6.0
    assert traits["agreeableness"] == pytest.approx(((8 - 1) + 4) / 2)         # 5.5
    assert traits["conscientiousness"] == pytest.approx((6 + (8 - 4)) / 2)     # 5.0
    assert traits["emotional_stability"] == pytest.approx(((8 - 2) + 2) / 2)   # 4.0
    assert traits["openness"] == pytest.approx((5 + (8 - 6)) / 2)              # 3.5


def test_out_of_range_item_names_row_and_item():
    survey = _survey(c=[3] * 10, p=[4] * 10)
    survey.loc[0, "p6"] = 9
    with pytest.raises(ValueError, match="'p6'.*row 0.*outside 1-7"):
        pers.score_tipi(survey)
    with pytest.raises(KeyError, match="c10"):
        pers.score_cei_ii(survey.drop(columns=["c10"]))


def test_regressions_recover_a_planted_curiosity_effect():
    rng = np.random.default_rng(0)
    n = 600
    survey = pd.DataFrame({f"c{i}": rng.integers(1, 6, n) for i in range(1, 11)}
                          | {f"p{i}": rng.integers(1, 8, n) for i in range(1, 11)})
    scores = pers.instrument_scores(survey)
    stretching = scores["stretching"]
    latent = 0.8 * (stretching - stretching.mean()) / stretching.std() + rng.normal(0, 1, n)
    scores["serendipity"] = pd.cut(latent, [-np.inf, -1.2, -0.4, 0.4, 1.2, np.inf], labels=False) + 1
    coefs, fit = pers.fit_regressions(scores)
    stretch = coefs.query("model == 'curiosity' and term == 'stretching'").set_index("kind")
    assert stretch.loc["ordinal logit", "effect"] > 1.5 and stretch.loc["ordinal logit", "p_value"] < 1e-6
    assert stretch.loc["OLS", "ci_low"] > 0
    big5 = fit.set_index(["model", "kind"])
    assert big5.loc[("big_five", "OLS"), "explained"] < big5.loc[("curiosity", "OLS"), "explained"]
    inc = pers.incremental_variance(fit)
    assert set(inc["kind"]) == {"ordinal logit", "OLS"}
