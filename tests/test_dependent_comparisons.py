"""The intervals of comparisons on the same answers (``metaeval.dependent``), each checked against an independent
reference: simulated trivariate normal samples for the correlations, constructed answer sets for the error bounds,
and Williams' t (``agreement.williams_t``, itself checked against a published value) for the decisions."""

from __future__ import annotations

import math

import numpy as np
import pytest

from recjudge.metaeval.agreement import williams_t
from recjudge.metaeval.dependent import (
    contrast_interval,
    max_sd,
    n_for_dependent_difference,
    overlap_covariance,
    paired_mean_interval,
    ratio_interval,
)


def simulated_correlations(r_a: float, r_b: float, r_ab: float, n: int, draws: int, seed: int = 0) -> np.ndarray:
    """``draws`` pairs (r(A, T), r(B, T)) of samples of ``n`` trivariate normal cases with the given correlations."""
    rng = np.random.default_rng(seed)
    cov = np.array([[1, r_ab, r_a], [r_ab, 1, r_b], [r_a, r_b, 1]])
    data = rng.multivariate_normal(np.zeros(3), cov, size=(draws, n))
    data -= data.mean(axis=1, keepdims=True)
    data /= np.sqrt((data**2).sum(axis=1, keepdims=True))
    return np.stack([(data[..., 0] * data[..., 2]).sum(1), (data[..., 1] * data[..., 2]).sum(1)], axis=1)


@pytest.mark.parametrize("r_a, r_b, r_ab", [(0.2, 0.1, 0.0), (0.3, 0.05, 0.5), (0.11, 0.06, 0.3), (0.4, 0.4, 0.8)])
def test_the_covariance_of_two_correlations_with_one_truth_is_the_simulated_one(r_a, r_b, r_ab) -> None:
    n = 400
    sample = simulated_correlations(r_a, r_b, r_ab, n, draws=6000)
    simulated = np.cov(sample.T)
    assert n * simulated[0, 0] == pytest.approx((1 - r_a**2) ** 2, rel=0.08)
    assert n * simulated[0, 1] == pytest.approx(overlap_covariance(r_a, r_b, r_ab), abs=0.04)


def test_the_contrast_interval_covers_the_true_contrast_95_times_in_100() -> None:
    r_a, r_b, r_ab, n = 0.2, 0.1, 0.3, 300
    sample = simulated_correlations(r_a, r_b, r_ab, n, draws=4000, seed=1)
    for weight in (1.0, 2.0):
        covered = [low <= r_a - weight * r_b <= high
                   for low, high in (contrast_interval(a, b, n, r_ab=r_ab, weight=weight)[1:] for a, b in sample)]
        assert np.mean(covered) == pytest.approx(0.95, abs=0.015)


def test_r_ab_zero_gives_the_widest_interval_for_positively_related_evaluators() -> None:
    widths = [np.subtract(*contrast_interval(0.15, 0.06, 2150, r_ab=r_ab)[2:0:-1]) for r_ab in (0.0, 0.3, 0.6, 0.9)]
    assert widths == sorted(widths, reverse=True)


@pytest.mark.parametrize("r_a, r_b, r_ab, n", [(0.1089, 0.0572, 0.0, 2150), (0.1081, 0.0461, 0.0, 11383),
                                               (0.3, 0.15, 0.5, 200), (0.0716, 0.0461, 0.2, 11383)])
def test_the_interval_decides_as_williams_t_does(r_a, r_b, r_ab, n) -> None:
    _, low, high = contrast_interval(r_a, r_b, n, r_ab=r_ab)
    williams = williams_t(r_a, r_b, r_ab, n)
    assert (low > 0 or high < 0) == (williams["p_value"] < 0.05)
    # the interval's own p-value is Williams' within a few percent of itself at these n
    from scipy import stats

    z = (r_a - r_b) / ((high - low) / (2 * 1.959964))
    assert 2 * stats.norm.sf(abs(z)) == pytest.approx(williams["p_value"], rel=0.08)


def test_the_answers_a_paired_difference_needs_give_it_80_percent_power() -> None:
    r_a, r_b, r_ab = 0.35, 0.2, 0.6
    n = n_for_dependent_difference(r_a, r_b, r_ab=r_ab)
    sample = simulated_correlations(r_a, r_b, r_ab, n, draws=3000, seed=2)
    detected = [contrast_interval(a, b, n, r_ab=r_ab)[1] > 0 for a, b in sample]
    assert np.mean(detected) == pytest.approx(0.8, abs=0.03)


