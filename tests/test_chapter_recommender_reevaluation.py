"""The page of the recommender re-evaluation chapter: the rules that choose its words, its tables and its figure, on
small hand-made frames (not the chapter's data)."""

from types import SimpleNamespace

import matplotlib
import pandas as pd
import pytest
from IPython.display import Markdown

from recjudge.chapters import recommender_reevaluation as page

matplotlib.use("Agg")

FOLDS = [SimpleNamespace(fold=f, n_test_users=n) for f, n in ((0, 5), (1, 6), (2, 7))]


pytestmark = pytest.mark.usefixtures("page_results")


def test_judged_users_per_fold_is_one_count_or_a_range():
    assert page.judged_per_fold({0: [1], 1: [2], 2: [3]}) == "1 user per fold"
    assert page.judged_per_fold({0: [1, 4], 1: [2, 5], 2: [3, 6]}) == "2 users per fold"
    assert page.judged_per_fold({0: [1], 1: [2, 5], 2: [3]}) == "1–2 users per fold"
    assert page.users_note({0: [1], 1: [2, 5], 2: [3]}) == "1 / 2 / 1 judged users in the three folds"


def test_integer_scores_are_one_value_or_a_range():
    assert page.avg_integer_words(pd.Series([2.0, 2.0, 2.0])) == "is 2.00 for every recommender"
    assert page.avg_integer_words(pd.Series([2.0, 2.5, 3.0])) == "ranges from 2.00 to 3.00"


def table3(avg, precision_ser):
    return pd.DataFrame({"recommender": ["BPRMF", "KFN", "Random"], "avg_score_mean": avg,
                         "precision_ser_mean": precision_ser})


def findings(ml1m_finding):
    cost = pd.DataFrame({"run": [page.ALL_RUN, page.JUDGED_RUN], "judgments": [1234, 60],
                         "input_tokens": [0, 6000], "output_tokens": [0, 60], "gpt4o_mini_usd": [1.5, 0.0009]})
    accuracy = pd.DataFrame({"recommender": ["BPRMF", "KFN", "Random"], "ndcg_acc_mean": [0.10, 0.05, 0.01],
                             "ndcg_acc_std": [0.01, 0.01, 0.01]})
    vs_random = pd.DataFrame({"recommender": ["BPRMF", "KFN"], "recall10_diff": [0.05, -0.01],
                              "recall10_p": [0.01, 0.5]})
    return page.findings(table3([1.9, 2.3, 2.1], [0.0, 0.05, 0.0]), table3([2.0, 2.0, 2.0], [0.0, 0.0, 0.0]),
                         pd.DataFrame({"avg_score": [2.15, 2.38]}), cost, accuracy, vs_random,
                         {0: [1], 1: [2], 2: [3, 4]}, FOLDS, "latest-small", ml1m_finding=ml1m_finding)


def test_findings_are_chosen_from_the_numbers_by_name():
    values = findings(None)
    assert values["question_data"] == "ml-latest-small"
    assert findings("On ML-1M ...")["question_data"] == "ml-latest-small and ML-1M"
    # the judge's Avg. score@20 on 1 / 1 / 2 judged users is glued nowhere but in the too-few finding
    assert [name for name, value in values.items() if "1.90" in str(getattr(value, "data", value))] == []
    assert values["judged_users"] == 4 and values["judged_per_fold"] == "1 / 1 / 2"
    # the cost rows are read by their run's name, whatever their order
    assert values["n_judgments"] == 60 and values["all_pairs"] == "1,234" and values["all_cost"] == "1.50"
    assert values["test_users"] == 18
    assert isinstance(values["accuracy_finding"], Markdown)
    assert "BPRMF has the highest NDCG_acc@20" in values["accuracy_finding"].data
    # the ML-1M paragraph is the ML-1M section's: the detail box printed it a second time
    assert "ml1m_finding" not in values


def test_the_serendipity_finding_on_fewer_judged_users_than_the_minimum_is_too_few():
    # "Avg. score@20 ranges from 1.81 (BPRMF) to 1.91 (DESR)" was printed on 1 / 1 / 1 judged users
    few = findings(None)["serendipity_finding"].data
    assert "too few judged users (1 / 1 / 2 per fold)" in few and "1.90" not in few and "2.30" not in few
    assert "2.15–2.38" in few, "the paper's printed range stays"
    many = page.serendipity_finding(table3([1.9, 2.3, 2.1], [0.0, 0.05, 0.0]), table3([2.0, 2.0, 2.0], [0.0] * 3),
                                    pd.DataFrame({"avg_score": [2.15, 2.38]}), {0: [1, 2, 3, 4], 1: [5, 6, 7],
                                                                                 2: [8, 9, 10]}).data
    assert "ranges from 1.90 (BPRMF) to 2.30 (KFN)" in many and "too few" not in many
    shown = page.unless_too_few_judged(table3([1.9, 2.3, 2.1], [0.0, 0.05, 0.0]), {0: [1], 1: [2], 2: [3]},
                                       ["avg_score_mean"])
    assert (shown["avg_score_mean"] == "too few judged users (1 / 1 / 1 per fold)").all()


