"""The one table renderer: numbers formatted by kind, missing values as a dash, the paper's number beside ours."""

import re

import numpy as np
import pandas as pd
import pytest

from recjudge.compendium.tables import (
    MISSING,
    PAPER_BESIDE_OURS_CLASS,
    TABLE_CLASS,
    Format,
    as_format,
    correlation,
    count,
    error,
    format_table,
    header_label,
    mean_sd,
    number,
    p_value,
    paper_beside_ours,
    percent,
    text,
)


def cells(table, column):
    return list(table.data[column])


# --- formatting by kind -----------------------------------------------------------------------------------------


def test_correlation_from_a_fraction_is_shown_in_percent():
    table = format_table(pd.DataFrame({"pearson": [0.1234, -0.05, 1.0]}), {"pearson": correlation()})
    assert cells(table, "Pearson (%)") == ["12.3", "-5.0", "100.0"]


def test_correlation_already_in_percent_is_not_scaled_again():
    table = format_table(pd.DataFrame({"pearson": [12.345]}), {"pearson": correlation(2, scale="percent")})
    assert cells(table, "Pearson (%)") == ["12.35"]
    assert cells(format_table(pd.DataFrame({"share": [0.5]}), {"share": percent(0)}), "Share (%)") == ["50"]


def test_errors_counts_and_plain_numbers():
    df = pd.DataFrame({"mae": [0.12345, 2.0], "rmse": [1.5, 0.0001], "n_users": [1234567, 12], "ratio": [1.005, 3]})
    table = format_table(df, {"mae": error(), "rmse": error(2), "n_users": count(), "ratio": number(1)})
    assert cells(table, "MAE") == ["0.123", "2.000"]
    assert cells(table, "RMSE") == ["1.50", "0.00"]
    assert cells(table, "Number of users") == ["1,234,567", "12"]
    assert cells(table, "Ratio") == ["1.0", "3.0"]


def test_counts_stored_as_floats_are_integers():
    table = format_table(pd.DataFrame({"n": [3.0, np.nan, 12000.0]}), {"n": "count"})
    assert cells(table, "n") == ["3", MISSING, "12,000"]


def test_p_values_are_readable():
    table = format_table(pd.DataFrame({"p": [1.9e-16, 0.0004, 0.0123, 0.5]}), {"p": p_value()})
    assert cells(table, "p") == ["< 0.001", "< 0.001", "0.012", "0.500"]
    table = format_table(pd.DataFrame({"p": [0.004]}), {"p": p_value(threshold=0.01)})
    assert cells(table, "p") == ["< 0.01"]


def test_tiny_floats_are_zero_at_the_precision_and_never_negative_zero():
    table = format_table(pd.DataFrame({"x": [1.9e-16, -1.9e-16, -0.0001]}), {"x": number(2)})
    assert cells(table, "X") == ["0.00", "0.00", "0.00"]


@pytest.mark.parametrize("missing", [np.nan, None, pd.NA, "", "n/a"])
def test_missing_values_are_an_en_dash(missing):
    df = pd.DataFrame({"method": ["a", "b"], "pearson": pd.Series([0.5, missing], dtype=object),
                       "n": pd.Series([1, missing], dtype=object)})
    table = format_table(df, {"pearson": correlation(), "n": count()})
    assert cells(table, "Pearson (%)") == ["50.0", "–"]
    assert cells(table, "n") == ["1", "–"]


def test_nullable_integer_columns_with_na():
    table = format_table(pd.DataFrame({"n_items": pd.array([1000, None], dtype="Int64")}))
    assert cells(table, "Number of items") == ["1,000", MISSING]


def test_format_names_and_unknown_formats():
    assert as_format("correlation") == Format("percent")
    assert as_format("MAE").kind == "error"
    with pytest.raises(ValueError, match="unknown format"):
        as_format("fancy")
    with pytest.raises(KeyError, match="nope"):
        format_table(pd.DataFrame({"a": [1]}), {"nope": "count"})


def test_columns_without_a_format_default_by_dtype():
    table = format_table(pd.DataFrame({"name": ["x", "y"], "k": [10, 20], "score": [0.123456, 2.0]}))
    assert list(table.data.columns) == ["Name", "k", "Score"]
    assert cells(table, "k") == ["10", "20"] and cells(table, "Score") == ["0.12", "2.00"]


