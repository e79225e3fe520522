"""The page of the trust chapter: the rules that choose its words, its tables and its figures, on a small population
generated here with a fixed seed (synthetic: its numbers describe nothing)."""

from __future__ import annotations

from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from recjudge.chapters import trust_judges as page  # noqa: E402
from recjudge.compendium import figures, trust_rules  # noqa: E402
from recjudge.trust import ppi  # noqa: E402
from recjudge.trust.population import JudgedPopulation  # noqa: E402

GOOD, NOISE, PROXY = "good judge", "noise judge", "a proxy"


@pytest.fixture
def results(tmp_path, monkeypatch):
    from recjudge import paths

    monkeypatch.setenv(paths.RESULTS_ENV, str(tmp_path))
    monkeypatch.delenv("RECJUDGE_RUN_NAME", raising=False)
    return tmp_path


def small_population(n: int = 240, seed: int = 0) -> JudgedPopulation:
    """A judge that follows the human rating, one that is noise, and a proxy, on ``n`` answers of 40 users."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, size=n).astype(float)
    frame = pd.DataFrame({"user_id": np.arange(n) % 40, "truth": truth, "serendipitous": (truth >= 4).astype(float),
                          "predicted_rating": rng.uniform(1, 5, size=n),
                          GOOD: truth + rng.normal(0, 0.7, size=n), NOISE: rng.normal(3, 1, size=n),
                          PROXY: rng.uniform(1, 5, size=n)})
    judges = pd.DataFrame({"judge": [GOOD, NOISE, PROXY], "kind": ["local LLM", "local LLM", "proxy metric"],
                           "family": ["tiny", "tiny", "proxy"],
                           "scoring": ["expected score", "expected score", "eq. 6 (1-5)"],
                           "note": ["", "", "as in the RQ1 chapter"], "answers": [n, n, n]})
    return JudgedPopulation(frame, judges)


def small_worth(judged: JudgedPopulation, sizes=(20, 50), draws: int = 40) -> pd.DataFrame:
    judges = [GOOD, NOISE, PROXY]
    return pd.concat([ppi.worth_table(judged.frame, judges, "truth", list(sizes), draws=draws)
                      .assign(estimand="mean serendipity"),
                      ppi.worth_table(judged.frame, judges, "serendipitous", list(sizes), draws=draws)
                      .assign(estimand="share serendipitous (truth >= 4)")], ignore_index=True)


def errors_with_gains(gains: dict[str, float], half_width: float = 0.002) -> pd.DataFrame:
    """A calibration error table where each judge's isotonic-calibrated MAE is ``gain`` below its constant answer's,
    the gain's interval ``half_width`` either side."""
    rows = []
    for judge, gain in gains.items():
        rows += [{"judge": judge, "reading": "raw", "mae": 1.5}, {"judge": judge, "reading": "eq. 6 rescaled",
                                                                  "mae": 1.4},
                 {"judge": judge, "reading": "calibrated (isotonic)", "mae": 1.0 - gain, "gain_over_constant": gain,
                  "gain_ci_low": gain - half_width, "gain_ci_high": gain + half_width},
                 {"judge": judge, "reading": "calibrated (ordinal)", "mae": 1.0, "gain_over_constant": 0.0,
                  "gain_ci_low": -half_width, "gain_ci_high": half_width},
                 {"judge": judge, "reading": "constant answer", "mae": 1.0}]
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------------------------
# The rules that choose words

def test_a_judge_beats_a_constant_answer_only_by_more_than_the_margin_and_beyond_its_noise():
    errors = errors_with_gains({"above": 0.0051, "below": 0.0049})
    assert trust_rules.judges_beating_constant(errors) == ["above"]
    assert "above beats a constant answer's MAE by more than 0.005 with a 95% interval" in \
        page.scale_finding(errors).data
    assert trust_rules.judges_beating_constant(errors_with_gains({"noisy": 0.0056}, half_width=0.01)) == [], \
        "a gain of 0.0056 whose interval holds zero is noise"
    two = errors_with_gains({"first": 0.02, "second": 0.01})
    assert "first, second beat a constant answer's MAE" in page.scale_finding(two).data
    none = page.scale_finding(errors_with_gains({"weak": 0.001})).data
    assert "no judge beats a constant answer's MAE by more than 0.005" in none
    assert "the largest gain is 0.0010 [−0.0010, 0.0030] (weak, calibrated (isotonic))" in none


