"""The page of the explanation chapter (recjudge.chapters.explanation_evaluators): the rules that choose its words,
its tables' columns and captions, and its figure, on small frames; and the steps it takes from
recjudge.explanations.evaluators (combining judges' runs, the ensemble members)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from recjudge.chapters import explanation_evaluators as page  # noqa: E402
from recjudge.explanations import evaluators as ex  # noqa: E402
from recjudge.prompts import explanations as ex_prompts  # noqa: E402

pytestmark = pytest.mark.usefixtures("page_results")


def statements(wrong_aspect: str | None, asked: str | None = None) -> pd.DataFrame:
    rows = []
    for aspect, statement in ex_prompts.ASPECT_STATEMENTS.items():
        said = asked if aspect == wrong_aspect else statement
        rows.append({"aspect": aspect, "line": aspect.capitalize(), "statement_asked": said,
                     "questionnaire_statement": statement, "asks_its_aspect": said == statement})
    return pd.DataFrame(rows)


def test_no_slip_is_said_when_every_line_asks_its_aspect():
    fine = statements(None)
    assert not page.has_slip(fine)
    assert page.slip_note(fine).data == "Every aspect line of the authors' multiple-aspect template states its own " \
                                        "aspect."


def test_a_transparency_line_asking_persuasiveness_is_named_with_the_papers_finding():
    slip = statements("transparency", ex_prompts.ASPECT_STATEMENTS["persuasiveness"])
    assert page.has_slip(slip)
    note = page.slip_note(slip).data
    assert note.startswith("**A slip in the authors' prompts.** In every multiple-aspect prompt of `prompt.py` the "
                           "Transparency line")
    assert "the persuasiveness statement" in note
    assert "asked about persuasiveness twice and never about transparency" in note
    assert "single-aspect prompts score higher on Transparency" in note


def test_a_slip_of_another_aspect_with_an_unknown_statement_names_no_borrowed_aspect_nor_transparency():
    note = page.slip_note(statements("accuracy", "Something else entirely.")).data
    assert "line reads *\"Something else entirely.\"*, instead of" in note
    assert "twice" not in note and "Transparency (section 3)" not in note
    assert note.endswith("The rebuilt template keeps the slip, so that it asks what the authors asked.")


def test_the_authors_template_as_stored_asks_persuasiveness_in_its_transparency_line():
    table = page.authors_prompt_statements("chapter")
    assert list(table.columns) == ["aspect", "line", "statement_asked", "questionnaire_statement", "asks_its_aspect"]
    assert table.set_index("aspect")["asks_its_aspect"].to_dict() == {
        "persuasiveness": True, "transparency": False, "accuracy": True, "satisfaction": True}


def agreement_frame() -> pd.DataFrame:
    names = ["Random", "BLEU-1", "BLEU-4", "ROUGE-1-F", "ROUGE-L-F", "Annotator-1", "Annotator-2", "Average"]
    return pd.DataFrame({"evaluator": names, "cells": [12] * 8,
                         "mean_abs_difference": [3.0, 1.25, 2.5, 0.5, 0.75, 0.001, 0.002, 0.003],
                         "max_abs_difference": [6.0, 2.0, 4.0, 1.0, 1.5, 0.004, 0.005, 0.0049]})


def test_detail_values_count_the_annotator_cells_and_name_each_reference_rows_gap():
    tokenisation = pd.DataFrame({"metric": ["BLEU-1", "BLEU-4", "BLEU-4"], "dataset_level_mean": [10.0, 1.5, 3.25]})
    values = page.detail_values(agreement_frame(), tokenisation)
    assert values["annotator_cells"] == "36"
    assert values["annotator_gap"] == "0.005"
    assert values["reference_gaps"] == "BLEU-1 1.25, BLEU-4 2.50, ROUGE-1-F 0.50, ROUGE-L-F 0.75"
    assert values["bleu4_variants"] == "2"
    assert values["bleu4_ours"] == "1.50–3.25"


def test_the_agreement_table_keeps_its_columns_and_caption():
    table = page.show_table1_agreement("chapter", agreement_frame())
    assert table.caption == "How close each reference row comes to the paper over its 12 cells (4 aspects × 3 levels)"
    assert list(table.data.columns) == ["Evaluator", "Cells", "Mean |difference| (points)",
                                        "Largest |difference| (points)"]
    assert table.collapsed and table.full_table == "results/chapter/table1_agreement_by_row.csv"


def comparison_frame() -> pd.DataFrame:
    rows = []
    for evaluator, offset in (("ROUGE-1-F", 0.0), ("ROUGE-L-F", 1.5), ("Annotator-1", 0.0)):
        for aspect in ("persuasiveness", "accuracy"):
            for level in ex.LEVELS:
                rows.append({"evaluator": evaluator, "aspect": aspect, "level": level, "paper": 10.0,
                             "ours": 10.0 + offset})
    return pd.DataFrame(rows)


def runs_frame(unparsable: int) -> pd.DataFrame:
    return pd.DataFrame({"evaluator": ["SmolLM2, multi"], "n_prompts": [20], "n_unparsable": [unparsable]})


def llm_table_frame() -> pd.DataFrame:
    return pd.DataFrame({"evaluator": "SmolLM2, multi", "aspect": "persuasiveness", "level": list(ex.LEVELS),
                         "method": "pearson", "value": [0.05, 0.1, 0.2]})


def test_further_findings_say_only_what_their_conditions_hold():
    empty_runs = pd.DataFrame(columns=["evaluator", "n_prompts", "n_unparsable"])
    no_cost = pd.DataFrame(columns=["evaluator", "template"])
    plain = page.further_findings(comparison_frame(), empty_runs, llm_table_frame(), 12, False, no_cost).data
    # The paper's two ROUGE rows are printed identical; ours differ by 1.5 points here.
    assert plain.splitlines() == [
        "- The paper's ROUGE-1-F and ROUGE-L-F rows are identical in every cell, which two different measures cannot "
        "be in general (ours differ by up to 1.50 points): one of the paper's rows is probably a copy of the other."]
    cost = pd.DataFrame({"evaluator": ["x"], "template": ["zhang_multi_zero_shot"], "usd_gpt-4": [0.01234]})
    full = page.further_findings(comparison_frame(), runs_frame(7), llm_table_frame(), 12, True, cost).data
    lines = full.splitlines()
    assert len(lines) == 4
    assert "on 12 texts: 7 of 20 replies had an unreadable score" in lines[1]
    assert "its one dataset-level correlation on enough texts (mean over aspects) is 5.0%" in lines[1]  # dataset level
    assert "ask about persuasiveness twice" in lines[2]
    assert "GPT-4 at list price would cost US\\$0.0123 per text" in lines[3]


def test_the_table1_figure_draws_every_cell_of_each_group():
    comparison = comparison_frame()
    page.draw_table1_cells(comparison)
    fig = plt.gcf()
    reference, annotators = fig.axes
    assert reference.get_title() == "Reference metrics and Random"
    assert sum(len(c.get_offsets()) for c in reference.collections) == 12  # the two ROUGE rows × 6 cells
    assert sum(len(c.get_offsets()) for c in annotators.collections) == 6


def test_combining_no_run_gives_empty_frames_with_the_columns_the_chapter_reads():
    combined = ex.concat_evaluations([])
    assert combined.scores.empty and list(combined.scores.columns) == ["row_id", "evaluator", "aspect", "score"]
    assert {"evaluator", "n_prompts", "n_unparsable"} <= set(combined.runs.columns) and combined.runs.empty


def test_combining_runs_stacks_each_part_in_order():
    def run(name):
        return ex.LLMEvaluation(scores=pd.DataFrame({"row_id": [1], "evaluator": [name], "aspect": ["accuracy"],
                                                     "score": [3.0]}),
                                runs=pd.DataFrame({"evaluator": [name]}), replies=pd.DataFrame({"evaluator": [name]}))
    combined = ex.concat_evaluations([run("a"), run("b")])
    assert combined.scores["evaluator"].tolist() == ["a", "b"] and combined.scores.index.tolist() == [0, 1]
    assert combined.runs["evaluator"].tolist() == ["a", "b"] and combined.replies["evaluator"].tolist() == ["a", "b"]


def test_ensemble_members_add_the_annotators_only_below_three_llms():
    one = ex.ensemble_members(["A"], ["zero_shot", "one_shot"])
    assert one == [ex_prompts.evaluator_name("A", "multi", "zero_shot"), "Annotator-1", "Annotator-2"]
    three = ex.ensemble_members(["A", "B", "C"], ["zero_shot"])
    assert three == [ex_prompts.evaluator_name(label, "multi", "zero_shot") for label in "ABC"]
    assert ex.ensemble_members(["A", "B", "C"], ["one_shot"]) == ["Annotator-1", "Annotator-2"]


def test_the_error_table_shows_the_judges_beside_a_constant_and_random_and_saves_each_aspect(page_results):
    from recjudge.data.lu2023 import ASPECTS
    from recjudge.metaeval.baselines import MEAN, MODE, RANDOM

    truth = pd.DataFrame({"row_id": range(6), "user_id": [1, 1, 2, 2, 3, 3], "item_id": 0,
                          **{aspect: [4.0, 3.0, 4.0, 2.0, 5.0, 4.0] for aspect in ASPECTS}})
    scores = pd.concat([pd.DataFrame({"row_id": range(6), "evaluator": "SmolLM2-135M (M)", "aspect": aspect,
                                      "score": [4.0, 4.0, 3.0, 2.0, 5.0, 1.0]}) for aspect in ASPECTS])
    shown = page.show_errors_beside_baselines("explanation_evaluators", "errors", truth, scores, "the sample")
    assert shown.data["Evaluator"].tolist() == ["SmolLM2-135M (M)", MODE, MEAN, RANDOM]
    assert shown.data.columns.tolist() == ["Evaluator", "n (text × aspect)", "MAE", "RMSE", "Accuracy (%)"]
    saved = pd.read_csv(page_results / "explanation_evaluators" / "errors.csv")
    assert set(saved["aspect"]) == set(ASPECTS) and len(saved) == 4 * len(ASPECTS)


def test_pearson_interval_is_fishers_z_and_undefined_below_four_pairs():
    import numpy as np
    from scipy import stats

    from recjudge.metaeval.agreement import pearson_interval

    rng = np.random.default_rng(0)
    x = rng.normal(size=40)
    y = x + rng.normal(size=40)
    expected = stats.pearsonr(x, y).confidence_interval(0.95)
    assert pearson_interval(stats.pearsonr(x, y).statistic, 40) == pytest.approx((expected.low, expected.high))
    assert all(np.isnan(pearson_interval(0.9, 3)))
    assert all(np.isnan(pearson_interval(float("nan"), 40)))


def test_the_llm_rows_table_gives_the_dataset_levels_interval_on_the_fewest_texts_of_an_aspect():
    rows = [("judge", aspect, level, "pearson", value, 1, 0, n)
            for aspect, n in zip(ex.ASPECTS, (50, 46, 50, 50)) for level, value in
            (("dataset", 0.3), ("user", 0.2), ("pair", 0.1))]
    table = pd.DataFrame(rows, columns=["evaluator", "aspect", "level", "method", "value", "n_groups", "n_undefined",
                                        "n_rows"])
    interval = page.dataset_level_interval(table).set_index("evaluator")
    low, high = interval.loc["judge", ["average_dataset_low", "average_dataset_high"]]
    assert interval.loc["judge", "n_pairs"] == 46
    from recjudge.metaeval.agreement import pearson_interval
    assert (low, high) == pytest.approx(tuple(100 * bound for bound in pearson_interval(0.3, 46)))
    assert low < 30 < high


def test_the_ensemble_caption_opens_with_the_mean_pearson_of_one_evaluator_and_of_the_largest_ensemble():
    from recjudge.chapters import explanation_evaluators

    average = pd.DataFrame({"n": [1, 1, 2, 1, 1, 2], "level": ["user"] * 3 + ["pair"] * 3,
                            "pearson": [10.0, 20.0, 30.0, 5.0, 7.0, 8.0]})
    assert explanation_evaluators.ensemble_trend(average) == (
        "Read whether the black bars rise as evaluators are added: the mean Pearson goes from one evaluator to 2 as "
        "15.0% → 30.0% at the user level; 6.0% → 8.0% at the pair level.")


def test_the_local_rows_range_leaves_out_the_rows_on_too_few_texts():
    # "range from −21.3% to 89.7%" stood beside a table whose rows on 3 texts say "too few texts (3)"
    rows = [(name, aspect, "dataset", "pearson", value, n)
            for name, value, n in (("SmolLM2 a", 0.897, 3), ("SmolLM2 b", 0.10, 40), ("SmolLM2 c", -0.05, 46))
            for aspect in ex.ASPECTS]
    table = pd.DataFrame(rows, columns=["evaluator", "aspect", "level", "method", "value", "n_rows"])
    words = page.local_dataset_range(table)
    assert words == "its dataset-level correlations (mean over aspects) range from −5.0% to 10.0% (2 rows; 1 other " \
                    "on too few texts)"
    assert "89.7" not in words
    one = page.local_dataset_range(table[table["evaluator"] != "SmolLM2 c"])
    assert one == "its one dataset-level correlation on enough texts (mean over aspects) is 10.0% (1 other row on " \
                  "too few texts)"
    few = page.local_dataset_range(table[table["evaluator"] == "SmolLM2 a"])
    assert few.startswith("each of its rows rests on too few texts")
