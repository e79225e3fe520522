"""The at-a-glance page selects every number by name: reordering the rows of any table it reads changes nothing, a
missing table says "not run in this build", and the sentences that state a comparison follow the numbers."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from recjudge.compendium import at_a_glance, claim_readers, headline_numbers, pages
from recjudge.compendium.pages import fmt
from recjudge.compendium.results import load_table
from recjudge.compendium.tables import format_table
from recjudge.llm.judge_spec import JudgeSpec, parse_judge


def reversed_tables(chapter: str, table: str) -> pd.DataFrame:
    return load_table(chapter, table).iloc[::-1].reset_index(drop=True)


def tables_read_by(row: at_a_glance.GlanceRow) -> list[tuple[str, str]]:
    read = []

    def spy(chapter: str, table: str) -> pd.DataFrame:
        read.append((chapter, table))
        return load_table(chapter, table)

    row.build(spy)
    return read


@pytest.mark.parametrize("row", at_a_glance.ROWS, ids=[row.paper for row in at_a_glance.ROWS])
def test_a_row_reads_its_numbers_by_name_not_by_position(row):
    assert row.row(load_table) == row.row(reversed_tables)


@pytest.mark.parametrize("row", at_a_glance.ROWS, ids=[row.paper for row in at_a_glance.ROWS])
def test_a_row_whose_table_is_missing_says_so(row):
    for missing in tables_read_by(row):
        def load(chapter: str, table: str, missing=missing) -> pd.DataFrame:
            if (chapter, table) == missing:
                raise FileNotFoundError(f"results/{chapter}/{table}.csv does not exist")
            return load_table(chapter, table)

        found = row.row(load)
        assert found["here"] == at_a_glance.NOT_RUN
        assert f"results/{missing[0]}/{missing[1]}.csv" in found["measured"]


def test_kang_rq2_rq3_calls_the_in_sample_best_selected_and_says_what_its_held_out_value_is():
    table5 = load_table("llm_ensembles", "table5_ours").set_index("method")
    text = at_a_glance.kang_rq2_rq3(load_table)["measured"]
    best, held = table5.loc["Multi-LLM & Auxiliary Data"], table5.loc["Multi-LLM & Auxiliary Data, held out"]
    # the in-sample best carries its interval, and says that it is a maximum selected on the same answers
    assert re.search(re.escape(f"({best['cell']}) reaches {fmt(best['pearson_pct'])}% [") + r"[−\d.]+, [−\d.]+\], "
                     r"a maximum selected among the grid's cells in sample", text), text
    # the held-out numbers rest on 5 or 6 answers a half: too few, never printed as a number
    splits = claim_readers.splits(held["cell"])
    assert f"({splits}): too few answers (5–6 per held-out half)" in text
    assert f"{fmt(held['pearson_pct'])}%" not in text and "5.5" not in text


def test_kang_rq2_rq3_prints_the_held_out_numbers_on_enough_answers_a_half():
    def load(chapter: str, table: str) -> pd.DataFrame:
        frame = load_table(chapter, table)
        held_out = frame["method"].astype(str).str.contains("held out|held-out", regex=True) \
            if "method" in frame else None
        return frame.assign(n=frame["n"].where(~held_out, 40), n_max=frame["n_max"].where(~held_out, 41)) \
            if held_out is not None and "n_max" in frame else frame

    table5 = load_table("llm_ensembles", "table5_ours").set_index("method")
    versus = load_table("auxiliary_data", "tables45_vs_paper").set_index("method")
    text = at_a_glance.kang_rq2_rq3(load)["measured"]
    held = table5.loc["Multi-LLM & Auxiliary Data, held out"]
    assert f"the chosen cell gives {fmt(held['pearson_pct'])}% on average" in text
    assert f"auxiliary data alone {fmt(versus.loc['Auxiliary Data, held out', 'pearson_pct'])}%" in text
    baseline = table5.loc["none (NA), same held-out halves", "pearson_pct"]
    assert f"no auxiliary data on the same halves {fmt(baseline)}%" in text


def test_the_taobao_comparison_word_follows_the_numbers():
    def load(chapter: str, table: str) -> pd.DataFrame:
        frame = load_table(chapter, table)
        if table == "taobao_fit":  # swap what curiosity and the Big-Five explain
            swap = {"curiosity": "big_five", "big_five": "curiosity"}
            frame = frame.assign(model=frame["model"].map(lambda m: swap.get(m, m)))
        return frame

    assert "curiosity explains more" in at_a_glance.kang_rq2_rq3(load_table)["here"]
    assert "curiosity explains no more" in at_a_glance.kang_rq2_rq3(load)["here"]


def test_the_strategies_row_leaves_out_strategies_without_a_parsed_reply():
    metrics = load_table("prompt_strategies", "metrics")
    text = at_a_glance.tokutake_strategies(load_table)["measured"]
    for row in metrics[metrics["n"] > 0].itertuples():
        assert f"{row.template} {fmt(row.mae, 2)} [{fmt(row.mae_ci_low, 2)}, {fmt(row.mae_ci_high, 2)}] (n = {row.n})" \
            in text
    for template in metrics.loc[metrics["n"] == 0, "template"]:
        assert f"no {template}" in text
    # MAEs over different parsed subsets (12, 15, 11 answers) are not set beside each other unsaid
    assert "not measured on the same answers" in text


def test_the_robustness_row_says_which_data_each_judge_ran_on():
    text = at_a_glance.khirbat_metamorphic(load_table)["here"]
    kang = load_table("judge_robustness", "robustness_kang_basic")
    assert f"Kang basic on {kang['data'].iloc[0]}" in text


def test_named_row_refuses_a_missing_or_ambiguous_name():
    table = pd.DataFrame({"method": ["a", "b", "b"], "value": [1, 2, 3]})
    assert at_a_glance.named_row(table, "method", "a", "t")["value"] == 1
    with pytest.raises(KeyError, match="t: expected one row with method = 'b', found 2"):
        at_a_glance.named_row(table, "method", "b", "t")
    with pytest.raises(KeyError, match="found 0"):
        at_a_glance.named_row(table, "method", "c", "t")


def test_the_trust_row_names_the_best_judge_and_follows_the_calibrated_errors():
    worth = pd.DataFrame({"judge": ["A", "B", "A"], "estimand": "mean serendipity", "n": [100, 100, 500],
                          "population": 2000, "labels_worth": [104.0, 131.0, 900.0],
                          "labels_worth_mc_low": [99.0, 125.0, 850.0], "labels_worth_mc_high": [109.0, 137.0, 950.0],
                          "labels_worth_by_rho2": [100.5, 128.0, 880.0]})
    paper = pd.DataFrame({"labels": [1000], "paper_judge": ["GPT-4 (LLM few-shot)"], "pearson_pct": [14.55],
                          "labels_worth_by_rho2": [1021.6]})

    def tables(errors):
        def load(chapter: str, table: str) -> pd.DataFrame:
            return {"labels_worth": worth, "calibration_errors": errors, "paper_best_judge_worth": paper}[table]
        return load

    def gains(a: float, b: float, half_width: float = 0.002) -> pd.DataFrame:
        return pd.DataFrame([
            {"judge": "A", "reading": "calibrated (isotonic)", "mae": 0.780 - a, "gain_over_constant": a,
             "gain_ci_low": a - half_width, "gain_ci_high": a + half_width},
            {"judge": "A", "reading": "constant answer", "mae": 0.780},
            {"judge": "B", "reading": "calibrated (isotonic)", "mae": 0.780 - b, "gain_over_constant": b,
             "gain_ci_low": b - half_width, "gain_ci_high": b + half_width},
            {"judge": "B", "reading": "constant answer", "mae": 0.780}])

    found = at_a_glance.trust_worth(tables(gains(0.001, -0.001)))["measured"]
    assert "(selected among 2: B) makes PPI++ worth 131 [125, 137] labels alone" in found
    assert "calibrated, no judge beats" in found
    assert "1,022 labels per 1,000" in found
    assert "A beats a constant answer" in at_a_glance.trust_worth(tables(gains(0.08, 0.0)))["measured"]
    assert "no judge beats" in at_a_glance.trust_worth(tables(gains(0.0056, 0.0, 0.01)))["measured"], \
        "a gain whose interval holds zero is noise"
    within = tables(gains(0.0, 0.0))

    def biased(chapter: str, table: str) -> pd.DataFrame:  # 131 simulated, but the ρ² rule gives 100.9
        return worth.assign(labels_worth_by_rho2=[100.2, 100.9, 880.0]) if table == "labels_worth" else \
            within(chapter, table)
    assert "no predictor saves a whole label beyond the simulation's noise" in \
        at_a_glance.trust_worth(biased)["measured"]


def test_the_explanations_row_states_the_authors_slip_only_when_their_prompt_has_it():
    text = at_a_glance.zhang_explanations(load_table)["here"]
    statements = load_table("explanation_evaluators", "authors_prompt_statements").set_index("aspect")
    assert not statements.loc["transparency", "asks_its_aspect"]
    assert "their multiple-aspect Transparency line states persuasiveness instead of transparency" in text

    def corrected(chapter: str, table: str) -> pd.DataFrame:
        frame = load_table(chapter, table)
        if table == "authors_prompt_statements":
            frame = frame.assign(statement_asked=frame["questionnaire_statement"], asks_its_aspect=True)
        return frame

    assert "instead of" not in at_a_glance.zhang_explanations(corrected)["here"]


def test_the_reevaluation_row_counts_ml1m_wins_and_calls_a_one_token_cost_a_lower_bound():
    text = at_a_glance.tokutake_reevaluation(load_table)["measured"]
    versus = load_table("recommender_reevaluation", "vs_random_1m")
    assert f"{int((versus['recall10_p'] < 0.05).sum())} of {len(versus)} on ML-1M" in text
    cost = load_table("recommender_reevaluation", "judge_cost_latest-small").set_index("run")
    everyone = cost.loc["all test users, every recommender"]
    assert everyone["output_tokens"] == everyone["judgments"]
    assert f"at least ${fmt(everyone['gpt4o_mini_usd'], 2)} (one output token per judgment)" in text


def test_the_robustness_row_on_a_few_answers_per_relation_is_too_few():
    # "move by 0.02–0.22 on average ... (no verdict flips; n = 5 ...)" was printed on 5 answers per relation
    text = at_a_glance.khirbat_metamorphic(load_table)["measured"]
    kang = load_table("judge_robustness", "robustness_kang_basic_serendipity_2018").dropna(
        subset=["verdict_flip_rate"])
    assert kang["scored"].max() < pages.MIN_ANSWERS
    assert f"too few answers ({int(kang['scored'].min())} scored answers per relation)" in text
    assert "no verdict flip" not in text and f"{fmt(kang['mean_abs_change'].max(), 2)} on average" not in text
    assert "this book's extension" in text and "share_changed" not in text and "Serendipity-2018" in text


def test_the_robustness_row_reads_the_kang_judge_on_serendipity_2018_by_name():
    def robustness(judge: str, data: str, changes: list, flips: list) -> pd.DataFrame:
        return pd.DataFrame({"judge": judge, "relation": [f"r{i}" for i in range(len(changes))], "cases": 20,
                             "filtered": 0, "scored": 20, "mean_abs_change": changes, "verdict_flip_rate": flips,
                             "spearman": float("nan"), "delta_pearson_truth": float("nan"), "data": data})

    real = at_a_glance.ROBUSTNESS_REAL_JUDGE

    def load(chapter: str, table: str) -> pd.DataFrame:
        if table == "robustness_kang_basic":  # the synthetic survey's judge: other numbers, never read
            return robustness("Kang basic", "SYNTHETIC survey (not real users)", [7.0, 8.0], [0.9, 0.95])
        if table == "robustness_kang_basic_serendipity_2018":  # a reader's judge in the role, listed first
            return pd.concat([robustness(f"{real}, reader", at_a_glance.ROBUSTNESS_REAL_DATA, [5.0], [0.8]),
                              robustness(real, at_a_glance.ROBUSTNESS_REAL_DATA, [0.3, 0.1], [0.2, 0.05])],
                             ignore_index=True)
        return load_table(chapter, table)

    text = at_a_glance.khirbat_metamorphic(load)["measured"]
    assert "on a sample of Serendipity-2018 answers: move by 0.10–0.30 on average" in text
    assert "verdicts flip in 5–20% of the cases; n = 20 scored answers per relation, 2 relations" in text


def test_every_findings_verdict_is_a_verdict_of_the_registry():
    from recjudge.compendium import claims

    found = at_a_glance.findings(load_table)
    records = claims.registry(load_table)
    for row in found.itertuples():
        mine = records[records["finding"] == row.paper]
        if mine.empty:
            assert row.verdicts == at_a_glance.NO_CLAIM
        for claim in mine.itertuples():
            assert f"{claim.claim}: {claim.verdict}" in row.verdicts


# ------------------------------------------------------------------------------------------------ headline numbers
def fixture_loader(tables: dict[tuple[str, str], pd.DataFrame]):
    def load(chapter: str, table: str) -> pd.DataFrame:
        if (chapter, table) not in tables:
            raise FileNotFoundError(f"results/{chapter}/{table}.csv does not exist")
        return tables[(chapter, table)].copy()
    return load


def rq1_tables(judge: str, judge_pearson: float, sog: float) -> dict[tuple[str, str], pd.DataFrame]:
    """The RQ1 chapter's tables of one build (its LLM judge named ``judge``) and Tokutake's Table 1 beside ours."""
    return {
        ("proxy_vs_llm", "agreement_all_answers"): pd.DataFrame({"method": ["Random", "SOG"],
                                                                 "pearson_pct": [0.1, sog]}),
        ("proxy_vs_llm", "paper_table2"): pd.DataFrame({
            "family": ["Proxy Metrics", "LLM zero-shot", "LLM few-shot", "LLM-based Baseline"],
            "method": ["SOG", "GPT-4 (zero-shot)", "GPT-4 (few-shot)", "SerenPrompt_2"],
            "pearson_pct": [5.72, 10.89, 14.55, 30.0]}),
        ("proxy_vs_llm", "judge_runs"): pd.DataFrame({"method": [judge]}),
        # SOG correlates more than the judge on the sample: the best *LLM judge* is still the judge's row
        ("proxy_vs_llm", "agreement_sample"): pd.DataFrame({"method": ["SOG", judge, "gpt-3.5-turbo (recorded)"],
                                                            "pearson_pct": [40.0, judge_pearson, 35.0]}),
        ("prompt_strategies", "table1_vs_paper"): pd.DataFrame({
            "template": ["Base", "LS", "CoT", "LtM"], "mae_gpt": [1.473, 1.159, 0.847, 1.014],
            "mae_ours": [1.4, float("nan"), 0.9, 1.0]}),
    }


def headline(frame: pd.DataFrame, number: str) -> pd.Series:
    return frame[frame["number"].str.startswith(number)].iloc[0]


def variant_tables(reader: JudgeSpec, book_judge: str = "SmolLM2-135M zero-shot") -> dict[tuple[str, str],
                                                                                        pd.DataFrame]:
    """A variant's tables as its chapters write them: the book's judges (at the variant's scale) and, in rows,
    columns or a pool of its own, the reader's judge, named by its label (or ``provider:model`` in run tables)."""
    you, asks = reader.display_label, f"{reader.provider}:{reader.model}"
    tables = rq1_tables(book_judge, -4.6, sog=12.0)
    tables[("proxy_vs_llm", "judge_runs")] = pd.DataFrame({
        "method": [book_judge, f"{you} zero-shot", f"{you} LLM4Seren"],
        "judge": ["local:smollm2-135m-instruct-q4_1/kang_basic", f"{asks}/kang_basic", f"{asks}/llm4seren"]})
    tables[("proxy_vs_llm", "agreement_sample")] = pd.DataFrame({
        "method": ["SOG", book_judge, f"{you} zero-shot", f"{you} LLM4Seren"],
        "pearson_pct": [40.0, 33.0, 18.0, 27.5], "n": [200, 200, 200, 5],
        "pearson_ci_low": [30.0, 20.0, 4.0, -60.0], "pearson_ci_high": [50.0, 45.0, 31.0, 90.0]})
    tables[("auxiliary_data", "agreement_by_setting")] = pd.DataFrame({
        "method": ["none (NA)", "Pop", "k=1"] * 2, "pearson_pct": [48.0, 60.0, 10.0, 21.0, 19.0, 35.0],
        "n": [12] * 3 + [40] * 3, "pearson_ci_low": [-20.0, -5.0, -50.0, -10.0, -12.0, 4.0],
        "pearson_ci_high": [80.0, 88.0, 63.0, 48.0, 46.0, 59.0],
        "judge": ["SmolLM2-135M 5-shot"] * 3 + [you] * 3})
    tables[("auxiliary_data", "tables45_vs_paper")] = pd.DataFrame({
        "method": ["none (NA)", "Auxiliary Data"], "pearson_pct": [48.0, 60.0], "paper_pearson_pct": [11.5, 20.2]})
    tables[("llm_ensembles", "every_ensemble")] = pd.DataFrame({
        "n": [1, 1, 2],
        "members": ["SmolLM2 zero-shot", f"{you} few-shot (5)", f"SmolLM2 zero-shot + {you} few-shot (5)"]})
    tables[("llm_ensembles", "table5_ours")] = pd.DataFrame({
        "method": ["Auxiliary Data", "Multi-LLM & Auxiliary Data, held out"], "pearson_pct": [30.0, 41.0],
        "n": [12, 5], "n_max": [12, 6], "cell": ["few-shot [k=1]", "few-shot [k=1] ×20"]})
    tables[("prompt_strategies", "table1_vs_paper")][f"mae_{you}"] = [0.7, 0.8, float("nan"), 0.95]
    tables[("prompt_strategies", "metrics")] = pd.DataFrame({
        "judge": ["SmolLM2-135M"] * 4 + [you] * 4, "template": ["Base", "LS", "CoT", "LtM"] * 2,
        "n": [12, 0, 15, 11, 30, 30, 0, 30], "mae": [1.4, float("nan"), 0.9, 1.0, 0.7, 0.8, float("nan"), 0.95],
        "mae_ci_low": [1.0, float("nan"), 0.5, 0.5, 0.5, 0.6, float("nan"), 0.7],
        "mae_ci_high": [1.8, float("nan"), 1.3, 1.8, 0.9, 1.0, float("nan"), 1.2]})
    tables[("recommender_reevaluation", "table3_latest-small")] = pd.DataFrame({
        "recommender": ["BPRMF", "Random", "BPRMF", "Random"], "avg_score_mean": [2.9, 3.5, 2.2, 4.1],
        "judge": ["smollm2-135m-instruct-q4_1", "smollm2-135m-instruct-q4_1", you, you]})
    tables[("explanation_evaluators", "llm_runs")] = pd.DataFrame({
        "model": ["local:smollm2-135m-instruct-q4_1", asks, asks], "n_replies": [30, 30, 10],
        "n_unparsable": [23, 3, 1]})
    tables[("metamorphic_recommender", "reply_parsing")] = pd.DataFrame({"replies": [8], "not_a_list": [7]})
    tables[("metamorphic_recommender", "reader_reply_parsing")] = pd.DataFrame({
        "recommender": [you, you], "replies": [8, 12], "not_a_list": [2, 3]})
    tables[("trust_judges", "labels_worth")] = pd.DataFrame({
        "judge": ["SmolLM2-135M few-shot (5)", f"{you} few-shot (5)", f"{you} few-shot (5)"],
        "estimand": ["mean serendipity"] * 3, "n": [100, 100, 200], "labels_worth": [100.5, 131.0, 260.0]})
    return tables


def readers_headlines() -> tuple[JudgeSpec, pd.DataFrame]:
    """A reader's judge and the headlines of a variant it judged (fixture tables)."""
    reader = parse_judge("openai:gpt-4o-mini")
    book = rq1_tables("SmolLM2-135M zero-shot", -4.6, sog=9.3)
    return reader, headline_numbers.headlines(fixture_loader(book), fixture_loader(variant_tables(reader)), [reader])


def test_headlines_put_the_paper_the_books_judge_and_yours_side_by_side():
    reader, frame = readers_headlines()
    you = headline_numbers.your_judge_column(reader)
    assert list(frame.columns) == [*headline_numbers.HEADLINE_COLUMNS, you, *headline_numbers.interval_columns(you)]
    assert you == "gpt-4o-mini"
    assert len(frame) == len(headline_numbers.HEADLINES)
    sog = headline(frame, "Pearson (%) of the SOG proxy")
    assert (sog["paper_value"], sog["default_judge"]) == (5.72, 9.3) and pd.isna(sog[you]), "a proxy is no judge"
    yours = {number: headline(frame, number)[you] for number in (
        "Pearson (%) of the best LLM judge", "Pearson (%) of the judge without auxiliary data",
        "Pearson (%) with the best auxiliary data", "Pearson (%) of the ensemble", "MAE of the Base prompt",
        "MAE of the CoT prompt", "Highest mean serendipity score", "Replies of the LLM evaluators",
        "Replies of the LLM recommender", "Human labels that 100 labels")}
    # each the reader's judge's own rows, never the book's judge beside it in the variant's tables
    assert yours["Pearson (%) of the best LLM judge"] == 27.5
    assert yours["Pearson (%) of the judge without auxiliary data"] == 21.0
    assert yours["Pearson (%) with the best auxiliary data"] == 35.0, "its best setting other than NA (here k=1)"
    assert yours["Pearson (%) of the ensemble"] == 41.0, "the variant's ensembles: a pool the reader's judge joins"
    assert yours["MAE of the Base prompt"] == 0.7 and pd.isna(yours["MAE of the CoT prompt"])
    assert yours["Highest mean serendipity score"] == 2.2, "Random left out, as for the book's judge"
    assert yours["Replies of the LLM evaluators"] == pytest.approx(90.0)
    assert yours["Replies of the LLM recommender"] == pytest.approx(75.0)
    assert yours["Human labels that 100 labels"] == 131.0, "its row at n = 100"
    best = headline(frame, "Pearson (%) of the best LLM judge")
    # the book's judges, found through the committed build's judge_runs; the paper's best LLM row, not a baseline's
    assert (best["paper_value"], best["default_judge"]) == (14.55, -4.6)


def test_each_readers_judge_has_its_own_column_and_a_judge_without_rows_is_absent():
    first, second = parse_judge("openai:gpt-4o-mini"), parse_judge("anthropic:claude-sonnet-4-6")
    book = rq1_tables("SmolLM2-135M zero-shot", -4.6, sog=9.3)
    tables = variant_tables(first)
    del tables[("prompt_strategies", "table1_vs_paper")]  # a variant that did not run that chapter
    frame = headline_numbers.headlines(fixture_loader(book), fixture_loader(tables), [first, second])
    added = frame.columns[len(headline_numbers.HEADLINE_COLUMNS):]
    assert [column for column in added if f"{column}_n" in frame.columns] == ["gpt-4o-mini", "claude-sonnet-4-6"]
    assert headline(frame, "Pearson (%) of the best LLM judge")["gpt-4o-mini"] == 27.5
    numbers = frame.set_index("number")
    mae = numbers[numbers.index.str.startswith("MAE of the")]
    assert mae[["gpt-4o-mini", "claude-sonnet-4-6"]].isna().all().all(), "a chapter not run: absent, not zeros"
    assert numbers["claude-sonnet-4-6"].isna().all(), "a judge with no rows of its own (nor in the pool) has none"
    labels = headline_numbers.headline_labels([first, second])
    assert labels["claude-sonnet-4-6"] == "Your judge: claude-sonnet-4-6 [95% CI]"


def test_a_readers_judge_named_like_a_column_of_the_table_is_refused():
    clash = JudgeSpec(provider="openai", model="gpt-4o-mini", label="paper_value")
    with pytest.raises(ValueError, match="labelled \\['paper_value'\\]"):
        headline_numbers.headlines(fixture_loader({}), fixture_loader({}), [clash])
    with pytest.raises(ValueError, match="read from a variant's tables"):
        headline_numbers.headlines(fixture_loader({}), None, [parse_judge("openai:gpt-4o-mini")])


def test_headlines_read_by_name_and_show_absent_values_as_a_dash():
    book = rq1_tables("SmolLM2-135M zero-shot", -4.6, sog=9.3)
    reversed_book = {key: table.iloc[::-1].reset_index(drop=True) for key, table in book.items()}
    frame = headline_numbers.headlines(fixture_loader(book))
    assert list(frame.columns) == headline_numbers.HEADLINE_COLUMNS, "the committed book has no reader's judge"
    pd.testing.assert_frame_equal(frame, headline_numbers.headlines(fixture_loader(reversed_book)))
    html = format_table(frame, labels=headline_numbers.headline_labels(), lift_constant=False).to_html()
    assert "This book" in html and "This variant" not in html and "Your judge" not in html
    assert "nan" not in html.lower() and "–" in html
    # a variant of a scale profile alone: its own build of the book's rows, read the same way
    scaled = headline_numbers.headlines(fixture_loader(book), fixture_loader(rq1_tables("SmolLM2-135M zero-shot", 3.0,
                                                                                   sog=1.0)))
    assert headline(scaled, "Pearson (%) of the SOG proxy")[headline_numbers.THIS_VARIANT] == 1.0
    variant = headline_numbers.headlines(fixture_loader(book), fixture_loader({}))
    assert variant[headline_numbers.THIS_VARIANT].isna().all(), "a variant without tables has no value, not zeros"
    html = format_table(variant, labels=headline_numbers.headline_labels(), lift_constant=False).to_html()
    assert "This book" in html and "This variant" in html


def test_a_readers_judge_has_n_and_an_interval_like_the_books():
    reader, frame = readers_headlines()
    you = headline_numbers.your_judge_column(reader)
    n, low, high = headline_numbers.interval_columns(you)
    none = headline(frame, "Pearson (%) of the judge without auxiliary data")
    assert (none[n], none[low], none[high]) == (40, -10.0, 48.0), "its own row's n and interval, not the book's"
    best = headline(frame, "Pearson (%) with the best auxiliary data")
    assert (best[n], best[low], best[high]) == (40, 4.0, 59.0), "the n and interval of its selected setting"
    judge = headline(frame, "Pearson (%) of the best LLM judge")
    assert (judge[n], judge[low]) == (5, -60.0), "the n and interval of its best run"
    assert headline(frame, "MAE of the Base prompt")[n] == 30
    assert headline(frame, "Pearson (%) of the ensemble")[n] == 5, "the answers of the smaller held-out half"
    shares = headline(frame, "Replies of the LLM evaluators")
    assert shares[n] == 40 and shares[low] < 90.0 < shares[high]
    recommender = headline(frame, "Replies of the LLM recommender")
    assert recommender[n] == 20 and recommender[low] < 75.0 < recommender[high]
    shown = headline_numbers.headlines_shown(frame).set_index("number")
    assert "ci_low" not in shown.columns and low not in shown.columns and shown[n].notna().all()
    row = headline(shown.reset_index(), "Pearson (%) of the judge without auxiliary data")
    assert (row[you], row[n]) == ("21 [−10, 48]", "40")
    html = format_table(headline_numbers.headlines_shown(frame), labels=headline_numbers.headline_labels([reader]),
                        lift_constant=False).to_html()
    assert "Your judge: gpt-4o-mini [95% CI]" in html and "n (gpt-4o-mini)" in html


def test_numbers_on_too_few_answers_are_not_shown_as_numbers():
    reader, frame = readers_headlines()
    shown = headline_numbers.headlines_shown(frame)
    you = headline_numbers.your_judge_column(reader)
    judge = headline(shown, "Pearson (%) of the best LLM judge")
    assert judge[you] == "too few answers (5)", "27.5 on 5 answers is no number to read"
    assert headline(shown, "Pearson (%) of the ensemble")[you] == "too few answers (5)"
    assert headline(shown, "MAE of the CoT prompt")[you] == "too few answers (0)"
    assert headline(shown, "MAE of the Base prompt")[you].startswith("0.7")
    # the book's own column follows the same threshold
    row = {column: float("nan") for column in headline_numbers.HEADLINE_COLUMNS}
    row.update(paper="p", number="Pearson (%) of x", note="", default_judge=12.3,
               n=headline_numbers.MIN_ANSWERS - 1)
    few = headline_numbers.headlines_shown(pd.DataFrame([row], columns=headline_numbers.HEADLINE_COLUMNS)).iloc[0]
    assert few["default_judge"] == f"too few answers ({headline_numbers.MIN_ANSWERS - 1})"
    row["n"] = headline_numbers.MIN_ANSWERS
    enough = headline_numbers.headlines_shown(pd.DataFrame([row], columns=headline_numbers.HEADLINE_COLUMNS)).iloc[0]
    assert enough["default_judge"] == "12"


def test_a_readers_best_auxiliary_data_is_chosen_as_the_chapter_chooses_the_books():
    """The committed book's judge read as if it were a reader's: its best setting from agreement_by_setting is the
    chapter's own "Auxiliary Data" row of Tables 4-5."""
    by_setting = load_table("auxiliary_data", "agreement_by_setting")
    book_judge = JudgeSpec(provider="local", model="smollm2-135m-instruct-q4_1", label=by_setting["judge"].iloc[0])
    tables = {("auxiliary_data", "agreement_by_setting"): by_setting}
    frame = headline_numbers.headlines(load_table, fixture_loader(tables), [book_judge])
    for number in ("Pearson (%) of the judge without auxiliary data", "Pearson (%) with the best auxiliary data"):
        row = headline(frame, number)
        assert row[book_judge.display_label] == pytest.approx(row["default_judge"]), number


def test_the_committed_headlines_are_what_the_page_shows():
    shown = load_table("at_a_glance", "headlines")
    computed = headline_numbers.headlines(load_table)
    assert shown["number"].tolist() == computed["number"].tolist()
    pd.testing.assert_frame_equal(shown.drop(columns=["paper", "number"]),
                                  computed.drop(columns=["paper", "number"]), rtol=1e-5, check_dtype=False)
    assert computed["n"].dtype == "Int64"  # a count, never 5.5


def test_headlines_carry_n_an_interval_and_say_when_a_number_was_selected():
    frame = headline_numbers.headlines(load_table).set_index("number")
    settings = load_table("auxiliary_data", "agreement_by_setting").set_index("method")
    none = headline(frame.reset_index(), "Pearson (%) of the judge without auxiliary data")
    assert none["n"] == settings.loc["none (NA)", "n"]
    assert none["ci_low"] == pytest.approx(settings.loc["none (NA)", "pearson_ci_low"])
    integer = load_table("auxiliary_data", "tables45_vs_paper").set_index("method").loc["none (NA), integer"]
    assert none["note"].startswith("expected score")
    assert ("Pearson is undefined" in none["note"]) == pd.isna(integer["pearson_pct"])
    best = headline(frame.reset_index(), "Pearson (%) with the best auxiliary data (selected in sample")
    held = load_table("auxiliary_data", "tables45_vs_paper").set_index("method").loc["Auxiliary Data, held out"]
    # its held-out value rests on 5 or 6 answers a half: too few, not a number
    assert best["note"].startswith("selected") and f"{fmt(held['pearson_pct'])}%" not in best["note"]
    assert best["note"].endswith("measured on the other half: too few answers (5–6 per held-out half)")
    judge = frame.loc[frame.index.str.startswith("Pearson (%) of the best LLM judge")].iloc[0]
    assert judge["note"].startswith("selected") and judge["n"] == 200
    # readings of the judge runs, as many as were asked (a local judge's run read two ways), not "8 LLM judge runs"
    runs = load_table("proxy_vs_llm", "judge_runs")
    sample = load_table("proxy_vs_llm", "agreement_sample").dropna(subset=["pearson_pct"])
    asked = runs[runs["method"].isin(sample["method"])]["judge"].nunique()
    assert f"readings of {asked} LLM judge runs (a local judge's run read as its expected score and as its most " \
           "likely score token" in judge["note"]
    assert "LLM judge runs on the same answers" not in judge["note"]

    held_out = frame.loc["Pearson (%) of the ensemble with auxiliary data, on held-out users"]
    assert held_out["n"] == 5 and "5–6 answers per half" in held_out["note"]
    shares = frame.loc["Replies of the LLM evaluators that held a score (%; every run)"]
    held_score, replies = claim_readers.evaluator_replies(load_table)
    assert shares["n"] == replies and shares["ci_low"] < 100 * held_score / replies < shares["ci_high"]


def test_the_papers_rq2_numbers_name_the_papers_judge():
    # the paper's 11.48% and 20.25% are Qwen2.5-14B few-shot's, not the book's judge's
    frame = headline_numbers.headlines(load_table)
    for number in ("Pearson (%) of the judge without auxiliary data", "Pearson (%) with the best auxiliary data"):
        row = headline(frame, number)
        assert "paper: Qwen2.5-14B few-shot" in row["number"] and row["paper_value"] > 0


def test_the_highest_mean_score_carries_its_judged_users_and_a_t_interval_over_the_folds():
    from statsmodels.stats.weightstats import DescrStatsW

    frame = headline_numbers.headlines(load_table).set_index("number")
    row = frame.loc[frame.index.str.startswith("Highest mean serendipity score")].iloc[0]
    chosen = row["note"].split("(")[1].split(")")[0]
    folds = load_table("recommender_reevaluation", "serendipity_per_fold_latest-small")
    mine = folds[folds["recommender"] == chosen]
    assert row["n"] == mine["n_users"].sum()
    assert row["default_judge"] == pytest.approx(mine["avg_score"].mean(), rel=1e-5)
    low, high = DescrStatsW(mine["avg_score"].to_numpy()).tconfint_mean(alpha=0.05)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high), rel=1e-4)


