"""The page of the prompt-strategies chapter: the rules that choose its words, its tables and its figure, on small
hand-made frames (not the chapter's data)."""

from types import SimpleNamespace

import matplotlib
import numpy as np
import pandas as pd
import pytest
from IPython.display import Markdown

from recjudge.chapters import prompt_strategies as page
from recjudge.serendipity import prompt_strategies as ps

matplotlib.use("Agg")


pytestmark = pytest.mark.usefixtures("page_results")


def search(exact):
    return pd.DataFrame({"candidate": ["mean of s1-s6, half up", "mean of s1-s6, floor"], "exact": exact,
                         "distance": [4, 30], "n_without_g": [2, 2],
                         **{f"n_{k}": [321, 1022, 586, 208, 13][k - 1:k] * 2 for k in range(1, 6)}})


def study(exact=(False, False), synthetic=False):
    return SimpleNamespace(search=search(list(exact)), synthetic=synthetic,
                           answers=pd.DataFrame({"user_id": range(50)}), items=pd.DataFrame({"key": range(12)}))


def test_how_many_candidates_reproduce_the_papers_distribution():
    assert page.exact_words(0) == "No candidate reproduces"
    assert page.exact_words(1) == "1 candidate reproduces"
    assert page.exact_words(2) == "2 candidates reproduce"
    note = page.ground_truth_note(study((True, False))).data
    assert note.startswith("**1 candidate reproduces the paper's distribution exactly.**")
    assert "(4.0% of the answers" in note and "runner-up is mean of s1-s6, floor at distance 30" in note


def test_the_ground_truth_finding_says_what_a_synthetic_search_is_worth():
    assert page.ground_truth_finding(study(synthetic=True)).startswith("The search ran on the synthetic answers")
    real = page.ground_truth_finding(study((False, False)))
    assert real.startswith("No candidate of 2 reproduces")
    assert "has an L1 distance of 4 between its histogram and the printed one" in real
    assert "answers away" not in real, "an L1 distance between histograms is no count of answers"
    assert page.ground_truth_finding(study((True, True))).startswith("2 candidate of 2")


def metric_rows(intervals, n=(10, 10)):
    return pd.DataFrame([{"judge": page.LOCAL_JUDGE, "strategy": s, "template": ps.STRATEGY_NAMES[s], "n": count,
                          "n_unparsable": 10 - count, "mae": (low + high) / 2, "mae_ci_low": low, "mae_ci_high": high,
                          "accuracy_pct": 40.0, "accuracy_pct_ci_low": 20.0, "accuracy_pct_ci_high": 60.0}
                         for s, (low, high), count in zip(("base", "cot"), intervals, n)])


def test_the_strategies_are_ranked_only_when_their_intervals_part():
    overlapping = page.strategies_finding(metric_rows([(0.5, 1.5), (1.0, 2.0)]))
    assert "Its lowest MAE is Base's (on 10 parsed replies)" in overlapping
    assert overlapping.endswith("overlap, so the sample does not rank the strategies.")
    apart = page.strategies_finding(metric_rows([(0.5, 0.9), (1.0, 2.0)]))
    assert apart.endswith("do not all overlap, but a tiny model cannot rank prompts for a capable one.")
    unparsed = page.strategies_finding(metric_rows([(0.5, 0.9), (np.nan, np.nan)], n=(10, 0)))
    assert "CoT: no reply parsed (10 unparsable)" in unparsed and "overlap, so" in unparsed


def test_the_constrained_finding_says_when_it_was_not_run():
    assert page.constrained_finding(None) == "Not run in this variant (parameter `constrained`)."
    beside = pd.DataFrame({"template": ["Base", "CoT"], "parsed_constrained": [10, 9], "replies": [10, 10],
                           "parsed_free": [4, 0], "shape_violations": [0, 1], "mae_constrained": [1.234, 0.9]})
    assert page.constrained_finding(beside) == (
        "SmolLM2-135M's replies parse for Base 10 of 10 (free: 4); CoT 9 of 10 (free: 0), with 1 reply out of "
        "shape; MAE on the parsed replies Base 1.23; CoT 0.90.")
    values = page.findings(study(), metric_rows([(0.5, 1.5), (1.0, 2.0)]), None)
    assert isinstance(values["constrained_finding"], Markdown) and values["n_judged"] == "12"
    assert values["paper_cot_gpt"] == f"{ps.paper_table1().set_index('strategy').loc['cot', 'mae_gpt']:.3f}"


