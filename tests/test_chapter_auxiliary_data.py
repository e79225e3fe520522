"""The page of the auxiliary-data chapter (recjudge.chapters.auxiliary_data): the rules that choose its words, its
tables' columns and captions, and its figures, on small frames; and both readings of Tables 4-5
(recjudge.serendipity.auxiliary_data.tables45_readings)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from recjudge.chapters import auxiliary_data as page  # noqa: E402
from recjudge.serendipity import auxiliary_data as aux  # noqa: E402
from recjudge.serendipity import ground_truth as ser  # noqa: E402
from recjudge.serendipity import personality as pers  # noqa: E402

pytestmark = pytest.mark.usefixtures("page_results")


def setting_table(pop_p: float = 0.01, sim_p: float = 0.4) -> pd.DataFrame:
    """NA and two settings: Pop has the highest Pearson and a lower MAE than NA; Sim a higher one."""
    return pd.DataFrame({
        "method": [aux.NA, "Pop", "Sim"], "n": [12, 12, 12],
        "pearson_pct": [5.0, 20.0, -3.0], "pearson_ci_low": [-40.0, -25.0, -50.0],
        "pearson_ci_high": [50.0, 60.0, 45.0],
        "mae": [1.0, 0.9, 1.2], "mae_ci_low": [0.8, 0.7, 1.0], "mae_ci_high": [1.2, 1.1, 1.4],
        "rmse": [1.2, 1.1, 1.5], "rmse_ci_low": [1.0, 0.9, 1.3], "rmse_ci_high": [1.4, 1.3, 1.7],
        "p_pearson_vs_ref": [np.nan, pop_p, sim_p],
    })


def test_setting_findings_count_the_settings_below_the_threshold_and_the_lower_maes():
    significant, mae = page.setting_findings(setting_table())
    assert significant.startswith("With SmolLM2-135M on 12 answers, NA reaches 5.0% [−40.0, 50.0]; the highest "
                                  "setting is Pop with 20.0% [−25.0, 60.0].")  # fmt: minus sign
    assert "1 of 2 settings differ from NA in Pearson at p < 0.05 (Williams), before any correction for the number " \
           "of settings (Pop)." in significant
    assert mae.startswith("1 of 2 settings have a lower MAE than NA (1.00); the best is Pop with 0.90.")
    assert "(+8.8 points of Pearson for its best setting)" in mae  # the paper's 20.2453 - 11.4769


def test_a_p_value_at_the_threshold_is_not_counted_and_no_na_means_no_finding():
    significant, _ = page.setting_findings(setting_table(pop_p=0.05))
    assert "0 of 2 settings differ from NA in Pearson at p < 0.05 (Williams), before any correction for the number " \
           "of settings." in significant
    assert page.setting_findings(setting_table().iloc[1:]) == []


def test_a_judge_that_answered_nothing_here_has_no_finding_and_a_few_answers_are_too_few():
    # A run that asks only a reader's judge leaves the book's judge with 0 answers: no "nan%" sentence
    unanswered = setting_table().assign(n=0, pearson_pct=np.nan, pearson_ci_low=np.nan, pearson_ci_high=np.nan,
                                        mae=np.nan)
    assert page.setting_findings(unanswered) == []
    assert page.setting_findings(setting_table().assign(n=5)) == [
        "SmolLM2-135M's agreement in each setting rests on too few answers (5)."]
    # settings without an MAE are left out of the MAE count, and none at all names no best
    no_mae = setting_table().assign(mae=[1.0, np.nan, np.nan])
    assert page.setting_findings(no_mae)[1].startswith("0 of 0 settings have a lower MAE than NA (1.00). A tiny")


def reader_table(n: int) -> pd.DataFrame:
    return setting_table().assign(n=n, judge="J")


def test_a_readers_finding_gives_each_pearson_its_interval_and_n():
    words = page.reader_finding("J", reader_table(12))
    assert words == ("With the reader's judge J, NA reaches 5.0% [−40.0, 50.0] on 12 answers; the highest setting "
                     "is Pop with 20.0% [−25.0, 60.0], and 1 of 2 settings differ from NA in Pearson at p < 0.05 "
                     "(Williams, uncorrected).")


def test_a_readers_finding_on_a_few_answers_says_too_few_and_one_with_no_pearson_says_none():
    assert page.reader_finding("J", reader_table(5)) == (
        "The reader's judge J has too few answers (5) in a setting to read its agreement.")
    none = reader_table(0).assign(pearson_pct=np.nan)
    assert page.reader_finding("J", none) == "The reader's judge J has no defined Pearson in any setting in this run."


def test_an_integer_reading_on_too_few_answers_has_no_finding():
    assert page.integer_finding(setting_table(), tables45_frame().assign(n=4), pd.DataFrame({aux.NA: [2.0]})) == ""


def fit_frame(curiosity: float, big_five: float) -> pd.DataFrame:
    models = ["curiosity", "big_five", "curiosity + big_five"]
    return pd.DataFrame({"model": models * 2, "kind": ["OLS"] * 3 + ["ordinal logit"] * 3,
                         "explained": [curiosity, big_five, curiosity + big_five, 0.01, 0.02, 0.03]})


def coefs_frame() -> pd.DataFrame:
    terms = ["stretching", "embracing", *pers.BIG_FIVE]
    return pd.DataFrame({"model": "curiosity + big_five", "kind": "ordinal logit", "term": terms,
                         "effect": [1.25, 1.1, 0.9, 1.0, 1.0, 1.0, 1.3],
                         "effect_ci_low": [1.1, 0.9, 0.8, 0.9, 0.9, 0.9, 1.1],
                         "effect_ci_high": [1.4, 1.3, 1.0, 1.1, 1.1, 1.1, 1.5],
                         "p_value": [0.001, 0.2, 0.04, 0.5, 0.5, 0.5, 0.001]})


def test_taobao_finding_calls_both_weak_below_a_tenth_of_the_variance():
    words = page.taobao_finding(coefs_frame(), fit_frame(0.06, 0.04))
    assert "curiosity explains 6.0% of the variance" in words and "both together 10.0%" in words
    assert "In these answers curiosity explains more than the Big-Five" in words
    assert "the Big-Five are not empty: extraversion 0.90, openness 1.30 (odds ratios per sd, p < 0.05)." in words
    assert words.endswith("Both explain little (R² below 10% each): curiosity is a weak signal a judge could use, "
                          "not a strong one.")


def test_taobao_finding_calls_a_tenth_of_the_variance_a_usable_signal_and_says_no_more_when_it_is_not():
    words = page.taobao_finding(coefs_frame(), fit_frame(0.05, page.WEAK_SIGNAL_R2))
    assert "In these answers curiosity explains no more than the Big-Five" in words
    assert words.endswith("At least one of them explains a tenth of the variance or more: a signal a judge could use.")


def tables45_frame() -> pd.DataFrame:
    return pd.DataFrame({"method": [aux.NA, f"{aux.NA}{ser.INTEGER}"], "n": [12, 12], "pearson_pct": [5.0, 7.5],
                         "mae": [1.0, 1.4], "rmse": [1.2, 1.6], "best_setting": ["", ""]})


def test_integer_finding_says_when_every_answer_gets_one_score():
    one = pd.DataFrame({aux.NA: [3.0, 3.0, np.nan]})
    words = page.integer_finding(setting_table(), tables45_frame(), one)
    assert "NA gives every one of the 12 answers the score 3, so it has no correlation, and its MAE is 1.40, " \
           "against 1.00 for the expected score" in words
    assert words.endswith("the paper's MAE (0.97 for NA).")
    several = page.integer_finding(setting_table(), tables45_frame(), pd.DataFrame({aux.NA: [2.0, 3.0]}))
    assert "NA reaches 7.5% and its MAE is 1.40" in several


def test_findings_leave_out_what_did_not_run():
    table, readers = setting_table(), pd.DataFrame(columns=["method", "judge"])
    integers = pd.DataFrame({aux.NA: [2.0, 3.0]})
    without = page.findings(table, readers, integers, None, synthetic=False).data.splitlines()
    assert len(without) == 2  # no Tables 4-5 and no Taobao: the two setting bullets only
    everything = page.findings(table, readers, integers, tables45_frame(), False, coefs_frame(),
                               fit_frame(0.06, 0.04)).data.splitlines()
    assert len(everything) == 4 and everything[3].startswith("- Taobao: ")
    synthetic = page.findings(table, readers, integers, tables45_frame(), True, coefs_frame(), fit_frame(0.06, 0.04))
    assert len(synthetic.data.splitlines()) == 3


def test_the_best_setting_is_called_a_history_length_or_a_datum():
    assert page.best_setting_kind("k=2") == "a history length (Kang et al.'s quantity of interaction data)"
    assert page.best_setting_kind("Pop + Sim") == "an auxiliary datum"


def test_the_unsupported_analyses_table_keeps_its_columns_and_caption():
    table = page.show_not_supported("chapter")
    assert table.caption == "Parts of Kang et al.'s RQ2 and RQ3 the public data cannot support"
    assert list(table.data.columns) == ["Analysis", "Reason"] and len(table.data) == len(aux.NOT_SUPPORTED)


def test_the_history_length_figure_is_drawn_with_na_and_its_sweep_saved(tmp_path):
    table = pd.concat([setting_table(), setting_table().iloc[[0]].assign(method="k=1")], ignore_index=True)
    page.draw_history_length("chapter", table, [aux.NA, "Pop", "k=1"])
    sweep = pd.read_csv(tmp_path / "results" / "chapter" / "length_sweep.csv")
    assert sweep["method"].tolist() == ["k=1", aux.NA] and sweep["k"].tolist() == [1, 10]


def test_no_history_length_draws_no_figure_and_saves_no_sweep(tmp_path):
    page.draw_history_length("chapter", setting_table(), [aux.NA, "Pop"])
    assert not (tmp_path / "results" / "chapter" / "length_sweep.csv").exists()
    assert plt.get_fignums() == []


def test_tables45_readings_add_the_integer_reading_after_the_expected_score():
    rng = np.random.default_rng(0)
    n = 24
    rows = pd.DataFrame({"truth": rng.integers(1, 6, n).astype(float), "user_id": np.repeat(np.arange(12), 2)})
    expected = pd.DataFrame({aux.NA: rows["truth"] + rng.normal(0, 2, n), "Pop": rows["truth"] + rng.normal(0, 1, n)})
    scores = expected.assign(truth=rows["truth"], user_id=rows["user_id"])
    names = [aux.NA, "Pop"]
    table = ser.agreement_table(scores, names, reference=aux.NA, n_boot=20, seed=0, groups="user_id")
    only, held_only = aux.tables45_readings(table, scores, None, rows, names, n_boot=20, n_splits=2, seed=0)
    assert not only["method"].str.endswith(ser.INTEGER).any()
    assert set(held_only["reading"]) == {"expected score"}
    integers = expected.round().clip(1, 5)
    both, held = aux.tables45_readings(table, scores, integers, rows, names, n_boot=20, n_splits=2, seed=0)
    assert both["method"].tolist()[:len(only)] == only["method"].tolist()
    integer_na = both.set_index("method").loc[f"{aux.NA}{ser.INTEGER}"]
    assert integer_na["mae"] == pytest.approx((integers[aux.NA] - rows["truth"]).abs().mean())
    assert held["reading"].tolist() == ["expected score"] * 2 + ["most likely score token"] * 2


def test_the_held_out_rows_of_tables_4_5_on_a_few_answers_a_half_show_too_few():
    ours = pd.DataFrame({"method": ["none (NA)", "Auxiliary Data", "Auxiliary Data, held out",
                                    "none (NA), same held-out halves"],
                         "n": [12, 12, 5, 5], "n_max": [12, 12, 6, 6], "pearson_pct": [10.8, 38.3, 0.8, 17.7],
                         "mae": [0.58, 0.56, 0.60, 0.61], "rmse": [0.7, 0.7, 0.73, 0.73],
                         "best_setting": ["", "k=1", "chosen per split (4 distinct cells in 20 splits)", ""]})
    shown = page.show_tables45("aux", ours, pd.DataFrame({"split": [0]}), 11, 20)._repr_html_()
    assert shown.count("too few answers (5–6 per held-out half)") == 6
    assert ">0.8<" not in shown and ">17.7<" not in shown and ">38.3<" in shown
    assert "rows marked" in shown and "{ser." not in shown, "the caption's f-string is formatted"