def test_precision_follows_n_on_the_page():
    shown = headline_numbers.headlines_shown(headline_numbers.headlines(load_table)).set_index("number")
    none = headline(shown.reset_index(), "Pearson (%) of the judge without auxiliary data")
    assert none["n"] == "12" and "." not in none["default_judge"]  # no decimals on 12 answers
    sog = shown.loc["Pearson (%) of the SOG proxy with users, all answers"]
    assert sog["n"] == "2,130" and sog["default_judge"].count(".") == 3  # one decimal each on 2,130 answers


def test_the_pages_caveat_under_a_readers_judge_says_where_its_numbers_are():
    book = at_a_glance.caveat()
    yours = at_a_glance.caveat([parse_judge("openai:gpt-4o-mini")])
    assert "could not be tested offline" in book and "your judge" not in book
    assert yours.startswith(book) and "your judge's numbers stand in the last table" in yours


def test_each_papers_own_answer_stands_beside_our_verdicts():
    from recjudge.compendium.claim_evidence import NOT_RUN

    glance = at_a_glance.findings(load_table).set_index("paper")
    columns = list(at_a_glance.COLUMNS)
    assert columns.index("paper_answer") == columns.index("verdicts") - 1
    assert not glance["paper_answer"].str.startswith(NOT_RUN).any()
    # the paper's printed numbers, read by name from the chapters' copies of its tables
    assert "GPT-4 few-shot correlates 14.55%" in glance.loc["Kang et al. 2025, RQ1", "paper_answer"]
    assert "from 11.48% to 20.25%" in glance.loc["Kang et al. 2025, RQ2–RQ3", "paper_answer"]
    assert glance.loc["Tokutake et al. 2025", "paper_answer"].startswith("CoT: GPT-4o-mini's MAE 0.847")
    assert "in 13 of 13" in glance.loc["Lima & Peres", "paper_answer"]