def worth_rows(worth: list[float], low: list[float], high: list[float], rho2: list[float] | None = None
               ) -> pd.DataFrame:
    return pd.DataFrame({"judge": ["a", "b"], "estimand": "mean serendipity", "n": 100, "labels_worth": worth,
                         "labels_worth_mc_low": low, "labels_worth_mc_high": high,
                         "labels_worth_by_rho2": rho2 or worth})


def test_findings_name_the_most_useful_judge_only_when_its_worth_is_beyond_the_simulations_noise():
    reliability = pd.DataFrame({"readings": ["a / b"], "alpha": [0.5]})
    bias = pd.DataFrame({"judge": ["a"], "term": ["popularity (log)"], "coefficient": [0.1], "ci_low": [-0.1],
                         "ci_high": [0.3]})
    # 102 labels whose Monte Carlo interval holds 100: what a judge with r = 0 gets give or take the noise.
    noise = page.findings(worth_rows([102.0, 90.0], [99.2, 88.0], [104.9, 92.0]), errors_with_gains({"a": 0.0}),
                          reliability, bias, 100)
    assert noise["worth_finding"].startswith("no judge saves a whole label beyond the simulation's noise")
    assert "the largest worth, selected among 2, is a: 102.0 [99.2, 104.9] labels (ρ² rule: 102.0)" in \
        noise["worth_finding"]
    # 101.7 [101.3, 102.0] simulated, but 100.9 by the ρ² rule: the simulation's tuning bias, not a saving.
    biased = page.findings(worth_rows([101.7, 90.0], [101.3, 88.0], [102.0, 92.0], [100.9, 90.0]),
                           errors_with_gains({"a": 0.0}), reliability, bias, 100)
    assert biased["worth_finding"].startswith("no judge saves a whole label")
    assert noise["calibration_finding"].startswith("no judge beats a constant answer's MAE by more than 0.005")
    assert noise["retest_finding"] == ""
    assert (noise["n_clear"], noise["n_effects"]) == (0, 1)

    saving = page.findings(worth_rows([130.0, 90.0], [120.0, 88.0], [141.0, 92.0]), errors_with_gains({"a": 0.01}),
                           pd.DataFrame({"readings": ["x (test-retest)"], "alpha": [0.4321]}),
                           bias.assign(ci_low=0.05), 100)
    assert saving["worth_finding"] == ("the judge worth the most labels (selected among 2) is a, worth 130.0 "
                                       "[120.0, 141.0] labels (ρ² rule: 130.0); 1 of 2 judges save labels beyond the "
                                       "simulation's noise.")
    assert saving["calibration_finding"].startswith("a beats a constant answer's MAE by more than 0.005")
    assert saving["retest_finding"] == "Asked twice at temperature 1, the few-shot judge agrees with itself at " \
                                       "α = 0.43; "
    assert saving["n_clear"] == 1
    both = page.findings(worth_rows([130.0, 90.0], [120.0, 88.0], [141.0, 92.0]),
                         errors_with_gains({"a": 0.01, "b": 0.01}), reliability, bias, 100)
    assert both["calibration_finding"].startswith("a, b beat a constant")


def test_the_answer_by_judge_says_how_many_labels_each_saves():
    judged = small_population()
    worth = small_worth(judged)
    paper_best = pd.Series({"judge": "a judge", "prompt": "a prompt", "paper": "A paper", "table": "Table 9",
                            "dataset": "Taobao Serendipity", "pearson_pct": 30.0,
                            "labels_worth_by_rho2": ppi.labels_worth_by_correlation(1000, 0.3)})
    text = page.answer_by_judge(worth, judged, [GOOD, NOISE], 50, paper_best).data
    lines = text.splitlines()
    assert lines[0].startswith(f"- **{GOOD}**: 50 labels plus its scores are worth ")
    assert "labels saved)." in lines[0]  # a judge with Pearson near 0.9 saves many labels
    assert lines[1].startswith(f"- **{NOISE}**: 50 labels plus its scores are worth ")
    assert lines[2] == ("- **The strongest pooled correlation a paper prints for a serendipity judge** (a judge, a "
                        "prompt; A paper, Table 9, Taobao Serendipity: r = 0.30) would be worth 1,099 labels per "
                        "1,000 by the ρ² rule.")
    assert lines[3].startswith("- Coverage (over 40 draws per cell) falls short of the nominal 95%")
    # A judge with a row for the mean at other n but not at the headline n: too few answers for it.
    fewer = worth[~((worth["judge"] == NOISE) & (worth["n"] == 50))]
    assert (f"- **{NOISE}**: its 240 scored answers are too few for 50 labels"
            in page.answer_by_judge(fewer, judged, [GOOD, NOISE], 50, paper_best).data)


