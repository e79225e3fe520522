"""Algorithm 1 (one plus random with normalised surprise) on hand-computed and small synthetic cases."""

import numpy as np
import pandas as pd
import pytest

from recjudge.surprise.item_models import ItemModel
from recjudge.surprise.limits import potential_surprise_exact
from recjudge.surprise.one_plus_random import (
    DistanceColumns,
    OnePlusRandomSettings,
    evaluate_user,
    ordering_check,
    run_grid,
    run_one_plus_random,
    summarise_table2,
    table2_wide,
    user_problem,
)
from recjudge.surprise.time_frames import eligible_intervals


def _line_model(coordinates):
    return ItemModel("P", np.arange(len(coordinates)), np.asarray(coordinates, dtype=float)[:, None])


def test_distance_columns_match_direct_blocks_and_respect_row_restriction():
    model = _line_model([0.0, 1.0, 3.0, 7.0])
    columns = DistanceColumns(model.distance("euclidean"), rows=[1, 3])
    np.testing.assert_array_equal(columns.block([3, 1], [0, 2]), [[7.0, 4.0], [1.0, 2.0]])
    with pytest.raises(ValueError, match="outside the rows"):
        columns.block([0], [1])
    # the nearest known item and single columns read the same values as the blocks
    rows = columns.row_index([3, 1])
    np.testing.assert_array_equal(columns.nearest(rows, [0, 2]), columns.block([3, 1], [0, 2]).min(axis=1))
    np.testing.assert_array_equal(columns.column(rows, 2), columns.block([3, 1], [2])[:, 0])


def test_parallel_grid_returns_the_sequential_results_in_the_same_order(synthetic):
    ratings, model, release = synthetic
    intervals = eligible_intervals(ratings, frame_size=6, min_common_users=1)[:2]
    settings = OnePlusRandomSettings(top_n=2, n_sampled=4)
    pairs = [("P", "cosine"), ("P", "euclidean")]
    sequential, _ = run_grid({"P": model}, intervals, release, settings, pairs=pairs)
    parallel, timings = run_grid({"P": model}, intervals, release, settings, pairs=pairs, n_jobs=2)
    pd.testing.assert_frame_equal(sequential, parallel, check_exact=True)
    assert list(timings["distance"]) == ["cosine", "euclidean"]


def test_hand_computed_lists_on_a_line():
    # known items at 0 (rated 1) and 20 (rated 5); unknown at 5, 9 and 18; lists of one item.
    model = _line_model([0.0, 20.0, 5.0, 9.0, 18.0])
    columns = DistanceColumns(model.distance("euclidean"))
    settings = OnePlusRandomSettings(top_n=1, k_neighbours=1)
    rows = evaluate_user(columns, np.array([0, 1]), np.array([1.0, 5.0]), np.array([2, 3, 4]), settings,
                         np.random.default_rng(0))
    by_name = {row["recommender"]: row for row in rows}
    # item surprises: 5 -> 5, 9 -> 9, 18 -> 2; limits for one item: max 9, min 2
    assert by_name["MSI"]["max_surprise"] == 9.0 and by_name["MSI"]["min_surprise"] == 2.0
    assert by_name["MSI"]["surprise"] == 9.0 and by_name["MSI"]["normalised"] == 1.0
    assert by_name["LSI"]["surprise"] == 2.0 and by_name["LSI"]["normalised"] == 0.0
    # kNN with k = 1 rates 18 highest (its nearest known item is rated 5): surprise 2 -> 0
    assert by_name["kNN"]["surprise"] == 2.0 and by_name["kNN"]["normalised"] == 0.0


def test_sequence_surprise_counts_items_consumed_earlier():
    # known at 0; unknown at 1, 2, 10; lists of two. Greedy max: 10 then 2 (min(2, 8)) = 12; greedy min: 1 then
    # 2 (min(2, 1)) = 2. MSI's list (10, 2) scores 12 -> 1; LSI's list (1, 2) scores 2 -> 0.
    model = _line_model([0.0, 1.0, 2.0, 10.0])
    columns = DistanceColumns(model.distance("euclidean"))
    settings = OnePlusRandomSettings(top_n=2, recommenders=("MSI", "LSI"))
    rows = evaluate_user(columns, np.array([0]), np.array([4.0]), np.array([1, 2, 3]), settings,
                         np.random.default_rng(0))
    assert [(row["surprise"], row["max_surprise"], row["min_surprise"]) for row in rows] == [
        (12.0, 12.0, 2.0), (2.0, 12.0, 2.0)]


