"""The judge-robustness page: the rules that word its findings (both sides of each), its opening box and its
robustness table on small frames."""

import math
from types import SimpleNamespace

import pandas as pd
import pytest

from recjudge.chapters import judge_robustness as page
from recjudge.metamorphic import judges as mr


def robustness_table(judge="Kang basic", flips=(0.0, 0.5), changes=(0.0, 0.4), scored=(5, 4),
                     data=page.SYNTHETIC_DATA) -> pd.DataFrame:
    return pd.DataFrame({"judge": judge, "relation": ["MR3: spaces", "MR4: random words"][:len(flips)],
                         "cases": 5, "filtered": [5 - n for n in scored], "scored": list(scored),
                         "mean_abs_change": list(changes), "verdict_flip_rate": list(flips),
                         "spearman": [0.9, math.nan][:len(flips)], "delta_pearson_truth": math.nan, "data": data})


def shaped_table(filtered_free=(3, 2), filtered_constrained=(1, 2)) -> pd.DataFrame:
    return pd.DataFrame({"judge": "Tokutake CoT", "relation": ["MR3: spaces", "MR4: random words"], "cases": [5, 5],
                         "filtered_free": list(filtered_free), "filtered_constrained": list(filtered_constrained),
                         "verdict_flip_rate_free": [0.5, 0.1], "verdict_flip_rate_constrained": [0.2, 0.0]})


def run(*labels, scores=None, roles=None, skipped=0) -> mr.RobustnessRun:
    built = [SimpleNamespace(label=label) for label in labels]
    return mr.RobustnessRun(built, built, scores if scores is not None else pd.DataFrame(),
                            pd.DataFrame({"judge": ["x"] * skipped, "relation": "MR1", "reason": "no ratings"}),
                            roles or {})


def cell_scores(judge, relation, original, perturbed) -> pd.DataFrame:
    return pd.DataFrame({"case": range(len(original)), "original": original, "perturbed": perturbed, "judge": judge,
                         "relation": relation})


def test_the_verdict_says_the_judges_are_not_invariant_only_when_a_verdict_flips_in_a_cell_with_enough_cases():
    runs = {"synthetic": run("Kang basic", skipped=2)}
    moving = page.findings(robustness_table(flips=(0.0, 0.5), scored=(12, 10)), shaped_table(), runs)
    assert moving["invariance"] == "The judges are not invariant."
    assert (moving["n_moving"], moving["n_cells"], moving["n_too_few"]) == ("1", "2", "0")
    assert moving["pooled_flips"].startswith("5 verdict flips in 22 scored cases (23% [")
    assert moving["n_not_applicable"] == "2" and moving["n_spearman"] == "1"
    steady = page.findings(robustness_table(flips=(0.0, 0.0), scored=(12, 10)), shaped_table(), runs)
    assert steady["invariance"] == "No verdict flips here." and steady["n_moving"] == "0"


def test_a_cell_of_a_few_cases_is_too_few_to_make_the_judges_not_invariant():
    # "not invariant" was once read from cells of 3 to 15 cases: a flip on 3 cases is chance, not a finding
    runs = {"synthetic": run("Kang basic")}
    few = page.findings(robustness_table(flips=(0.0, 0.5)), shaped_table(), runs)
    assert few["invariance"] == "too few answers (at most 5 scored cases per cell)."
    assert (few["n_moving"], few["n_cells"], few["n_too_few"]) == ("0", "0", "2")
    assert few["largest_flip"] == "too few answers (4)", "50% of 4 cases, selected among 2 cells, is no finding"
    mixed = page.findings(robustness_table(flips=(0.0, 0.5), scored=(12, 4)), shaped_table(), runs)
    assert mixed["invariance"] == "No verdict flips here." and mixed["n_too_few"] == "1"


