"""Ensembles of evaluators (Zhang et al. 2024, Figure 4)."""

import numpy as np
import pandas as pd
import pytest

from recjudge.ensembles import ensemble_accuracy, ensemble_members, ensemble_scores, ensemble_summary
from recjudge.explanations import PAPER_NULLS, meta_evaluate


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
    paper = ensemble_scores(scores, ["a", "b"], nulls=PAPER_NULLS).set_index("row_id")["score"]
    assert paper[2] == 2.5  # the missing score counts as 0


def test_rows_not_scored_by_every_member_are_left_out():
    scores = pd.concat([long_scores({"a": [1, 2, 3]}), long_scores({"b": [2, 2]})], ignore_index=True)
    combined = ensemble_scores(scores, ["a", "b"])
    assert sorted(combined["row_id"]) == [0, 1]


def test_ensemble_accuracy_matches_direct_meta_evaluation():
    truth = pd.DataFrame({"row_id": range(6), "user_id": ["u"] * 3 + ["v"] * 3, "item_id": 1,
                          "persuasiveness": [1, 2, 3, 3, 4, 5]})
    scores = long_scores({"a": [1, 3, 2, 2, 5, 4], "b": [2, 1, 3, 4, 3, 5]})
    accuracy = ensemble_accuracy(truth, scores, ["a", "b"])
    assert sorted(accuracy["n"].unique()) == [1, 2]
    pair = accuracy[(accuracy["n"] == 2) & (accuracy["level"] == "dataset")]["value"].item()
    mean_scores = (np.array([1, 3, 2, 2, 5, 4]) + np.array([2, 1, 3, 4, 3, 5])) / 2
    assert pair == pytest.approx(np.corrcoef(mean_scores, [1, 2, 3, 3, 4, 5])[0, 1])
    single = accuracy[(accuracy["members"] == "a") & (accuracy["level"] == "user")]["value"].item()
    direct = meta_evaluate(truth, scores[scores["evaluator"] == "a"], methods=("pearson",),
                           aspects=("persuasiveness",))
    assert single == pytest.approx(direct.query("level == 'user'")["value"].item())
    summary = ensemble_summary(accuracy)
    row = summary[(summary["level"] == "dataset") & (summary["n"] == 1)]
    assert row["n_ensembles"].item() == 2
    assert row["min"].item() <= row["mean"].item() <= row["max"].item()


def test_too_many_subsets_refused():
    truth = pd.DataFrame({"row_id": [0, 1], "user_id": "u", "item_id": 1, "persuasiveness": [1, 2]})
    scores = long_scores({f"e{i}": [1, 2] for i in range(4)})
    with pytest.raises(ValueError, match="max_subsets"):
        ensemble_accuracy(truth, scores, [f"e{i}" for i in range(4)], max_subsets=10)