def test_one_label_saved_is_singular_and_a_saving_within_the_noise_is_none():
    judged = small_population()
    worth = pd.DataFrame({"judge": [GOOD, NOISE], "estimand": "mean serendipity", "n": 50,
                          "labels_worth": [51.4, 52.0], "labels_worth_mc_low": [51.1, 49.5],
                          "labels_worth_mc_high": [51.7, 54.5], "labels_worth_by_rho2": [51.2, 50.0],
                          "pearson": [0.2, 0.0], "nominal": 0.95, "draws": 40,
                          "coverage_ppi": [0.95, 0.9], "coverage_ppi_mc_low": [0.9, 0.8],
                          "coverage_ppi_mc_high": [0.99, 0.96], "coverage_ppi_against_nominal": "consistent",
                          "coverage_human_only_against_nominal": "consistent"})
    paper_best = pd.Series({"judge": "j", "prompt": "p", "paper": "P", "table": "T", "dataset": "D",
                            "pearson_pct": 10.0, "labels_worth_by_rho2": 1010.0})
    lines = page.answer_by_judge(worth, judged, [GOOD, NOISE], 50, paper_best).data.splitlines()
    assert lines[0].endswith("worth 51 [51, 52] labels (Pearson 20.0%; 1 label saved).")
    assert lines[1].endswith("(Pearson 0.0%; no saving beyond the simulation's noise)."), \
        "52 labels whose interval holds 50 is noise, not a saving"


def test_coverage_short_of_nominal_is_counted_with_what_chance_gives():
    base = {"judge": "j", "estimand": "mean serendipity", "nominal": 0.95, "draws": 100, "coverage_ppi_mc_low": 0.8,
            "coverage_ppi_mc_high": 0.97}
    worth = pd.DataFrame([{**base, "n": 20, "coverage_ppi": 0.85, "coverage_ppi_against_nominal": "short of nominal",
                           "coverage_human_only_against_nominal": "consistent"},
                          {**base, "n": 500, "coverage_ppi": 0.95, "coverage_ppi_against_nominal": "consistent",
                           "coverage_human_only_against_nominal": "consistent"}])
    text = page.coverage_finding(worth, headline_n=100)
    chance = 2 * ppi.chance_short_of_nominal(100, 0.95)
    assert "for PPI++ in 1 of 2 (judge, estimand, n) cells (all at n ≤ 100) and for human labels alone in none" in text
    assert f"about {chance:.1f} would fall short by chance" in text
    assert "lies above nominal" not in text and "(j, mean serendipity, n = 20)" in text
    fine = page.coverage_finding(worth.assign(coverage_ppi_against_nominal="consistent"), headline_n=100)
    assert "for PPI++ in none of 2 (judge, estimand, n) cells and" in fine
    above = page.coverage_finding(worth.assign(coverage_human_only_against_nominal="above nominal"), 100)
    assert "It lies above nominal for PPI++ in 0 and for human labels alone in 2" in above


def test_the_bias_finding_names_the_largest_clear_effect_of_an_llm_judge():
    judged = small_population()
    bias = pd.DataFrame({"judge": [GOOD, GOOD, NOISE, PROXY], "term": ["human rating", "release year",
                                                                       "popularity (log)", "title length"],
                         "coefficient": [0.9, -0.2, 0.05, 0.8], "ci_low": [0.8, -0.3, -0.05, 0.6],
                         "ci_high": [1.0, -0.1, 0.15, 1.0]})
    text = page.bias_finding(bias, judged).data
    assert text == ("2 of 3 judge-property effects have an interval that excludes zero, 1 of them of LLM judges; the "
                    f"largest: {GOOD} scores 0.20 lower per standard deviation of release year, at equal human "
                    "rating.")
    only_proxy = page.bias_finding(bias[bias["judge"] != GOOD], judged).data
    assert only_proxy == "1 of 2 judge-property effects have an interval that excludes zero, 0 of them of LLM judges."


