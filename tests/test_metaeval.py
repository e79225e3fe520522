"""Tests of recjudge.metaeval.agreement on hand-computed cases."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from recjudge.metaeval.agreement import (
    agreement,
    bootstrap_ci,
    compare_dependent_correlations,
    correlation,
    multilevel_correlation,
    rescale_to_likert,
    williams_t,
)


# ---------------------------------------------------------------------------------------------------- rescale_to_likert
def test_rescale_maps_min_and_max_to_the_scale_ends():
    np.testing.assert_array_equal(rescale_to_likert([0.0, 5.0, 10.0]), [1, 3, 5])
    np.testing.assert_array_equal(rescale_to_likert([-2.0, 2.0], low=0, high=10), [0, 10])


def test_rescale_rounds_like_eq6_with_halves_to_even():
    # (3 - 0) / 8 * 4 + 1 = 2.5 -> 2 ; (5 - 0) / 8 * 4 + 1 = 3.5 -> 4 ; (1/8)*4+1 = 1.5 -> 2
    np.testing.assert_array_equal(rescale_to_likert([0, 3, 5, 1, 8]), [1, 2, 4, 2, 5])
    np.testing.assert_allclose(rescale_to_likert([0, 3, 8], round_result=False), [1, 2.5, 5])


def test_rescale_keeps_nan_and_series_index():
    s = pd.Series([np.nan, 0.2, 0.4, 0.6], index=list("abcd"), name="proxy")
    out = rescale_to_likert(s)
    assert isinstance(out, pd.Series) and list(out.index) == list("abcd") and out.name == "proxy"
    assert math.isnan(out["a"])
    assert out[["b", "c", "d"]].tolist() == [1.0, 3.0, 5.0]


def test_rescale_constant_input_goes_to_midpoint_with_warning_or_raises():
    with pytest.warns(RuntimeWarning, match="midpoint"):
        out = rescale_to_likert([0.7, 0.7, np.nan])
    np.testing.assert_array_equal(out[:2], [3.0, 3.0])
    assert math.isnan(out[2])
    with pytest.raises(ValueError, match="all values are equal"):
        rescale_to_likert([2, 2], constant="raise")
    assert np.isnan(rescale_to_likert([np.nan, np.nan])).all()
    with pytest.raises(ValueError, match="greater"):
        rescale_to_likert([1, 2], low=5, high=1)


# ---------------------------------------------------------------------------------------------------- agreement
def test_agreement_hand_computed_and_drops_nan_pairs():
    pred = [1, 2, 3, 4, np.nan, 2]
    true = [1, 2, 3, 5, 4, np.nan]
    out = agreement(pred, true)
    # deviations: pred (-1.5,-.5,.5,1.5), true (-1.75,-.75,.25,2.25): sum of products 6.5, ss 5 and 8.75
    assert out["n"] == 4
    assert out["pearson_r"] == pytest.approx(6.5 / math.sqrt(5 * 8.75))
    assert out["mae"] == pytest.approx(0.25)
    assert out["rmse"] == pytest.approx(0.5)
    assert out["pearson_p"] == pytest.approx(stats.pearsonr([1, 2, 3, 4], [1, 2, 3, 5]).pvalue)


def test_agreement_constant_prediction_has_undefined_correlation_but_errors():
    out = agreement([3, 3, 3], [1, 2, 3])
    assert math.isnan(out["pearson_r"]) and math.isnan(out["pearson_p"])
    assert out["mae"] == pytest.approx(1.0)  # errors 2, 1, 0
    assert out["rmse"] == pytest.approx(math.sqrt(5 / 3))
    empty = agreement([np.nan], [1.0])
    assert empty["n"] == 0 and math.isnan(empty["mae"])
    with pytest.raises(ValueError, match="same length"):
        agreement([1, 2], [1, 2, 3])


# ---------------------------------------------------------------------------------------------------- bootstrap
def test_bootstrap_is_seeded_and_brackets_the_estimate():
    rng = np.random.default_rng(1)
    true = rng.integers(1, 6, 80).astype(float)
    pred = true + rng.normal(0, 1.5, 80)
    a = bootstrap_ci(pred, true, "pearson", n_boot=500, seed=3)
    b = bootstrap_ci(pred, true, "pearson", n_boot=500, seed=3)
    c = bootstrap_ci(pred, true, "pearson", n_boot=500, seed=4)
    assert a == b
    assert a["ci_low"] != c["ci_low"]
    assert a["ci_low"] < a["estimate"] < a["ci_high"]
    assert a["estimate"] == pytest.approx(stats.pearsonr(pred, true).statistic)
    assert a["n"] == 80 and a["n_boot"] == 500 and a["level"] == 0.95


def test_bootstrap_percentile_matches_an_independent_numpy_bootstrap():
    rng = np.random.default_rng(7)
    true = rng.normal(size=60)
    pred = 0.5 * true + rng.normal(size=60)
    ours = bootstrap_ci(pred, true, "mae", n_boot=4000, seed=0, level=0.9, method="percentile")
    # Independent reference: resample pair indices by hand and take the 5th/95th percentiles.
    idx = np.random.default_rng(123).integers(0, 60, size=(4000, 60))
    boot = np.abs(pred[idx] - true[idx]).mean(axis=1)
    ref_low, ref_high = np.percentile(boot, [5, 95])
    width = ref_high - ref_low
    assert ours["ci_low"] == pytest.approx(ref_low, abs=0.1 * width)
    assert ours["ci_high"] == pytest.approx(ref_high, abs=0.1 * width)


def test_bootstrap_accepts_callables_and_rank_statistics_and_handles_degenerate_input():
    rng = np.random.default_rng(2)
    true = rng.normal(size=40)
    pred = true + rng.normal(size=40)
    out = bootstrap_ci(pred, true, lambda p, t: float(np.median(p - t)), n_boot=200, method="percentile")
    assert out["ci_low"] <= out["estimate"] <= out["ci_high"]
    tau = bootstrap_ci(pred, true, "kendall", n_boot=200, method="percentile")
    assert tau["estimate"] == pytest.approx(stats.kendalltau(pred, true).statistic)
    assert tau["ci_low"] < tau["estimate"] < tau["ci_high"]
    constant = bootstrap_ci([2, 2, 2, 2], [1, 2, 3, 4], "pearson")
    assert math.isnan(constant["estimate"]) and math.isnan(constant["ci_low"])
    with pytest.raises(ValueError, match="unknown statistic"):
        bootstrap_ci([1, 2, 3], [1, 2, 3], "nope")


# ---------------------------------------------------------------------------------------------------- dependent r test
def test_williams_t_matches_published_reference_value():
    # Silver, Hittner & May (2006) depcor program, as used in the test suite of the R package cocor:
    # r_jk = .3, r_jh = .4, r_kh = .5, n = 100 -> t = -1.0767, p = .2843 (df = 97).
    out = williams_t(0.3, 0.4, 0.5, 100)
    assert round(out["t"], 4) == -1.0767
    assert round(out["p_value"], 4) == 0.2843
    assert out["df"] == 97


def test_compare_dependent_correlations_from_raw_scores():
    rng = np.random.default_rng(5)
    truth = rng.normal(size=120)
    good = truth + rng.normal(scale=0.7, size=120)
    poor = truth + rng.normal(scale=3.0, size=120)
    out = compare_dependent_correlations(good, poor, truth)
    ref = williams_t(
        stats.pearsonr(good, truth).statistic, stats.pearsonr(poor, truth).statistic,
        stats.pearsonr(good, poor).statistic, 120,
    )
    assert out["t"] == pytest.approx(ref["t"]) and out["p_value"] == pytest.approx(ref["p_value"])
    assert out["difference"] > 0 and out["p_value"] < 0.01
    swapped = compare_dependent_correlations(poor, good, truth)
    assert swapped["t"] == pytest.approx(-out["t"]) and swapped["p_value"] == pytest.approx(out["p_value"])
    # Perfectly collinear evaluators make the test 0/0: reported as NaN rather than a misleading number.
    assert math.isnan(compare_dependent_correlations(good, 2 * good + 1.0, truth)["t"])


def test_williams_t_holds_its_size_under_the_null():
    # Two equally good evaluators: the two-sided test should reject about 5 % of the time.
    rng = np.random.default_rng(11)
    rejections = 0
    n_sim = 400
    for _ in range(n_sim):
        truth = rng.normal(size=50)
        a = truth + rng.normal(size=50)
        b = truth + rng.normal(size=50)
        rejections += compare_dependent_correlations(a, b, truth)["p_value"] < 0.05
    assert 0.02 <= rejections / n_sim <= 0.09


# ---------------------------------------------------------------------------------------------------- multi-level
@pytest.fixture
def three_level_frame() -> pd.DataFrame:
    rows = [
        # user A, item 1: pred = truth                          -> r = +1
        ("A", 1, 1, 1), ("A", 1, 2, 2), ("A", 1, 3, 3),
        # user A, item 2: constant truth                        -> undefined at pair level
        ("A", 2, 1, 3), ("A", 2, 2, 3), ("A", 2, 3, 3),
        # user B, item 1 (same item id, other user): reversed   -> r = -1
        ("B", 1, 1, 3), ("B", 1, 2, 2), ("B", 1, 3, 1),
        # user B, item 2: constant prediction                   -> undefined at pair level
        ("B", 2, 2, 1), ("B", 2, 2, 2), ("B", 2, 2, 3),
        # user C: one row only                                  -> undefined at user and pair level
        ("C", 1, 4, 5),
        # rows with a missing value are dropped
        ("A", 1, np.nan, 4), ("C", 2, 2, np.nan),
    ]
    return pd.DataFrame(rows, columns=["user_id", "item_id", "judge", "user_rating"])


def _row(table, level, method):
    sel = table[(table.level == level) & (table.method == method)]
    assert len(sel) == 1
    return sel.iloc[0]


def test_multilevel_pair_level_groups_user_item_pairs(three_level_frame):
    table = multilevel_correlation(three_level_frame, "judge", "user_rating", "user_id", "item_id")
    for method in ("pearson", "spearman", "kendall"):
        row = _row(table, "pair", method)
        assert row.value == pytest.approx(0.0)  # mean of +1 (A,1) and -1 (B,1)
        assert row.n_groups == 2 and row.n_undefined == 3  # (A,2), (B,2), (C,1)


def test_multilevel_user_level_hand_computed(three_level_frame):
    table = multilevel_correlation(three_level_frame, "judge", "user_rating", "user_id", "item_id")
    # user A: pred (1,2,3,1,2,3) truth (1,2,3,3,3,3): sum of products 2, ss 4 and 3.5 -> 2/sqrt(14)
    # user B: pred (1,2,3,2,2,2) truth (3,2,1,1,2,3): sum of products -2, ss 2 and 4 -> -2/sqrt(8)
    row = _row(table, "user", "pearson")
    assert row.value == pytest.approx((2 / math.sqrt(14) - 2 / math.sqrt(8)) / 2)
    assert row.n_groups == 2 and row.n_undefined == 1  # user C has a single row
    # Rank methods: the same per-user averaging, against scipy called group by group.
    data = three_level_frame.dropna()
    for method, fn in (("spearman", stats.spearmanr), ("kendall", stats.kendalltau)):
        per_user = [fn(g.judge, g.user_rating).statistic for u, g in data.groupby("user_id") if u != "C"]
        assert _row(table, "user", method).value == pytest.approx(np.mean(per_user))


def test_multilevel_dataset_level_and_shape(three_level_frame):
    table = multilevel_correlation(three_level_frame, "judge", "user_rating", "user_id", "item_id")
    assert list(table.columns[:5]) == ["level", "method", "value", "n_groups", "n_undefined"]
    assert len(table) == 9
    assert list(table.level.unique()) == ["dataset", "user", "pair"]
    data = three_level_frame.dropna()
    row = _row(table, "dataset", "pearson")
    assert row.value == pytest.approx(stats.pearsonr(data.judge, data.user_rating).statistic)
    assert row.n_groups == 1 and row.n_undefined == 0 and row.n_rows == 13


def test_multilevel_all_groups_undefined_gives_nan_and_bad_columns_raise():
    frame = pd.DataFrame({"u": [1, 1, 2, 2], "i": [1, 1, 1, 1], "p": [1, 2, 3, 4], "t": [3, 3, 4, 4]})
    table = multilevel_correlation(frame, "p", "t", "u", "i", methods=("pearson",))
    pair = _row(table, "pair", "pearson")
    assert math.isnan(pair.value) and pair.n_groups == 0 and pair.n_undefined == 2
    assert not math.isnan(_row(table, "dataset", "pearson").value)
    with pytest.raises(KeyError, match="'missing'"):
        multilevel_correlation(frame, "missing", "t", "u", "i")
    with pytest.raises(ValueError, match="unknown correlation method"):
        multilevel_correlation(frame, "p", "t", "u", "i", methods=("cosine",))


def test_correlation_is_silent_on_constant_input():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(correlation([1, 1, 1], [1, 2, 3], "spearman"))
        assert math.isnan(correlation([1], [1], "kendall"))


def test_random_baseline_over_seeds_matches_per_seed_agreement_and_expectation():
    from recjudge.metaeval.agreement import agreement, random_baseline_expectation, random_baseline_over_seeds

    true = np.array([1.0, 2.0, 2.5, 3.0, 4.0, np.nan, 5.0, 1.5] * 25)
    table = random_baseline_over_seeds(true, n_seeds=2000, seed=3)
    assert len(table) == 2000 and list(table.columns) == ["seed", "pearson", "mae", "rmse", "auc"]
    # each row is the ordinary agreement of one uniform draw with the finite truths
    draws = np.random.default_rng(3).integers(1, 6, size=(2000, 175)).astype(float)
    finite = true[np.isfinite(true)]
    single = agreement(draws[7], finite)
    assert table.loc[7, "pearson"] == pytest.approx(single["pearson_r"])
    assert table.loc[7, "mae"] == pytest.approx(single["mae"])
    assert table.loc[7, "rmse"] == pytest.approx(single["rmse"])
    expected = random_baseline_expectation(true)
    # E|U - t| by hand for t = 1, 2, 2.5, 3, 4, 5, 1.5 (e.g. t = 2: (1+0+1+2+3)/5 = 1.4)
    by_hand = np.mean([2.0, 1.4, 1.3, 1.2, 1.4, 2.0, 1.7])
    assert expected["mae"] == pytest.approx(by_hand)
    assert table["mae"].mean() == pytest.approx(expected["mae"], abs=0.01)
    assert abs(table["pearson"].mean()) < 0.01  # independent draws: mean correlation near 0
    assert table["rmse"].mean() <= expected["rmse_of_expected_mse"] + 1e-9


def test_agreement_pct_is_agreement_with_pearson_in_percent():
    from recjudge.metaeval.agreement import agreement, agreement_pct

    pred, true = [1, 2, 3, 4, np.nan], [1, 2, 4, 3, 5]
    plain, pct = agreement(pred, true), agreement_pct(pred, true)
    assert pct == {"pearson_pct": 100 * plain["pearson_r"], "mae": plain["mae"], "rmse": plain["rmse"], "n": 4}


def _noisy_answers(n: int = 60, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, n).astype(float)
    return np.clip(truth + rng.normal(0, 1.5, n), 1, 5), truth


@pytest.mark.parametrize("statistic", ["pearson", "mae", "spearman"])
def test_a_cluster_bootstrap_of_one_answer_per_user_is_the_paired_bootstrap(statistic):
    pred, truth = _noisy_answers()
    paired = bootstrap_ci(pred, truth, statistic, n_boot=400, seed=3, method="percentile")
    by_user = bootstrap_ci(pred, truth, statistic, n_boot=400, seed=3, method="percentile",
                           groups=np.arange(len(pred)))
    assert by_user["n_groups"] == len(pred)
    assert (by_user["ci_low"], by_user["ci_high"]) == pytest.approx((paired["ci_low"], paired["ci_high"]))


def test_a_users_repeated_answers_do_not_narrow_a_by_user_interval():
    pred, truth = _noisy_answers()
    alone = bootstrap_ci(pred, truth, "pearson", n_boot=400, seed=3, method="percentile")
    copies = 3  # each user gave the same answer three times: no new information
    users = np.repeat(np.arange(len(pred)), copies)
    by_user = bootstrap_ci(np.repeat(pred, copies), np.repeat(truth, copies), "pearson", n_boot=400, seed=3,
                           method="percentile", groups=users)
    by_answer = bootstrap_ci(np.repeat(pred, copies), np.repeat(truth, copies), "pearson", n_boot=400, seed=3,
                             method="percentile")
    assert (by_user["ci_low"], by_user["ci_high"]) == pytest.approx((alone["ci_low"], alone["ci_high"]))
    assert by_answer["ci_high"] - by_answer["ci_low"] < 0.8 * (by_user["ci_high"] - by_user["ci_low"])


def test_a_cluster_bootstrap_refuses_groups_of_another_length():
    pred, truth = _noisy_answers(10)
    with pytest.raises(ValueError, match="same length"):
        bootstrap_ci(pred, truth, "pearson", groups=np.arange(9))


def test_ranking_auc_is_the_mann_whitney_probability_that_a_serendipitous_answer_scores_higher():
    from scipy import stats

    from recjudge.metaeval.agreement import ranking_auc

    rng = np.random.default_rng(0)
    truth = rng.integers(1, 6, 300).astype(float)
    judge = truth + rng.normal(0, 2, 300)
    positive = truth >= 4
    u = stats.mannwhitneyu(judge[positive], judge[~positive]).statistic
    assert ranking_auc(judge, truth) == pytest.approx(u / (positive.sum() * (~positive).sum()))
    # a constant ranks nothing: every pair a tie, half a point each
    assert ranking_auc(np.full(300, 2.0), truth) == 0.5
    assert np.isnan(ranking_auc(judge, np.full(300, 5.0)))


def test_the_weighted_ranking_auc_is_scikit_learns_with_the_counts_as_sample_weights():
    from sklearn.metrics import roc_auc_score

    from recjudge.metaeval.agreement import ranking_auc_statistic

    auc = ranking_auc_statistic()
    rng = np.random.default_rng(4)
    for decimals in (0, 1, 3):  # many ties, some, almost none
        truth = rng.integers(1, 6, 80).astype(float)
        judge = np.round(truth + rng.normal(0, 1.5, 80), decimals)
        counts = rng.integers(0, 4, (30, 80))
        counts[0, truth >= 4] = 0  # a resample without a serendipitous answer
        found = auc.weighted(judge, truth, counts)
        assert np.isnan(found[0])
        assert found[1:] == pytest.approx([roc_auc_score(truth >= 4, judge, sample_weight=row) for row in counts[1:]],
                                          abs=1e-12)
    assert auc.weighted(np.full(80, 2.0), truth, counts[1:]) == pytest.approx(np.full(29, 0.5))


@pytest.mark.parametrize("method", ["percentile", "BCa"])
def test_a_cluster_bootstrap_of_the_ranking_auc_counts_pairs_as_the_repeated_pairs_do(method):
    """The AUC's cluster bootstrap weighs each pair by how often its user was drawn; it gives the interval of the
    statistic computed on the drawn users' pairs repeated (the path of any other callable)."""
    from recjudge.metaeval.agreement import ranking_auc, ranking_auc_statistic

    pred, truth = _noisy_answers(90)
    pred = np.round(pred)  # ties within and across users
    users = np.random.default_rng(2).integers(0, 25, 90)
    weighted = bootstrap_ci(pred, truth, ranking_auc_statistic(), n_boot=300, seed=5, method=method, groups=users)
    repeated = bootstrap_ci(pred, truth, lambda a, b: ranking_auc(a, b), n_boot=300, seed=5, method=method,
                            groups=users)
    assert weighted["statistic"] == "auc" and weighted["n_groups"] == repeated["n_groups"] == 25
    for key in ("estimate", "ci_low", "ci_high", "standard_error"):
        assert weighted[key] == pytest.approx(repeated[key], abs=1e-12), key