def test_no_flip_where_none_could_happen_is_said_so():
    # every original score far below the edge (2.5) and no score moving that far: no flip could happen
    low = cell_scores("Kang basic", "MR3: spaces", [1.0, 1.5, 2.0, 2.25] * 3, [1.1, 1.6, 2.1, 2.2] * 3)
    runs = {"synthetic": run("Kang basic", scores=low)}
    table = robustness_table(flips=(0.0,), changes=(0.1,), scored=(12,))
    assert page.findings(table, shaped_table(), runs)["invariance"] == "No verdict could flip here."
    near = low.assign(original=[2.4, 1.5, 2.0, 2.25] * 3)  # 2.4 lies within reach of 2.5
    assert page.findings(table, shaped_table(), {"synthetic": run("Kang basic", scores=near)})["invariance"] \
        == "No verdict flips here."
    assert page.flips_in(pd.Series([0.0]), [low]).startswith("no verdict could flip")
    assert page.flips_in(pd.Series([0.0]), [near]) == "no verdict flips"


def test_the_largest_cells_flip_rate_is_named_selected_and_carries_its_n_when_it_rests_on_enough_cases():
    table = robustness_table(flips=(0.0, 0.25), scored=(12, 20))
    largest = page.findings(table, shaped_table(), {"synthetic": run("Kang basic")})["largest_flip"]
    assert largest == "25% (Kang basic, MR4: random words, n = 20 scored cases)"


def test_the_real_answers_finding_gives_ranges_and_says_when_nothing_flips():
    real = robustness_table("Kang basic (Serendipity-2018)", flips=(0.0, 0.25), changes=(0.1, 0.3), scored=(12, 11),
                            data=page.SERENDIPITY_DATA)
    finding = page.serendipity_finding(real)
    assert finding.startswith("Kang basic (Serendipity-2018): verdicts flip in 0–25% of the scored cases, scores "
                              "move by 0.10–0.30 on average (n = 11–12 scored of 5 answers per relation, 2 relations")
    assert finding.endswith(": SmolLM2-135M's replies on a seeded sample of Serendipity-2018 answers.")
    still = page.serendipity_finding(robustness_table("Kang basic (Serendipity-2018)", flips=(0.0, 0.0),
                                                      scored=(12, 12), data=page.SERENDIPITY_DATA))
    assert "no verdict flips, scores move by 0.00–0.40" in still and "(n = 12 scored" in still
    assert page.serendipity_finding(robustness_table()) == \
        "not run in this build (the Serendipity-2018 data are needed)."


def test_the_real_answers_finding_on_a_few_answers_is_too_few():
    # 0.02–0.22 and "no verdict flips" were printed on 5 answers per relation
    few = page.serendipity_finding(robustness_table("Kang basic (Serendipity-2018)", flips=(0.0, 0.0),
                                                    data=page.SERENDIPITY_DATA))
    assert few.startswith("Kang basic (Serendipity-2018): too few answers (4–5 scored of 5 answers per relation)")
    assert "no verdict flips" not in few and "0.00–0.40" not in few


def test_the_shown_robustness_table_says_too_few_where_a_row_rests_on_few_cases():
    shown = page.shown_robustness(robustness_table(scored=(12, 4)))
    assert shown.loc[1, "verdict_flip_rate"] == "too few answers (4)" and shown.loc[1, "mean_abs_change"] == \
        "too few answers (4)"
    assert shown.loc[0, "verdict_flip_rate"] == 0.0


def test_the_constrained_finding_says_whether_every_judge_keeps_its_cases():
    kept = page.constrained_finding(shaped_table(filtered_free=(3, 2), filtered_constrained=(1, 2)))
    assert kept.startswith("Tokutake CoT: 3 of 10 cases filtered (free: 5), mean flip rate over the relations with "
                           "scored cases 10% (free: 30%). Every judge held to its shape keeps at least as many cases")
    lost = page.constrained_finding(shaped_table(filtered_free=(0, 2), filtered_constrained=(1, 2)))
    assert "Not every judge keeps more cases when held to its shape" in lost
    assert page.constrained_finding(shaped_table().iloc[:0]) == "not run (the parameter `constrained` is off)."
    unscored = shaped_table(filtered_free=(5, 5)).assign(verdict_flip_rate_free=float("nan"))
    assert "scored cases 10% (free: no scored case)" in page.constrained_finding(unscored), "never 'nan%'"


def test_each_judge_is_labelled_with_the_data_it_ran_on():
    runs = {"synthetic": run("Tokutake CoT"), "serendipity": run("Kang basic (Serendipity-2018)")}
    runs["synthetic"].under_test.append(SimpleNamespace(label="Tokutake CoT" + mr.CONSTRAINED))
    table = pd.DataFrame({"judge": ["Tokutake CoT", "Tokutake CoT, constrained", "Kang basic (Serendipity-2018)"]})
    assert page.with_data(table, runs)["data"].tolist() == [page.SYNTHETIC_DATA, page.SYNTHETIC_DATA,
                                                            page.SERENDIPITY_DATA]


