"""The page of the proxy-versus-LLM chapter: the rules that choose its words (both sides of each), its tables'
columns and captions, and its figure, on small made-up frames (not the chapter's data)."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from recjudge.chapters import proxy_vs_llm as page
from recjudge.compendium.claim_readers import WEAK_PEARSON_PCT
from recjudge.serendipity import ground_truth as ser
from recjudge.serendipity import proxies

PAPER_PROXIES = ser.kang2025_table2().query("dataset == 'Serendipity-2018'").drop_duplicates("method").set_index(
    "method").loc[list(proxies.PROXIES), "pearson_pct"]
PAPER_WEAK = bool(PAPER_PROXIES.abs().max() < WEAK_PEARSON_PCT)


pytestmark = pytest.mark.usefixtures("page_results")


def agreement(pearson: dict[str, float], low: dict[str, float] | None = None, high: dict[str, float] | None = None,
              **extra: dict[str, float]) -> pd.DataFrame:
    """Agreement rows with the columns the page reads; intervals ±2 points unless given."""
    rows = []
    for method, value in pearson.items():
        rows.append({"method": method, "n": 100, "pearson_pct": value, "mae": 1.0, "rmse": 1.2,
                     "pearson_ci_low": (low or {}).get(method, value - 2), "pearson_ci_high": (high or {}).get(
                         method, value + 2), "reference": "" if method == "Random" else "SOG",
                     **{column: values.get(method, np.nan) for column, values in extra.items()}})
    return pd.DataFrame(rows)


def eq5(per_user: dict[str, float], pooled: dict[str, float]) -> pd.DataFrame:
    return pd.DataFrame({"method": list(per_user), "per_user_pearson_pct": list(per_user.values()),
                         "pooled_pearson_pct": [pooled[m] for m in per_user]})


def test_weak_words_follow_the_largest_proxy_against_the_threshold():
    weak = agreement({"Random": 0.0, "SOG": 10.0, "PURS": -5.0, "DESR": 3.0, "SNPR": 1.0})
    strong = agreement({"Random": 0.0, "SOG": 10.0, "PURS": -25.0, "DESR": 3.0, "SNPR": 1.0})
    readings = eq5(dict(PAPER_PROXIES), {m: 50.0 for m in proxies.PROXIES})
    weak_words = page.findings(weak, "SOG", readings, 1000)["weak_words"]
    assert weak_words == page.PROSE(page.WEAK_PASSAGES[(True, PAPER_WEAK)])
    found = page.findings(strong, "SOG", readings, 1000)
    assert found["weak_words"] == page.PROSE(page.WEAK_PASSAGES[(False, PAPER_WEAK)])
    assert found["largest_proxy"] == "25.0" and found["ours_order"] == "SOG > DESR > SNPR > PURS"


def test_the_strongest_proxy_lies_above_chance_only_when_the_intervals_part():
    readings = eq5(dict(PAPER_PROXIES), {m: 50.0 for m in proxies.PROXIES})
    apart = agreement({"Random": 0.0, "SOG": 10.0, "PURS": 1.0, "DESR": 1.0, "SNPR": 1.0},
                      low={"SOG": 5.0}, high={"Random": 4.9})
    touching = agreement({"Random": 0.0, "SOG": 10.0, "PURS": 1.0, "DESR": 1.0, "SNPR": 1.0},
                         low={"SOG": 5.0}, high={"Random": 5.0})
    assert page.findings(apart, "SOG", readings, 1000)["reference_vs_chance"] == "SOG lies above what chance gives"
    assert page.findings(touching, "SOG", readings, 1000)["reference_vs_chance"] == \
        "SOG's interval overlaps what chance gives"
    found = page.findings(apart, "SOG", readings, 1000)
    assert found["reference_pearson"] == "10.0% [5.0, 12.0]" and found["random_seeds"] == "1,000"


def test_the_eq5_reading_is_the_one_closer_to_the_paper_for_most_proxies():
    table = agreement({"Random": 0.0, "SOG": 10.0, "PURS": 1.0, "DESR": 1.0, "SNPR": 1.0})
    per_user_closer = eq5(dict(PAPER_PROXIES), {m: 50.0 for m in proxies.PROXIES})
    found = page.findings(table, "SOG", per_user_closer, 10)
    assert (found["eq5_closer"], found["eq5_reading"]) == ("4", "the per-user reading of eq. 5")
    half = eq5({m: v + (0 if i < 2 else 60) for i, (m, v) in enumerate(PAPER_PROXIES.items())},
               {m: v + (60 if i < 2 else 0) for i, (m, v) in enumerate(PAPER_PROXIES.items())})
    found = page.findings(table, "SOG", half, 10)
    assert (found["eq5_closer"], found["eq5_reading"]) == ("2", "a pooled correlation")  # 2 of 4 is no majority


def test_further_findings_say_where_the_recorded_judge_and_the_local_judge_land():
    below = agreement({"Random": 0.0, "SOG": 10.0, page.RECORDED: -6.0}, high={page.RECORDED: -1.0},
                      p_pearson_vs_ref={page.RECORDED: 0.001})
    above = agreement({"Random": 0.0, "SOG": 10.0, page.RECORDED: 12.0}, p_pearson_vs_ref={page.RECORDED: 0.4})
    noise = agreement({"SmolLM2-135M zero-shot": 3.0}, low={"SmolLM2-135M zero-shot": -4.0})
    signal = agreement({"SmolLM2-135M zero-shot": 30.0})
    text = page.further_findings(below, "SOG", noise, ["SmolLM2-135M zero-shot"]).data
    assert "below SOG" in text and "ranks serendipity the wrong way round" in text
    assert "stays at noise level" in text and "an interval that includes 0" in text
    text = page.further_findings(above, "SOG", signal, ["SmolLM2-135M zero-shot"]).data
    assert "above SOG" in text and "not a better judge than the proxy" in text
    assert "noise level" not in text and "an interval that excludes 0" in text
    # an interval the resamples leave undefined is neither: "−1.8% on 10 answers, an interval that excludes 0" was
    # printed for one
    undefined = agreement({"SmolLM2-135M zero-shot": -1.8}, low={"SmolLM2-135M zero-shot": np.nan},
                          high={"SmolLM2-135M zero-shot": np.nan})
    text = page.further_findings(above, "SOG", undefined, ["SmolLM2-135M zero-shot"]).data
    assert "reaches −1.8% on 100 answers, with no interval (the resampled answers leave it undefined)." in text
    assert "noise level" not in text and "excludes" not in text and "nan" not in text


def test_the_taobao_finding_sets_the_category_signal_against_the_papers_best_proxy():
    paper_best = ser.kang2025_table2().query("dataset == 'Taobao Serendipity' and family == 'Proxy Metrics'")[
        "pearson_pct"].max()
    table = agreement({"SOG": 10.0})
    for value, word in ((paper_best + 1, "above"), (paper_best - 1, "below")):
        taobao = agreement({"Random": 0.0, ser.CATEGORY_COMMONNESS: value})
        text = page.further_findings(table, "SOG", table.iloc[:0], [], taobao_table=taobao).data
        assert f"{word} the best proxy the paper reports there" in text


def test_weight_finding_says_whether_the_strongest_proxy_depends_on_the_weights():
    table = agreement({"Random": 0.0, "SOG": 10.0, "PURS": 6.0, "DESR": 2.0, "SNPR": 1.0})
    robust = pd.DataFrame({"proxy": "SOG", "weights": ["a", "b"], "pearson_pct": [8.0, 12.0], "default": [True, False]})
    fragile = robust.assign(pearson_pct=[5.0, 12.0])
    assert page.weight_finding(robust, table).startswith("Under 0 of 2 weight vectors")
    assert page.weight_finding(robust, table).endswith("does not depend on SOG's weights.")
    assert page.weight_finding(fragile, table).endswith("depends on SOG's unreported weights.")
    summary = page.weight_summary(fragile).set_index("proxy").loc["SOG"]
    assert (summary["lowest"], summary["highest"], summary["default"], summary["default_rank"]) == (5.0, 12.0, 5.0, 2)


def test_the_significance_claim_holds_only_when_every_correlation_is_significant():
    gains = pd.DataFrame({"dataset": ["D"], "judge": ["GPT-4"], "gain_over_sog_pct": [90.0]})
    significance = pd.DataFrame({"dataset": "D", "family": ["Random", "Proxy Metrics", "LLM zero-shot"],
                                 "critical_pearson_pct": 4.0, "significant": [False, True, True]})
    holds = page.claims_finding(significance, gains)
    assert "0 of 2 non-random correlations" in holds and "the claim holds." in holds
    assert "GPT-4 on D +90.0%; 1 of 1 lie within 75–125%" in holds
    fails = page.claims_finding(significance.assign(significant=[False, False, True]), gains)
    assert "1 of 2 non-random" in fails and "does not hold." in fails


@dataclass
class Report:
    n_prompts: int = 3
    n_from_store: int = 3
    n_provider_calls: int = 0
    n_left_out: int = 0


class Run:
    def __init__(self, provider, scoring, scores, left_out=0):
        self.config = SimpleNamespace(provider=provider, scoring=scoring, label=f"{provider}:model", runs=1)
        self.report = Report(n_from_store=3 - left_out, n_left_out=left_out)
        self._scores = pd.Series(scores)

    def scores(self, column=None):
        return self._scores.round() if column == "modal_score" else self._scores


def test_judge_runs_and_notes_read_each_run_once_or_twice():
    runs = {"SmolLM2-135M zero-shot": Run("local", "expected", [2.4, np.nan, 3.6]),
            page.RECORDED: Run("recorded", "recorded", [1.0, 2.0, 3.0]),
            "Reader zero-shot": Run("openai", "expected", [1.0, 5.0, 3.0])}
    table = page.judge_run_table(runs)
    assert table["method"].tolist() == ["SmolLM2-135M zero-shot", f"SmolLM2-135M zero-shot{ser.INTEGER}",
                                        page.RECORDED, "Reader zero-shot", f"Reader zero-shot{ser.INTEGER}"]
    assert table["scoring"].tolist()[:3] == ["expected", "most likely score", "recorded"]
    assert table["unparsable"].tolist() == [1, 1, 0, 0, 0]
    notes = page.judge_notes(runs, {"Reader": ["Reader zero-shot"]})
    assert notes[f"SmolLM2-135M zero-shot{ser.INTEGER}"] == page.PROSE("judge_notes.local")
    assert notes[page.RECORDED] == page.PROSE("judge_notes.recorded")
    assert notes[f"Reader zero-shot{ser.INTEGER}"] == "openai judge"


def small_study() -> SimpleNamespace:
    answers = pd.DataFrame({"user_id": [1, 1, 2, 2, 3], "item_id": [10, 11, 10, 12, 13],
                            "level": [1.0, 2.0, 2.0, np.nan, 5.0]})
    return SimpleNamespace(answers=answers, sample=answers.iloc[[0, 1, 4]], data_label="SMALL",
                           synthetic=True, source=SimpleNamespace(label="survey fallback"),
                           history=pd.DataFrame({"user_id": [1, 2], "item_id": [11, 12], "history_item_id": [10, 10]}))


def test_the_level_and_history_tables_count_answers():
    study = small_study()
    levels = page.show_levels(study, "proxy_vs_llm")
    assert levels.caption == "Answers per ground-truth Likert level"
    assert levels.data.iloc[:, 0].tolist() == ["1", "2", "5", "no ground truth"]
    assert page.level_counts(study)["in_sample"].tolist() == [1, 1, 1, 0]
    history = page.show_history_lengths(study, "proxy_vs_llm")
    assert history.caption == "History lengths (survey fallback)"
    assert history.data.iloc[:, 1].tolist() == ["3", "2"]  # three answers with no history, two with one item


def test_the_agreement_tables_name_their_reference_and_sample(page_results):
    study = small_study()
    every = agreement({"Random": 0.0, "SOG": 10.0, page.RECORDED: 5.0}, p_pearson_vs_ref={page.RECORDED: 0.2},
                      p_abs_error_vs_ref={page.RECORDED: 0.3})
    sample = agreement({"Random": 0.0, "PURS": 9.0, "SOG": 8.0}, p_pearson_vs_ref={"SOG": 0.5},
                       p_abs_error_vs_ref={"SOG": 0.6}).assign(
        reference=lambda f: np.where(f["method"] == "Random", "", "PURS"))
    recorded_note = page.PROSE("judge_notes.recorded")
    shown = page.show_agreement(every, sample, {page.RECORDED: recorded_note}, study, 0, "proxy_vs_llm")
    assert shown.caption.startswith("The stratified sample of 3 answers") and shown.caption.endswith("reference: PURS")
    saved = pd.read_csv(page_results / "proxy_vs_llm" / "agreement_all_answers.csv", keep_default_na=False)
    assert saved["note"].tolist() == ["", "", recorded_note]
    assert saved["rows"].unique().tolist() == ["all answers with ground truth"]


def test_the_figure_has_one_panel_per_family_and_names_the_sample(monkeypatch):
    glued = {}
    monkeypatch.setattr(page.figures, "glue_figure", lambda name, fig, caption: glued.update(
        name=name, panels=[ax.get_title() for ax in fig.axes if ax.get_title()], caption=caption))
    rng = np.random.default_rng(0)
    scores = pd.DataFrame({"level": np.repeat([1.0, 2.0, 3.0, 4.0, 5.0], 6), "SOG": rng.integers(1, 6, 30),
                           "PURS": rng.integers(1, 6, 30), "SmolLM2-135M zero-shot": rng.uniform(1, 5, 30)})
    families = page.method_families([*proxies.PROXIES], ["SmolLM2-135M zero-shot"], {})
    assert families == {"Proxy metrics": list(proxies.PROXIES), "SmolLM2-135M": ["SmolLM2-135M zero-shot"]}
    families["Proxy metrics"] = ["SOG", "PURS"]
    page.draw_score_by_level(scores, families, small_study())
    assert glued["name"] == "fig-score-by-level" and glued["panels"] == ["Proxy metrics", "SmolLM2-135M"]
    assert "stratified sample of 3 answers (SMALL)" in glued["caption"]


def test_the_synthetic_verdict_says_which_judge_runs_were_asked_and_which_replayed():
    def run(asked: int, from_store: int, planned: int = 0) -> SimpleNamespace:
        return SimpleNamespace(report=SimpleNamespace(origin=_origin(asked, from_store, planned)))

    def _origin(asked: int, from_store: int, planned: int) -> str:
        from recjudge.llm.report import RunReport

        fields = {name: 0 for name in ("n_prompts", "n_runs", "n_replies", "n_provider_calls", "n_retries",
                                       "n_failed", "n_unparsable", "n_no_logprobs", "input_tokens",
                                       "output_tokens", "tokens", "job_tokens")}
        return RunReport(config_label="j", mode="auto", store="s", n_from_store=from_store, n_asked=asked,
                         cost_usd=0.0, job_cost_usd=0.0, seconds=0.0, n_planned=planned, **fields).origin

    mixed = {"SmolLM2 zero-shot": run(0, 5), "SmolLM2 few-shot": run(0, 5), "Reader zero-shot": run(5, 0)}
    text = page.synthetic_verdict(20, mixed, 100).data
    assert "3 LLM judge runs (2 replayed from the store, 1 asked live)" in text
    replayed = {"SmolLM2 zero-shot": run(0, 5)}
    assert "1 LLM judge run replayed from the store." in page.synthetic_verdict(20, replayed, 100).data
    assert "1 LLM judge run planned, not asked" in page.synthetic_verdict(20, {"r": run(0, 2, 3)}, 100).data


def test_the_answers_tables_break_their_wide_headers_over_the_short_numbers():
    from recjudge.chapters import proxy_vs_llm
    from recjudge.compendium.tables import as_format

    labels = {column: as_format(spec).label for column, spec in proxy_vs_llm.AGREEMENT_FORMATS.items()}
    assert labels["pearson"] == "Pearson (%)\n[95% CI]"
    assert labels["p_pearson"] == "p, Pearson\nvs ref." and labels["p_mae"] == "p, MAE\nvs ref."


def test_the_figure_draws_a_readers_long_judge_names_without_a_warning():
    """A reader's judge named `smollm2-135m-instruct-q4_1@llama-cpp-server` gave legend entries too wide for the
    panels: matplotlib warned that the tight layout could not be applied, and the warning reached the page."""
    import warnings

    rng = np.random.default_rng(0)
    reader = "smollm2-135m-instruct-q4_1@llama-cpp-server"
    methods = [f"{reader} {prompt}" for prompt in ("zero-shot", "few-shot (5)", "SerenPrompt_2", "SerenPrompt_1",
                                                   "LLM4Seren")]
    panels = {"Proxy metrics": list(proxies.PROXIES), "SmolLM2-135M": [f"SmolLM2-135M {m}" for m in ("zero-shot",
                                                                                                   "LLM4Seren")],
              reader: methods, "Recorded and configured judges": [page.RECORDED]}
    long = pd.DataFrame([{"family": family, "method": method, "level": level, "predicted": rng.uniform(1, 5)}
                         for family, names in panels.items()
                         for method in names for level in (1, 2, 3, 4, 5) for _ in range(3)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        figure = ser.plot_predicted_vs_true(long, list(panels))
    labels = [text.get_text() for axis in figure.axes if axis.get_legend() for text in axis.get_legend().get_texts()]
    assert "few-shot (5)" in labels and not any(reader in label for label in labels), labels


def test_each_judges_best_prompt_is_credited_to_the_judge_whose_row_it_is():
    """A variant's page said "SmolLM2-135M stays at noise level: its best prompt (smollm2-...@llama-cpp-server
    few-shot (5)) reaches 32.8%": the best row among every judge's was a reader's judge's, credited to SmolLM2."""
    table = agreement({"Random": 0.0, "SOG": 10.0})
    sample = agreement({"SmolLM2-135M zero-shot": 3.0, f"SmolLM2-135M few-shot (5){ser.INTEGER}": 5.0,
                        "gpt-4o-mini zero-shot": 20.0, "gpt-4o-mini few-shot (5)": 40.0},
                       low={"SmolLM2-135M zero-shot": -4.0, f"SmolLM2-135M few-shot (5){ser.INTEGER}": -1.0})
    text = page.further_findings(table, "SOG", sample, list(sample["method"])).data
    assert "**SmolLM2-135M stays at noise level:** its best prompt (few-shot (5), integer) reaches 5.0%" in text
    assert "**gpt-4o-mini:** its best prompt (few-shot (5)) reaches 40.0%" in text
    assert "gpt-4o-mini" not in text.split("**gpt-4o-mini:**")[0], "no sentence on SmolLM2 names the reader's judge"


