"""The page of the ensembles chapter: the rules that choose its words (both sides of each), its tables' columns and
captions, and its figures, on small made-up frames (not the chapter's data)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from recjudge.chapters import llm_ensembles as page
from recjudge.serendipity import auxiliary_data as aux
from recjudge.serendipity import ground_truth as ser

pytestmark = pytest.mark.usefixtures("page_results")


def size_table(worst: list[float], sizes=(1, 2, 3), family="LLM judges") -> pd.DataFrame:
    rows = []
    for n, low in zip(sizes, worst):
        for metric, best in (("pearson_pct", 10.0 + n), ("mae", 1.0), ("rmse", 1.3)):
            rows.append({"family": family, "n": n, "metric": metric, "n_ensembles": 3, "mean": best - 1,
                         "best": best, "worst": low if metric == "pearson_pct" else 1.5,
                         "best_members": f"ensemble {n}", "worst_members": "c"})
    return pd.DataFrame(rows)


def table5(best_pearson: float, na_pearson: float, suffix: str = "") -> pd.DataFrame:
    return pd.DataFrame({"method": [f"{aux.NA}{suffix}", f"{page.BEST_CELL}{suffix}",
                                    f"{page.BEST_CELL}{suffix}, held out"],
                         "cell": ["few-shot [none (NA)]", "few-shot [Pop] + b", "chosen on half"],
                         "n": [12, 12, 5], "pearson_pct": [na_pearson, best_pearson, 3.0], "mae": [1.1, 0.9, 1.2],
                         "rmse": [1.3, 1.1, 1.4]})


def held(gains: list[float]) -> pd.DataFrame:
    return pd.DataFrame({"heldout_pearson_pct": [5.0 + g for g in gains], "na_heldout_pearson_pct": [5.0] * len(gains)})


def test_the_lower_bound_rises_only_when_the_worst_ensemble_rises_with_every_judge_added():
    # "averaging makes the result steadier, as Kang et al. observe" compared the first size with the last alone:
    # the worst single judge −5.8 against the one 8-judge ensemble −4.95, while sizes 2–7 fall to −7.25
    ours = table5(20.0, 10.0)
    rising = page.findings(size_table([-5.0, 0.0, 2.0]), ours, held([1.0]), 3, 12, 40, 200)
    dipping = page.findings(size_table([-5.8, -7.3, -6.4, -4.95], sizes=(1, 2, 3, 4)), ours, held([1.0]), 4, 12, 40)
    rises, does_not_rise = page.PROSE("steadiness.rises"), page.PROSE("steadiness.does_not_rise")
    assert rising["steadier_finding"] == rises
    assert dipping["steadier_finding"] == does_not_rise
    assert "Kang" not in rises + does_not_rise
    assert "Zhang et al." in rises and "section 5" in rises
    assert (rising["worst_single"], rising["worst_all"], rising["n_all"]) == ("−5.0%", "2.0%", "all 3")  # a true minus
    assert dipping["worst_between"] == ", through −7.3% to −6.4% for 2 to 3 judges,"
    assert rising["sizes_note"] == "; each Pearson on 200 answers has a 95% interval of about ±14 points"
    assert page.findings(size_table([-5.0, 0.0]), ours, held([1.0]), 3, 12, 40)["n_all"] == \
        "2 of 3, the largest enumerated"


def test_the_best_cell_in_sample_carries_its_interval():
    found = page.findings(size_table([0.0, 1.0]), table5(38.3, 10.0), held([1.0]), 2, 12, 40)
    assert found["grid_in_sample"].startswith("The best cell on the 12 answers is few-shot [Pop] + b with 38.3% [")
    assert "(MAE 0.90; Fisher's interval, which a maximum chosen among 40 cells" in found["grid_in_sample"]


def test_the_best_cell_on_too_few_answers_or_with_no_pearson_shows_no_number():
    few = page.findings(size_table([0.0, 1.0]), table5(38.3, 10.0), held([1.0]), 2, 5, 40)["grid_in_sample"]
    assert few == "The best cell on the 5 answers is few-shot [Pop] + b, on too few answers (5) to read its agreement."
    none = page.findings(size_table([0.0, 1.0]), table5(np.nan, 10.0), held([1.0]), 2, 12, 40)["grid_in_sample"]
    assert none.endswith("its Pearson is undefined (the scores do not vary, or none was read).") and "nan" not in none


def test_the_held_out_finding_on_a_few_answers_per_half_is_too_few():
    # "−18.1% on average over 20 splits" was printed on 5 or 6 answers per held-out half
    few = page.held_out_finding(table5(20.0, 10.0), held([2.0, 6.0])).data
    assert "too few answers (5 per held-out half)" in few and "%" not in few.split("too few")[1]
    assert "selection" in few and "7.0" not in few


def test_the_gain_held_out_against_half_the_gain_in_sample_names_selection():
    ours = table5(20.0, 10.0).assign(n=[12, 12, 12])  # a gain of 10 points in sample, on enough answers a half
    selected = page.held_out_finding(ours, held([2.0, 6.0])).data  # 4 held out
    survives = page.held_out_finding(ours, held([4.0, 6.0])).data  # 5 held out
    assert selected.endswith("so most of the in-sample gain is selection.")
    assert survives.endswith("so most of the in-sample gain survives on unseen users.")
    assert "a gain over NA of 4.0 points held out against 10.0 in sample" in selected
    assert "(from 7.0% to 11.0%), against 5.0% for NA" in selected


def test_the_integer_and_paper_findings_appear_only_where_they_apply():
    both = pd.concat([table5(20.0, 10.0), table5(15.0, 9.0, ser.INTEGER)], ignore_index=True)
    assert page.integer_finding(table5(20.0, 10.0)).data == ""
    text = page.integer_finding(both).data
    assert text.startswith("Read as integers") and "with 15.0% [" in text and "(MAE 0.90) in sample" in text
    assert text.endswith("held out: too few answers (5 per held-out half).")
    # a run that asked only a reader's judge: the book's judge has no integer answers, a few, then enough
    unanswered = both.assign(n=0, pearson_pct=np.nan, mae=np.nan)
    assert page.integer_finding(unanswered).data == ""
    few = page.integer_finding(both.assign(n=[12, 12, 5, 4, 4, 2])).data
    assert "with too few answers (4) in sample" in few and "15.0%" not in few
    assert page.paper_finding(synthetic=True).data == ""
    assert "a maximum over its grid reported without a held-out check" in page.paper_finding(synthetic=False).data


def small_study(synthetic=False) -> SimpleNamespace:
    return SimpleNamespace(data_label="SMALL", source=SimpleNamespace(label="survey fallback"),
                           sample=pd.DataFrame(index=range(20)), synthetic=synthetic)


def test_the_opening_names_other_families_and_the_readers_judges():
    members = ["SmolLM2 zero-shot", page.RECORDED, "Gemma few-shot", "Mine zero-shot"]
    reader = {"label": "Mine", "provider": "openai", "model": "gpt-4o-mini"}
    box = page.opening(small_study(), members, [reader], ["none (NA)", "Pop"], [1], 6, 20, False).data
    assert "the other model families (Gemma few-shot) are small local models too" in box
    assert "The reader's judges join the pool: Mine zero-shot." in box
    assert "3 auxiliary-data settings" in box and "not rounded" in box
    alone = page.opening(small_study(True), members[:1], [], ["none (NA)"], [1], 6, 20, True).data
    assert "average one weak model's prompt variants" in alone and alone.count("**Synthetic data.**") == 1
    assert "rounded to a Likert level" in alone


def test_the_size_table_shows_pearson_and_says_when_a_pool_was_cut(page_results):
    sizes = pd.concat([size_table([0.0, 1.0], sizes=(1, 2)), size_table([0.0], sizes=(1,), family="Proxies")])
    families = {"LLM judges": {"a": None, "b": None, "c": None}, "Proxies": {"SOG": None}}
    table = page.show_size_table(pd.DataFrame({"n": [1]}), sizes, families, {"LLM judges": [1, 2], "Proxies": [1]},
                                 20, "llm_ensembles")
    assert table.caption == ("Pearson (%) by ensemble size on 20 answers (MAE and RMSE in the full table); LLM judges: "
                             "ensembles of up to 2 of 3 members (the pool is too large for every subset)")
    assert list(table.data.columns) == ["Family", "Size", "Ensembles", "Mean Pearson (%)", "Best", "Worst",
                                        "Best ensemble"]
    assert len(table.data) == 3 and (page_results / "llm_ensembles" / "by_ensemble_size.csv").is_file()


def test_size_figures_are_drawn_for_two_sizes_or_more(monkeypatch):
    drawn, not_drawn = {}, {}
    monkeypatch.setattr(page.figures, "glue_figure", lambda name, fig, caption: drawn.update(
        {name: (len([ax for ax in fig.axes if ax.has_data()]), caption)}))
    monkeypatch.setattr(page.figures, "glue_not_drawn", lambda name, reason: not_drawn.update({name: reason}))
    sizes = pd.concat([size_table([0.0, 1.0], sizes=(1, 2)), size_table([0.0], sizes=(1,), family="Proxies")])
    page.draw_size_figures(sizes, 20, small_study())
    panels, caption = drawn["fig-ensemble-size-llm"]
    assert panels == 3 and "LLM judges: mean, best and worst" in caption and "20 answers (SMALL)" in caption
    assert caption.startswith("Read each panel")  # what to see comes first
    assert not_drawn == {"fig-ensemble-size-proxies": "Proxies: fewer than two ensemble sizes in this run"}


def test_table5_is_saved_per_reading_and_the_expected_scores_held_out_come_back(page_results):
    readings = {"": (table5(20.0, 10.0), held([1.0, 2.0])), ser.INTEGER: (table5(15.0, 9.0, ser.INTEGER), held([3.0]))}
    ours, held_expected = page.save_table5(readings, "llm_ensembles")
    assert len(ours) == 6 and held_expected["heldout_pearson_pct"].tolist() == [6.0, 7.0]
    saved = pd.read_csv(page_results / "llm_ensembles" / "held_out_selection.csv")
    assert saved["reading"].tolist() == ["expected score"] * 2 + ["most likely score token"]
    shown = page.show_table5_vs_paper(ours, 2, "llm_ensembles")
    assert shown.caption.startswith("Table 5 (Serendipity-2018) of Kang et al. beside ours (held-out rows: means "
                                    "over 2 random halves")