def test_the_avg_score_claim_agrees_only_when_every_score_and_the_mean_lie_in_the_range(monkeypatch, page_results):
    def claim(scores, mean):
        monkeypatch.setattr(page.serendipity_claims, "g_distribution_summary",
                            lambda: {"mean": mean, "n": 2150, "sd": 0.9})
        monkeypatch.setattr(page.serendipity_claims, "avg_score_alignment",
                            lambda table: pd.DataFrame({"avg_score": scores}))
        return page.avg_score_claim("chapter").data

    assert "2 of 2 Avg. Scores of Table 3 lie in 2.1–2.4 (from 2.150 to 2.380): the means agree." in claim(
        [2.15, 2.38], 2.25)
    assert "1 of 2 Avg. Scores" in claim([2.15, 2.45], 2.25) and "the means agree" not in claim([2.15, 2.45], 2.25)
    assert "the means agree" not in claim([2.15, 2.38], 2.5)
    assert (page_results / "chapter" / "paper_claim_avg_score_vs_g.csv").is_file()


def test_the_versus_random_table_labels_its_columns_and_counts_wins_and_losses(page_results):
    vs_random = pd.DataFrame({"recommender": ["BPRMF"], "n_users": [12], "recall10_diff": [0.031],
                              "recall10_wins": [5], "recall10_losses": [2], "recall10_p": [0.04],
                              "precision20_diff": [-0.002], "precision20_wins": [1], "precision20_losses": [3],
                              "precision20_p": [0.6]})
    table = page.show_vs_random_table(vs_random, "latest-small", "chapter")
    assert table.caption.startswith("Each recommender minus Random per test user")
    assert list(table.data.columns) == ["Recommender", "Users", "Δ R_acc@10 (points)", "Better / worse", "p",
                                        "Δ P_acc@20 (points)", "Better / worse (P)", "p (P)"]
    assert table.data.loc[0, "Better / worse"] == "5 / 2" and table.data.loc[0, "Better / worse (P)"] == "1 / 3"
    saved = pd.read_csv(page_results / "chapter" / "vs_random_latest-small.csv")
    assert saved.loc[0, "dataset"] == "latest-small" and saved.loc[0, "recall10_wins"] == 5


def test_the_cost_counts_each_pair_once_per_fold_and_prices_the_mean_tokens(page_results):
    test_lists = pd.DataFrame({"recommender": ["BPRMF", "Random", "BPRMF", "Popularity"], "fold": [0, 0, 0, 1],
                               "user_id": [1, 1, 1, 2], "item_id": [10, 10, 11, 10]})
    assert page.distinct_pairs(test_lists, FOLDS) == 3
    assert page.distinct_pairs(test_lists, FOLDS, page.PAPER_SIX) == 2
    scored = pd.DataFrame({"input_tokens": [100, 300], "output_tokens": [1, 1]})
    cost = page.judging_cost(scored, test_lists, FOLDS, {0: [1], 1: [], 2: []}, "latest-small", "chapter")
    by_run = cost.set_index("run")
    assert by_run.loc[page.JUDGED_RUN, "judgments"] == 2 and by_run.loc[page.JUDGED_RUN, "users"] == 1
    assert by_run.loc[page.ALL_RUN, "judgments"] == 3 and by_run.loc[page.ALL_RUN, "input_tokens"] == 600
    assert by_run.loc["all test users, the paper's six", "judgments"] == 2
    assert by_run.loc[page.ALL_RUN, "users"] == 18
    table = page.show_cost_table(cost, "latest-small", "chapter")
    assert "GPT-4o-mini (USD, list price)" in table.data.columns and table.collapsed