def test_the_metrics_table_shows_intervals_and_a_dash_for_a_strategy_without_scores(page_results):
    metrics = metric_rows([(0.5, 1.5), (np.nan, np.nan)], n=(10, 0))
    # the survey: 12 users; the first 10 answers are the judged sample
    answers = pd.DataFrame({"user_id": range(12), "item_id": 7, "g": [2.0] * 8 + [4.0] * 4})
    shown = SimpleNamespace(items=pd.DataFrame({"key": [f"{u}:7" for u in range(10)]}), synthetic=True,
                            definition=SimpleNamespace(label="g as defined"), answers=answers)
    table = page.show_metrics_table(metrics, shown, "chapter")
    assert table.caption == "Our runs on the sample of 10 answers"
    # The interval's "[95% CI]" on a line of its own, so the short numbers do not sit under a wide header.
    assert list(table.data.columns) == ["Judge", "Template", "n scored", "Unparsable", "MAE\n[95% CI]",
                                        "Accuracy (%)\n[95% CI]"]
    assert table.data["MAE\n[95% CI]"].tolist()[:2] == ["1.00 [0.50, 1.50]", "–"]
    # below the judge, the constants (chosen on the other users: always 2 here) and Random, on the 10 sampled answers
    floor = pd.read_csv(page_results / "chapter" / "baselines.csv").set_index("judge")
    assert floor.loc["constant (most frequent level)", "mae"] == pytest.approx(2 * 2 / 10)
    assert floor.loc["constant (most frequent level)", "n"] == 10
    assert table.data["Judge"].tolist()[2:] == floor.index.tolist()
    assert table.data["MAE\n[95% CI]"].tolist()[2] == "0.40"  # a fixed answer: no interval
    saved = pd.read_csv(page_results / "chapter" / "metrics.csv")
    assert set(saved["data"]) == {"SYNTHETIC survey (not real users)"} and set(saved["ground_truth"]) == {
        "g as defined"}


def test_the_figure_has_a_panel_per_strategy_and_says_why_one_is_empty(monkeypatch):
    drawn = {}
    monkeypatch.setattr(page.figures, "glue_figure",
                        lambda name, fig, caption: drawn.update(name=name, fig=fig, caption=caption))
    items = pd.DataFrame({"key": ["a", "b", "c"], "g": [1, 3, 5]})
    runs = {(page.LOCAL_JUDGE, "base"): SimpleNamespace(table=pd.DataFrame({"key": ["a", "b", "c"],
                                                                            "predicted": [2.0, 3.0, 4.0]})),
            (page.LOCAL_JUDGE, "cot"): SimpleNamespace(table=pd.DataFrame({"key": ["a", "b", "c"],
                                                                           "predicted": [np.nan] * 3}))}
    page.draw_strategy_scores(runs, SimpleNamespace(items=items, synthetic=False), ["base", "cot"], seed=0)
    assert drawn["name"] == "fig-strategy-scores"
    shown = [ax for ax in drawn["fig"].axes if ax.get_visible()]
    assert [ax.get_title() for ax in shown] == ["Base", "CoT"]
    assert [t.get_text() for t in shown[1].texts] == ["none of the 3 replies\nheld a score"]
    assert "3 sampled answers of Serendipity-2018 (mirror)" in drawn["caption"]


def test_the_papers_table_1_shows_the_constant_answers_and_random_as_rows_below_its_judges():
    table = pd.DataFrame({"model": ["GPT", "Llama"], "strategy": ["Base", "Base"], "mae": [1.5, 2.2],
                          "accuracy_pct": [20.0, 27.0], "constant_mode_answer": ["2", "2"],
                          "constant_mode_mae": [0.6, 0.6], "constant_mean_mae": [0.7, 0.7], "random_mae": [1.4, 1.4],
                          "constant_mode_accuracy_pct": [62.0, 62.0], "constant_mean_accuracy_pct": [61.0, 61.0],
                          "random_accuracy_pct": [34.0, 34.0]})
    shown = page.table1_with_baseline_rows(table)
    assert list(shown.columns) == ["model", "strategy", "mae", "accuracy_pct"]
    assert shown["model"].tolist() == ["GPT", "Llama", "Constant 2", "Constant, the mean", "Random"]
    assert shown["mae"].tolist() == [1.5, 2.2, 0.6, 0.7, 1.4]
    assert shown["accuracy_pct"].tolist()[2:] == [62.0, 61.0, 34.0]


def test_items_never_asked_are_left_out_of_the_judge_runs_not_unparsable():
    """At a variant's scale the book's judge is not asked: its items without a stored reply were counted as
    unparsable replies."""
    report = SimpleNamespace(n_from_store=1, n_provider_calls=0, n_left_out=2)
    run = ps.StrategyRun("base", pd.DataFrame({"key": ["a", "b", "c", "d"], "reply": ["3", "x", None, None],
                                               "predicted": [3.0, np.nan, np.nan, np.nan]}), [report], 1)
    assert (run.n_unparsable, run.n_left_out) == (1, 2)
    shown = page.show_judge_runs({(page.LOCAL_JUDGE, "base"): run}, study(), "prompt_strategies")
    from recjudge.compendium.results import results_path

    saved = pd.read_csv(results_path("prompt_strategies", "judge_runs"))
    assert saved[["unparsable", "left_out"]].values.tolist() == [[1, 2]]
    assert "Left out (not asked)" in shown.data.columns