# --- headers, captions, notes ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name, header", [
    ("n_users", "Number of users"), ("llm_mae", "LLM MAE"), ("ground_truth", "Ground truth"),
    ("pearson", "Pearson"), ("Already Fine", "Already Fine"), ("SOG", "SOG"), ("k", "k"), ("rbo_at_10", "RBO at 10"),
])
def test_headers_in_words(name, header):
    assert header_label(name) == header


def test_labels_override_headers_and_no_snake_case_is_left():
    df = pd.DataFrame({"prompt_strategy": ["a", "b"], "mean_score": [1.0, 2.0]})
    table = format_table(df, labels={"prompt_strategy": "Prompt"})
    assert list(table.data.columns) == ["Prompt", "Mean score"]
    assert "_" not in "".join(table.data.columns)


def test_a_label_repeated_in_every_row_goes_into_the_caption():
    df = pd.DataFrame({"dataset": ["Serendipity-2018"] * 3, "method": ["a", "b", "c"], "mae": [1.0, 2.0, 3.0]})
    table = format_table(df, {"mae": error()}, caption="Errors by method")
    assert list(table.data.columns) == ["Method", "MAE"]
    assert table.caption == "Errors by method. Dataset: Serendipity-2018."
    assert "<caption>Errors by method. Dataset: Serendipity-2018.</caption>" in table.to_html()
    # ... but not from a one-row table, and not when asked not to
    assert "Dataset" in format_table(df.head(1)).data.columns
    assert "Dataset" in format_table(df, lift_constant=False).data.columns


def test_long_tables_are_cut_and_point_to_the_full_csv():
    df = pd.DataFrame({"item": range(50), "score": np.linspace(0, 1, 50)})
    table = format_table(df, max_rows=10, full_table=("normalised_surprise", "table2"))
    assert len(table.data) == 10
    assert table.note == "Showing 10 of 50 rows. Full table: results/normalised_surprise/table2.csv"
    assert ('Full table: <a href="../../results/normalised_surprise/table2.csv">results/normalised_surprise/table2.csv'
            '</a>') in table._repr_html_()  # a link from the chapter's page to the CSV published beside the book
    assert format_table(df.head(3), full_table=("c", "t")).note == "Full table: results/c/t.csv"


def test_a_tables_own_style_fades_no_text(kang_like):
    """The style a table carries into any page (the book, Jupyter) shows its notes and differences at the text's full
    colour: an opacity takes them below WCAG AA's 4.5:1 contrast wherever they are shown."""
    ours, paper = kang_like
    table = paper_beside_ours(ours, paper, keys=["dataset", "method"], metrics=["mae"], difference=True,
                              full_table=("c", "t"))
    html = table._repr_html_()
    assert "Full table" in html and "diff" in html
    assert "opacity" not in html


# --- paper beside ours -----------------------------------------------------------------------------------------


@pytest.fixture
def kang_like():
    ours = pd.DataFrame({"dataset": ["Serendipity-2018"] * 3, "method": ["SNPR", "SOG", "LLM"],
                         "pearson": [0.0512, 0.1234, 1.9e-16], "mae": [1.111, 0.5, np.nan],
                         "n_pairs": [1200, 1200, 80]})
    paper = pd.DataFrame({"dataset": ["Serendipity-2018"] * 3, "method": ["SOG", "SNPR", "PURS"],
                          "pearson": [10.0, 6.5, 3.25], "mae": [0.45, 1.2, 2.0]})
    return ours, paper


