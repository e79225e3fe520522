"""recjudge.trust: prediction-powered inference against ppi-python and a hand-computed case, interval coverage on
simulated data with a known truth, and calibration that never sees a user's own ratings."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from recjudge.trust import calibration, ppi


def population(size: int = 4000, correlation: float = 0.8, seed: int = 1):
    rng = np.random.default_rng(seed)
    human = rng.normal(3.0, 1.0, size)
    judge = correlation * (human - 3.0) + np.sqrt(1 - correlation ** 2) * rng.normal(0, 1, size) + 2.5
    return human, judge


def test_ppi_is_ppi_python_power_tuned():
    import ppi_py

    human, judge = population()
    y, yhat, unlabelled = human[:100], judge[:100], judge[100:]
    interval = ppi.ppi_mean(y, yhat, unlabelled, alpha=0.05)
    low, high = ppi_py.ppi_mean_ci(y, yhat, unlabelled, alpha=0.05)
    assert (interval.low, interval.high) == pytest.approx((float(low[0]), float(high[0])))
    assert interval.low < interval.estimate < interval.high


def test_ppi_without_power_tuning_matches_the_formula_by_hand():
    """λ = 1: estimate mean(Ŷ_unlabelled) + mean(Y − Ŷ), variance var(Ŷ_unl)/N + var(Y − Ŷ)/n."""
    import ppi_py

    human, judge = population(size=600)
    y, yhat, unlabelled = human[:50], judge[:50], judge[50:]
    estimate = unlabelled.mean() + (y - yhat).mean()
    se = np.sqrt(unlabelled.var(ddof=1) / len(unlabelled) + (y - yhat).var(ddof=1) / len(y))
    z = stats.norm.ppf(0.975)
    low, high = ppi_py.ppi_mean_ci(y, yhat, unlabelled, alpha=0.05, lam=1)
    assert float(ppi_py.ppi_mean_pointestimate(y, yhat, unlabelled, lam=1)[0]) == pytest.approx(estimate)
    assert (float(low[0]), float(high[0])) == pytest.approx((estimate - z * se, estimate + z * se), rel=1e-3)


def test_intervals_cover_the_full_data_mean_about_95_percent_of_the_time():
    human, judge = population()
    draws = ppi.simulate_draws(human, judge, sizes=[100], draws=300, alpha=0.05, seed=3)
    summary = ppi.summarise_draws(draws).iloc[0]
    assert 0.91 <= summary["coverage_ppi"] <= 0.99
    assert 0.91 <= summary["coverage_human_only"] <= 0.99
    assert summary["width_ppi"] < summary["width_human_only"]  # a judge correlated at 0.8 helps


def test_a_judge_is_worth_about_n_over_one_minus_rho_squared_labels():
    human, judge = population(size=20000, correlation=0.8)
    summary = ppi.summarise_draws(ppi.simulate_draws(human, judge, sizes=[200], draws=60, seed=5)).iloc[0]
    by_rule = ppi.labels_worth_by_correlation(200, np.corrcoef(human, judge)[0, 1])
    assert summary["labels_worth"] == pytest.approx(by_rule, rel=0.15)
    assert ppi.labels_worth(100, classical_width=2.0, ppi_width=1.0) == 400


def test_a_useless_judge_costs_nothing():
    rng = np.random.default_rng(0)
    human = rng.normal(3, 1, 3000)
    noise = rng.normal(0, 1, 3000)
    summary = ppi.summarise_draws(ppi.simulate_draws(human, noise, sizes=[100], draws=100, seed=2)).iloc[0]
    assert summary["width_ppi"] <= summary["width_human_only"] * 1.03


def test_the_group_difference_is_ppi_pythons_ols_slope_and_covers_the_truth():
    import ppi_py

    human, judge = population(size=3000, correlation=0.8, seed=4)
    group = (np.arange(3000) % 3 == 0).astype(float)
    human = human + 0.5 * group  # group 1 is 0.5 higher
    judge = judge + 0.4 * group
    interval = ppi.ppi_difference(human[:150], judge[:150], group[:150], judge[150:], group[150:])
    x, x_u = np.column_stack([np.ones(150), group[:150]]), np.column_stack([np.ones(2850), group[150:]])
    low, high = ppi_py.ppi_ols_ci(x, human[:150], judge[:150], x_u, judge[150:], alpha=0.05, coord=1)
    assert (interval.low, interval.high) == pytest.approx((float(low[1]), float(high[1])))
    plain = ppi.classical_difference(human[:150], group[:150])
    assert plain.estimate == pytest.approx(human[:150][group[:150] == 1].mean() - human[:150][group[:150] == 0].mean())
    draws = ppi.simulate_draws(human, judge, sizes=[150], draws=80, seed=6, group=group)
    summary = ppi.summarise_draws(draws).iloc[0]
    assert 0.88 <= summary["coverage_ppi"] <= 1.0 and 0.88 <= summary["coverage_human_only"] <= 1.0
    assert summary["width_ppi"] < summary["width_human_only"]


def test_a_group_must_be_zero_or_one():
    with pytest.raises(ValueError, match="0 or 1"):
        ppi.simulate_draws([1.0, 2.0, 3.0], [1.0, 2.0, 3.0], sizes=[2], group=[0.0, 2.0, 1.0])


def test_unjudged_answers_are_refused_with_a_clear_error():
    with pytest.raises(ValueError, match="finite"):
        ppi.ppi_mean([1.0, 2.0], [1.0, np.nan], [1.0, 2.0, 3.0])


@pytest.mark.parametrize("method", calibration.METHODS)
def test_calibration_of_a_user_never_uses_that_users_ratings(method):
    rng = np.random.default_rng(4)
    users = np.repeat(np.arange(30), 10)
    human = rng.integers(1, 6, size=300).astype(float)
    score = human + rng.normal(0, 1.0, size=300)
    before = calibration.calibrate_out_of_fold(score, human, users, method)
    changed = human.copy()
    changed[users == 7] = 5.0  # user 7's own ratings change
    after = calibration.calibrate_out_of_fold(score, changed, users, method)
    np.testing.assert_allclose(before[users == 7], after[users == 7])
    assert np.isfinite(before).all() and (before >= 1).all() and (before <= 5).all()


def test_calibration_removes_scale_but_not_information():
    rng = np.random.default_rng(6)
    users = np.repeat(np.arange(40), 10)
    human = rng.integers(1, 6, size=400).astype(float)
    shifted = 0.2 * human + 0.5  # all the information, on the wrong scale
    table = calibration.error_table(pd.DataFrame({"judge": shifted}), pd.Series(human), pd.Series(users), ["judge"])
    by = table.set_index(["judge", "reading"])
    assert by.loc[("judge", "calibrated (isotonic)"), "mae"] < 0.05 < by.loc[("judge", "raw"), "mae"]
    constant = by.loc[("constant (mean of other users)", "calibrated (isotonic)"), "mae"]
    assert constant > 1.0  # the mean says nothing about which answer is which


def test_each_judge_meets_its_constant_answer_on_the_answers_it_scored():
    rng = np.random.default_rng(8)
    users = np.repeat(np.arange(30), 10)
    human = rng.integers(1, 6, size=300).astype(float)
    frame = pd.DataFrame({"user_id": users, "truth": human, "full": human + rng.normal(0, 1, 300),
                          "sampled": np.where(np.arange(300) < 150, human, np.nan)})
    table = calibration.error_table_per_judge(frame, ["full", "sampled"])
    assert table["judge"].unique().tolist() == ["full", "sampled"]  # no row of the baseline under its own name
    by = table.set_index(["judge", "reading"])
    rows = frame.iloc[:150]
    alone = calibration.error_table(rows, rows["truth"], rows["user_id"], ["sampled"])
    own_constant = alone.loc[alone["judge"].str.startswith("constant"), "mae"].item()
    assert by.loc[("sampled", "constant answer"), "mae"] == own_constant
    assert by.loc[("sampled", "constant answer"), "n"] == 150 and by.loc[("full", "constant answer"), "n"] == 300


def test_a_sample_with_no_variance_has_a_zero_width_interval_and_is_counted_for_both_methods():
    # Every label is 0: every labelled sample is degenerate (s = 0), for certain.
    judge = np.random.default_rng(4).normal(0.0, 1.0, 60)
    draws = ppi.simulate_draws(np.zeros(60), judge, sizes=[5], draws=20, seed=1)
    assert draws["degenerate"].all()
    assert (draws["width"] == 0).all(), "a sample with s = 0 has a zero-width interval, not a NaN one"
    assert ppi.power_tuning(np.zeros(5), judge[:5], judge[5:]) == 0.0, "labels with no variance: λ is 0"
    summary = ppi.summarise_draws(draws).iloc[0]
    assert summary["degenerate_draws"] == 20
    assert summary["width_human_only"] == summary["width_ppi"] == 0
    assert summary["labels_worth"] == 5, "a judge that narrows no interval is worth its n labels"


def test_both_methods_read_the_same_draws_when_some_samples_are_all_zeros():
    # A share of 1 in 20: at n = 10 about a third of the labelled samples hold only zeros.
    human = np.zeros(400)
    human[::20] = 1.0
    judge = human + np.random.default_rng(5).normal(0.0, 2.0, 400)
    draws = ppi.simulate_draws(human, judge, sizes=[10], draws=100, seed=2)
    degenerate = draws[draws["method"] == "human only"]["degenerate"]
    assert 0 < degenerate.sum() < 100
    assert np.isfinite(draws["width"]).all()
    assert (draws.loc[draws["degenerate"] & (draws["method"] == "human only"), "width"] == 0).all()
    summary = ppi.summarise_draws(draws).iloc[0]
    assert summary["degenerate_draws"] == degenerate.sum()
    for method, suffix in ppi.METHOD_COLUMNS.items():
        assert summary[f"width_{suffix}"] == pytest.approx(draws.loc[draws["method"] == method, "width"].mean())


def test_a_draw_with_no_finite_interval_for_one_method_leaves_both_mean_widths():
    draws = pd.DataFrame({"n": 4, "draw": [0, 0, 1, 1], "method": ["PPI++", "human only"] * 2,
                          "width": [np.nan, 1.0, 2.0, 3.0], "covers": [False, True, True, True],
                          "degenerate": False, "population": 50, "nominal": 0.95, "finite_population": True})
    summary = ppi.summarise_draws(draws).iloc[0]
    assert (summary["width_ppi"], summary["width_human_only"]) == (2.0, 3.0)
    assert summary["coverage_ppi"] == summary["coverage_human_only"] == 0.5