def test_cronbachs_alpha_of_the_truths_statements_is_the_anova_consistency_of_their_mean():
    # Cronbach's α equals ICC(3,k) (consistency of the average of k raters) from a two-way ANOVA without interaction:
    # (MS_answers − MS_error) / MS_answers, here from statsmodels' ANOVA table as the independent reference.
    import statsmodels.formula.api as smf
    from statsmodels.stats.anova import anova_lm

    from recjudge.serendipity.ground_truth import truth_reliability

    rng = np.random.default_rng(1)
    latent = rng.normal(3, 1, 400)
    answers = pd.DataFrame({f"s{i}": np.clip(np.rint(latent + rng.normal(0, 0.8, 400)), 1, 5) for i in range(1, 9)})
    found = truth_reliability(answers)
    long = answers[["s4", "s5", "s6"]].reset_index().melt(id_vars="index", var_name="statement")
    table = anova_lm(smf.ols("value ~ C(index) + C(statement)", data=long).fit())
    ms_answers, ms_error = table.loc["C(index)", "mean_sq"], table.loc["Residual", "mean_sq"]
    assert found["alpha"] == pytest.approx((ms_answers - ms_error) / ms_answers, rel=1e-9)
    assert found["ceiling_r"] == pytest.approx(np.sqrt(found["alpha"])) and found["n"] == 400


def test_each_random_draws_ranking_auc_is_scikit_learns():
    from recjudge.metaeval.agreement import random_baseline_over_seeds, ranking_auc

    true = np.array([1.0, 2.0, 4.0, 3.0, 5.0, 4.5, 2.5, 1.5] * 25)
    table = random_baseline_over_seeds(true, n_seeds=50, seed=3)
    draws = np.random.default_rng(3).integers(1, 6, size=(50, 200)).astype(float)
    assert table["auc"].to_numpy() == pytest.approx([ranking_auc(draw, true) for draw in draws])