def test_supplementary_run_brings_msi_to_one_and_lsi_to_zero():
    rng = np.random.default_rng(3)
    model = ItemModel("P", np.arange(40), rng.normal(size=(40, 3)))
    columns = DistanceColumns(model.distance("cosine"))
    known, unknown = np.arange(5), np.arange(5, 40)
    settings = OnePlusRandomSettings(top_n=4, sampling=False, greedy_selection=True)
    rows = evaluate_user(columns, known, np.full(5, 4.0), unknown, settings, np.random.default_rng(0))
    by_name = {row["recommender"]: row["normalised"] for row in rows}
    assert by_name["MSI"] == pytest.approx(1.0) and by_name["LSI"] == pytest.approx(0.0)
    assert 0.0 <= by_name["kNN"] <= 1.0
    with pytest.raises(ValueError, match="sampling=False"):
        evaluate_user(columns, known, np.full(5, 4.0), unknown, OnePlusRandomSettings(greedy_selection=True),
                      np.random.default_rng(0))


def test_greedy_limits_never_beat_the_exact_ones_on_small_users():
    rng = np.random.default_rng(11)
    model = ItemModel("P", np.arange(12), rng.uniform(0, 10, size=(12, 2)))
    columns = DistanceColumns(model.distance("euclidean"))
    known, unknown = np.arange(2), np.arange(2, 12)
    settings = OnePlusRandomSettings(top_n=4, n_sampled=6)
    rows = evaluate_user(columns, known, np.array([3.0, 5.0]), unknown, settings, np.random.default_rng(1))
    problem = user_problem(columns, known, unknown)
    exact_max = potential_surprise_exact(problem, "max", 4).value
    exact_min = potential_surprise_exact(problem, "min", 4).value
    for row in rows:
        assert row["max_surprise"] <= exact_max + 1e-9 and row["min_surprise"] >= exact_min - 1e-9
        assert exact_min - 1e-9 <= row["surprise"] <= exact_max + 1e-9


@pytest.fixture
def synthetic():
    """Six users, twelve items on a line, ratings over time so that frames of 6 ratings overlap in users."""
    rng = np.random.default_rng(5)
    rows = []
    for t in range(36):
        user = [1, 2, 3, 4, 5, 6][t % 6]
        rows.append((user, int(rng.integers(0, 12)), float(rng.choice([3.0, 5.0])), t))
    ratings = pd.DataFrame(rows, columns=["user_id", "item_id", "rating", "t"]).drop_duplicates(["user_id", "item_id"])
    ratings["timestamp"] = pd.to_datetime(ratings.pop("t"), unit="D", utc=True)
    items = pd.DataFrame({"item_id": np.arange(12), "year": [1960.0] * 12})
    model = ItemModel("P", np.arange(12), np.linspace(0, 11, 12)[:, None] ** 1.5)
    from recjudge.surprise.time_frames import estimated_release_dates

    return ratings, model, estimated_release_dates(items, ratings)


def test_run_over_intervals_is_deterministic_and_in_range(synthetic):
    ratings, model, release = synthetic
    intervals = eligible_intervals(ratings, frame_size=6, min_common_users=1)
    assert intervals
    settings = OnePlusRandomSettings(top_n=2, n_sampled=5, k_neighbours=3, seed=4)
    first = run_one_plus_random(model, "euclidean", intervals, release, settings)
    second = run_one_plus_random(model, "euclidean", intervals, release, settings)
    pd.testing.assert_frame_equal(first, second)
    assert set(first["recommender"]) == {"MSI", "kNN", "LSI"}
    assert first["normalised"].dropna().between(0, 1).all()
    assert (first["n_candidates"] <= 5).all()
    # every interval's repository minus E_u is N_u
    assert (first["n_unknown"] + first["n_known"] == 12).all()
    table = summarise_table2(first)
    assert set(table.columns) >= {"model", "distance", "recommender", "median", "mean", "sd", "n_intervals"}
    assert len(table) == 3 and (table["distance"] == "Euclidean").all()


