"""Judge audits (recjudge.trust.audits) and the trust part's judges (recjudge.trust.judges)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recjudge.trust import audits, judges


def test_alpha_reads_columns_as_readings():
    # Two readings that agree exactly: alpha 1; one column shifted by a constant: interval alpha below 1.
    scores = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0, 5.0], "b": [1.0, 2.0, 3.0, 4.0, 5.0]})
    assert audits.krippendorff_alpha(scores) == pytest.approx(1.0)
    shifted = scores.assign(b=scores["b"] + 1)
    assert audits.krippendorff_alpha(shifted) < 1.0


def test_alpha_matches_hand_computed_interval_case():
    # Two coders, three units: (1, 2), (3, 3), (5, 4). Interval metric: D_o from within-unit pairs, D_e from all
    # pairable values (Krippendorff 2011, "Computing Krippendorff's alpha-reliability").
    values = [1, 2, 3, 3, 5, 4]
    n = len(values)
    observed = (2 * (1 - 2) ** 2 + 0 + 2 * (5 - 4) ** 2) / n  # each unit has m_u = 2 values: weight 1/(m_u - 1) = 1
    expected = sum((a - b) ** 2 for a in values for b in values) / (n * (n - 1))
    hand = 1 - observed / expected
    readings = pd.DataFrame({"coder 1": [1.0, 3.0, 5.0], "coder 2": [2.0, 3.0, 4.0]})
    assert audits.krippendorff_alpha(readings) == pytest.approx(hand)


def test_alpha_needs_two_readings():
    with pytest.raises(ValueError, match="two readings"):
        audits.krippendorff_alpha(pd.DataFrame({"a": [1.0, 2.0]}))


def test_reliability_with_no_score_or_one_value_is_undefined_not_an_error():
    # A plan scores nothing, and a judge may give one value everywhere: α is undefined there (NaN), and the page
    # that shows it must not fail.
    empty = pd.DataFrame({"a": [np.nan] * 4, "b": [np.nan] * 4})
    constant = pd.DataFrame({"a": [3.0] * 4, "b": [3.0] * 4})
    for readings in (empty, constant):
        record = audits.reliability(readings, n_boot=20)
        assert np.isnan(record["alpha"]) and np.isnan(record["alpha_ci_low"]) and record["answers"] == 4
    assert not audits.alpha_is_defined(empty) and not audits.alpha_is_defined(constant)
    assert audits.alpha_is_defined(pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [1.0, 2.0, 4.0]}))


def test_reliability_interval_holds_the_estimate():
    rng = np.random.default_rng(0)
    truth = rng.normal(size=300)
    readings = pd.DataFrame({f"r{i}": truth + rng.normal(scale=0.5, size=300) for i in range(3)})
    found = audits.reliability(readings, n_boot=100, seed=1)
    assert found["alpha_ci_low"] < found["alpha"] < found["alpha_ci_high"]
    assert found["n_readings"] == 3 and found["answers_complete"] == 300


def test_rounding_before_alpha_moves_it_far_less_than_its_sampling_error():
    rng = np.random.default_rng(2)
    truth = rng.uniform(1, 5, 150)
    readings = pd.DataFrame({"a": truth + rng.normal(scale=0.6, size=150), "b": truth + rng.normal(scale=0.6,
                                                                                                   size=150)})
    exact = audits.krippendorff_alpha(readings, resolution=None)
    assert audits.krippendorff_alpha(readings) == pytest.approx(exact, abs=2e-3)


def test_bias_table_recovers_a_planted_popularity_effect():
    rng = np.random.default_rng(0)
    n = 2000
    frame = pd.DataFrame({"truth": rng.integers(1, 6, n).astype(float), "popularity": rng.lognormal(size=n),
                          "year": rng.integers(1950, 2018, n).astype(float), "user": rng.integers(0, 200, n)})
    z_pop = (frame["popularity"] - frame["popularity"].mean()) / frame["popularity"].std(ddof=0)
    frame["judge"] = 0.3 * frame["truth"] + 0.5 * z_pop + rng.normal(scale=0.3, size=n)
    table = audits.bias_table(frame, ["judge"], {"popularity": "popularity", "year": "release year"})
    by_term = table.set_index("term")
    assert by_term.loc["popularity", "ci_low"] < 0.5 < by_term.loc["popularity", "ci_high"]
    assert by_term.loc["release year", "ci_low"] < 0 < by_term.loc["release year", "ci_high"]
    assert by_term.loc["human rating", "coefficient"] == pytest.approx(0.3, abs=0.03)
    clustered = audits.bias_table(frame, ["judge"], {"popularity": "popularity"}, groups="user")
    assert clustered.set_index("term").loc["popularity", "n"] == n


def test_bias_table_rejects_a_constant_property():
    frame = pd.DataFrame({"truth": [1.0, 2, 3, 4, 5, 1], "judge": [2.0, 2, 3, 3, 4, 1], "same": [1.0] * 6})
    with pytest.raises(ValueError, match="constant"):
        audits.bias_table(frame, ["judge"], {"same": "same"})


def test_coverage_leaves_out_the_example_users_and_answers_without_truth():
    answers = pd.DataFrame({"user_id": [1, 1, 2, 3, 3], "item_id": [10, 11, 12, 13, 14],
                            "truth": [2.0, np.nan, 4.0, 3.0, 5.0]})
    examples = answers.iloc[[4]]
    covered = judges.coverage(answers, examples)
    assert covered["item_id"].tolist() == [10, 12]


def test_a_sampled_judge_scores_a_seeded_subset_and_a_full_judge_everything():
    covered = pd.DataFrame({"user_id": range(50), "item_id": range(50), "truth": 3.0})
    full = judges.LOCAL_JUDGES[0]
    assert full.sample_size is None and len(judges.rows_for(full, covered)) == 50
    sampled = judges.TrustJudge("small", full.config, sample_size=10)
    first, again = judges.rows_for(sampled, covered, seed=3), judges.rows_for(sampled, covered, seed=3)
    assert len(first) == 10 and first.index.equals(again.index) and first.index.is_monotonic_increasing


def test_local_trust_judges_reuse_the_prompt_prefix_and_are_named_once():
    names = [judge.name for judge in judges.LOCAL_JUDGES]
    assert len(names) == len(set(names))
    for judge in judges.LOCAL_JUDGES:
        assert dict(judge.config.options)["n_batch"] == judges.PREFIX_BATCH
        assert judges.by_name(judge.name) is judge
    with pytest.raises(KeyError, match="no trust judge"):
        judges.by_name("nobody")


def test_a_readers_judge_plays_the_few_shot_rq1_role_on_a_sample():
    from recjudge.llm.judge_spec import parse_judge
    from recjudge.serendipity.ground_truth import rq1_judge

    reader = parse_judge("openai:gpt-4o-mini", batch=True).to_parameter()
    (judge,) = judges.reader_judges([reader], sample_size=40)
    own = rq1_judge(judges.READER_PROMPT)
    assert judge.name == "gpt-4o-mini few-shot (5)" and judge.batch is True and judge.sample_size == 40
    assert (judge.config.provider, judge.config.model) == ("openai", "gpt-4o-mini")
    assert (judge.config.prompt, judge.config.scoring, judge.config.max_tokens) == (own.prompt, own.scoring,
                                                                                   own.max_tokens)
    assert judge.config.options == ()  # the local judges' llama.cpp batch size is not the reader's
    assert judges.reader_judges([]) == ()
    with pytest.raises(ValueError, match="judge_sample_size"):
        judges.reader_judges([reader], sample_size=0)


def test_judged_population_adds_a_readers_judge_after_the_local_ones(tmp_path, monkeypatch):
    from recjudge import paths
    from recjudge.llm.judge_spec import parse_judge
    from recjudge.serendipity import ground_truth as ser
    from recjudge.trust import population

    monkeypatch.setenv(paths.STORE_ENV, str(tmp_path / "store"))
    monkeypatch.setenv("RECJUDGE_PLAN_LOG", str(tmp_path / "plan.jsonl"))
    study = ser.prepare_serendipity2018("synthetic", history_k=10, sample_size=20, seed=0)
    readers = judges.reader_judges([parse_judge("openai:gpt-4o-mini").to_parameter()], sample_size=15)
    judged = population.judged_population(study, ["SmolLM2-135M zero-shot"], use_recorded=False, mode="plan",
                                          readers=readers)
    table = judged.judges.set_index("judge")
    assert table.loc["gpt-4o-mini few-shot (5)", "kind"] == "reader's LLM"
    assert table.loc["gpt-4o-mini few-shot (5), integer", "scoring"] == "most likely score token"
    assert "a random sample of 15 answers" in table.loc["gpt-4o-mini few-shot (5)", "note"]
    assert table.index.get_loc("SmolLM2-135M zero-shot") < table.index.get_loc("gpt-4o-mini few-shot (5)")
    assert table.loc["gpt-4o-mini few-shot (5)", "answers"] == 0  # a plan asks nothing: no score yet


def test_the_population_names_the_judges_analysed_and_their_kind():
    from recjudge.trust import population

    frame = pd.DataFrame({"truth": [1.0, 2.0], "a": [1.0, 2.0], "a, integer": [1.0, 2.0], "b": [np.nan, 3.0]})
    table = pd.DataFrame({"judge": ["a", "a, integer", "b"], "kind": ["local LLM", "local LLM", "reader's LLM"],
                          "scoring": ["expected score", "most likely score token", "expected score"],
                          "answers": [2, 2, 1]})
    judged = population.JudgedPopulation(frame, table)
    assert judged.analysed(2) == ["a", "a, integer"]
    assert judged.analysed(2, integer_readings=False) == ["a"]
    assert judged.analysed(1, integer_readings=False) == ["a", "b"]
    assert (judged.kind("b"), judged.answers("b")) == ("reader's LLM", 1)


def test_a_property_with_one_value_for_every_answer_is_not_tested():
    from recjudge.trust import population

    frame = pd.DataFrame({"log_popularity": [0.1, 0.5], "release_year": [1990, 2001], "title_length": [5, 9],
                          "history_length": [10, 10]})
    assert population.varying_properties(frame) == {"log_popularity": "popularity (log)",
                                                    "release_year": "release year", "title_length": "title length"}


def test_judges_are_paired_for_reliability_only_on_enough_common_answers():
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"x": rng.normal(size=40), "y": rng.normal(size=40),
                          "z": np.where(np.arange(40) < 20, rng.normal(size=40), np.nan)})
    sets = judges.reading_sets(None, frame, ["x", "y", "z"], prompts=(), retest=False)
    assert list(sets) == ["x / y"]  # z shares only 20 answers with each
    assert sets["x / y"].equals(frame[["x", "y"]])
    assert list(judges.reading_sets(None, frame, ["x", "y", "z"], retest=False, min_pair_answers=20)) == [
        "x / y", "x / z", "y / z"]
