"""item-kNN, MSI and LSI scorers on hand-computed cases."""

import numpy as np
import pytest

from recjudge.surprise.recommenders import (
    item_knn_scores,
    item_surprise,
    least_surprising_item_scores,
    most_surprising_item_scores,
    scorer,
    top_n,
)

# three candidates x two known items
BLOCK = np.array([[1.0, 3.0], [4.0, 2.0], [0.5, 6.0]])


def test_msi_and_lsi_score_by_minimum_distance_to_the_known_items():
    np.testing.assert_array_equal(item_surprise(BLOCK), [1.0, 2.0, 0.5])
    assert top_n(most_surprising_item_scores(BLOCK), 2).tolist() == [1, 0]
    assert top_n(least_surprising_item_scores(BLOCK), 2).tolist() == [2, 0]


def test_knn_is_the_similarity_weighted_average_of_the_nearest_known_ratings():
    ratings = np.array([5.0, 1.0])
    # k = 1: each candidate takes the rating of its nearest known item
    np.testing.assert_array_equal(item_knn_scores(BLOCK, ratings, k=1), [5.0, 1.0, 5.0])
    # k = 2: weights 1 / (1 + d); candidate 0: (5/2 + 1/4) / (1/2 + 1/4) = 11/3
    scores = item_knn_scores(BLOCK, ratings, k=2)
    assert scores[0] == pytest.approx(11 / 3)
    assert scores[1] == pytest.approx((5 / 5 + 1 / 3) / (1 / 5 + 1 / 3))
    # k larger than the known set: every known item is a neighbour
    np.testing.assert_allclose(item_knn_scores(BLOCK, ratings, k=50), scores)


def test_knn_neighbours_are_the_k_nearest_not_the_first_k():
    block = np.array([[9.0, 8.0, 0.0, 7.0]])
    assert item_knn_scores(block, np.array([1.0, 1.0, 4.0, 1.0]), k=1)[0] == 4.0


def test_ties_keep_candidate_order():
    assert top_n(np.array([1.0, 2.0, 2.0, 0.0, 2.0]), 3).tolist() == [1, 2, 4]


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="no item"):
        item_surprise(np.zeros((3, 0)))
    with pytest.raises(ValueError, match="one rating per known item"):
        item_knn_scores(BLOCK, np.array([1.0]), k=1)
    with pytest.raises(ValueError, match="unknown recommender"):
        scorer("random")
    with pytest.raises(ValueError, match="NaN"):
        top_n(np.array([np.nan, 1.0]), 1)


def test_knn_takes_tied_neighbours_in_known_item_order():
    """Ties at the k-th distance are broken by known-item order, not by the CPU's partition kernel."""
    block = np.array([[1.0, 1.0, 1.0, 1.0, 0.5]])
    ratings = np.array([5.0, 1.0, 1.0, 5.0, 3.0])
    # the nearest is item 4 (0.5); of the four tied at 1.0 the first, item 0, completes k = 2
    assert item_knn_scores(block, ratings, k=2)[0] == pytest.approx((3.0 / 1.5 + 5.0 / 2.0) / (1 / 1.5 + 1 / 2.0))


def test_knn_neighbours_equal_a_stable_sort_on_inputs_full_of_ties():
    rng = np.random.default_rng(7)
    distances = rng.integers(0, 4, size=(300, 40)).astype(float) / 4  # few distinct values: many ties
    # rows without ties interleaved, so that one block holds rows that choose among tied items and rows that do not
    distances[::3] = rng.random((100, 40))
    ratings = rng.integers(1, 6, size=40).astype(float)
    for k in (1, 5, 39, 40, 50):
        order = np.argsort(distances, axis=1, kind="stable")[:, :k]
        nearest = np.take_along_axis(distances, order, axis=1)
        weights = 1.0 / (1.0 + nearest)
        expected = (weights * ratings[order]).sum(axis=1) / weights.sum(axis=1)
        np.testing.assert_allclose(item_knn_scores(distances, ratings, k=k), expected, rtol=1e-12)
