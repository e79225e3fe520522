"""Ensembles of evaluators: the generic subset averaging (Kang et al. RQ3) and its three-level use (Zhang et al.
Figure 4)."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from recjudge.explanations.evaluators import ensemble_meta_evaluation, meta_evaluate
from recjudge.metaeval.ensembles import ensemble_accuracy, ensemble_members, ensemble_scores, ensemble_summary


def long_scores(values: dict[str, list[float]], aspect: str = "persuasiveness") -> pd.DataFrame:
    return pd.concat([pd.DataFrame({"row_id": range(len(v)), "evaluator": name, "aspect": aspect, "score": v})
                      for name, v in values.items()], ignore_index=True)


def test_every_subset_is_formed():
    members = ensemble_members(["a", "b", "c"])
    assert len(members) == 7
    assert members[:3] == [("a",), ("b",), ("c",)] and members[-1] == ("a", "b", "c")
    assert ensemble_members(["a", "b", "c"], sizes=[2]) == [("a", "b"), ("a", "c"), ("b", "c")]
    with pytest.raises(ValueError):
        ensemble_members(["a"], sizes=[2])


def test_ensemble_score_is_the_mean_of_members():
    scores = long_scores({"a": [1, 2, 5], "b": [3, 4, np.nan]})
    combined = ensemble_scores(scores, ["a", "b"]).set_index("row_id")["score"]
    assert combined[0] == 2 and combined[1] == 3 and np.isnan(combined[2])
    paper = ensemble_scores(scores, ["a", "b"], missing_score=0.0).set_index("row_id")["score"]
    assert paper[2] == 2.5  # the missing score counts as 0


def test_rows_not_scored_by_every_member_are_left_out():
    scores = pd.concat([long_scores({"a": [1, 2, 3]}), long_scores({"b": [2, 2]})], ignore_index=True)
    combined = ensemble_scores(scores, ["a", "b"])
    assert sorted(combined["row_id"]) == [0, 1]


def test_ensemble_accuracy_matches_direct_meta_evaluation():
    truth = pd.DataFrame({"row_id": range(6), "user_id": ["u"] * 3 + ["v"] * 3, "item_id": 1,
                          "persuasiveness": [1, 2, 3, 3, 4, 5]})
    scores = long_scores({"a": [1, 3, 2, 2, 5, 4], "b": [2, 1, 3, 4, 3, 5]})
    accuracy = ensemble_meta_evaluation(truth, scores, ["a", "b"])
    assert sorted(accuracy["n"].unique()) == [1, 2]
    pair = accuracy[(accuracy["n"] == 2) & (accuracy["level"] == "dataset")]["value"].item()
    mean_scores = (np.array([1, 3, 2, 2, 5, 4]) + np.array([2, 1, 3, 4, 3, 5])) / 2
    assert pair == pytest.approx(np.corrcoef(mean_scores, [1, 2, 3, 3, 4, 5])[0, 1])
    single = accuracy[(accuracy["members"] == "a") & (accuracy["level"] == "user")]["value"].item()
    direct = meta_evaluate(truth, scores[scores["evaluator"] == "a"], methods=("pearson",),
                           aspects=("persuasiveness",))
    assert single == pytest.approx(direct.query("level == 'user'")["value"].item())
    summary = ensemble_summary(accuracy, by=("aspect", "level", "method"))
    row = summary[(summary["level"] == "dataset") & (summary["n"] == 1)]
    assert row["n_ensembles"].item() == 2
    assert row["min"].item() <= row["mean"].item() <= row["max"].item()


def test_too_many_subsets_refused():
    scores = long_scores({f"e{i}": [1, 2] for i in range(4)})
    with pytest.raises(ValueError, match="max_subsets"):
        ensemble_accuracy(scores, [f"e{i}" for i in range(4)], lambda s: s, max_subsets=10)


def test_generic_ensemble_with_any_agreement_function():
    """Kang-style: one score per answer, agreement = Pearson and MAE against a ground truth."""
    truth = pd.Series([1.0, 2.0, 3.0, 4.0, 5.0], index=range(5))
    scores = pd.concat([pd.DataFrame({"row_id": range(5), "evaluator": name, "score": values}) for name, values in
                        {"x": [1, 2, 2, 5, 4], "y": [2, 2, 3, 3, 5], "z": [5, 4, 3, 2, 1]}.items()],
                       ignore_index=True)

    def pearson_and_mae(combined: pd.DataFrame) -> pd.DataFrame:
        predicted = combined.set_index("row_id")["score"]
        return pd.DataFrame({"pearson": [stats.pearsonr(predicted, truth[predicted.index])[0]],
                             "mae": [(predicted - truth[predicted.index]).abs().mean()]})

    table = ensemble_accuracy(scores, ["x", "y", "z"], pearson_and_mae)
    assert list(table.columns) == ["n", "members", "pearson", "mae"]
    assert table["n"].tolist() == [1, 1, 1, 2, 2, 2, 3]
    xyz = table.set_index("members").loc["x + y + z"]
    mean_score = (np.array([1, 2, 2, 5, 4]) + np.array([2, 2, 3, 3, 5]) + np.array([5, 4, 3, 2, 1])) / 3
    assert xyz["mae"] == pytest.approx(np.abs(mean_score - truth.to_numpy()).mean())
    assert table.set_index("members").loc["z", "pearson"] == pytest.approx(-1.0)
    summary = ensemble_summary(table, value="pearson")
    assert summary["n_ensembles"].tolist() == [3, 3, 1]
    assert summary.loc[summary["n"] == 1, "max"].item() == pytest.approx(
        table[table["n"] == 1]["pearson"].max())


def test_every_subset_is_enumerated_once():
    from itertools import combinations

    members = ensemble_members(["a", "b", "c", "d"])
    assert len(members) == 2 ** 4 - 1
    assert len(set(members)) == len(members)
    assert set(members) == {c for n in range(1, 5) for c in combinations("abcd", n)}
    assert ensemble_members(["a", "b", "c"], sizes=[2]) == [("a", "b"), ("a", "c"), ("b", "c")]


def test_size_table_best_and_worst_follow_the_metric_direction():
    from recjudge.metaeval.ensembles import ensemble_size_table

    acc = pd.DataFrame({"n": [1, 1, 1, 2], "members": ["a", "b", "c", "a + b"],
                        "pearson": [0.1, 0.3, 0.2, 0.25], "mae": [1.0, 0.8, 0.9, 0.85]})
    table = ensemble_size_table(acc, ["pearson", "mae"]).set_index(["n", "metric"])
    assert table.loc[(1, "pearson"), "best"] == 0.3 and table.loc[(1, "pearson"), "best_members"] == "b"
    assert table.loc[(1, "pearson"), "worst_members"] == "a"
    assert table.loc[(1, "mae"), "best"] == 0.8 and table.loc[(1, "mae"), "worst"] == 1.0
    assert table.loc[(1, "mae"), "mean"] == pytest.approx(0.9)
    assert table.loc[(2, "pearson"), "n_ensembles"] == 1
    with pytest.raises(KeyError, match="direction"):
        ensemble_size_table(acc.rename(columns={"mae": "odd"}), ["odd"])


def test_held_out_selection_chooses_on_one_half_and_reports_the_other():
    from recjudge.metaeval.ensembles import held_out_selection, split_groups

    first, second = split_groups([1, 1, 2, 3, 4, 5], seed=0)
    assert first | second == {1, 2, 3, 4, 5} and not first & second and len(first) == 3
    users = pd.Series([1, 1, 2, 2, 3, 3, 4, 4])
    truth = pd.Series([1.0, 2, 3, 4, 5, 4, 3, 2])
    good = truth + pd.Series([0.1, -0.1, 0.1, -0.1, 0.1, -0.1, 0.1, -0.1])
    noisy = pd.Series([3.0, 1, 4, 2, 1, 5, 2, 4])

    def mae(pred, true):
        return {"mae": float(np.nanmean(np.abs(pred - true))), "n": int(len(pred))}

    result = held_out_selection({"noisy": noisy, "good": good}, truth, users, mae, select_by="mae", n_splits=3)
    assert (result["cell"] == "good").all()
    assert result["heldout_mae"].tolist() == pytest.approx([0.1, 0.1, 0.1])
    assert (result["select_n"] + result["heldout_n"] == 8).all()


def test_held_out_selection_when_every_cell_is_constant_on_a_half():
    from recjudge.metaeval.agreement import agreement_pct
    from recjudge.metaeval.ensembles import held_out_selection

    users = pd.Series([1, 1, 2, 2, 3, 3, 4, 4])
    truth = pd.Series([1.0, 2, 3, 4, 5, 4, 3, 2])
    constant = pd.Series([1.0] * 8)
    with pytest.raises(ValueError, match="no cell has a defined 'pearson_pct'"):
        held_out_selection({"a": constant, "b": constant}, truth, users, agreement_pct, select_by="pearson_pct")
    skipped = held_out_selection({"a": constant, "b": constant}, truth, users, agreement_pct,
                                 select_by="pearson_pct", n_splits=2, undefined="nan")
    assert skipped["cell"].isna().all() and skipped["heldout_mae"].isna().all()
    # one cell is no choice: its held-out MAE is reported although its Pearson is undefined
    alone = held_out_selection({"a": constant}, truth, users, agreement_pct, select_by="pearson_pct", n_splits=2)
    assert (alone["cell"] == "a").all() and alone["heldout_pearson_pct"].isna().all()
    assert alone["heldout_mae"].notna().all()


def test_grid_search_joins_each_base_judge_with_every_subset_of_the_others():
    from recjudge.metaeval.agreement import agreement_pct
    from recjudge.metaeval.ensembles import grid_search

    truth = pd.Series([1.0, 2, 3, 4, 5], index=[10, 11, 12, 13, 14])
    base = {"x": pd.Series([1.0, 2, 3, 4, 5], index=truth.index), "y": pd.Series([5.0, 4, 3, 2, 1], index=truth.index)}
    others = {"o1": pd.Series([2.0, 2, 2, 2, 2], index=truth.index),
              "o2": pd.Series([1.0, 1, 3, 5, np.nan], index=truth.index)}
    cells, grid = grid_search(base, others, truth, agreement_pct)
    assert len(grid) == 2 * 4 and grid["size"].tolist() == [1, 2, 2, 3, 1, 2, 2, 3]
    assert grid.loc[grid["members"] == "x", "pearson_pct"].item() == pytest.approx(100.0)
    assert grid.loc[grid["members"] == "y", "pearson_pct"].item() == pytest.approx(-100.0)
    assert cells["x + o1"].tolist() == [1.5, 2.0, 2.5, 3.0, 3.5]
    # a unit a member did not score has no ensemble score and is left out of the agreement
    assert grid.loc[grid["members"] == "x + o2", "n"].item() == 4 and np.isnan(cells["x + o2"][14])
    rounded, _ = grid_search(base, others, truth, agreement_pct,
                             transform=lambda long: long.assign(score=np.floor(long["score"])))
    assert rounded["x + o1"].tolist() == [1.0, 2.0, 2.0, 3.0, 3.0]
    only_pairs, pairs_grid = grid_search(base, others, truth, agreement_pct, sizes=[1])
    assert pairs_grid["size"].tolist() == [1, 2, 2, 1, 2, 2] and "x + o1 + o2" not in only_pairs


def test_every_grid_cell_is_the_ensemble_scores_of_its_members():
    """grid_search pivots the judges' scores once; each cell is still what ensemble_scores gives its members."""
    from recjudge.metaeval.agreement import agreement_pct
    from recjudge.metaeval.ensembles import ensemble_scores, grid_search

    rng = np.random.default_rng(3)
    units = rng.permutation(np.arange(100, 160))  # unsorted units
    truth = pd.Series(rng.integers(1, 6, units.size).astype(float), index=units)

    def judge() -> pd.Series:
        scores = pd.Series(rng.integers(1, 6, units.size) + rng.random(units.size), index=units)
        return scores.mask(rng.random(units.size) < 0.1)  # some units unscored

    base, others = {"a": judge(), "b": judge()}, {f"o{i}": judge() for i in range(4)}
    cells, grid = grid_search(base, others, truth, agreement_pct)
    long = pd.concat([pd.DataFrame({"row_id": units, "evaluator": name, "score": scores.to_numpy()})
                      for name, scores in {**base, **others}.items()], ignore_index=True)
    assert len(cells) == 2 * 2 ** 4
    for name, cell in cells.items():
        expected = ensemble_scores(long, name.split(" + "), name=name)
        reference = pd.Series(expected["score"].to_numpy(), index=expected["row_id"].to_numpy())
        pd.testing.assert_series_equal(cell, reference)
        found = agreement_pct(cell.reindex(truth.index).to_numpy(), truth.to_numpy())
        assert grid.loc[grid["members"] == name, "n"].item() == found["n"]