def test_paper_beside_ours_joins_each_metric_side_by_side(kang_like):
    ours, paper = kang_like
    table = paper_beside_ours(ours, paper, keys=["dataset", "method"],
                              metrics={"pearson": correlation(paper_scale="percent"), "mae": error(2)})
    columns = list(table.data.columns)
    assert columns == [("Method", ""), ("Pearson (%)", "paper"), ("Pearson (%)", "ours"), ("MAE", "paper"),
                       ("MAE", "ours")]
    rows = {row[("Method", "")]: row for row in table.data.to_dict("records")}
    # the paper's order, then our rows the paper does not have
    assert list(rows) == ["SOG", "SNPR", "PURS", "LLM"]
    assert (rows["SOG"][("Pearson (%)", "paper")], rows["SOG"][("Pearson (%)", "ours")]) == ("10.0", "12.3")
    assert (rows["SNPR"][("Pearson (%)", "paper")], rows["SNPR"][("Pearson (%)", "ours")]) == ("6.5", "5.1")
    assert (rows["SNPR"][("MAE", "paper")], rows["SNPR"][("MAE", "ours")]) == ("1.20", "1.11")
    assert (rows["PURS"][("Pearson (%)", "ours")], rows["PURS"][("MAE", "ours")]) == (MISSING, MISSING)
    assert (rows["LLM"][("Pearson (%)", "paper")], rows["LLM"][("Pearson (%)", "ours")]) == (MISSING, "0.0")
    assert table.caption == "Dataset: Serendipity-2018."
    order_ours = paper_beside_ours(ours, paper, keys=["dataset", "method"], metrics=["mae"], order="ours")
    assert list(order_ours.data[("Method", "")]) == ["SNPR", "SOG", "LLM", "PURS"]


def test_the_difference_column_is_ours_minus_the_paper_in_shown_units(kang_like):
    ours, paper = kang_like
    table = paper_beside_ours(ours, paper, keys="method",
                              metrics={"pearson": correlation(paper_scale="percent"), "mae": error(2),
                                       "n_pairs": count()}, difference=["pearson", "mae"])
    rows = {row[("Method", "")]: row for row in table.data.to_dict("records")}
    assert rows["SOG"][("Pearson (%)", "Δ")] == "+2.3"      # 12.34 - 10.0
    assert rows["SNPR"][("Pearson (%)", "Δ")] == "-1.4"     # 5.12 - 6.5
    assert rows["SOG"][("MAE", "Δ")] == "+0.05"
    assert rows["PURS"][("MAE", "Δ")] == MISSING and rows["LLM"][("Pearson (%)", "Δ")] == MISSING
    # a metric only we report has only our column, and no difference
    assert [c for c in table.data.columns if c[0] == "Number of pairs"] == [("Number of pairs", "ours")]
    assert rows["SOG"][("Number of pairs", "ours")] == "1,200"
    same = paper_beside_ours(pd.DataFrame({"m": ["a"], "x": [0.5]}), pd.DataFrame({"m": ["a"], "x": [0.5]}),
                             keys="m", metrics={"x": number(1)}, difference=True)
    assert same.data[("X", "Δ")].tolist() == ["0.0"]


def test_no_difference_for_p_values_and_unknown_difference_metrics(kang_like):
    ours, paper = kang_like
    ours, paper = ours.assign(p=[0.2, 0.0001, 0.5]), paper.assign(p=[0.01, 0.3, 0.04])
    table = paper_beside_ours(ours, paper, keys="method", metrics={"p": p_value()}, difference=True)
    assert [c[1] for c in table.data.columns if c[0] == "p"] == ["paper", "ours"]
    with pytest.raises(KeyError, match="rmse"):
        paper_beside_ours(ours, paper, keys="method", metrics={"mae": error()}, difference=["rmse"])


def test_long_form_input_is_pivoted():
    ours = pd.DataFrame({"method": ["a", "a", "b", "b"], "metric": ["pearson", "mae"] * 2,
                         "value": [0.2, 1.0, 0.3, 2.0]})
    paper = pd.DataFrame({"method": ["b", "a"], "metric": ["pearson", "pearson"], "value": [25.0, 15.0]})
    table = paper_beside_ours(ours, paper, keys="method", long=("metric", "value"),
                              metrics={"pearson": correlation(paper_scale="percent"), "mae": error()}, difference=True)
    rows = {row[("Method", "")]: row for row in table.data.to_dict("records")}
    assert list(rows) == ["b", "a"]
    assert (rows["a"][("Pearson (%)", "paper")], rows["a"][("Pearson (%)", "ours")],
            rows["a"][("Pearson (%)", "Δ")]) == ("15.0", "20.0", "+5.0")
    assert rows["b"][("MAE", "ours")] == "2.000"


def test_keys_of_different_dtypes_still_join():
    ours = pd.DataFrame({"k": [10, 20], "x": [1.0, 2.0]})
    paper = pd.DataFrame({"k": ["10", "20"], "x": [1.5, 2.5]})
    table = paper_beside_ours(ours, paper, keys="k", metrics={"x": number(1)})
    assert table.data[("k", "")].tolist() == ["10", "20"]
    assert table.data[("X", "ours")].tolist() == ["1.0", "2.0"]
    assert table.data[("X", "paper")].tolist() == ["1.5", "2.5"]