def test_a_paired_difference_needs_as_many_answers_at_r_ab_zero_as_two_samples_and_fewer_as_r_ab_grows() -> None:
    from recjudge.metaeval.power import n_for_correlation_difference

    independent = n_for_correlation_difference(0.1148, 0.2025)  # in all, half each
    assert n_for_dependent_difference(0.2025, 0.1148) == pytest.approx(independent, rel=0.03)
    assert n_for_dependent_difference(0.2025, 0.1148, r_ab=0.8) == pytest.approx(independent / 5, rel=0.03)


def test_the_largest_spread_of_a_mean_is_reached_by_its_two_point_answers() -> None:
    mean, top = 0.847, 4
    two_point = np.r_[np.full(round(10000 * mean / top), top), np.zeros(10000 - round(10000 * mean / top))]
    assert max_sd(mean, top) == pytest.approx(two_point.std(), rel=1e-3)
    rng = np.random.default_rng(3)
    for _ in range(200):  # any answers on the scale with that mean spread less
        errors = rng.choice(5, size=500, p=rng.dirichlet(np.ones(5)))
        assert errors.std() <= max_sd(errors.mean(), top) + 1e-12


def test_the_paired_mean_interval_is_never_narrower_than_the_answers_own() -> None:
    rng = np.random.default_rng(4)
    for _ in range(300):
        truth = rng.integers(1, 6, 400)
        judge_a = np.clip(truth + rng.integers(-2, 3, 400), 1, 5)
        judge_b = rng.integers(1, 6, 400) if rng.random() < 0.5 else np.full(400, 2)
        errors_a, errors_b = np.abs(judge_a - truth), np.abs(judge_b - truth)
        own_half = 1.959964 * (errors_a - errors_b).std(ddof=1) / math.sqrt(400)
        estimate, low, high = paired_mean_interval(errors_a.mean(), errors_b.mean(), 400, top=4)
        assert estimate == pytest.approx(errors_a.mean() - errors_b.mean())
        assert (high - low) / 2 >= own_half


def test_fiellers_ratio_interval_covers_the_true_ratio_95_times_in_100() -> None:
    r_a, r_b, r_ab, n = 0.4, 0.25, 0.2, 600
    sample = simulated_correlations(r_a, r_b, r_ab, n, draws=3000, seed=5)
    intervals = [ratio_interval(a, b, n, r_ab=r_ab)[1:] for a, b in sample]
    assert np.mean([low <= r_a / r_b <= high for low, high in intervals]) == pytest.approx(0.95, abs=0.015)
    # the ratio's interval excludes a value exactly when the contrast at that weight excludes 0
    a, b = sample[0]
    low, high = ratio_interval(a, b, n, r_ab=r_ab)[1:]
    for weight in (low - 0.01, (low + high) / 2, high + 0.01):
        _, c_low, c_high = contrast_interval(a, b, n, r_ab=r_ab, weight=weight)
        assert (c_low <= 0 <= c_high) == (low <= weight <= high)


def test_a_ratio_over_a_correlation_indistinguishable_from_zero_is_unbounded() -> None:
    # a denominator whose own interval holds 0 (3% on 2,150 answers) leaves every ratio possible: never decided
    estimate, low, high = ratio_interval(0.1089, 0.03, 2150)
    assert estimate == pytest.approx(3.63) and (low, high) == (-math.inf, math.inf)
    # Kang et al.'s Serendipity-2018 cell: GPT-4 10.89% over SOG 5.72% on 2,150 answers, bounded but wide
    estimate, low, high = ratio_interval(0.1089, 0.0572, 2150)
    assert estimate == pytest.approx(1.904, abs=1e-3) and low < 1.75 and high > 2.25


def test_the_answers_a_ratio_needs_put_its_interval_inside_the_range_80_times_in_100() -> None:
    from recjudge.metaeval.dependent import n_for_ratio_within

    r_b, ratio, r_ab = 0.25, 2.0, 0.3
    n = n_for_ratio_within(r_b, ratio, 1.6, 2.4, r_ab=r_ab)
    sample = simulated_correlations(ratio * r_b, r_b, r_ab, n, draws=2000, seed=6)
    inside = [1.6 <= low and high <= 2.4 for low, high in (ratio_interval(a, b, n, r_ab=r_ab)[1:] for a, b in sample)]
    # the edge that needs more answers holds 80% of the time, the other nearly always
    assert 0.78 <= np.mean(inside) <= 0.9
