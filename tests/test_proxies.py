"""Serendipity proxies (SOG, SNPR, PURS, DESR, Random) on hand-computed cases."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from recjudge.serendipity import proxies

S = 1 / math.sqrt(2)  # cosine of 45 degrees: similarity of a one-genre item with a two-genre item


@pytest.fixture()
def toy() -> dict:
    """Two genres g1, g2. Items: 1=(g1), 2=(g2), 3=(g1, g2), 4=(g1), 5=(no genres listed).

    User 7 answered items 3 and 4; target 3 has history [1, 2], target 4 has history [2]."""
    items = pd.DataFrame(
        {"item_id": [1, 2, 3, 4, 5], "genres": [("g1",), ("g2",), ("g1", "g2"), ("g1",), ("(no genres listed)",)]}
    )
    features = proxies.item_feature_matrix(items)
    history = pd.DataFrame(
        {
            "user_id": [7, 7, 7],
            "item_id": [3, 3, 4],
            "position": [0, 1, 0],
            "history_item_id": [1, 2, 2],
        }
    )
    targets = pd.DataFrame({"user_id": [7, 7], "item_id": [3, 4], "relevance": [0.5, 1.0]})
    lists = pd.DataFrame({"user_id": [7, 7], "item_id": [3, 4]})
    popularity = pd.Series({3: 9, 4: 0, 1: 1})
    item_unpop = proxies.unpopularity(popularity, [1, 2, 3, 4, 5])
    comps = proxies.proxy_components(targets, history, features, item_unpop, lists)
    return {"items": items, "features": features, "components": comps.set_index("item_id")}


def test_item_feature_matrix_genres_and_tags():
    items = pd.DataFrame({"item_id": [1, 2, 3], "genres": [("Drama", "Comedy"), ("Drama",), ("(no genres listed)",)]})
    tags = pd.DataFrame({"item_id": [1, 2, 3, 9], "tag": ["Funny ", "funny", "rare", "funny"]})
    matrix = proxies.item_feature_matrix(items, tags)
    assert list(matrix.columns) == ["genre:Comedy", "genre:Drama", "tag:funny"]  # "rare" is on one item only
    assert matrix.loc[1].tolist() == [1.0, 1.0, 1.0]
    assert matrix.loc[2].tolist() == [0.0, 1.0, 1.0]
    assert matrix.loc[3].tolist() == [0.0, 0.0, 0.0]  # no genre, its only tag was dropped
    assert matrix.loc[9].tolist() == [0.0, 0.0, 1.0]  # tagged item absent from items is added


def test_relevance_from_predicted_and_fallbacks():
    answers = pd.DataFrame({"user_id": [1, 1, 1, 2], "predicted_rating": [5.0, 0.5, np.nan, np.nan]})
    rel = proxies.relevance_from_predicted(answers)
    # (r - 0.5) / 4.5; user 1's third answer takes the user's mean 2.75 -> 0.5; user 2 the global mean 2.75 -> 0.5
    assert rel["relevance"].tolist() == pytest.approx([1.0, 0.0, 0.5, 0.5])
    assert rel["relevance_source"].tolist() == ["predicted", "predicted", "user_mean", "global_mean"]
    with pytest.raises(KeyError, match="predicted_rating"):
        proxies.relevance_from_predicted(answers.drop(columns="predicted_rating"))


def test_unpopularity_log_scale():
    unpop = proxies.unpopularity(pd.Series({10: 9, 11: 3}), [10, 11, 12])
    assert unpop[10] == pytest.approx(0.0)
    assert unpop[11] == pytest.approx(1 - math.log(4) / math.log(10))
    assert unpop[12] == pytest.approx(1.0)  # never rated: maximally unpopular


def test_components_hand_computed(toy):
    c = toy["components"]
    # target 3 = (g1, g2) against history 1 = (g1), 2 = (g2): both similarities are 1/sqrt(2)
    assert c.loc[3, "history_dissimilarity"] == pytest.approx(1 - S)
    assert c.loc[3, "unexpectedness_item"] == pytest.approx(1 - S)
    assert c.loc[3, "unexpectedness_category"] == pytest.approx(0.0)  # both genres already seen
    # history vectors (1,0) and (0,1) are sqrt(2) > bandwidth 1 apart: two clusters of one item each
    assert c.loc[3, "purs_unexpectedness"] == pytest.approx(1 - S)
    assert c.loc[3, "long_term_alignment"] == pytest.approx(1.0)  # mean history (0.5, 0.5) is parallel to target
    assert c.loc[3, "short_term_alignment"] == pytest.approx(1.0)
    assert c.loc[3, "diversity"] == pytest.approx(1 - S)  # the other list item is 4 = (g1)
    assert c.loc[3, "unpopularity"] == pytest.approx(0.0)  # the most popular item
    # target 4 = (g1) against history 2 = (g2): orthogonal
    assert c.loc[4, "history_dissimilarity"] == pytest.approx(1.0)
    assert c.loc[4, "unexpectedness_category"] == pytest.approx(1.0)
    assert c.loc[4, "long_term_alignment"] == pytest.approx(0.0)
    assert c.loc[4, "diversity"] == pytest.approx(1 - S)
    assert c.loc[4, "unpopularity"] == pytest.approx(1.0)
    assert (c["imputed"] == "").all()
    assert c["n_history"].tolist() == [2, 1]


def test_proxies_hand_computed(toy):
    c = toy["components"]
    d = 1 - S
    assert proxies.sog(c)[3] == pytest.approx(0.25 * (0.5 + d + d + 0.0))
    assert proxies.sog(c)[4] == pytest.approx(0.25 * (1.0 + d + 1.0 + 1.0))
    assert proxies.snpr(c)[3] == pytest.approx(0.7 * 0.5 + 0.3 * (d + 0.0) / 2)
    assert proxies.snpr(c)[4] == pytest.approx(0.7 * 1.0 + 0.3 * 1.0)
    assert proxies.snpr(c, lam=0.0)[4] == pytest.approx(1.0)
    assert proxies.purs(c)[3] == pytest.approx(0.5 + d * math.exp(-d))
    assert proxies.purs(c)[4] == pytest.approx(1.0 + math.exp(-1))
    assert proxies.desr(c)[3] == pytest.approx(1.0 * d / (1.0 + d))  # acc = 1, dif = d
    assert proxies.desr(c)[4] == pytest.approx(0.0)  # acc = 0
    with pytest.raises(ValueError, match="lambda"):
        proxies.snpr(c, lam=1.5)
    with pytest.raises(KeyError, match="unknown components"):
        proxies.sog(c, weights={"charisma": 1.0})


def test_purs_merges_close_history_items():
    target = np.array([S, S])
    # two identical (g1) history items form one cluster of size 2 centred on (1, 0)
    history = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    # clusters: {(1,0) x2}, {(0,1)}; size-weighted mean distance = (2 d + 1 d) / 3 = d
    assert proxies.purs_cluster_distance(target, history) == pytest.approx(1 - S)
    far = np.array([1.0, 0.0])
    assert proxies.purs_cluster_distance(far, history) == pytest.approx((2 * 0.0 + 1 * 1.0) / 3)
    assert math.isnan(proxies.purs_cluster_distance(target, np.empty((0, 2))))


def test_missing_components_are_imputed_with_the_median(toy):
    features = toy["features"]
    targets = pd.DataFrame({"user_id": [7, 7, 8], "item_id": [3, 4, 1], "relevance": [0.5, 1.0, 0.2]})
    history = pd.DataFrame(
        {"user_id": [7, 7, 7], "item_id": [3, 3, 4], "position": [0, 1, 0], "history_item_id": [1, 2, 2]}
    )
    comps = proxies.proxy_components(targets, history, features, pd.Series({3: 0.0}), lists=None)
    row = comps.set_index("item_id").loc[1]
    assert row["n_history"] == 0
    assert "history_dissimilarity" in row["imputed"] and "diversity" in row["imputed"]
    # median of the two computed values (1 - S and 1.0)
    assert row["history_dissimilarity"] == pytest.approx(((1 - S) + 1.0) / 2)
    raw = proxies.proxy_components(targets, history, features, pd.Series({3: 0.0}), lists=None, impute=False)
    assert raw["diversity"].isna().all()


def test_to_likert_is_eq6():
    assert proxies.to_likert(pd.Series([0.0, 0.5, 1.0])).tolist() == [1.0, 3.0, 5.0]
    # (0.25 - 0) / 1 * 4 + 1 = 2; (2.0 - 0) / 8 * 4 + 1 = 2; min/max over the given outputs
    assert proxies.to_likert(pd.Series([0.0, 0.25, 1.0])).tolist() == [1.0, 2.0, 5.0]
    assert proxies.to_likert(pd.Series([0.0, 2.0, 8.0])).tolist() == [1.0, 2.0, 5.0]
    out = proxies.to_likert(pd.Series([1.0, np.nan, 3.0]))
    assert out[0] == 1.0 and math.isnan(out[1]) and out[2] == 5.0


def test_random_baseline_is_seeded_uniform_likert():
    a = proxies.random_likert(5000, seed=3)
    assert np.array_equal(a, proxies.random_likert(5000, seed=3))
    assert not np.array_equal(a, proxies.random_likert(5000, seed=4))
    assert set(np.unique(a)) == {1.0, 2.0, 3.0, 4.0, 5.0}
    assert np.bincount(a.astype(int))[1:].min() > 900  # each level close to 1/5 of 5000


def test_proxy_scores_frame(toy):
    scores = proxies.proxy_scores(toy["components"].reset_index(), seed=0)
    for name in proxies.PROXIES:
        assert set(scores[name].dropna().unique()) <= {1.0, 2.0, 3.0, 4.0, 5.0}
        # two targets: the lower raw score maps to 1, the higher to 5
        lo, hi = scores[f"{name}_raw"].idxmin(), scores[f"{name}_raw"].idxmax()
        assert scores.loc[lo, name] == 1.0 and scores.loc[hi, name] == 5.0
    assert scores["Random"].between(1, 5).all()


def test_mean_shift_partition_agrees_with_scikit_learn():
    from sklearn.cluster import MeanShift
    from sklearn.metrics import adjusted_rand_score

    rng = np.random.default_rng(0)
    for trial in range(40):
        n = int(rng.integers(2, 11))
        points = rng.random((n, 4)) < rng.uniform(0.2, 0.6)
        points = points.astype(float)
        points = points[points.sum(axis=1) > 0]
        if len(points) < 2:
            continue
        unit = points / np.linalg.norm(points, axis=1, keepdims=True)
        ours = proxies.mean_shift_labels(unit, 1.0)
        reference = MeanShift(bandwidth=1.0).fit(unit).labels_
        assert adjusted_rand_score(reference, ours) == pytest.approx(1.0), (trial, unit)