def test_duplicate_keys_and_missing_columns_are_errors(kang_like):
    ours, paper = kang_like
    with pytest.raises(ValueError, match="several rows"):
        paper_beside_ours(pd.concat([ours, ours]), paper, keys="method", metrics=["mae"])
    with pytest.raises(KeyError, match="no key column"):
        paper_beside_ours(ours, paper, keys="model", metrics=["mae"])
    with pytest.raises(KeyError, match="neither table"):
        paper_beside_ours(ours, paper, keys="method", metrics=["rmse"])


def test_html_is_compact_classed_and_free_of_nan_and_scientific_notation(kang_like):
    ours, paper = kang_like
    ours = ours.assign(p=[1.9e-16, 3e-5, np.nan], tiny=[1.9e-16, -2e-12, pd.NA])
    paper = paper.assign(p=[np.nan, 0.2, 1e-9], tiny=[np.nan, 1e-20, 0.0])
    table = paper_beside_ours(ours, paper, keys=["dataset", "method"],
                              metrics={"pearson": correlation(paper_scale="percent"), "mae": error(),
                                       "n_pairs": count(), "p": p_value(), "tiny": number(2)},
                              difference=True, caption="Table 2 beside ours", full_table=("proxy_vs_llm", "table2"))
    page = table._repr_html_()
    shown = re.sub(r"<[^>]+>", " ", re.sub(r"<style>.*?</style>", "", page))  # the text a reader sees
    for bad in ("NaN", "nan", "<NA>", "None", "inf"):
        assert bad not in shown, bad
    assert not re.search(r"\de[-+]?\d", shown), "scientific notation"
    assert "e-" not in " ".join(table.data.to_numpy().ravel()), "scientific notation in a cell"
    assert f'class="{TABLE_CLASS} {PAPER_BESIDE_OURS_CLASS}"' in page
    assert "<th" in page and "index" not in page.lower().replace("z-index", "")
    assert 'colspan="3" scope="colgroup">Pearson (%)</th>' in page
    assert 'rowspan="2" scope="col">Method</th>' in page
    assert 'Full table: <a href="../../results/proxy_vs_llm/table2.csv">' in page
    assert "Table 2 beside ours. Dataset: Serendipity-2018." in repr(table)


def test_html_escapes_cell_text():
    table = format_table(pd.DataFrame({"name": ["<b>x</b>", "a & b"]}))
    assert "&lt;b&gt;x&lt;/b&gt;" in table.to_html() and "a &amp; b" in table.to_html()
    assert PAPER_BESIDE_OURS_CLASS not in table.to_html()


def test_text_columns_are_shown_as_they_are():
    table = format_table(pd.DataFrame({"verdict": ["holds", "fails"], "x": [1, 2]}), {"verdict": text(label="Claim")})
    assert cells(table, "Claim") == ["holds", "fails"]


def test_text_columns_keep_numeric_looking_text_as_written():
    import pandas as pd

    from recjudge.compendium.tables import format_table, text

    table = format_table(pd.DataFrame({"k": ["2", "1,000", "s4, s5"], "v": [1, 2, 3]}), {"k": text()})
    assert table.data.iloc[:, 0].tolist() == ["2", "1,000", "s4, s5"]


def test_prose_counts_and_spans():
    from recjudge.compendium.pages import count, span

    assert count(1, "user") == "1 user" and count(3, "user") == "3 users" and count(1024, "reply", "replies") == \
        "1,024 replies"
    assert span(0.001, 0.004) == "0.00" and span(0.1, 0.48) == "0.10–0.48" and span(-0.5, 0.25, 1) == "\u22120.5–0.2"


def test_mean_sd_in_percent_points_by_default():
    frame = pd.DataFrame({"ndcg_mean": [0.1234, 0.5], "ndcg_std": [0.01, float("nan")]})
    assert mean_sd(frame, "ndcg") == ["12.34 ± 1.00", "50.00 ± nan"]
    assert mean_sd(frame, "ndcg", decimals=3, scale=1) == ["0.123 ± 0.010", "0.500 ± nan"]