def test_the_opening_box_says_which_data_ran_and_which_original_replies_hold_no_score():
    scores = pd.DataFrame({"judge": "Tokutake CoT", "case": ["a", "a", "b", "c"], "original": [math.nan, math.nan,
                                                                                              2.0, 4.0]})
    options = dict(judges=[], tokutake_strategy="cot", constrained=True, kang_cases=10, tokutake_cases=15,
                   serendipity_cases=5, serendipity_tokutake_cases=3, explanation_texts=6)
    synthetic_only = page.opening({"synthetic": run("Tokutake CoT", scores=scores)}, **options).data
    assert "Serendipity-2018: not in this build (data needed, see above)" in synthetic_only
    assert "Tokutake et al.'s CoT template" in synthetic_only and "(\"constrained\")" in synthetic_only
    assert "1 of the 3 original replies of Tokutake CoT hold no score" in synthetic_only
    both = page.opening({"synthetic": run("Tokutake CoT", scores=scores.iloc[2:]),
                         "serendipity": run("Kang basic (Serendipity-2018)")},
                        **{**options, "constrained": False,
                           "judges": [{"label": "gpt-4o-mini", "provider": "openai", "model": "gpt-4o-mini"}]}).data
    assert "Serendipity-2018 (real users): the first 5 answers" in both and "the first 3 of the prompt" in both
    assert "constrained" not in both and "hold no score" not in both
    assert "(your judges, gpt-4o-mini, play the same roles beside them)" in both


def test_the_robustness_table_names_its_judges_and_saves_one_file_per_judge(monkeypatch):
    saved = {}
    monkeypatch.setattr(page, "save_table", lambda table, notebook, name: saved.setdefault(name, table))
    table = pd.concat([robustness_table("Kang basic"), robustness_table("Kang basic, gpt-4o-mini")],
                      ignore_index=True)
    scores = pd.DataFrame({"judge": ["Kang basic", "Kang basic, gpt-4o-mini"], "case": "a", "original": 3.0,
                           "perturbed": 4.0})
    runs = {"synthetic": run("Kang basic", roles={"Kang basic, gpt-4o-mini": "Kang basic"})}
    reader = {"label": "gpt-4o-mini", "provider": "openai", "model": "gpt-4o-mini"}
    shown = page.show_robustness(table, scores, runs, [reader], "robust")
    assert shown.caption.startswith("Metamorphic robustness of the judges (run on SmolLM2-135M and gpt-4o-mini; ")
    assert shown.data.columns.tolist() == ["Judge", "Relation", "Cases", "Filt.", "n", "|Δ| mean", "Flips (%)",
                                           "Spearman ρ", "Δ r truth"]
    assert sorted(saved) == ["robustness_baselines", "robustness_kang_basic", "robustness_kang_basic_gpt_4o_mini",
                             "scores_kang_basic", "scores_kang_basic_gpt_4o_mini"]
    # the baselines' rows beside the judges', as saved
    assert shown.data["Judge"].tolist()[-2:] == saved["robustness_baselines"]["judge"].tolist() == [
        "Random", mr.CONSTANT_ANSWER]
    assert "data" in saved["robustness_kang_basic"].columns  # the files say which data each judge ran on
    alone = page.show_robustness(table.iloc[:2], scores.iloc[:1], {"synthetic": run("Kang basic")}, [], "robust")
    assert alone.caption.startswith("Metamorphic robustness of the judges (run on SmolLM2-135M; ")


@pytest.mark.parametrize(("values", "expected"), [([0.2, 0.2], "0.20"), ([0.1, 0.3], "0.10–0.30")])
def test_a_range_in_prose_is_one_value_when_its_ends_agree(values, expected):
    assert page.pages.span(min(values), max(values), 2) == expected


