"""Every judge on one scale: the papers' rows read for what each number is, this book's judges beside them, and the
headline figure drawn from the table with every number of its caption read from it."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from recjudge.metaeval import paper_judges
from recjudge.trust import judge_table as jt


def test_only_one_pooled_correlation_per_row_is_priced_in_labels():
    rows = paper_judges.paper_judges()
    taobao = rows[(rows["paper"] == "Kang et al. 2025") & (rows["dataset"] == "Taobao Serendipity")]
    serendipity_2018 = rows[(rows["paper"] == "Kang et al. 2025") & (rows["dataset"] == "Serendipity-2018")]
    average = rows[(rows["paper"] == "Zhang et al. 2024") & (rows["aspect"] == "average")]
    assert taobao["labels_saved_pct"].notna().all() and (taobao["reading"] == paper_judges.POOLED_ONE_PER_USER).all()
    assert serendipity_2018["labels_saved_pct"].isna().all(), "possibly a mean of per-user correlations"
    assert average["labels_saved_pct"].isna().all(), "a mean of four aspects' correlations is no correlation"
    best = paper_judges.pooled_llm_rows().sort_values("pearson_pct").iloc[-1]
    # Zhang et al.'s Qwen1.5-14B (S) on accuracy, 28.65% at the dataset level: 8.2% of the labels
    assert (best["judge"], best["aspect"]) == ("Qwen1.5-14B (S)", "accuracy")
    assert best["labels_saved_pct"] == pytest.approx(100 * 0.2865**2)


def test_a_papers_interval_is_fishers_at_the_papers_n():
    row = paper_judges.paper_judges().query("judge == 'GPT4 (M)' and aspect == 'persuasiveness'").iloc[0]
    z = np.arctanh(0.2726)
    half = 1.959964 / math.sqrt(2500 - 3)
    assert (row["pearson_ci_low"], row["pearson_ci_high"]) == pytest.approx(
        (100 * np.tanh(z - half), 100 * np.tanh(z + half)))


def book_table() -> pd.DataFrame:
    agreement = pd.DataFrame({
        "method": ["Judge A", "SOG", "Random", "Constant (most frequent level)"], "n": [300, 300, 300, 300],
        "pearson_pct": [12.0, 9.0, 0.1, math.nan], "pearson_ci_low": [1.0, 4.0, -4.0, math.nan],
        "pearson_ci_high": [23.0, 14.0, 4.0, math.nan], "auc": [0.57, 0.56, 0.5, 0.5],
        "auc_ci_low": [0.51, 0.52, 0.46, 0.5], "auc_ci_high": [0.63, 0.6, 0.54, 0.5], "mae": [1.1, 1.2, 1.4, 0.86]})
    kinds = pd.DataFrame({"judge": agreement["method"], "kind": ["reader's LLM", "proxy metric", "Random",
                                                                  "constant"]})
    errors = pd.DataFrame({"judge": ["Judge A", "Judge A", "SOG", "SOG"],
                           "reading": ["calibrated (isotonic)", "constant answer"] * 2, "mae": [0.7, 0.78, 0.77,
                                                                                            0.78]})
    return jt.judge_table(jt.paper_rows(), jt.book_rows(agreement, kinds, errors, "Serendipity-2018"))


def test_the_book_rows_sit_in_their_kind_with_their_ranking_and_calibrated_error():
    table = book_table().query("source == @jt.BOOK_SOURCE").set_index("judge")
    assert table.loc["Judge A", "group"] == jt.YOURS and table.loc["SOG", "group"] == jt.PROXIES
    assert table.loc["Judge A", ["auc", "mae_calibrated", "mae_constant"]].tolist() == [0.57, 0.7, 0.78]
    assert table.loc["Judge A", "labels_saved_pct"] == pytest.approx(1.44)
    # a constant ranks nothing and has no correlation; it is its own calibration
    constant = table.loc["Constant (most frequent level)"]
    assert math.isnan(constant["pearson_pct"]) and constant["auc"] == 0.5 and constant["mae_calibrated"] == 0.86


def test_the_rows_come_in_the_figures_order_of_kinds():
    groups = list(dict.fromkeys(book_table()["group"]))
    assert groups == [group for group in jt.GROUPS if group in groups]


def test_the_headline_figure_is_legible_and_its_words_come_from_the_table():
    from recjudge.compendium import figures

    table = book_table()
    fig = jt.draw_judges(table)
    assert figures.check_figure(fig) == []
    text = jt.figure_markdown(table, "../results/trust_judges/judges.svg")
    best = jt.highest(table, jt.PAPER_LLMS)
    low, high, _ = jt.ceiling_span(table)
    assert text.startswith("```{figure} ../results/trust_judges/judges.svg\n:name: fig-judges\n:alt: ")
    r = best["pearson_pct"] / 100
    assert f"{best['judge']} ({best['aspect']}, {best['source']}), reaches r = {r:.2f} [" in text
    assert f"within the range of the 2 human annotators' r = {low / 100:.2f} to {high / 100:.2f}" in text
    assert "your judges r = 0.12;" in text and "proxies and reference metrics r = " in text
    assert "reach AUC = 0.56 to 0.57, against 0.5" in text
    assert f":alt: {jt.figure_alt(table)}\n" in text


def test_a_table_without_a_kind_draws_the_others():
    table = book_table()
    fig = jt.draw_judges(table[table["group"] != jt.HUMANS])
    assert jt.HUMANS not in [label.get_text() for label in fig.axes[0].get_yticklabels()]
    assert jt.ceiling_span(table[table["group"] != jt.HUMANS]) is None
