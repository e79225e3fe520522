"""Tests of recjudge.surprise.limits: dynamic programme vs brute force, greedy vs hand-computed cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial import distance as sp

from recjudge.surprise import limits as s
from recjudge.surprise.distances import npmi_distance_matrix, npmi_matrix

SQRT125, SQRT29 = math.sqrt(125), math.sqrt(29)


@pytest.fixture
def triangle() -> s.SurpriseProblem:
    """Known item e = (0, 0); unknown a = (0, 12), b = (-5, 10), c = (5, 10).

    Initial surprises: a 12, b = c = sqrt(125) ≈ 11.18; d(a, b) = d(a, c) = sqrt(29) ≈ 5.39; d(b, c) = 10.
    """
    points = np.array([[0, 0], [0, 12], [-5, 10], [5, 10]], dtype=float)
    return s.SurpriseProblem.from_distance_matrix(sp.squareform(sp.pdist(points)), known=[0], unknown=[1, 2, 3])


# ---------------------------------------------------------------------------------------------------- eq. 11–13
def test_item_surprise_forms():
    assert s.item_surprise([3.0, 1.5, 2.0]) == 1.5
    assert s.item_surprise_similarity([0.1, 0.7]) == 0.7
    with pytest.raises(ValueError, match="knows no item"):
        s.item_surprise([])


def test_similarity_form_agrees_with_npmi_distance():
    rng = np.random.default_rng(0)
    incidence = rng.random((40, 6)) < 0.4
    incidence[0] = True  # every item seen at least once
    sim, dist = npmi_matrix(incidence), npmi_distance_matrix(incidence)
    known = [0, 2]
    for item in (1, 3, 4, 5):
        similar = s.item_surprise_similarity(sim[item, known])
        assert s.item_surprise(dist[item, known]) == pytest.approx((1 - similar) / 2)


def test_sequence_surprise_grows_the_known_set(triangle):
    # b first (11.18), then c w.r.t. {e, b}: min(11.18, 10) = 10, then a w.r.t. {e, b, c}: sqrt(29).
    np.testing.assert_allclose(s.sequence_surprise_terms(triangle, [1, 2, 0]), [SQRT125, 10, SQRT29])
    assert s.sequence_surprise(triangle, [1, 2, 0]) == pytest.approx(SQRT125 + 10 + SQRT29)
    assert s.sequence_surprise(triangle, [0, 1, 2]) == pytest.approx(12 + 2 * SQRT29)
    assert s.sequence_surprise(triangle, []) == 0.0
    with pytest.raises(ValueError, match="repeats"):
        s.sequence_surprise(triangle, [0, 0])
    with pytest.raises(ValueError, match="outside"):
        s.sequence_surprise(triangle, [3])


# ------------------------------------------------------------------------------------------------ greedy, hand cases
def test_greedy_max_underestimates_exact_on_hand_case(triangle):
    greedy = s.potential_surprise_greedy(triangle, "max")
    assert greedy.order == (0, 1, 2)  # a (12), then b (tie with c -> lowest index), then c
    assert greedy.value == pytest.approx(12 + 2 * SQRT29)  # 22.770
    exact = s.potential_surprise_exact(triangle, "max")
    assert exact.value == pytest.approx(SQRT125 + 10 + SQRT29)  # 26.566: b, c, then a
    assert set(exact.order[:2]) == {1, 2} and exact.order[2] == 0
    assert s.potential_surprise_bruteforce(triangle, "max").value == pytest.approx(exact.value)


def test_greedy_min_hand_case(triangle):
    greedy = s.potential_surprise_greedy(triangle, "min")
    # b (11.18, tie with c), then a: min(12, sqrt 29), then c: min(10, sqrt 29)
    assert greedy.order == (1, 0, 2)
    assert greedy.value == pytest.approx(SQRT125 + 2 * SQRT29)
    assert s.potential_surprise_exact(triangle, "min").value == pytest.approx(greedy.value)


def test_truncated_sequences_hand_case(triangle):
    assert s.potential_surprise_greedy(triangle, "max", k=1).value == pytest.approx(12)
    assert s.potential_surprise_greedy(triangle, "max", k=2).value == pytest.approx(12 + SQRT29)
    exact2 = s.potential_surprise_exact(triangle, "max", k=2)
    assert exact2.value == pytest.approx(SQRT125 + 10) and len(exact2.order) == 2
    assert s.potential_surprise_bruteforce(triangle, "max", k=2).value == pytest.approx(SQRT125 + 10)
    assert s.potential_surprise_exact(triangle, "min", k=2).value == pytest.approx(SQRT125 + SQRT29)
    assert s.potential_surprise_exact(triangle, "max", k=0).value == 0.0
    with pytest.raises(ValueError, match="k must be"):
        s.potential_surprise_greedy(triangle, "max", k=4)


# ---------------------------------------------------------------------------------------------------- DP vs brute force
def _random_problem(rng, m, kind_of_distance):
    if kind_of_distance == "matrix":  # arbitrary symmetric non-negative weights, not even a metric
        w = rng.uniform(0, 5, size=(m + 2, m + 2))
        w = (w + w.T) / 2
        np.fill_diagonal(w, 0)
        return s.SurpriseProblem.from_distance_matrix(w, known=[0, 1], unknown=range(2, m + 2))
    points = rng.uniform(0, 10, size=(m + 1, 3))
    return s.SurpriseProblem.from_vectors(points[:1], points[1:], kind_of_distance)


@pytest.mark.parametrize(
    "seed, metric", list(enumerate(["euclidean", "cosine", "jaccard", "jensen_shannon", "aitchison", "matrix"]))
)
def test_dynamic_programme_equals_bruteforce_on_random_instances(seed, metric):
    rng = np.random.default_rng(seed)
    sizes = [1, 2, 3, 4, 5, 5, 6, 6, 6, 7, 7, 7, 8, 8]  # 14 instances per metric, 84 in all
    for m in sizes:
        problem = _random_problem(rng, m, metric)
        for kind in ("max", "min"):
            ks = [None] if m < 4 else [None, int(rng.integers(1, m))]
            for k in ks:
                brute = s.potential_surprise_bruteforce(problem, kind, k)
                exact = s.potential_surprise_exact(problem, kind, k)
                assert exact.value == pytest.approx(brute.value, rel=1e-12, abs=1e-12), (metric, m, kind, k)
                # the returned order really achieves the value
                assert s.sequence_surprise(problem, exact.order) == pytest.approx(exact.value, rel=1e-12, abs=1e-12)
                assert len(exact.order) == (m if k is None else k)


def test_greedy_bounds_exact_and_greedy_min_is_exact_for_full_sequences():
    # Consuming all of N in any order builds a spanning tree rooted at E; greedy-min is Prim's algorithm, so it is
    # exact for full sequences (not for truncated ones). Greedy-max is only a lower bound of the maximum.
    rng = np.random.default_rng(42)
    for _ in range(30):
        problem = _random_problem(rng, int(rng.integers(3, 11)), "matrix")
        exact_max, exact_min = (s.potential_surprise_exact(problem, kind).value for kind in ("max", "min"))
        assert s.potential_surprise_greedy(problem, "max").value <= exact_max + 1e-12
        assert s.potential_surprise_greedy(problem, "min").value == pytest.approx(exact_min, rel=1e-12)


def test_dynamic_programme_refuses_too_many_items():
    problem = s.SurpriseProblem(initial=np.ones(s.DP_MAX_UNKNOWN + 1), row=lambda i: np.ones(s.DP_MAX_UNKNOWN + 1))
    with pytest.raises(ValueError, match="beyond the exact programme's limit"):
        s.potential_surprise_exact(problem)


# ----------------------------------------------------------------------------------------------- normalised surprise
def test_normalised_surprise_clips_when_greedy_underestimates(triangle):
    best = [1, 2, 0]  # exact maximum, above the greedy maximum
    greedy = s.normalised_surprise(triangle, best, "greedy")
    assert greedy.raw > 1 and greedy.value == 1.0 and greedy.clipped
    assert greedy.s_max == pytest.approx(12 + 2 * SQRT29)
    exact = s.normalised_surprise(triangle, best, "exact")
    assert exact.value == pytest.approx(1.0) and not exact.clipped
    worst = s.normalised_surprise(triangle, [1, 0, 2], "exact")
    assert worst.value == pytest.approx(0.0)
    # a truncated sequence is measured against limits over sequences of its own length
    trunc = s.normalised_surprise(triangle, [0], "exact")
    assert trunc.k == 1 and trunc.s_max == pytest.approx(12) and trunc.s_min == pytest.approx(SQRT125)
    assert trunc.value == pytest.approx(1.0)


def test_normalised_surprise_degenerate_scale_is_nan():
    problem = s.SurpriseProblem.from_distance_matrix(np.ones((3, 3)) - np.eye(3), known=[0], unknown=[1, 2])
    out = s.normalised_surprise(problem, [0, 1], "exact")
    assert math.isnan(out.value) and not out.clipped


def test_clip_unit_interval_counts():
    values, n = s.clip_unit_interval([-0.1, 0.5, 1.2, np.nan, 1.0])
    assert n == 2
    np.testing.assert_array_equal(values[:3], [0.0, 0.5, 1.0])
    assert math.isnan(values[3])


# ---------------------------------------------------------------------------------------------------- problem building
def test_from_vectors_matches_from_distance_matrix():
    points = np.random.default_rng(5).uniform(0, 1, size=(6, 3))
    a = s.SurpriseProblem.from_vectors(points[:2], points[2:], "cosine")
    b = s.SurpriseProblem.from_distance_matrix(sp.squareform(sp.pdist(points, "cosine")), [0, 1], [2, 3, 4, 5])
    np.testing.assert_allclose(a.initial, b.initial)
    np.testing.assert_allclose(a.between(), b.between(), atol=1e-12)
    with pytest.raises(ValueError, match="knows no item"):
        s.SurpriseProblem.from_distance_matrix(np.zeros((2, 2)), [], [0, 1])
    with pytest.raises(ValueError, match="both known and unknown"):
        s.SurpriseProblem.from_distance_matrix(np.zeros((2, 2)), [0], [0, 1])


# ------------------------------------------------------------------------------------------------ experiment helpers
def test_experiment_random_instances_table():
    table = s.experiment_random_instances(n_items=7, seeds=range(3))
    assert len(table) == 3 * 4 and set(table.distance) == set(s.TABLE1_DISTANCES)
    assert (table.n_unknown == 6).all()
    assert (table.s_pmax_greedy <= table.s_pmax + 1e-12).all()
    assert np.allclose(table.s_pmin_greedy, table.s_pmin)
    brute = s.experiment_random_instances(n_items=7, seeds=range(3), exact_method="bruteforce")
    np.testing.assert_allclose(brute.s_pmax, table.s_pmax)
    np.testing.assert_allclose(brute.s_pmin, table.s_pmin)


def test_greedy_gap_and_summary():
    gap = s.greedy_gap(n_unknown=(4, 6), n_instances=3, distances=("euclidean",))
    assert len(gap) == 2 * 3 * 1 * 2
    assert (gap.loc[gap.kind == "max", "ratio"] <= 1 + 1e-12).all()
    summary = s.summarise_greedy_gap(gap)
    assert set(summary.columns) >= {"share_exact", "mean_relative_gap", "max_relative_gap", "instances"}
    assert (summary.instances == 3).all()


def test_lima_peres_table2_as_printed():
    from recjudge.surprise.item_models import DISTANCE_LABELS, model_distance_pairs
    from recjudge.surprise.paper_tables import lima_peres_table2, lima_peres_table2_long

    table = lima_peres_table2()
    assert list(table.columns) == ["model", "distance"] + [f"{r}_{s}" for r in ("MSI", "kNN", "LSI")
                                                           for s in ("median", "mean", "sd")]
    # The paper's thirteen model x distance cells, in its order and spelling.
    assert list(zip(table["model"], table["distance"])) == [(m, DISTANCE_LABELS[d]) for m, d in model_distance_pairs()]
    cell = table.set_index(["model", "distance"])
    assert cell.loc[("C", "Euclidean"), "MSI_median"] == 0.912
    assert cell.loc[("C", "cosine"), "LSI_mean"] == 0.219
    assert cell.loc[("U", "Jaccard"), "MSI_median"] == 0.999
    assert cell.loc[("U", "cosine"), "kNN_sd"] == 0.179
    assert cell.loc[("N", "NPMI"), "kNN_mean"] == 0.535
    assert cell.loc[("N", "NPMI"), "LSI_sd"] == 0.072
    values = table.drop(columns=["model", "distance"])
    assert values.notna().all().all() and ((values >= 0) & (values <= 1)).all().all()

    long = lima_peres_table2_long()
    assert len(long) == 3 * len(table)
    assert list(long["recommender"].head(3)) == ["MSI", "kNN", "LSI"]
    row = long[(long["model"] == "P") & (long["distance"] == "cosine") & (long["recommender"] == "MSI")].iloc[0]
    assert (row["median"], row["mean"], row["sd"]) == (0.971, 0.951, 0.061)


def test_normalised_surprise_reuses_given_limits_and_refuses_mismatched_ones(triangle):
    order = [1, 2, 0]
    limits = (s.potential_surprise_greedy(triangle, "min", 3), s.potential_surprise_greedy(triangle, "max", 3))
    assert s.normalised_surprise(triangle, order, "greedy", limits=limits) == s.normalised_surprise(
        triangle, order, "greedy")
    with pytest.raises(ValueError, match="lists of 2 items"):
        s.normalised_surprise(triangle, order[:2], "greedy", limits=limits)
    with pytest.raises(ValueError, match="minimum and maximum"):
        s.normalised_surprise(triangle, order, "greedy", limits=limits[::-1])
    exact = (s.potential_surprise_exact(triangle, "min", 3), s.potential_surprise_exact(triangle, "max", 3))
    with pytest.raises(ValueError, match="greedy minimum"):
        s.normalised_surprise(triangle, order, "greedy", limits=exact)
