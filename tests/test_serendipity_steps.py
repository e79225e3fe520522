"""The steps the serendipity chapters show: a judge's scores by answer, the agreement rows beside Random, the Taobao
signal, a labelled judge, rounding ensemble scores, every ensemble's agreement and the grid of Table 5. The study is
the committed synthetic survey (not real users); judges' runs are stand-ins with fixed scores."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from recjudge.metaeval import ensembles as ens
from recjudge.metaeval.agreement import agreement_pct
from recjudge.serendipity import auxiliary_data as aux
from recjudge.serendipity import ground_truth as ser


@dataclass
class Config:
    scoring: str


class FixedRun:
    """A judge's run as the chapters read it: mean scores per request key, and the most likely score token."""

    def __init__(self, keys, scores, modal=None, scoring="expected"):
        self.config = Config(scoring)
        self.table = pd.DataFrame({"score": scores, "modal_score": modal if modal is not None else scores},
                                  index=pd.Index(keys, name="key"))

    def scores(self, column=None):
        return self.table["score" if column is None else column]


@pytest.fixture(scope="module")
def study():
    return ser.prepare_serendipity2018("synthetic", history_k=10, sample_size=20, seed=0)


def test_scores_of_indexes_a_runs_scores_as_the_answers_and_reads_integers_of_expected_runs(study):
    keys = [request.key for request in study.requests("kang_basic")][::-1]  # any order of the requests
    expected = np.linspace(1.2, 4.8, len(keys))
    run = FixedRun(keys, expected, modal=np.round(expected))
    scores = study.scores_of(run)
    assert scores.index.tolist() == study.sample.index[::-1].tolist()
    assert scores.to_numpy().tolist() == expected.tolist()
    assert study.scores_of(run, integer=True).to_numpy().tolist() == np.round(expected).tolist()
    generated = FixedRun(keys, expected, modal=np.zeros(len(keys)), scoring="generate")
    assert study.scores_of(generated, integer=True).to_numpy().tolist() == expected.tolist()  # its own scores


def test_judged_by_answer_gives_an_expected_score_run_twice_and_a_generating_run_once(study):
    keys = [request.key for request in study.requests("kang_basic")]
    runs = {"A": FixedRun(keys, np.full(len(keys), 2.5), modal=np.full(len(keys), 3.0)),
            "B": FixedRun(keys, np.full(len(keys), 4.0), scoring="generate")}
    judged = ser.judged_by_answer(study, runs)
    assert list(judged) == ["A", f"A{ser.INTEGER}", "B"]
    assert judged[f"A{ser.INTEGER}"].eq(3.0).all() and judged["A"].eq(2.5).all()
    assert judged["B"].index.equals(study.sample.index)


def test_recorded_requests_name_every_answer_once_without_messages(study):
    requests = study.recorded_requests()
    assert len(requests) == len(study.answers) == len({request.key for request in requests})
    assert all(request.messages == [] for request in requests)
    run = FixedRun([request.key for request in requests], np.arange(len(requests), dtype=float), scoring="recorded")
    assert study.scores_of(run).index.equals(study.answers.index)


def test_agreement_beside_random_puts_random_over_seeds_above_the_methods(study):
    scores = study.answers[["user_id", "truth"]].dropna().assign(
        close=lambda f: f["truth"].round(), flat=lambda f: 3.0 + (f.index % 2))
    table = ser.agreement_beside_random(scores, ["close", "flat"], "close", n_seeds=20, n_boot=10, seed=1)
    constants = list(ser.CONSTANT_METHODS.values())
    assert table["method"].tolist() == ["Random", *constants, "close", "flat"]
    assert table.loc[0, "seeds"] == 20
    alone = ser.agreement_table(scores, ["close", "flat"], reference="close", n_boot=10, seed=1, groups="user_id")
    pd.testing.assert_frame_equal(table.iloc[3:][alone.columns].reset_index(drop=True), alone, check_dtype=False)
    # a constant answer has no Pearson, and is chosen for each user on the other users' answers
    from recjudge.metaeval.baselines import constant_answers

    rows = table.set_index("method").loc[constants]
    assert rows["pearson_pct"].isna().all() and rows["pearson_note"].str.contains("constant").all()
    mean = constant_answers(scores["truth"], scores["user_id"])["constant (mean)"].to_numpy()
    assert rows.loc["Constant (mean)", "mae"] == pytest.approx(np.abs(mean - scores["truth"].to_numpy()).mean())