@pytest.mark.parametrize(("rhos", "wording"), [
    ((0.95, 0.9, math.nan), "Order over cases is kept."),
    ((0.95, 0.2), "Order over cases is only partly kept."),
    ((0.95, -0.1), "Order over cases is lost in some cells."),
    ((math.nan,), "Order over cases is not measured here."),
])
def test_the_order_finding_is_chosen_from_every_cells_spearman(rhos, wording):
    assert page.order_kept(pd.Series(rhos)) == wording


def test_the_real_answers_finding_without_the_data_is_the_registrys_not_run():
    from recjudge.compendium import claims

    synthetic_only = robustness_table(data=page.SYNTHETIC_DATA)
    assert page.serendipity_finding(synthetic_only).startswith(claims.NOT_RUN)


def test_the_baselines_flip_rates_are_random_draws_and_a_constant():
    from recjudge.metaeval.baselines import RANDOM

    rows = mr.baseline_robustness().set_index("judge")
    # two independent uniform draws on 1-5 fall on different sides of 3 (or one on it) with chance 1 - (2²+1+2²)/5²
    assert rows.loc[RANDOM, "verdict_flip_rate"] == pytest.approx(1 - 9 / 25)
    assert rows.loc[RANDOM, "mean_abs_change"] == pytest.approx(40 / 25)  # E|X - Y|, X, Y uniform on 1..5
    assert rows.loc[mr.CONSTANT_ANSWER, ["verdict_flip_rate", "mean_abs_change"]].tolist() == [0.0, 0.0]
    assert math.isnan(rows.loc[mr.CONSTANT_ANSWER, "spearman"])
    # on a 1-3 scale the verdict is a side of 3 too: draws (1,2) never flip among themselves
    assert mr.baseline_robustness(1, 3).set_index("judge").loc[RANDOM, "verdict_flip_rate"] == pytest.approx(4 / 9)
    assert page.baseline_flips() == ("64% for Random (a fresh uniform 1–5 draw per prompt, exact) and 0% for a "
                                     "constant answer")



def test_the_shape_effect_table_puts_the_free_and_the_constrained_reading_of_a_measure_in_one_column():
    from recjudge.chapters import judge_robustness

    shaped = pd.DataFrame({"judge": ["CoT"], "relation": ["MR3: spaces"], "cases": [15],
                           "filtered_free": [15], "filtered_constrained": [0],
                           "mean_abs_change_free": [float("nan")], "mean_abs_change_constrained": [1.07],
                           "verdict_flip_rate_free": [float("nan")], "verdict_flip_rate_constrained": [0.8],
                           "spearman_free": [float("nan")], "spearman_constrained": [-0.37]})
    long = judge_robustness.shape_effect_long(shaped)
    assert list(long.columns) == ["judge", "relation", "cases", "replies", "filtered", "mean_abs_change",
                                  "verdict_flip_rate", "spearman"]
    assert long["replies"].tolist() == ["free", "constrained"]
    assert long["filtered"].tolist() == [15, 0] and long["spearman"].iloc[1] == -0.37


def test_the_robustness_figure_sets_each_judges_movement_beside_randoms(monkeypatch):
    import numpy as np

    drawn = {}
    monkeypatch.setattr(page.figures, "glue_figure",
                        lambda name, fig, caption: drawn.update(name=name, fig=fig, caption=caption))
    table = pd.DataFrame({"judge": ["Kang basic", "Kang basic", "Tokutake CoT", "Tokutake CoT", "Unscored"],
                          "relation": ["MR3: spaces", "MR4: random words"] * 2 + ["MR3: spaces"],
                          "scored": [10, 10, 4, 4, 0], "mean_abs_change": [0.1, 0.2, 0.25, 0.0, math.nan],
                          "verdict_flip_rate": [0.0, 0.1, 0.25, 0.0, math.nan]})
    page.draw_robustness(table)
    assert drawn["name"] == "fig-judge-robustness"
    change, flips = drawn["fig"].axes
    assert [t.get_text() for t in change.get_yticklabels()] == ["Kang basic", "Tokutake CoT"]  # none unscored
    random = mr.baseline_robustness().set_index("judge").loc[page.RANDOM]
    assert any(np.allclose(line.get_xdata(), random["mean_abs_change"]) for line in change.get_lines())
    assert any(np.allclose(line.get_xdata(), 100 * random["verdict_flip_rate"]) for line in flips.get_lines())
    assert "Unscored" in drawn["caption"] and page.figures.check_figure(drawn["fig"]) == []
