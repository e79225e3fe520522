"""Tests of recjudge.surprise.distances against scipy and hand computations."""

from __future__ import annotations

import math
from itertools import product

import numpy as np
import pytest
from scipy import sparse
from scipy.spatial import distance as sp

from recjudge.surprise import distances as dist


@pytest.fixture
def points() -> np.ndarray:
    return np.random.default_rng(0).uniform(0, 10, size=(7, 4))


def test_euclidean_and_cosine_match_scipy(points):
    for u, v in product(points[:3], points[3:]):
        assert dist.euclidean(u, v) == pytest.approx(sp.euclidean(u, v))
        assert dist.cosine(u, v) == pytest.approx(sp.cosine(u, v))
    np.testing.assert_allclose(dist.pairwise_distances(points, "euclidean"), sp.squareform(sp.pdist(points)))
    np.testing.assert_allclose(
        dist.pairwise_distances(points, "cosine"), sp.squareform(sp.pdist(points, "cosine")), atol=1e-12
    )


def test_weighted_jaccard_hand_computed_and_equal_to_scipy_on_binary_vectors():
    # min = (1, 0, 2) -> 3 ; max = (3, 1, 2) -> 6 ; distance 1 - 3/6
    assert dist.jaccard([1, 0, 2], [3, 1, 2]) == pytest.approx(0.5)
    assert dist.jaccard([0, 0], [0, 0]) == 0.0
    rng = np.random.default_rng(1)
    binary = rng.integers(0, 2, size=(6, 9)).astype(bool)
    binary[:, 0] = True  # no all-zero row
    for u, v in product(binary, binary):
        assert dist.jaccard(u, v) == pytest.approx(sp.jaccard(u, v))
    np.testing.assert_allclose(
        dist.pairwise_distances(binary, "jaccard"), sp.squareform(sp.pdist(binary, "jaccard")), atol=1e-12
    )
    with pytest.raises(ValueError, match="non-negative"):
        dist.jaccard([-1, 1], [1, 1])


def test_jaccard_sets():
    assert dist.jaccard_sets({"Drama", "War"}, {"Drama", "Comedy", "Romance"}) == pytest.approx(1 - 1 / 4)
    assert dist.jaccard_sets([], []) == 0.0


def test_jensen_shannon_is_scipys_divergence(points):
    p, q = np.array([0.5, 0.5, 0.0]), np.array([0.0, 0.5, 0.5])
    # m = (.25, .5, .25): KL(p||m) = .5 ln 2 = KL(q||m) -> JS = .5 ln 2
    assert dist.jensen_shannon(p, q) == pytest.approx(0.5 * math.log(2))
    assert dist.jensen_shannon_distance(p, q) == pytest.approx(math.sqrt(0.5 * math.log(2)))
    u, v = points[0], points[1]
    assert dist.jensen_shannon(u, v) == pytest.approx(sp.jensenshannon(u, v) ** 2)
    np.testing.assert_allclose(
        dist.pairwise_distances(points, "jensen_shannon"),
        sp.squareform(sp.pdist(points, "jensenshannon")) ** 2, atol=1e-12,
    )
    smoothed = dist.jensen_shannon(p, q, smooth_zeros=True)
    assert 0 < smoothed < 0.5 * math.log(2)


def test_bmt_perks_hand_computed():
    # x = (0, 2, 3, 5): n = 10, D = 4, Perks s = 1, t = 1/4 -> r = (1/4)/(10 + 1) = 1/44 for the zero;
    # non-zeros keep their ratios and are shrunk by (1 - 1/44) = 43/44.
    out = dist.bayesian_multiplicative_replacement([0, 2, 3, 5])
    np.testing.assert_allclose(out, [1 / 44, 0.2 * 43 / 44, 0.3 * 43 / 44, 0.5 * 43 / 44])
    assert out.sum() == pytest.approx(1.0)
    # Three zeros in a 5-part composition of total 4: r = (1/5)/(4+1) = 1/25 each, shrink 1 - 3/25 = 22/25.
    rows = dist.bayesian_multiplicative_replacement(np.array([[1, 0, 3, 0, 0.0], [1, 1, 1, 1, 1]]))
    np.testing.assert_allclose(rows[0], [0.25 * 22 / 25, 1 / 25, 0.75 * 22 / 25, 1 / 25, 1 / 25])
    np.testing.assert_allclose(rows[1], [0.2] * 5)  # no zeros: only closed
    # Other priors change only the strength s: Bayes-Laplace s = D = 4 -> r = (4/4)/(10+4) = 1/14.
    assert dist.bayesian_multiplicative_replacement([0, 2, 3, 5], "bayes-laplace")[0] == pytest.approx(1 / 14)
    with pytest.raises(ValueError, match="row 0 is all zeros"):
        dist.bayesian_multiplicative_replacement([[0, 0, 0]])
    with pytest.raises(ValueError, match="non-negative"):
        dist.bayesian_multiplicative_replacement([1, -1])