def test_grid_runs_every_valid_pair_and_times_it(synthetic):
    ratings, model, release = synthetic
    intervals = eligible_intervals(ratings, frame_size=6, min_common_users=1)[:2]
    results, timings = run_grid({"P": model}, intervals, release, OnePlusRandomSettings(top_n=2, n_sampled=4))
    assert sorted(set(results["distance"])) == ["cosine", "euclidean"]
    assert list(timings.columns) == ["model", "distance", "seconds"]


def test_one_pass_serves_the_sampled_and_the_supplementary_runs(synthetic):
    from recjudge.surprise.one_plus_random import supplementary_settings

    ratings, model, release = synthetic
    intervals = eligible_intervals(ratings, frame_size=6, min_common_users=1)[:2]
    sampled = OnePlusRandomSettings(top_n=2, n_sampled=4, seed=2)
    both = run_one_plus_random(model, "euclidean", intervals, release, [sampled, supplementary_settings(sampled)])
    alone = run_one_plus_random(model, "euclidean", intervals, release, sampled)
    pd.testing.assert_frame_equal(both[both["run"] == sampled.label].reset_index(drop=True), alone)
    supplementary = both[both["run"] == "no_sampling_greedy"]
    assert (supplementary.query("recommender == 'MSI'")["normalised"].dropna() == 1.0).all()
    assert (supplementary.query("recommender == 'LSI'")["normalised"].dropna() == 0.0).all()
    assert (supplementary["n_candidates"] == supplementary["n_unknown"]).all()


def test_distance_columns_store_and_read_the_same_bits_as_plain_numpy_indexing():
    rng = np.random.default_rng(3)
    model = ItemModel("P", np.arange(40), rng.random((40, 3)))
    pairwise = model.distance("euclidean")
    columns = DistanceColumns(pairwise, chunk=7)  # several chunks, and transposes wider than one band
    wanted = rng.choice(40, 25, replace=False)
    columns.ensure(wanted)
    for part in (wanted[:7], wanted[7:14]):
        assert np.array_equal(columns._columns[part], pairwise.block(columns.rows, part).T.astype(np.float32))
    rows, known = rng.choice(40, 12, replace=False), wanted[:5]
    got = columns.block(rows, known)
    want = columns._columns[np.ix_(known, columns.row_index(rows))].T.astype(np.float64)
    assert np.array_equal(got, want) and got.strides == want.strides  # same layout: later sums add in one order
    block = rng.random((40, 3))
    columns._store(np.array([0, 1, 2]), block, width=4)  # bands narrower than the rows
    assert np.array_equal(columns._columns[[0, 1, 2]], block.T.astype(np.float32))
    column_major = np.asfortranarray(rng.random((40, 4)))  # as the Jensen-Shannon blocks come
    columns._store(np.array([5, 6, 7, 8]), column_major)
    assert np.array_equal(columns._columns[[5, 6, 7, 8]], np.ascontiguousarray(column_major).T.astype(np.float32))


