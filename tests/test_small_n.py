"""One rule for small n, everywhere: a number on fewer answers than this book's minimum is shown as "too few answers
(n)" in the headline table, the claims' key numbers, the chapters' findings and their tables."""

from __future__ import annotations

import pandas as pd

from recjudge.chapters import explanation_evaluators as explanation_page
from recjudge.compendium import claim_evidence, claim_readers, headline_numbers, pages
from recjudge.explanations import evaluators as ex

MIN = pages.MIN_ANSWERS


def test_the_rule_reads_n_against_the_one_minimum():
    assert headline_numbers.MIN_ANSWERS == MIN
    assert pages.unless_too_few("r = 0.3", MIN - 1) == f"too few answers ({MIN - 1})"
    assert pages.unless_too_few("r = 0.3", MIN) == "r = 0.3"
    assert pages.unless_too_few("r = 0.3", None) == "r = 0.3" and pages.unless_too_few("r = 0.3", float("nan")) \
        == "r = 0.3"
    assert pages.too_few_text(5, detail="5–6 per half") == "too few answers (5–6 per half)"


def test_an_undefined_number_is_said_in_words_never_typeset():
    from recjudge.compendium.claim_intervals import fisher_pct, with_interval

    nan = float("nan")
    assert pages.fmt(nan) == pages.UNDEFINED == "undefined" and pages.fmt(-0.04) == "0.0" and pages.fmt(-1.25, 2) \
        == "\u22121.25"
    assert pages.percent(12.34) == "12.3%" and pages.percent(nan) == "undefined"
    assert pages.span(nan, nan) == "undefined"
    assert with_interval(nan, 1.0, 2.0, unit="%") == "undefined" and with_interval(5.0, nan, nan, unit="%") == "5.0%"
    assert fisher_pct(nan, 50) == "undefined"


def held_out(n: int, n_max: int) -> claim_evidence.Loader:
    table = pd.DataFrame({"method": ["Multi-LLM & Auxiliary Data, held out"], "pearson_pct": [-18.1],
                          "cell": ["chosen per split (13 distinct cells in 20 splits)"], "n": [n], "n_max": [n_max]})
    return lambda chapter, name: table


def test_the_ensembles_held_out_key_number_on_a_few_answers_per_half_is_too_few():
    # the tiny judges' held-out number is context beside the paper's: on 5–6 answers a half it is no number at all
    few = claim_readers._ensembles(held_out(5, 6))
    assert "too few answers (5–6 per held-out half)" in few.ours and few.n == 5
    assert "−18.1%" not in few.ours + few.key
    assert "−18.1%" in claim_readers._ensembles(held_out(40, 41)).ours


def reevaluation(n_users: str) -> claim_evidence.Loader:
    table3 = pd.DataFrame({"recommender": ["BPRMF", "SASRec", "Random"], "avg_score_mean": [1.81, 1.91, 1.87],
                           "n_users": n_users, "judge": claim_readers.BOOK_JUDGE_MODEL})
    alignment = pd.DataFrame({"dataset": "ML-1M", "recommender": ["BPRMF", "SASRec"], "avg_score": [2.378, 2.339],
                              "g_mean": 2.335})
    printed = pd.DataFrame({"dataset": "ML-1M", "recommender": ["BPRMF", "SASRec"], "avg_score": [2.378, 2.339],
                            "p_ser": [8.51, 5.95]})
    return lambda chapter, name: {"paper_claim_avg_score_vs_g": alignment,
                                  "paper_table3_ml1m": printed}.get(name, table3)


def test_the_reevaluations_scores_on_one_judged_user_per_fold_are_too_few():
    few = claim_readers._serendipity_ranking(reevaluation("1/1/1"))
    assert few.key == "too few judged users (1 per fold)" and few.n == 3
    assert "1.81" not in few.ours, "the claim's record prints no number on 3 judged users either"
    assert "1.81–1.91" in claim_readers._serendipity_ranking(reevaluation("4/4/5")).key
    assert "BPRMF 2.378" in few.paper_numbers, "the paper's printed Table 3, not a description of it"


def test_the_avg_score_claim_is_keyed_by_the_papers_own_numbers_not_by_our_few_users():
    # The paper's own Table 1 and printed g decide this claim, so its key number is theirs; ours keeps its n.
    few = claim_readers._avg_score_vs_g(reevaluation("1/1/1"))
    assert few.n == 3 and "too few judged users (1 per fold)" in few.ours and "1.81" not in few.ours + few.key
    assert "1.81–1.91" in claim_readers._avg_score_vs_g(reevaluation("4/4/5")).ours
    assert "for every item matches g's mean" in few.key


def test_an_explanation_row_on_three_texts_shows_too_few_not_a_correlation():
    frame = pd.DataFrame({"evaluator": ["few", "enough"], "dataset": [89.73, 10.0], "user": [89.73, float("nan")],
                          "pair": [100.0, 20.0], "scored_texts": [3, 46]})
    shown = explanation_page.levels_unless_too_few(frame, "scored_texts").set_index("evaluator")
    assert (shown.loc["few", ["dataset", "user", "pair"]] == "too few texts (3)").all()
    assert shown.loc["enough"].tolist()[:3] == ["10.00", "—", "20.00"]


def test_an_explanation_rows_levels_are_shown_in_the_per_cent_the_aspect_average_gives():
    # The tables pass ex.average_over_aspects (already in %) to this rule: 0.3 prints as 30.00, not 3000.00.
    rows = [("judge", aspect, level, "pearson", 0.3, 1, 0, 46) for aspect in ex.ASPECTS for level in ex.LEVELS]
    table = pd.DataFrame(rows, columns=["evaluator", "aspect", "level", "method", "value", "n_groups", "n_undefined",
                                        "n_rows"])
    average = ex.average_over_aspects(table).pivot(index="evaluator", columns="level", values="value").reset_index()
    shown = explanation_page.levels_unless_too_few(average.assign(scored_texts=46), "scored_texts")
    assert shown.loc[0, list(ex.LEVELS)].tolist() == ["30.00"] * 3


def test_a_table_shows_too_few_in_every_measure_of_a_row_below_the_minimum():
    frame = pd.DataFrame({"method": ["in sample", "held out"], "n": [12, 5], "n_max": [12, 6],
                          "pearson_pct": [38.3, -18.1], "mae": [0.56, 0.74]})
    shown = pages.unless_too_few_rows(frame, ["pearson_pct", "mae"], n_max_column="n_max", per=" per held-out half")
    assert shown.loc[1, ["pearson_pct", "mae"]].tolist() == ["too few answers (5–6 per held-out half)"] * 2
    assert shown.loc[0, "pearson_pct"] == 38.3 and frame.loc[1, "pearson_pct"] == -18.1
    assert pages.unless_too_few_rows(frame, ["mae"]).loc[1, "mae"] == "too few answers (5)"
