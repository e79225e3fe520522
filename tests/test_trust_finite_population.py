"""recjudge.trust.ppi in a finite population: the finite-population correction checked against every possible sample
of a small population, coverage when n is half of N, the Monte Carlo interval of a simulated coverage and its rule
against the nominal level, and each judge's own labelled draws."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from recjudge.trust import ppi

Z = stats.norm.ppf(0.975)


def small_population(size: int = 12, seed: int = 7):
    rng = np.random.default_rng(seed)
    human = rng.normal(3.0, 1.0, size)
    judge = 0.7 * human + rng.normal(0.0, 0.6, size)
    return human, judge


def every_sample(size: int, n: int):
    for chosen in itertools.combinations(range(size), n):
        labelled = np.zeros(size, dtype=bool)
        labelled[list(chosen)] = True
        yield labelled


def test_the_human_only_variance_is_exact_over_every_sample_without_replacement():
    """Over all C(12, 5) samples, the mean of the squared standard error equals the variance of the sample mean (the
    design-unbiased variance); without the correction the standard error is too large."""
    human, _ = small_population()
    estimates, corrected, plain = [], [], []
    for labelled in every_sample(len(human), 5):
        interval = ppi.classical_mean(human[labelled], population_size=len(human))
        estimates.append(interval.estimate)
        corrected.append((interval.width / (2 * Z)) ** 2)
        plain.append((ppi.classical_mean(human[labelled]).width / (2 * Z)) ** 2)
    true_variance = np.var(estimates)  # every sample is equally likely: the exact sampling variance
    assert np.mean(estimates) == pytest.approx(human.mean())
    assert np.mean(corrected) == pytest.approx(true_variance, rel=1e-9)
    assert np.mean(plain) > 1.3 * true_variance


def test_the_ppi_variance_with_a_fixed_lambda_is_exact_over_every_sample_without_replacement():
    human, judge = small_population()
    estimates, variances = [], []
    for labelled in every_sample(len(human), 4):
        interval = ppi.ppi_mean(human[labelled], judge[labelled], judge[~labelled], finite_population=True, lam=0.6)
        estimates.append(interval.estimate)
        variances.append((interval.width / (2 * Z)) ** 2)
    assert np.mean(estimates) == pytest.approx(human.mean())
    assert np.mean(variances) == pytest.approx(np.var(estimates), rel=1e-9)


def test_power_tuning_is_ppi_pythons_lambda():
    import ppi_py

    human, judge = small_population(size=300)
    y, yhat, unlabelled = human[:60], judge[:60], judge[60:]
    lam = ppi.power_tuning(y, yhat, unlabelled)
    assert 0 < lam < 1
    tuned = float(ppi_py.ppi_mean_pointestimate(y, yhat, unlabelled)[0])
    assert float(ppi_py.ppi_mean_pointestimate(y, yhat, unlabelled, lam=lam)[0]) == pytest.approx(tuned)
    assert ppi.ppi_mean(y, yhat, unlabelled, finite_population=True).estimate == pytest.approx(tuned)


def test_labelling_half_the_population_covers_about_95_percent_only_with_the_correction():
    human, judge = small_population(size=400, seed=3)
    kept = ppi.summarise_draws(ppi.simulate_draws(human, judge, [200], draws=300, seed=1)).iloc[0]
    plain = ppi.summarise_draws(ppi.simulate_draws(human, judge, [200], draws=300, seed=1,
                                                   finite_population=False)).iloc[0]
    for method in ("human_only", "ppi"):
        assert kept[f"coverage_{method}_against_nominal"] == "consistent with nominal"
        assert plain[f"coverage_{method}"] > 0.98  # the uncorrected standard error is √2 too large
        assert plain[f"coverage_{method}_against_nominal"] == "above nominal"
    assert bool(kept["finite_population"]) and not bool(plain["finite_population"])


def test_labels_worth_in_a_finite_population_never_exceeds_it():
    assert ppi.labels_worth(100, 1.0, 1.0, population_size=2000) == pytest.approx(100)
    assert ppi.labels_worth_by_correlation(1000, 0.5, population_size=2105) == pytest.approx(
        1 / (0.75 * (1 / 1000 - 1 / 2105) + 1 / 2105))
    assert ppi.labels_worth_by_correlation(1000, 0.99, population_size=2105) < 2105
    # A human-only interval with that many labels is exactly as wide as the narrower one.
    worth = ppi.labels_worth(500, classical_width=0.2, ppi_width=0.15, population_size=3000)
    assert 0.2 * np.sqrt((1 / worth - 1 / 3000) / (1 / 500 - 1 / 3000)) == pytest.approx(0.15)


def coverage_draws(covered: int, draws: int = 200) -> pd.DataFrame:
    rows = [{"n": 50, "draw": d, "method": m, "width": 1.0, "covers": d < covered, "degenerate": False}
            for d in range(draws) for m in ("PPI++", "human only")]
    return pd.DataFrame(rows).assign(population=1000, nominal=0.95, finite_population=True)


@pytest.mark.parametrize(("covered", "verdict"), [(180, "short of nominal"), (186, "consistent with nominal"),
                                                  (200, "above nominal")])
def test_a_coverage_is_judged_against_nominal_by_its_monte_carlo_interval(covered, verdict):
    row = ppi.summarise_draws(coverage_draws(covered)).iloc[0]
    share = covered / 200
    # The Wilson score interval written out (Wilson 1927): centre and half-width.
    centre = (share + Z ** 2 / 400) / (1 + Z ** 2 / 200)
    half = Z / (1 + Z ** 2 / 200) * np.sqrt(share * (1 - share) / 200 + Z ** 2 / (4 * 200 ** 2))
    assert row["coverage_ppi"] == pytest.approx(share)
    assert (row["coverage_ppi_mc_low"], row["coverage_ppi_mc_high"]) == pytest.approx((centre - half, centre + half))
    assert row["coverage_ppi_against_nominal"] == verdict == row["coverage_human_only_against_nominal"]
    assert row["draws"] == 200


def test_each_judge_draws_its_own_labelled_samples_reproducibly():
    human, judge = small_population(size=600, seed=5)
    frame = pd.DataFrame({"truth": human, "first": judge, "second": judge})  # two judges with the same scores
    both = ppi.worth_table(frame, ["first", "second"], "truth", [50], draws=20, seed=0).set_index("judge")
    assert both.loc["first", "width_human_only"] != both.loc["second", "width_human_only"]
    again = ppi.worth_table(frame, ["second"], "truth", [50], draws=20, seed=0).set_index("judge")
    pd.testing.assert_series_equal(again.loc["second"], both.loc["second"])
    other_estimand = ppi.worth_table(frame.assign(share=frame["truth"]), ["second"], "share", [50], draws=20, seed=0)
    assert other_estimand["width_human_only"].iloc[0] != both.loc["second", "width_human_only"]


def test_the_chance_of_falling_short_by_luck_alone_matches_a_simulation():
    chance = ppi.chance_short_of_nominal(200, 0.95)
    rng = np.random.default_rng(11)
    simulated = [ppi.summarise_draws(coverage_draws(int(covered))).iloc[0]["coverage_ppi_against_nominal"]
                 == "short of nominal" for covered in rng.binomial(200, 0.95, size=400)]
    assert 0.005 < chance < 0.05
    assert np.mean(simulated) == pytest.approx(chance, abs=0.02)


def test_a_worth_table_with_no_scored_answer_has_the_columns_of_one_with_rows():
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"truth": rng.integers(0, 2, 400).astype(float), "judge": rng.random(400)})
    full = ppi.worth_table(frame, ["judge"], "truth", [50], draws=5, seed=0)
    none = ppi.worth_table(frame.assign(judge=np.nan), ["judge"], "truth", [50], draws=5, seed=0)  # a plan's scores
    assert len(none) == 0 and list(none.columns) == list(full.columns)