def test_a_chapter_numbers_its_captioned_tables_in_the_order_it_shows_them():
    df = pd.DataFrame({"method": ["a", "b"], "mae": [0.5, 0.25]})
    first, second = format_table(df, caption="First"), format_table(df, caption="Second")
    uncaptioned = format_table(df)
    second_html, first_html = second._repr_html_(), first._repr_html_()
    shown_again = second._repr_html_()
    number = int(re.search(r"Table (\d+)\. </span>Second", second_html).group(1))
    assert f"Table {number + 1}. </span>First" in first_html
    assert shown_again == second_html  # shown twice, numbered once
    assert "caption-number" not in uncaptioned._repr_html_() and uncaptioned.number is None
    assert "caption-number" not in format_table(df, caption="Plain").to_html()  # only what a notebook shows


def test_tables_of_a_numbered_chapter_carry_its_number_like_its_figures(monkeypatch, tmp_path):
    from recjudge.compendium import tables, toc
    from recjudge.paths import RUN_NAME_ENV

    toc_path = tmp_path / "_toc.yml"
    toc_path.write_text("format: jb-book\nroot: book/intro\nparts:\n"
                   "  - caption: About\n    chapters:\n      - file: book/notebooks/at_a_glance\n"
                   "  - caption: Data\n    numbered: true\n    chapters:\n      - file: book/notebooks/data_tour\n"
                   "  - caption: I\n    numbered: true\n    chapters:\n      - file: book/notebooks/first\n"
                   "      - file: book/notebooks/second\n", encoding="utf-8")
    assert toc.chapter_numbers(toc_path) == {"book/notebooks/data_tour": 1, "book/notebooks/first": 2,
                                             "book/notebooks/second": 3}
    monkeypatch.setattr("recjudge.paths.project_root", lambda: tmp_path)
    monkeypatch.setenv(RUN_NAME_ENV, "second")
    tables.chapter_number.cache_clear()
    try:
        html_text = format_table(pd.DataFrame({"a": [1]}), caption="Sizes")._repr_html_()
        assert re.search(r"Table 3\.\d+\. </span>Sizes", html_text)
        monkeypatch.setenv(RUN_NAME_ENV, "at_a_glance")  # an unnumbered page keeps plain numbers
        tables.chapter_number.cache_clear()
        assert re.search(r"Table \d+\. </span>Sizes", format_table(pd.DataFrame({"a": [1]}), caption="Sizes")
                         ._repr_html_())
    finally:
        tables.chapter_number.cache_clear()


def test_an_audit_table_is_collapsed_under_its_caption_and_takes_no_number():
    df = pd.DataFrame({"fold": [1, 2], "users": [10, 12]})
    audit = format_table(df, caption="Fold sizes", full_table=("chapter", "folds"), audit=True)
    html_text = audit._repr_html_()
    assert html_text.count("<details") == 1 and "<summary>Fold sizes</summary>" in html_text
    assert "caption-number" not in html_text and audit.number is None
    assert html_text.index("<table") > html_text.index("<summary>") and html_text.rstrip().endswith("</details>")
    assert 'href="../../results/chapter/folds.csv"' in html_text  # the full table stays linked
    shown = paper_beside_ours(pd.DataFrame({"k": ["a"], "m": [1.0]}), pd.DataFrame({"k": ["a"], "m": [2.0]}), "k",
                              ["m"], caption="Beside", audit=True)._repr_html_()
    assert "<summary>Beside</summary>" in shown and "caption-number" not in shown


# --- words, not identifiers -------------------------------------------------------------------------------------

SNAKE_CASE_HEADER = re.compile(r"^[a-z]+(_[a-z0-9]+)+$")


def _header_cells(table):
    return re.findall(r"<th[^>]*>(.*?)</th>", table.to_html())


def test_no_header_cell_is_a_snake_case_identifier():
    frame = pd.DataFrame({"definition": ["novelty_unexpectedness_s1_s4_s5_s6"], "history_dissimilarity": [0.5],
                          "kendall_tau (p = 0.5)": [0.1], "mean_rank_gap": [2], "n_lists_scored": [3]})
    shown = format_table(frame, caption="c")
    beside = paper_beside_ours(frame, frame, keys="definition", metrics=["history_dissimilarity", "mean_rank_gap"])
    for table in (shown, beside):
        headers = _header_cells(table)
        assert headers
        assert not [h for h in headers if SNAKE_CASE_HEADER.match(h)], headers
    assert "Kendall τ-b (p = 0.5)" in _header_cells(shown)