def test_the_full_data_difference_is_higher_or_lower_in_words():
    compare = pd.DataFrame({"high_predicted": [1.0, 1.0, 0.0, 0.0, np.nan], "serendipitous": [1.0, 1.0, 0.0, 1.0, 1.0]})
    difference = pd.DataFrame({"n": [10, 40], "population": [100, 100]})
    found = page.comparison_findings(difference, compare)
    assert found["full_difference"] == "50.0 percentage points higher"
    assert found["difference_correction"].startswith(" These intervals of a difference are `ppi-python`'s")
    assert "at n = 40 of 100 answers it would narrow an interval of a mean by 23%" in found["difference_correction"]
    lower = page.comparison_findings(difference.iloc[:0], compare.assign(serendipitous=[0.0, 0.0, 1.0, 1.0, 0.0]))
    assert lower == {"full_difference": "100.0 percentage points lower", "difference_correction": ""}


def test_the_opening_box_says_what_is_synthetic_sampled_and_left_out():
    judged = small_population()
    table = judged.judges.copy()
    table.loc[table["judge"] == NOISE, ["answers", "note"]] = [10, "; a random sample of 10 answers"]
    judged = JudgedPopulation(judged.frame, table)
    study = SimpleNamespace(data_label="SYNTHETIC survey (not real users)", synthetic=True)
    box = page.opening(study, judged, [], min_answers=30, draws=40, label_sizes=[20, 1000]).data
    assert "**Synthetic data.**" in box and "None of these judges is a capable LLM" in box
    assert f"{NOISE} scored a random sample of the answers" in box
    assert f"Not analysed, with fewer than 30 scored answers: {NOISE}." in box
    assert "n from 20 to 1,000" in box and "240 answers of 40 users" in box
    real = page.opening(SimpleNamespace(data_label="Serendipity-2018 (mirror)", synthetic=False), small_population(),
                        [{"model": "m"}], min_answers=30, draws=40, label_sizes=[20]).data
    assert "Synthetic" not in real and "Not analysed" not in real
    assert "None of the book's own judges is a capable LLM" in real


# ---------------------------------------------------------------------------------------------------------------
# Tables and figures

def test_the_agreement_table_shows_each_judge_with_its_kind_and_saves_it(results):
    from recjudge.serendipity import ground_truth as ser

    judged = small_population()
    agreement = pd.concat([ser.agreement_table(judged.scored_by(j), [j], n_boot=20, groups="user_id")
                           for j in [GOOD, NOISE]], ignore_index=True)
    table = page.show_agreement_table(agreement, judged, notebook="chapter", data="small")
    assert list(table.data.columns) == ["Judge", "Answers", "Pearson (%) [95% CI]", "MAE", "RMSE"]
    assert table.caption.startswith("Each judge against the human ratings on the answers it scored")
    assert "local LLM" in table.caption  # one kind in every row goes into the caption
    saved = pd.read_csv(results / "chapter" / "agreement.csv")
    assert list(saved["kind"]) == ["local LLM", "local LLM"] and set(saved["data"]) == {"small"}


def test_the_worth_table_shows_the_headline_n_and_500_and_saves_every_n(results):
    judged = small_population(n=1200)
    worth = small_worth(judged, sizes=(20, 50, 500), draws=20)
    table = page.show_worth_table(worth, 50, notebook="chapter", data="small")
    # The worth and the ρ² rule's price sit beside the judge and n; the intervals behind them fold away.
    assert list(table.data.columns) == ["Estimand", "Judge", "Labels n", "Pearson (%)", "Worth (labels)", "ρ² rule"]
    assert set(table.data["Labels n"]) == {"50", "500"}
    assert table.caption.startswith("Human labels each judge is worth at n = 50 and 500, beside the ρ² rule")
    intervals = page.show_worth_intervals(worth, 50, notebook="chapter")
    assert intervals.collapsed and set(intervals.data["n"]) == {"50", "500"}
    assert [c.replace("\n", " ") for c in intervals.data.columns] == [
        "Estimand", "Judge", "n", "Width, human only", "Width, PPI++", "Coverage, human (%) [MC 95%]",
        "Coverage, PPI++ (%) [MC 95%]", "Draws with s = 0"]
    assert "(s = 0) has zero-width intervals" in intervals.caption
    assert len(pd.read_csv(results / "chapter" / "labels_worth.csv")) == len(worth)


def test_the_calibration_and_bias_tables_are_collapsed_audits(results):
    errors = errors_with_gains({GOOD: 0.1, NOISE: 0.0})
    table = page.show_calibration_table(errors, notebook="chapter", data="small")
    assert table.collapsed and list(table.data.columns) == ["Judge", "raw", "eq. 6 rescaled",
                                                            "calibrated (isotonic)", "calibrated (ordinal)",
                                                            "constant answer"]
    bias = pd.DataFrame({"judge": [GOOD, GOOD], "term": ["human rating", "release year"], "coefficient": [0.9, 0.1],
                         "ci_low": [0.8, -0.1], "ci_high": [1.0, 0.3]})
    shown = page.show_bias_table(bias, notebook="chapter", data="small")
    assert shown.collapsed and list(shown.data.columns) == ["Judge", "release year"]
    assert shown.data.iloc[0, 1] == "0.100 [\u22120.100, 0.300]"