def test_sizes_within_bounds_the_enumeration_of_a_growing_pool():
    from math import comb

    from recjudge.metaeval.ensembles import DEFAULT_MAX_SUBSETS, sizes_within

    assert sizes_within(8) == list(range(1, 9))   # 255 subsets: every size
    assert sizes_within(10) == list(range(1, 11))  # 1023: still every size
    assert sizes_within(13) == [1, 2, 3]           # 13 + 78 + 286 = 377; with size 4, 1092
    assert sum(comb(13, s) for s in sizes_within(13)) <= DEFAULT_MAX_SUBSETS
    assert sizes_within(5, max_subsets=4) == [] and sizes_within(0) == []
    scores = pd.DataFrame({"row_id": [0, 1] * 3, "evaluator": ["a"] * 2 + ["b"] * 2 + ["c"] * 2,
                           "score": [1.0, 2, 3, 4, 5, 1]})
    table = ensemble_accuracy(scores, ["a", "b", "c"], lambda long: pd.DataFrame([{"n_rows": len(long)}]),
                              sizes=sizes_within(3, max_subsets=6))
    assert table["n"].tolist() == [1, 1, 1, 2, 2, 2]


def test_ensemble_size_table_with_a_size_no_ensemble_scored():
    from recjudge.metaeval.ensembles import ensemble_size_table

    accuracy = pd.DataFrame({"n": [1, 1, 2], "members": ["a", "b", "a + b"], "pearson_pct": [np.nan, np.nan, 10.0]})
    table = ensemble_size_table(accuracy, ["pearson_pct"]).set_index("n")
    assert np.isnan(table.loc[1, "best"]) and table.loc[1, "best_members"] == ""  # undefined, not an error
    assert table.loc[2, "best"] == 10.0