def test_row_labels_holding_identifiers_are_shown_in_words():
    frame = pd.DataFrame({"definition": ["novelty_unexpectedness_s1_s4_s5_s6", "broadening_s8"],
                          "inputs": ["curiosity + big_five", "SerenPrompt_1"], "r": [0.1, 0.2]})
    shown = format_table(frame)
    assert cells(shown, "Definition") == ["Novelty and unexpectedness, s1 and s4–s6", "Broadened preferences, s8"]
    assert cells(shown, "Inputs") == ["curiosity + Big Five", "SerenPrompt_1"]  # a name with capitals is a name
    beside = paper_beside_ours(frame, frame, keys="definition", metrics={"r": "number"})
    assert list(beside.data[("Definition", "")]) == cells(shown, "Definition")
    assert "novelty_unexpectedness_s1_s4_s5_s6" in list(frame["definition"])  # the data keep their identifiers


def test_every_ground_truth_definition_and_proxy_component_has_words():
    from recjudge.compendium.tables import DISPLAY_NAMES
    from recjudge.serendipity.ground_truth import GROUND_TRUTH_DEFINITIONS
    from recjudge.serendipity.proxies import COMPONENTS

    identifiers = [n for n in [*GROUND_TRUTH_DEFINITIONS, *COMPONENTS] if SNAKE_CASE_HEADER.match(n)]
    assert identifiers
    assert [n for n in identifiers if n not in DISPLAY_NAMES] == []


def test_an_appendix_pages_tables_are_lettered_not_numbered_like_a_chapter(monkeypatch, tmp_path):
    from recjudge.compendium import tables, toc
    from recjudge.paths import RUN_NAME_ENV

    toc_path = tmp_path / "_toc.yml"
    toc_path.write_text("format: jb-book\nroot: book/intro\nparts:\n"
                        "  - caption: I\n    numbered: true\n    chapters:\n      - file: book/notebooks/first\n"
                        "  - caption: 'Appendix: on a synthetic survey'\n    chapters:\n"
                        "      - file: book/notebooks/first_synthetic\n      - file: book/notebooks/second_synthetic\n"
                        "  - caption: Back matter\n    chapters:\n      - file: book/glossary\n", encoding="utf-8")
    assert toc.appendix_letters(toc_path) == {"book/notebooks/first_synthetic": "A",
                                              "book/notebooks/second_synthetic": "B"}
    assert toc.chapter_labels(toc_path)["book/notebooks/first"] == 1
    monkeypatch.setattr("recjudge.paths.project_root", lambda: tmp_path)
    monkeypatch.setenv(RUN_NAME_ENV, "second_synthetic")
    tables.chapter_number.cache_clear()
    try:
        html_text = format_table(pd.DataFrame({"a": [1]}), caption="Sizes")._repr_html_()
        assert re.search(r"Table B\.\d+\. </span>Sizes", html_text)
    finally:
        tables.chapter_number.cache_clear()


def test_a_line_break_in_a_label_breaks_the_rendered_header_there():
    from recjudge.compendium.tables import format_table

    html = format_table(pd.DataFrame({"a": [0.5]}), {"a": "number"}, labels={"a": "MR1:\nMultiply"}).to_html()
    assert "MR1:<br>Multiply</th>" in html


def test_explanation_systems_and_bleu_rouge_settings_are_shown_in_words():
    from recjudge.compendium.tables import display_name, format_table

    assert display_name("attr_personal") == "Movie attribute (personalised)"
    assert display_name("tokenize=zh, smooth_method=none") == "sacreBLEU zh tokens, no smoothing"
    assert display_name("a, b") == "a, b"  # a comma in prose is left alone
    shown = format_table(pd.DataFrame({"setting": ["tokenizer=jieba", "tokenize=char, smooth_method=exp"],
                                       "system": ["attr_random", "item"]}))
    assert shown.data["Setting"].tolist() == ["jieba word tokens", "character tokens, exponential smoothing"]
    assert shown.data["System"].tolist() == ["Random movie attribute", "item"]