def test_taobao_agreement_scores_rare_categories_as_more_serendipitous():
    survey = pd.DataFrame({"user_id": range(8), "category_id": [1, 1, 1, 1, 2, 2, 3, 4],
                           "serendipity": [1, 2, 1, 2, 3, 4, 5, 5]})
    table = ser.taobao_agreement(survey, n_seeds=10, n_boot=0, seed=0).set_index("method")
    assert table.index.tolist() == ["Random", *ser.CONSTANT_METHODS.values(), ser.CATEGORY_COMMONNESS]
    signal = -np.log1p(np.array([4, 4, 4, 4, 2, 2, 1, 1]))
    likert = np.round((signal - signal.min()) / (signal.max() - signal.min()) * 4 + 1)
    pearson = 100 * np.corrcoef(likert, survey["serendipity"])[0, 1]
    assert table.loc[ser.CATEGORY_COMMONNESS, "pearson_pct"] == pytest.approx(pearson)
    assert table.loc[ser.CATEGORY_COMMONNESS, "n"] == 8 and pearson > 0


def test_labelled_judge_takes_its_label_or_names_model_and_prompt():
    name, config = ser.labelled_judge({"label": "Gemma few-shot", "provider": "local", "model": "gemma",
                                       "prompt": "kang_fewshot", "scoring": "expected", "max_tokens": 1})
    assert name == "Gemma few-shot" and config.prompt == "kang_fewshot" and config.model == "gemma"
    name, config = ser.labelled_judge({"provider": "local", "model": "qwen"})
    assert name == "qwen zero-shot" and config.prompt == "kang_basic"


def test_round_to_level_rounds_halves_up():
    long = pd.DataFrame({"row_id": [1, 2, 3], "score": [2.5, 3.49, 4.5]})
    assert ser.round_to_level(long)["score"].tolist() == [3.0, 3.0, 5.0]


def test_ensemble_agreement_scores_each_subset_by_its_mean():
    truth = pd.Series([1.0, 2.0, 3.0, 4.0, 5.0], index=[10, 11, 12, 13, 14])
    members = {"a": pd.Series([1.0, 2.0, 3.0, 5.0, 4.0], index=truth.index),
               "b": pd.Series([2.0, 2.0, 4.0, 4.0, 5.0], index=truth.index[::-1])}
    table = ens.ensemble_agreement(members, truth, agreement_pct)
    assert table["members"].tolist() == ["a", "b", "a + b"] and table["n"].tolist() == [1, 1, 2]
    mean = (members["a"] + members["b"].reindex(truth.index)) / 2
    both = agreement_pct(mean.to_numpy(), truth.to_numpy())
    row = table.set_index("members").loc["a + b"]
    assert row["pearson_pct"] == pytest.approx(both["pearson_pct"]) and row["n_rows"] == 5
    rounded = ens.ensemble_agreement(members, truth, agreement_pct, transform=ser.round_to_level, sizes=[2])
    assert rounded["mae"].item() == pytest.approx(np.mean(np.abs(np.floor(mean + 0.5) - truth)))


def test_settings_grid_joins_each_setting_with_every_subset_of_the_others():
    truth = pd.Series([1.0, 2.0, 3.0, 4.0], index=[5, 6, 7, 8])
    setting_scores = pd.DataFrame({aux.NA: [1.0, 3.0, 2.0, 4.0], "Pop": [2.0, 2.0, 3.0, 5.0]}, index=truth.index)
    cells, grid = aux.settings_grid(setting_scores, {"other": pd.Series([1.0, 2.0, 4.0, 4.0], index=truth.index)},
                                    truth)
    assert grid["setting"].tolist() == [aux.NA, aux.NA, "Pop", "Pop"]
    assert grid["members"].tolist() == [f"few-shot [{aux.NA}]", f"few-shot [{aux.NA}] + other", "few-shot [Pop]",
                                        "few-shot [Pop] + other"]
    assert cells["few-shot [Pop] + other"].tolist() == [1.5, 2.0, 3.5, 4.5]
    assert grid.loc[0, "pearson_pct"] == pytest.approx(agreement_pct(setting_scores[aux.NA], truth)["pearson_pct"])


def test_trivial_baselines_score_random_and_the_constants_on_the_answers_with_a_truth(study):
    scores = study.answers[["user_id", "truth"]].assign(judge=3.0)
    scores.loc[scores.index[:3], "truth"] = np.nan  # an answer without a truth is not scored
    table = ser.trivial_baselines(scores, n_seeds=20, n_boot=10, seed=1)
    assert table["method"].tolist() == ["Random", *ser.CONSTANT_METHODS.values()]
    assert (table["n"] == scores["truth"].notna().sum()).all()
    constants = table.set_index("method").loc[list(ser.CONSTANT_METHODS.values())]
    assert constants["pearson_pct"].isna().all() and constants["mae"].notna().all()  # NaN, never a crash
    with pytest.raises(ValueError, match="no answer with a 'missing'"):
        ser.trivial_baselines(scores.assign(missing=np.nan), truth="missing")