def test_the_figure_sets_accuracy_beside_the_judges_scores_on_the_full_scale(monkeypatch):
    drawn = {}
    monkeypatch.setattr(page.figures, "glue_figure",
                        lambda name, fig, caption: drawn.update(name=name, fig=fig, caption=caption))
    names = ["BPRMF", "Popularity", "Random"]
    accuracy = pd.DataFrame({"recommender": names, "ndcg_acc_mean": [0.10, 0.06, 0.01],
                             "ndcg_acc_std": [0.02, 0.01, 0.005]})
    ser_per_fold = pd.DataFrame({"recommender": [n for n in names for _ in range(3)],
                                 "avg_score": [1.8, 1.9, 2.0, 1.7, 1.8, 1.9, 2.0, 2.1, 2.2]})
    table3 = pd.DataFrame({"recommender": names, "avg_score_mean": [1.9, 1.8, 2.1], "avg_score_se": [0.1, 0.2, 0.15]})
    paper = pd.DataFrame({"recommender": ["BPRMF", "Random"], "avg_score": [2.2, 2.3]})
    page.draw_accuracy_vs_judge(accuracy, ser_per_fold, table3, paper, {}, {0: [1], 1: [2], 2: [3]}, "latest-small")
    assert drawn["name"] == "fig-accuracy-vs-judge"
    left, right = drawn["fig"].axes
    assert [t.get_text() for t in left.get_yticklabels()] == ["Random", "Popularity", "BPRMF"]  # by accuracy
    assert right.get_xlim() == (1.0, 5.0)
    assert "the paper has no Popularity" in drawn["caption"] and "1 / 1 / 1 judged users" in drawn["caption"]
    assert "2.20–2.30 for every recommender" in drawn["caption"]
    # the judge's means over a few dozen lists carry error bars of ± one standard error, in the order drawn
    bars = [c for c in right.collections if type(c).__name__ == "LineCollection"]
    assert len(bars) == 1
    half_widths = sorted(round((seg[1][0] - seg[0][0]) / 2, 6) for seg in bars[0].get_segments())
    assert half_widths == [0.1, 0.15, 0.2]
    assert "SmolLM2-135M, mean ± SE" in figures_labels(right) and "standard error" in drawn["caption"]


def figures_labels(ax) -> list[str]:
    return ax.get_legend_handles_labels()[1]


def test_table3_shows_the_expected_score_reading_and_folds_the_integer_one(monkeypatch, page_results):
    """The integer reading (every score 2: P_ser 0.00 and Avg. score 2.000 throughout) was the table shown, while the
    informative expected-score table was folded."""
    shown = []
    monkeypatch.setattr(page, "display", shown.append)
    names = ["BPRMF", "Random"]
    table3 = pd.DataFrame({"recommender": names, "n_users": ["1/1/1"] * 2,
                           **{f"{m}_mean": [0.1, 0.05] for m in ("precision_acc", "ndcg_acc")},
                           "precision_ser_mean": [0.02, 0.0], "ndcg_ser_mean": [0.03, 0.0],
                           "avg_score_mean": [2.31, 2.24], "avg_score_se": [0.04, 0.05], "n_lists": [3, 3]})
    integer = table3.assign(precision_ser_mean=0.0, ndcg_ser_mean=0.0, avg_score_mean=2.0, avg_score_se=0.0)
    paper = pd.DataFrame({"recommender": names, "p_acc": [5.0, 1.0], "n_acc": [6.0, 1.0], "p_ser": [30.0, 20.0],
                          "n_ser": [31.0, 21.0], "avg_score": [2.3, 2.2]})
    accuracy = page.show_table3(table3, integer, paper, {0: [1], 1: [2], 2: [3]}, "latest-small", "chapter",
                                local_model="smollm2", prompt="kang_basic")
    expected, integer_shown = shown
    assert "expected score" in expected.caption and not expected.collapsed
    assert "SE" in " ".join(map(str, expected.data.columns)), "the expected score's standard error is shown"
    assert "most likely score" in integer_shown.caption and integer_shown.collapsed
    assert accuracy.collapsed


def test_the_ml1m_section_says_what_judging_costs_without_repeating_the_verdicts_ml1m_paragraph():
    test_lists = pd.DataFrame({"recommender": ["BPRMF", "SASRec", "Popularity"], "fold": [0, 0, 0],
                               "user_id": [1, 1, 1], "item_id": [10, 11, 12]})
    scored = pd.DataFrame({"input_tokens": [100, 300], "output_tokens": [1, 1]})
    note = page.ml1m_cost_note(scored, test_lists, FOLDS).data
    assert note.startswith("Judging the paper's six on every ML-1M test user would take 2 judgments")
    assert "Ordered by" not in note and "Accuracy on" not in note