def test_the_reliability_table_prints_alpha_with_its_interval(results):
    reliability = pd.DataFrame({"readings": ["a / b"], "n_readings": [2], "answers": [40], "answers_complete": [38],
                                "alpha": [0.512], "alpha_ci_low": [0.3], "alpha_ci_high": [0.7]})
    table = page.show_reliability_table(reliability, notebook="chapter", data="small")
    assert list(table.data.columns) == ["Readings", "Answers", "α [95% CI]"]
    assert table.data.iloc[0].tolist() == ["a / b", "38", "0.51 [0.30, 0.70]"]


def test_the_figures_put_llm_judges_and_proxies_in_panels_of_their_own():
    judged = small_population()
    calibration = page.calibration_figure(judged, [GOOD, NOISE, PROXY])
    assert [ax.get_title() for ax in calibration.axes] == ["LLM judges", "Proxy metrics"]
    assert figures.check_figure(calibration) == []
    width = page.worth_figure(small_worth(judged), judged, [GOOD, NOISE, PROXY])
    assert [ax.get_title() for ax in width.axes] == ["LLM judges", "Proxy metrics"]
    assert figures.series_of(width.axes[0]) == ["human only", GOOD, NOISE]
    assert figures.check_figure(width) == []
    only_llm = page.worth_figure(small_worth(judged), judged, [GOOD])
    assert len(only_llm.axes) == 1


def _line_colours(fig) -> dict[str, str]:
    import matplotlib.colors as mcolors

    colours = {}
    for ax in fig.axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            line = handle[0] if isinstance(handle, tuple) else handle
            colours[label] = mcolors.to_hex(line.get_color())
    return colours


def test_a_judge_has_one_colour_in_every_panel_and_figure_and_no_colour_names_two_judges():
    judged = small_population()
    judges = [GOOD, NOISE, PROXY]
    calibration = _line_colours(page.calibration_figure(judged, judges))
    width = _line_colours(page.worth_figure(small_worth(judged), judged, judges))
    assert {j: calibration[j] for j in judges} == {j: width[j] for j in judges}
    assert len({calibration[j] for j in judges}) == len(judges)
    assert len({s.colour for s in figures.series_styles([f"judge {i}" for i in range(9)]).values()}) == 9