def test_a_papers_answer_whose_table_is_missing_says_not_run():
    def without_table1(chapter: str, table: str):
        if table == "paper_table1":
            raise FileNotFoundError("results/prompt_strategies/paper_table1.csv does not exist")
        return load_table(chapter, table)

    row = next(row for row in at_a_glance.ROWS if row.paper == "Tokutake et al. 2025").row(without_table1)
    assert row["paper_answer"].startswith("not run in this build") and "paper_table1" in row["paper_answer"]


def test_the_at_a_glance_page_does_not_describe_its_own_layout():
    from recjudge.paths import project_root

    source = (project_root() / "notebooks" / "at_a_glance.md").read_text(encoding="utf-8")
    assert "Each paper's claims that this book examines, one by one" not in source


def test_every_headline_names_the_model_its_number_comes_from():
    book = rq1_tables("SmolLM2-135M zero-shot", -4.6, sog=9.3)
    frame = headline_numbers.headlines(fixture_loader(book)).set_index("number")
    assert len(frame) == len(headline_numbers.HEADLINES) and frame["model"].str.len().gt(0).all()
    best = frame.loc[[n for n in frame.index if "best LLM judge" in n], "model"]
    assert best.tolist() == ["SmolLM2-135M zero-shot"], "the best judge is read from the tables"
    assert frame.loc["Pearson (%) of the SOG proxy with users, all answers", "model"] == "no LLM: the SOG proxy"
    shown = headline_numbers.headlines_shown(headline_numbers.headlines(fixture_loader(book)))
    assert "model" in shown.columns and "model" in headline_numbers.headline_labels()
    # a table that is missing leaves the model readable, never a crash
    assert headline_numbers.headlines(fixture_loader({}))["model"].str.len().gt(0).all()