def test_held_out_selection_draws_distinct_splits():
    # 11 users and 20 splits: seeding each split by its number drew the same halves twice (seeds 5 and 10)
    from recjudge.metaeval.ensembles import held_out_selection

    users = pd.Series(range(11))
    truth = pd.Series(np.linspace(1, 5, 11))
    scores = truth + pd.Series(np.resize([0.3, -0.3], 11))

    def mae_and_half(pred, true):  # each user's truth is its own, so the truths name the half
        return {"mae": float(np.nanmean(np.abs(pred - true))), "n": int(len(pred)),
                "half": " ".join(f"{value:.2f}" for value in sorted(true))}

    result = held_out_selection({"a": scores}, truth, users, mae_and_half, select_by="mae", n_splits=20, seed=0)
    assert len(result) == 20
    assert result["select_half"].nunique() == 20, "every split holds out another half of the users"
    assert result["split"].tolist() == list(range(20))


def test_held_out_selection_uses_every_split_when_fewer_exist_than_asked():
    # 4 users have 6 ways to choose a selection half of 2: asked for 20 splits, each of the 6 is used once
    from recjudge.metaeval.ensembles import distinct_splits

    splits = distinct_splits([1, 2, 3, 4], 20, seed=0)
    assert len(splits) == 6 and len({frozenset(first) for first, _ in splits}) == 6
    assert all(first | second == {1, 2, 3, 4} and not first & second for first, second in splits)
    assert distinct_splits([1, 2, 3, 4], 3, seed=0) == distinct_splits([1, 2, 3, 4], 3, seed=0)