def test_a_readers_judges_beyond_the_palette_reuse_a_colour_with_another_line_and_marker():
    # The book draws 9 judges; a reader's judge makes 10, and the page must still draw (a colour is reused, never
    # the whole style), keeping the book's own judges' styles.
    book = [f"judge {i}" for i in range(9)]
    styles = figures.series_styles([*book, "reader's judge", "another"])
    assert {label: styles[label] for label in book} == figures.series_styles(book)
    assert len(set(styles.values())) == len(styles)
    assert styles["reader's judge"].colour == styles["judge 0"].colour
    assert styles["reader's judge"].linestyle != styles["judge 0"].linestyle
    base = small_population()
    extra = [f"extra {i}" for i in range(8)]
    frame = base.frame.assign(**{name: base.frame[NOISE] for name in extra})
    # Half LLM judges, half proxies: each panel keeps to its limit of series.
    judges = pd.concat([base.judges, base.judges.iloc[[1, 2] * (len(extra) // 2)].assign(judge=extra)],
                       ignore_index=True)
    judged = JudgedPopulation(frame, judges)
    many = [GOOD, NOISE, PROXY, *extra]
    page.calibration_figure(judged, many)  # 11 judges: drawn, no error
    with pytest.raises(ValueError, match="at most 36"):
        figures.series_styles([f"judge {i}" for i in range(37)])


def test_the_worth_figure_draws_the_rho_squared_rule_for_two_reference_correlations():
    judged = small_population()
    worth = small_worth(judged)
    fig = figures.assert_legible(page.worth_figure(worth, judged, [GOOD, NOISE, PROXY]))
    population = int(worth["population"].max())
    for ax in fig.axes:
        references = [line for line in ax.get_lines() if line.get_linestyle() == ":"]
        assert len(references) == len(page.REFERENCE_CORRELATIONS)
        for line, rho in zip(references, page.REFERENCE_CORRELATIONS):
            # n labels plus the judge are worth about n / (1 − ρ²) labels alone: per label about 1 / (1 − ρ²)
            expected = [ppi.labels_worth_by_correlation(int(n), rho, population) / n for n in line.get_xdata()]
            np.testing.assert_allclose(line.get_ydata(), expected)
            assert np.all(np.asarray(expected) > 1)
    assert {t.get_text() for t in fig.axes[-1].texts} == {f"ρ = {rho:g}" for rho in page.REFERENCE_CORRELATIONS}


def test_the_worth_figure_draws_each_judge_as_points_with_their_monte_carlo_interval():
    judged = small_population()
    worth = small_worth(judged)
    per_label = page.worth_per_label(worth)
    assert (per_label["per_label_low"] <= per_label["per_label"]).all()
    assert (per_label["per_label"] <= per_label["per_label_high"]).all()
    fig = page.worth_figure(worth, judged, [GOOD, NOISE])
    ax = fig.axes[0]
    containers = {c.get_label(): c for c in ax.containers}
    assert set(containers) == {GOOD, NOISE}
    data_line = containers[GOOD].lines[0]
    assert data_line.get_linestyle() == "None"  # points, not a jagged line
    good = per_label[per_label["judge"] == GOOD]
    np.testing.assert_allclose(np.asarray(data_line.get_ydata(), dtype=float), good["per_label"].to_numpy(float))


def test_the_papers_judges_table_names_its_source_in_one_cell_and_saves_every_column(results):
    table = page.show_paper_judges_worth("chapter")
    assert list(table.data.columns[:2]) == ["Paper, table: dataset, aspect", "Judge"]
    assert table.data["Paper, table: dataset, aspect"].iloc[0].startswith("Kang et al. 2025, Table 2: ")
    saved = pd.read_csv(results / "chapter" / "paper_judges_worth.csv")
    assert {"paper", "table", "dataset", "judge", "aspect", "reading"} <= set(saved.columns)


def test_the_headline_figure_is_glued_as_markdown_the_page_can_place(results):
    """myst-nb's glue:md reads only a text/markdown output: a plain string glued there left the chapter without its
    headline figure and stopped the book's build."""
    from test_judge_table import book_table

    glued = page.judges_figure(book_table(), "trust_judges")
    markdown = glued._repr_markdown_() if hasattr(glued, "_repr_markdown_") else None
    assert markdown is not None, f"a {type(glued).__name__} has no text/markdown output"
    assert markdown.startswith("```{figure} ../../results/trust_judges/judges.svg")
    assert (results / "trust_judges" / page.JUDGES_FIGURE).is_file()


def test_the_calibration_figure_draws_each_judges_map_as_one_monotone_curve():
    """Out-of-fold calibrations of neighbouring scores come from different folds' maps: drawn score by score they
    zig-zagged. The figure draws each judge's map fitted on all its answers, which never turns down."""
    judged = small_population()
    fig = page.calibration_figure(judged, [GOOD, NOISE, PROXY])
    lines = [line for ax in fig.axes for line in ax.get_lines() if line.get_label() in (GOOD, NOISE, PROXY)]
    assert len(lines) == 3
    for line in lines:
        x, y = (np.asarray(values, dtype=float) for values in line.get_data())
        assert np.all(np.diff(x) > 0) and np.all(np.diff(y) >= -1e-9), f"{line.get_label()} turns down"
        assert 1 <= y.min() and y.max() <= 5


def test_the_worth_figures_reference_labels_print_over_no_point_and_its_axis_reads_plainly():
    """The "ρ = 0.15 (ρ² rule)" label sat on the judges' points at the smallest n, and the y axis read "Labels alone
    one label plus the judge is worth"."""
    judged = small_population()
    fig = page.worth_figure(small_worth(judged), judged, [GOOD, NOISE, PROXY])
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    labels = [text for ax in fig.axes for text in ax.texts] + list(fig.texts)
    assert {text.get_text() for text in labels} >= {f"ρ = {rho:g}" for rho in page.REFERENCE_CORRELATIONS}
    for ax in fig.axes:
        for container in ax.containers:
            points = ax.transData.transform(np.column_stack(container.lines[0].get_data()).astype(float))
            for text in labels:
                box = text.get_window_extent(renderer)
                assert not any(box.contains(x, y) for x, y in points), f"{text.get_text()!r} prints over a point"
    label = page.worth_axis_label()
    assert fig.axes[0].get_ylabel() == label and "Labels alone one label" not in label