def test_grid_with_plans_shared_per_model_gives_each_cell_computed_alone(synthetic):
    from recjudge.surprise.item_models import build_user_item_model
    from recjudge.surprise.one_plus_random import supplementary_settings, user_plans

    ratings, model, release = synthetic
    models = {"P": model, "U": build_user_item_model(ratings)}
    intervals = eligible_intervals(ratings, frame_size=6, min_common_users=1)[:3]
    sampled = OnePlusRandomSettings(top_n=2, n_sampled=4, k_neighbours=2, seed=1)
    runs = [sampled, supplementary_settings(sampled)]
    pairs = [("U", "jensen_shannon"), ("P", "cosine"), ("U", "cosine"), ("U", "jaccard")]
    options = {"max_users_per_interval": 2, "allowed_items": np.arange(1, 12)}
    alone = pd.concat([run_one_plus_random(models[m], d, intervals, release, runs, **options) for m, d in pairs],
                      ignore_index=True)
    assert len(alone) and set(alone["distance"]) == {d for _, d in pairs}
    for n_jobs in (1, 2):
        grid, timings = run_grid(models, intervals, release, runs, pairs=pairs, n_jobs=n_jobs, **options)
        pd.testing.assert_frame_equal(grid, alone, check_exact=True)
        assert list(zip(timings["model"], timings["distance"])) == pairs
    plans = user_plans(models["U"], intervals, release, **options)
    assert all(len(np.intersect1d(known, unknown)) == 0 and 0 not in models["U"].item_ids[unknown]
               for _, _, known, _, unknown in plans)


def _paired_results():
    """Two users' lists in one cell (model P, cosine): user 1 respects MSI >= kNN >= LSI, user 2 has kNN above MSI
    by 0.2; a third user's LSI score is undefined, so their lists are not paired."""
    scores = {1: {"MSI": 0.9, "kNN": 0.5, "LSI": 0.1}, 2: {"MSI": 0.4, "kNN": 0.6, "LSI": 0.0},
              3: {"MSI": 0.8, "kNN": 0.3, "LSI": np.nan}}
    return pd.DataFrame([{"run": "alg1", "model": "P", "distance": "cosine", "interval": 0, "user_id": user,
                          "recommender": recommender, "normalised": value, "clipped": False}
                         for user, row in scores.items() for recommender, value in row.items()])


def test_ordering_check_pairs_the_lists_of_a_user_and_flags_a_violation_within_noise():
    check = ordering_check(_paired_results()).set_index("inequality")
    assert list(check.index) == ["MSI >= kNN", "kNN >= LSI"]
    assert set(check["distance"]) == {"cosine"} and set(check["lists"]) == {2}
    msi_knn = check.loc["MSI >= kNN"]
    assert msi_knn["mean_difference"] == pytest.approx((0.4 - 0.2) / 2)
    assert msi_knn["share_of_lists_holding"] == 0.5 and msi_knn["holds_on_means"]
    knn_lsi = check.loc["kNN >= LSI"]
    assert knn_lsi["share_of_lists_holding"] == 1.0 and not knn_lsi["within_noise"]
    # kNN well above MSI for both users: violated on the means, and far outside twice the standard error
    worse = _paired_results()
    worse.loc[(worse["user_id"] == 1) & (worse["recommender"] == "kNN"), "normalised"] = 0.95
    worse.loc[(worse["user_id"] == 2) & (worse["recommender"] == "kNN"), "normalised"] = 0.45
    violated = ordering_check(worse).set_index("inequality").loc["MSI >= kNN"]
    assert not violated["holds_on_means"] and violated["share_of_lists_holding"] == 0.0
    assert not violated["within_noise"]  # differences -0.05 and -0.05: no spread, so not noise
    # one list up, one down by more: violated on the means but within twice the standard error
    noisy = _paired_results()
    noisy.loc[(noisy["user_id"] == 2) & (noisy["recommender"] == "kNN"), "normalised"] = 0.9
    within = ordering_check(noisy).set_index("inequality").loc["MSI >= kNN"]
    assert within["mean_difference"] < 0 and within["within_noise"]


def test_table2_wide_puts_median_mean_and_sd_per_recommender_in_the_papers_order():
    results = pd.concat([_paired_results().assign(interval=i) for i in range(2)], ignore_index=True)
    wide = table2_wide(summarise_table2(results))
    assert list(wide.columns) == ["model", "distance", "MSI_median", "MSI_mean", "MSI_sd", "kNN_median", "kNN_mean",
                                  "kNN_sd", "LSI_median", "LSI_mean", "LSI_sd"]
    assert wide.loc[0, "distance"] == "cosine"
    assert wide.loc[0, "MSI_mean"] == pytest.approx((0.9 + 0.4 + 0.8) / 3)