def test_aitchison_equals_the_pairwise_log_ratio_formula():
    # Independent expression: d^2 = 1/(2D) * sum_i sum_j (ln(x_i/x_j) - ln(y_i/y_j))^2
    rng = np.random.default_rng(3)
    for _ in range(5):
        x, y = rng.uniform(0.1, 5, 6), rng.uniform(0.1, 5, 6)
        lx, ly = np.log(x), np.log(y)
        ref = math.sqrt(((lx[:, None] - lx[None, :] - ly[:, None] + ly[None, :]) ** 2).sum() / (2 * 6))
        assert dist.aitchison(x, y) == pytest.approx(ref)
        assert dist.aitchison(3 * x, y) == pytest.approx(ref)  # scale invariance of compositions


def test_aitchison_with_zeros_uses_bmt_and_matrix_form_agrees():
    x, y = np.array([0, 2, 3, 5.0]), np.array([1, 1, 0, 2.0])
    rx, ry = dist.bayesian_multiplicative_replacement(x), dist.bayesian_multiplicative_replacement(y)
    assert dist.aitchison(x, y) == pytest.approx(dist.aitchison(rx, ry, replace_zeros=False))
    with pytest.raises(ValueError, match="strictly positive"):
        dist.aitchison(x, y, replace_zeros=False)
    m = np.vstack([x, y, [4, 1, 1, 1.0]])
    d = dist.pairwise_distances(m, "aitchison")
    assert d[0, 1] == pytest.approx(dist.aitchison(x, y))
    assert d[1, 2] == pytest.approx(dist.aitchison(y, m[2]))


def test_npmi_hand_computed_from_cooccurrence():
    # 4 users x 3 items. Item 0 seen by users 0,1; item 1 by users 0,1,2; item 2 by user 3 only.
    incidence = np.array([[1, 1, 0], [1, 1, 0], [0, 1, 0], [0, 0, 1]])
    npmi = dist.npmi_matrix(sparse.csr_matrix(incidence))
    # P(0) = .5, P(1) = .75, P(0,1) = .5: NPMI = ln(.5 / .375) / -ln(.5)
    assert npmi[0, 1] == pytest.approx(math.log(0.5 / 0.375) / -math.log(0.5))
    assert npmi[0, 2] == -1.0 and npmi[1, 2] == -1.0  # never together
    np.testing.assert_allclose(np.diag(npmi), 1.0)
    np.testing.assert_allclose(npmi, npmi.T)
    d = dist.npmi_distance_matrix(incidence)
    assert d[0, 2] == 1.0 and d[0, 0] == 0.0
    assert d[0, 1] == pytest.approx((1 - npmi[0, 1]) / 2)
    assert np.all((d >= 0) & (d <= 1))


def test_npmi_unseen_items_are_nan():
    npmi = dist.npmi_matrix(np.array([[1, 0], [1, 0]]))
    assert npmi[0, 0] == 1.0 and math.isnan(npmi[1, 1]) and math.isnan(npmi[0, 1])


def test_cross_distances_validates_input(points):
    with pytest.raises(ValueError, match="unknown distance"):
        dist.cross_distances(points, points, "manhattan")
    with pytest.raises(ValueError, match="different dimensions"):
        dist.cross_distances(points, points[:, :2])
    np.testing.assert_allclose(
        dist.cross_distances(points[:2], points[2:], "euclidean"), sp.cdist(points[:2], points[2:])
    )