def test_the_paper_by_paper_table_puts_the_paper_and_its_question_in_one_cell():
    from recjudge.compendium import at_a_glance as glance_page

    glance = pd.DataFrame({"paper": ["Kang et al. 2025, RQ1", "Lima"], "question": ["Do judges track users?", "Why?"],
                           "here": ["a", "b"], "paper_answer": ["c", "d"], "verdicts": ["e", "f"],
                           "measured": ["g", "h"]})
    table = glance_page.show_findings(glance)
    assert list(table.data.columns) == ["Paper and question", "Data and judges here", "The paper's answer",
                                        "Our verdicts on its claims", "What this book measured"]
    assert table.data["Paper and question"].tolist() == ["Kang et al. 2025, RQ1: Do judges track users?", "Lima: Why?"]


def test_zhangs_answer_is_certain_llms_counted_from_table_1_and_no_llm_annotator_agreement():
    # "LLM evaluators agree with users and annotators as well as or better than BLEU and ROUGE": the paper says
    # "certain LLMs", half its LLM rows fall below ROUGE-1-F, and Table 1 sets no LLM against the annotators
    answer = at_a_glance.zhang_answer(load_table)
    table = claim_readers.zhang_dataset_level()
    llms = table[table.index.str.contains(r"\((?:S|M)\)$")]["average"]
    rouge = float(table.loc["ROUGE-1-F", "average"])
    assert answer.startswith(f"Certain LLMs: {int((llms >= rouge).sum())} of its {len(llms)} LLM rows")
    assert f"ROUGE-1-F ({fmt(rouge, 2)}%)" in answer
    assert "and annotators" not in answer and "better" not in answer


def test_the_lima_row_names_the_data_the_magnitudes_need():
    text = at_a_glance.lima_surprise(load_table)["measured"]
    assert "ratings of 1 to 3" in text and "movie descriptions" in text


def test_the_reevaluation_row_prints_no_score_of_three_judged_users():
    text = at_a_glance.tokutake_reevaluation(load_table)["measured"]
    assert "too few judged users (1 per fold)" in text
    scores = load_table("recommender_reevaluation", "table3_latest-small")
    assert fmt(scores[scores["recommender"] != "Random"]["avg_score_mean"].min(), 2) not in text
    assert " beat " not in text