def test_judgments_never_asked_are_left_out_not_unparsable():
    """A variant's judge-runs table showed the book's few-shot rows, never asked at the variant's scale, as
    "Prompts 10, Unparsable 10" while the run's summary said "unparsable 0, left out 14"."""
    runs = {"SmolLM2-135M few-shot (5)": Run("local", "expected", [np.nan, np.nan, 3.0], left_out=2),
            "Reader zero-shot": Run("openai", "expected", [np.nan, 5.0, 3.0])}
    table = page.judge_run_table(runs)
    assert table["left_out"].tolist() == [2, 2, 0, 0]
    assert table["unparsable"].tolist() == [0, 0, 1, 1]
    shown = page.show_judge_runs(runs, small_study(), "proxy_vs_llm").data
    assert "Left out (not asked)" in shown.columns
    # A table with nothing left out shows no such column (the saved table always has it)
    alone = page.show_judge_runs({"Reader zero-shot": runs["Reader zero-shot"]}, small_study(), "proxy_vs_llm")
    assert "Left out (not asked)" not in alone.data.columns


def shaped(parsed_free, parsed_constrained, replies, left_out):
    return pd.DataFrame({"prompt": ["kang_basic", "kang_fewshot"], "method": ["zero-shot", "few-shot (5)"],
                         "replies": replies, "shape_violations": [0, 0], "parsed_free": parsed_free,
                         "parsed_constrained": parsed_constrained, "pearson_free": [np.nan, np.nan],
                         "pearson_constrained": [np.nan, np.nan], "mae_free": [np.nan, np.nan],
                         "mae_constrained": [np.nan, np.nan], "left_out_free": left_out,
                         "left_out_constrained": left_out})


def test_a_parse_share_counts_only_replies_that_were_asked():
    """The page reported parse shares "for 0, 0 of 1 answers" of replies never asked."""
    table = agreement({"Random": 0.0, "SOG": 10.0})
    text = page.further_findings(table, "SOG", table.iloc[:0], [], shaped=shaped([0, 0], [0, 0], [1, 1],
                                                                                 [1, 1])).data
    assert "of 1 answers" not in text and "0 of 0 answers asked" in text
    assert "4 replies left out, never asked" in text and "no reply parsed" in text
    text = page.further_findings(table, "SOG", table.iloc[:0], [], shaped=shaped([1, 3], [3, 3], [3, 3],
                                                                                 [0, 0])).data
    assert "parse (at most) for 1, 3 of 3 answers (zero-shot, few-shot (5))" in text and "left out" not in text
