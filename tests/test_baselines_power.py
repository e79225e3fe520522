"""The trivial baselines (a constant answer, Random), the papers' tables beside them, power, and the papers' judges
priced in labels: against hand-computed cases and statsmodels."""

import math

import numpy as np
import pandas as pd
import pytest

from recjudge.metaeval import baselines, power
from recjudge.metaeval.papers_vs_baselines import tokutake_baselines, tokutake_table1_vs_baselines
from recjudge.trust.papers_worth import paper_judges_worth

G_COUNTS = {1: 321, 2: 1022, 3: 586, 4: 208, 5: 13}


def test_constant_two_on_tokutakes_printed_g_by_hand():
    table = tokutake_baselines().set_index("baseline")
    mode = table.loc[baselines.MODE]
    assert mode["answer"] == "2"
    # |1-2|·321 + |3-2|·586 + |4-2|·208 + |5-2|·13 over 2,150 answers
    assert mode["mae"] == pytest.approx((321 + 586 + 2 * 208 + 3 * 13) / 2150)
    assert round(mode["mae"], 3) == 0.633  # 1,362 / 2,150 = 0.63349 (0.634 when rounded from 0.6335)
    # three classes: 1 and 2 are "negative", as is 2
    assert mode["accuracy_pct"] == pytest.approx(100 * (321 + 1022) / 2150)
    assert round(mode["accuracy_pct"], 1) == 62.5
    assert math.isnan(mode["pearson_pct"]) and "constant" in mode["pearson_note"]


def test_random_on_tokutakes_g_is_the_exact_expectation():
    rnd = tokutake_baselines().set_index("baseline").loc[baselines.RANDOM]
    # a uniform draw on 1..5 lands in the negative class 2/5, neutral 1/5, positive 2/5 of the time
    assert rnd["accuracy_pct"] == pytest.approx(100 * ((321 + 1022) * 0.4 + 586 * 0.2 + (208 + 13) * 0.4) / 2150)
    truth = np.repeat([1, 2, 3, 4, 5], [321, 1022, 586, 208, 13])
    draws = np.random.default_rng(0).integers(1, 6, size=(400, truth.size))
    assert rnd["mae"] == pytest.approx(np.abs(draws - truth).mean(), abs=0.01)


def test_constants_are_chosen_on_the_other_users_answers():
    # users A (1, 1), B (2), C (5): A's most frequent level among {2, 5} is 2 (a tie goes to the lowest),
    # B's among {1, 1, 5} is 1, C's among {1, 1, 2} is 1; means 3.5, 7/3, 4/3.
    table = baselines.baselines_out_of_fold([1, 1, 2, 5], ["A", "A", "B", "C"]).set_index("baseline")
    assert table.loc[baselines.MODE, "mae"] == pytest.approx((1 + 1 + 1 + 4) / 4)
    assert table.loc[baselines.MODE, "answer"] == "1–2"
    assert table.loc[baselines.MEAN, "mae"] == pytest.approx((2.5 + 2.5 + 1 / 3 + 11 / 3) / 4)
    assert table.loc[baselines.MODE, "accuracy_pct"] == pytest.approx(0.0)
    assert list(table.columns) == [c for c in baselines.COLUMNS if c != "baseline"]


def test_one_user_is_a_clear_error_not_a_crash():
    with pytest.raises(ValueError, match="at least two folds"):
        baselines.baselines_out_of_fold([1, 2, 3], ["A", "A", "A"])


def test_every_table1_row_is_beaten_by_answering_two():
    table = tokutake_table1_vs_baselines()
    assert len(table) == 8  # four prompts × two models
    cot = table[(table["strategy"] == "CoT") & (table["model"] == "GPT-4o-mini")].iloc[0]
    assert (cot["mae"], cot["accuracy_pct"]) == (0.847, 46.98)
    assert table["constant_beats_mae"].all() and table["constant_beats_accuracy"].all()


def test_fisher_z_power_against_known_values():
    assert power.n_for_correlation(0.3) == 85  # ((1.960 + 0.842) / atanh 0.3)² + 3 = 84.9
    assert power.detectable_correlation(85) <= 0.3 < power.detectable_correlation(84)
    assert power.detectable_correlation(2150) == pytest.approx(math.tanh(2.8016 / math.sqrt(2147)), rel=1e-4)
    assert math.isnan(power.detectable_correlation(3))
    # Kang et al.'s RQ2 gain, 11.48% → 20.25% on independent answers: about 1,940 answers
    assert 1930 <= power.n_for_correlation_difference(0.114769, 0.202453) <= 1950


def test_paired_power_matches_statsmodels_and_the_textbook():
    from statsmodels.stats.power import TTestPower

    assert power.n_for_paired_effect(0.5) == 34  # the textbook paired t test: d = 0.5 needs 34 pairs
    d = power.detectable_paired_effect(34)
    assert TTestPower().power(effect_size=d, nobs=34, alpha=0.05) == pytest.approx(0.8, abs=1e-4)
    with pytest.raises(ValueError, match="non-zero"):
        power.n_for_paired_effect(0.0)


def test_papers_judges_are_priced_by_the_rho_squared_rule():
    from recjudge.trust.ppi import labels_worth_by_correlation

    worth = paper_judges_worth()
    gpt4 = worth[(worth["judge"] == "GPT-4") & (worth["prompt"] == "few-shot")
                 & (worth["dataset"] == "Taobao Serendipity")].iloc[0]
    assert gpt4["n"] == 11383 and gpt4["reading"] == "pooled (one answer per user)"
    assert gpt4["labels_saved_pct"] == pytest.approx(gpt4["pearson_pct"] ** 2 / 100)
    assert gpt4["labels_worth_at_n"] == pytest.approx(labels_worth_by_correlation(11383, gpt4["pearson_pct"] / 100))
    assert set(worth["paper"]) == {"Kang et al. 2025", "Zhang et al. 2024"}
    assert {"Table 2", "Table 4", "Table 5"} <= set(worth["table"])
    assert not worth["judge"].str.contains("BLEU|ROUGE|Annotator|Random").any()
    # only pooled correlations are priced: no Serendipity-2018 row of Kang et al., no average over Zhang's aspects
    assert "Serendipity-2018" not in set(worth["dataset"]) and "average" not in set(worth["aspect"])
    assert (worth["labels_saved_pct"] < 9).all()  # every pooled LLM correlation is below 30%
    assert pd.api.types.is_numeric_dtype(worth["detectable_pearson_pct"])


def test_a_sample_is_scored_with_constants_chosen_on_the_rest_of_the_survey():
    # the whole survey: users A (1, 1), B (2), C (5); only B's and C's answers are scored
    table = baselines.baselines_out_of_fold([1, 1, 2, 5], ["A", "A", "B", "C"],
                                            scored=[False, False, True, True]).set_index("baseline")
    assert table.loc[baselines.MODE, "n"] == 2
    assert table.loc[baselines.MODE, "mae"] == pytest.approx((1 + 4) / 2)  # B and C both get 1
    with pytest.raises(ValueError, match="no answer"):
        baselines.baselines_out_of_fold([1, 2], ["A", "B"], scored=[False, False])
