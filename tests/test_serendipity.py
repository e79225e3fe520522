"""Serendipity ground truth, histories (training.csv path and survey fallback) and the stratified sample."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recjudge.prompts import serendipity as sp
from recjudge.serendipity import ground_truth as ser

MS = 1_000  # timestamps below are small integers in milliseconds; only their order matters


def _answers() -> pd.DataFrame:
    nan = np.nan
    return pd.DataFrame(
        {
            "user_id": [1, 1, 1, 2],
            "item_id": [10, 11, 12, 10],
            "timestamp": pd.to_datetime([3 * MS, 1 * MS, 2 * MS, 5 * MS], unit="ms", utc=True),
            "rating": [4.0, 3.5, 5.0, 4.5],
            "s1": [1, 2, nan, 5], "s2": [1, nan, nan, 5], "s3": [5, 1, 2, nan],
            "s4": [2, 4, nan, 5], "s5": [3, nan, nan, 4], "s6": [4, 5, 1, nan],
            "s7": [5, 5, 5, 5], "s8": [1, 2, 3, 4],
        }
    )


def test_primary_ground_truth_and_na_handling():
    gt = ser.serendipity_ground_truth(_answers())
    # mean of the answered s4, s5, s6 when at least two are answered
    assert gt.iloc[0] == pytest.approx(3.0)
    assert gt.iloc[1] == pytest.approx(4.5)  # s5 NA: mean(4, 5)
    assert np.isnan(gt.iloc[2])  # only s6 answered
    assert gt.iloc[3] == pytest.approx(4.5)
    assert ser.PRIMARY_DEFINITION == "unexpectedness_s4_s5_s6"


def test_alternative_definitions():
    answers = _answers()
    table = ser.all_ground_truths(answers)
    assert set(table.columns) == set(ser.GROUND_TRUTH_DEFINITIONS)
    # all four unexpectedness statements, s3 reverse-keyed: (6-5, 2, 3, 4) -> 2.5
    assert table["unexpectedness_s3r_s4_s5_s6"].iloc[0] == pytest.approx(2.5)
    # at least three of four answered: (6-1, 4, 5) -> 14/3; only s6 answered -> NaN
    assert table["unexpectedness_s3r_s4_s5_s6"].iloc[1] == pytest.approx(14 / 3)
    assert np.isnan(table["unexpectedness_s3r_s4_s5_s6"].iloc[2])
    assert np.isnan(table["unexpectedness_complete"].iloc[1])
    assert table["broadening_s8"].tolist() == [1, 2, 3, 4]
    assert len(ser.ground_truth_definitions_table()) == len(ser.GROUND_TRUTH_DEFINITIONS)
    with pytest.raises(KeyError, match="unknown ground-truth definition"):
        ser.serendipity_ground_truth(answers, "nope")
    with pytest.raises(KeyError, match="s4"):
        ser.serendipity_ground_truth(answers.drop(columns="s4"))


def test_likert_level_rounds_halves_up():
    assert ser.likert_level(pd.Series([1.0, 1.5, 2.4999, 2.5, 4.6667, np.nan])).tolist()[:5] == [1, 2, 2, 3, 5]
    assert np.isnan(ser.likert_level(pd.Series([np.nan])).iloc[0])


def test_taobao_ground_truth():
    survey = pd.DataFrame({"user_id": [1, 2], "serendipity": [2, 5]})
    assert ser.taobao_ground_truth(survey).tolist() == [2.0, 5.0]
    with pytest.raises(KeyError, match="serendipity"):
        ser.taobao_ground_truth(survey.drop(columns="serendipity"))


def test_survey_fallback_history_is_other_answers_before_target():
    answers = _answers()
    history, source = ser.serendipity_histories(answers, training=None, k=10)
    assert source.name == "survey_before_target"
    by_target = {key: g["history_item_id"].tolist() for key, g in history.groupby(["user_id", "item_id"])}
    # user 1 rated 11 (t=1), 12 (t=2), 10 (t=3)
    assert by_target[(1, 10)] == [11, 12]
    assert by_target[(1, 12)] == [11]
    assert (1, 11) not in by_target  # earliest answer: empty history
    assert (2, 10) not in by_target
    assert history.loc[history["item_id"] == 10, "history_rating"].tolist() == [3.5, 5.0]


def test_training_history_path_last_k_strictly_before():
    answers = _answers()
    training = pd.DataFrame(
        {
            "user_id": [1, 1, 1, 1, 1, 2, 3],
            "item_id": [100, 101, 102, 10, 103, 200, 300],
            "rating": [1.0, 2.0, 3.0, 4.0, 5.0, 3.0, 3.0],
            # 103 is rated at exactly the target's time (t=3): not before it
            "timestamp": pd.to_datetime([0, 1 * MS, 2 * MS, 2 * MS, 3 * MS, 1 * MS, 1 * MS], unit="ms", utc=True),
        }
    )
    history, source = ser.serendipity_histories(answers, training=training, k=2)
    assert source.name == "training" and "training.csv" in source.label
    target = history[(history.user_id == 1) & (history.item_id == 10)]
    # before t=3: 100 (t0), 101 (t1), 102 (t2), 10 (t2, the target itself, excluded) -> last two: 101, 102
    assert target["history_item_id"].tolist() == [101, 102]
    assert target["position"].tolist() == [0, 1]
    assert target["history_rating"].tolist() == [2.0, 3.0]
    assert history[(history.user_id == 2)]["history_item_id"].tolist() == [200]
    assert 300 not in history["history_item_id"].tolist()  # user 3 is not surveyed
    longer, _ = ser.serendipity_histories(answers, training=training, k=10)
    assert longer[(longer.user_id == 1) & (longer.item_id == 10)]["history_item_id"].tolist() == [100, 101, 102]
    with pytest.raises(ValueError, match="k must be"):
        ser.last_k_history(answers, training, k=-1)
    with pytest.raises(KeyError, match="timestamp"):
        ser.last_k_history(answers, training.drop(columns="timestamp"))


def test_stratified_sample_is_seeded_and_proportional():
    rng = np.random.default_rng(0)
    levels = np.repeat([1.0, 2.0, 3.0, 4.0, 5.0], [100, 300, 400, 180, 20])
    frame = pd.DataFrame({"level": levels, "x": rng.normal(size=levels.size)})
    frame.loc[:4, "level"] = np.nan  # never sampled
    a = ser.stratified_sample(frame, "level", n=200, seed=1)
    b = ser.stratified_sample(frame, "level", n=200, seed=1)
    c = ser.stratified_sample(frame, "level", n=200, seed=2)
    assert len(a) == 200 and a.index.equals(b.index) and not a.index.equals(c.index)
    assert a["level"].notna().all()
    counts = a["level"].value_counts()
    assert counts[3.0] == pytest.approx(80, abs=1) and counts[5.0] == pytest.approx(4, abs=1)
    assert len(ser.stratified_sample(frame, "level", n=10_000)) == frame["level"].notna().sum()
    singleton = pd.DataFrame({"level": [1.0] * 10 + [2.0] * 10 + [5.0]})
    assert len(ser.stratified_sample(singleton, "level", n=5, seed=0)) == 5


# ---------------------------------------------------------------------------------------------------- prompts

PAPER = Path(__file__).resolve().parents[2] / "shared" / "papers" / "kang2025-llm-serendipity-evaluation.txt"

#: The basic prompt as printed in Kang et al. (2025, section 2.4), e-commerce wording.
PRINTED_BASIC_PROMPT = """You are a user of a Chinese e-commerce platform, and you have received a user survey that aims to gather your opinion on the serendipity of the items recommended to you. Serendipity here means that the item recommended is a pleasant surprise.
## Background
You have used the Chinese e-commerce platform, and this recommendation is based on your behavior history. You are provided with the genres of the recommended item and the items you have clicked on or purchased. Your behavior history is listed in a comma-separated format, sorted from oldest to newest.
## Task
Please provide a serendipity rating for the recommended item using a 5-point Likert scale: 1 – “strongly disagree”; 2 – “disagree”; 3 – “neither agree nor disagree”; 4 – “agree”; 5 – “strongly agree”.
Rate the recommended item from the perspective of serendipity, based on your behavior history.
## Output Format
Generate only the rating number, without any additional commentary or explanation.
## Response
Your behavior history: [user behavior history]
Recommended item: (item info)
Your serendipity rating:"""  # noqa: E501 (the paper's prompt, verbatim)


def test_basic_prompt_is_the_printed_prompt_verbatim():
    messages = sp.build_messages("kang_basic", "ecommerce", "[user behavior history]", "(item info)")
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"] + "\n" + messages[1]["content"] == PRINTED_BASIC_PROMPT
    if PAPER.is_file():  # cross-check against the paper text when it is at hand
        assert PRINTED_BASIC_PROMPT in PAPER.read_text(encoding="utf-8")


def test_movie_wording_changes_only_the_domain_words():
    ecommerce = sp.build_messages("kang_basic", "ecommerce", "H", "I")
    movies = sp.build_messages("kang_basic", "movies", "H", "I")
    assert movies[1] == ecommerce[1]
    assert "a movie recommendation platform (MovieLens)" in movies[0]["content"]
    assert "the movies you have rated" in movies[0]["content"]
    assert movies[0]["content"] \
        .replace("a movie recommendation platform (MovieLens)", "a Chinese e-commerce platform") \
        .replace("the movie recommendation platform (MovieLens)", "the Chinese e-commerce platform") \
        .replace("the movies you have rated", "the items you have clicked on or purchased") == ecommerce[0]["content"]


def test_fewshot_prompt_has_five_solved_turns():
    examples = [{"history": f"H{i}", "item": f"I{i}", "rating": float(i)} for i in range(1, 6)]
    messages = sp.build_messages("kang_fewshot", "movies", "H", "I", examples)
    assert [m["role"] for m in messages] == ["system"] + ["user", "assistant"] * 5 + ["user"]
    assert [m["content"] for m in messages[2:12:2]] == ["1", "2", "3", "4", "5"]
    assert "Your behavior history: H3" in messages[5]["content"]
    with pytest.raises(ValueError, match="exactly 5"):
        sp.build_messages("kang_fewshot", "movies", "H", "I", examples[:4])


@pytest.mark.parametrize("prompt", sp.BASELINE_PROMPTS)
def test_baseline_templates_are_marked_reconstructions(prompt):
    from recjudge.prompts import load_template

    assert load_template(prompt).description.startswith("RECONSTRUCTION")
    messages = sp.build_messages(prompt, "movies", "Alien (1979), Heat (1995)", "Up (2009), genres: Animation")
    text = messages[-1]["content"]
    assert "Alien (1979), Heat (1995)" in text and "Up (2009)" in text and "1" in text and "5" in text


def test_history_and_item_text_and_requests():
    movies = pd.DataFrame({"title": ["Alien (1979)", "Heat"], "year": [1979.0, 1995.0],
                           "genres": [("Horror", "Sci-Fi"), ("(no genres listed)",)]},
                          index=pd.Index([1, 2], name="item_id"))
    assert sp.movie_item_text(1, movies) == "Alien (1979), genres: Horror, Sci-Fi"
    assert sp.movie_item_text(2, movies) == "Heat (1995), genres: unknown"
    assert sp.movie_item_text(9, movies) == "movie 9, genres: unknown"
    assert sp.movie_history_text([2, 1], movies) == "Heat (1995), Alien (1979)"
    assert sp.movie_history_text([], movies) == sp.EMPTY_HISTORY
    targets = pd.DataFrame({"user_id": [5, 6], "item_id": [1, 2]})
    history = pd.DataFrame({"user_id": [5], "item_id": [1], "position": [0], "history_item_id": [2]})
    requests = sp.serendipity_requests(targets, history, movies, "kang_basic")
    assert [r.key for r in requests] == ["5:1", "6:2"]
    assert "Your behavior history: Heat (1995)\nRecommended item: Alien (1979), genres: Horror, Sci-Fi" \
        in requests[0].messages[1]["content"]
    assert f"Your behavior history: {sp.EMPTY_HISTORY}" in requests[1].messages[1]["content"]


def test_fewshot_examples_one_per_level_outside_excluded_users():
    pool = pd.DataFrame({"user_id": np.arange(50), "item_id": np.arange(50),
                         "level": np.repeat([1.0, 2.0, 3.0, 4.0, 5.0], 10)})
    chosen = sp.select_fewshot_examples(pool, "level", seed=0, exclude_users=range(0, 5))
    assert sorted(chosen["level"]) == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert not set(chosen["user_id"]) & set(range(5))
    assert chosen.index.equals(sp.select_fewshot_examples(pool, "level", seed=0, exclude_users=range(0, 5)).index)


# ------------------------------------------------------------------------------------------- meta-evaluation

def _levelled_answers(n_users: int = 30, per_user: int = 4) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    return pd.DataFrame({"user_id": np.repeat(np.arange(n_users), per_user),
                         "level": rng.integers(1, 6, size=n_users * per_user).astype(float)})


def test_examples_first_judges_every_answer_of_the_other_users():
    answers = _levelled_answers()
    pick = lambda pool, exclude: sp.select_fewshot_examples(pool, "level", seed=0, exclude_users=exclude)  # noqa: E731
    # Every answer requested: the default order leaves no pool, so the examples must come first.
    with pytest.raises(ValueError, match="candidate examples"):
        ser.sample_and_examples(answers, "level", 10**6, pick)
    sample, examples = ser.sample_and_examples(answers, "level", 10**6, pick, examples_first=True)
    example_users = set(examples["user_id"])
    assert len(examples) == sp.N_SHOTS and not example_users & set(sample["user_id"])
    assert sorted(sample.index) == sorted(answers.index[~answers["user_id"].isin(example_users)])


def test_examples_after_the_sample_is_the_books_default_order():
    answers = _levelled_answers()
    pick = lambda pool, exclude: sp.select_fewshot_examples(pool, "level", seed=0, exclude_users=exclude)  # noqa: E731
    sample, examples = ser.sample_and_examples(answers, "level", 20, pick)
    expected = ser.stratified_sample(answers, "level", n=20, seed=0)
    pd.testing.assert_frame_equal(sample, expected)
    pd.testing.assert_frame_equal(examples, pick(answers.drop(index=expected.index), expected["user_id"].unique()))


def test_agreement_table_and_reference_tests():
    rng = np.random.default_rng(0)
    truth = rng.integers(1, 6, 300).astype(float)
    scores = pd.DataFrame({
        "truth": truth,
        "good": np.clip(truth + rng.normal(0, 0.8, 300), 1, 5),
        "noise": rng.integers(1, 6, 300).astype(float),
    })
    assert ser.strongest(scores, ["good", "noise"]) == "good"
    table = ser.agreement_table(scores, ["good", "noise"], reference="good", n_boot=200, seed=1).set_index("method")
    from scipy import stats

    assert table.loc["good", "pearson_pct"] == pytest.approx(100 * stats.pearsonr(scores["good"], truth)[0])
    assert table.loc["good", "mae"] == pytest.approx(np.mean(np.abs(scores["good"] - truth)))
    assert table.loc["good", "pearson_ci_low"] < table.loc["good", "pearson_pct"] < table.loc["good", "pearson_ci_high"]
    assert np.isnan(table.loc["good", "p_pearson_vs_ref"])  # the reference itself
    assert table.loc["noise", "p_pearson_vs_ref"] < 1e-6
    assert table.loc["noise", "p_abs_error_vs_ref"] < 1e-6
    assert (table["n"] == 300).all()


def test_sensitivity_table_covers_every_definition():
    answers = _answers()
    scores = pd.DataFrame({"m": [1.0, 2.0, 3.0, 4.0]}, index=answers.index)
    table = ser.sensitivity_table(answers, scores, ["m"])
    assert set(table["definition"]) == set(ser.GROUND_TRUTH_DEFINITIONS)
    row = table.set_index("definition").loc["broadening_s8"]
    assert row["n"] == 4 and row["pearson_pct"] == pytest.approx(100.0) and row["mae"] == pytest.approx(0.0)


# ------------------------------------------------------------------------------------- the synthetic survey study

def test_prepare_study_on_the_synthetic_survey_uses_its_training_histories():
    study = ser.prepare_serendipity2018("synthetic", history_k=10, sample_size=30, seed=0)
    assert study.synthetic and "SYNTHETIC" in study.data_label
    assert study.source.name == "training"  # the fixture ships a training.csv: the full-history path
    assert len(study.sample) == 30 and study.sample["truth"].notna().all()
    assert len(study.examples) == 5
    assert not set(study.examples["user_id"]) & set(study.sample["user_id"])
    assert not study.examples.index.isin(study.sample.index).any()
    assert study.history.groupby(["user_id", "item_id"]).size().max() <= 10
    requests = study.requests("kang_fewshot")
    assert len(requests) == 30 and len(requests[0].messages) == 12
    again = ser.prepare_serendipity2018("synthetic", history_k=10, sample_size=30, seed=0)
    assert again.sample.index.equals(study.sample.index)
    with pytest.raises(ValueError, match="source"):
        ser.prepare_serendipity2018("elsewhere")


def test_sample_requests_are_built_once_per_template_and_follow_a_new_sample(monkeypatch):
    """Every judge in a template's role asks the sample's prompts: built once, the same as building them afresh,
    and a sample assigned later gets its own."""
    from recjudge.prompts import serendipity as prompts

    study = ser.prepare_serendipity2018("synthetic", history_k=10, sample_size=30, seed=0)
    built = []
    original = prompts.serendipity_requests
    monkeypatch.setattr(prompts, "serendipity_requests", lambda *a, **k: built.append(a[3]) or original(*a, **k))
    first, second = study.requests("kang_fewshot"), study.requests("kang_fewshot")
    fresh = study.requests("kang_fewshot", study.sample)
    assert built == ["kang_fewshot", "kang_fewshot"]  # the cached call and the explicit frame only
    assert first is not second and first == second == fresh
    study.requests("kang_basic")
    study.sample = study.sample.iloc[:10]
    assert [r.key for r in study.requests("kang_basic")] == [r.key for r in study.requests("kang_basic",
                                                                                            study.sample)]
    assert built.count("kang_basic") == 3


def test_eq5_readings_pooled_and_mean_over_users():
    import numpy as np
    import pandas as pd
    from scipy import stats

    from recjudge.serendipity.ground_truth import eq5_readings

    scores = pd.DataFrame({
        "user_id": ["a"] * 4 + ["b"] * 3 + ["c"] * 1 + ["d"] * 2,
        "truth": [1, 2, 3, 4, 5, 4, 3, 2, 3, 3],        # user d's truths are constant: undefined
        "m": [1, 3, 2, 5, 1, 2, 4, 5, 2, 4],
    })
    table = eq5_readings(scores, ["m"]).set_index("method").loc["m"]
    assert table["pooled_pearson_pct"] == pytest.approx(100 * stats.pearsonr(scores["m"], scores["truth"])[0])
    r_a = stats.pearsonr([1, 3, 2, 5], [1, 2, 3, 4])[0]
    r_b = stats.pearsonr([1, 2, 4], [5, 4, 3])[0]
    assert table["per_user_pearson_pct"] == pytest.approx(100 * np.mean([r_a, r_b]))
    assert table["users_defined"] == 2 and table["users_undefined"] == 2  # c: one answer; d: constant truth
    assert table["n_rows"] == 10


def test_random_baseline_agreement_is_the_mean_over_seeds():
    import numpy as np
    import pandas as pd

    from recjudge.metaeval.agreement import random_baseline_over_seeds
    from recjudge.serendipity.ground_truth import agreement_table, random_baseline_agreement

    truth = pd.Series(np.tile([1.0, 2.0, 3.0, 2.5, 4.0, np.nan], 40))
    row = random_baseline_agreement(truth, n_seeds=500, seed=1).iloc[0]
    per_seed = random_baseline_over_seeds(truth.to_numpy(), n_seeds=500, seed=1)
    assert row["pearson_pct"] == pytest.approx(100 * per_seed["pearson"].mean())
    assert row["mae"] == pytest.approx(per_seed["mae"].mean())
    assert row["pearson_ci_low"] < row["pearson_pct"] < row["pearson_ci_high"]
    assert row["n"] == 200 and row["seeds"] == 500
    one_table = agreement_table(pd.DataFrame({"truth": truth, "x": truth}), ["x"], n_boot=0)
    assert set(one_table.columns) <= set(row.index)  # same shape as agreement_table's rows


# ------------------------------------------------------------------------------------- replies held to their shape
def test_rq1_shape_effect_counts_free_and_constrained_replies_and_scores_them_against_the_truth(tmp_path):
    from scipy import stats

    from recjudge.llm.providers.base import Completion
    from recjudge.llm.shapes import OPTION

    study = ser.prepare_serendipity2018("synthetic", history_k=10, sample_size=20, seed=0)
    truth = dict(zip([request.key for request in study.requests("kang_basic")], study.sample["truth"]))
    seen = {}

    class HalfEchoing:  # free: a number for every other prompt, an echo otherwise; constrained: always the JSON
        name = "local"

        def complete(self, messages, *, model, temperature, max_tokens, seed=None, logprobs=False, options=None):
            prompt = messages[-1]["content"]
            score = 1 + len(prompt) % 5
            if options and OPTION in options:
                seen["schema"] = options[OPTION]
                return Completion(text=f'{{"rating": {score}}}', input_tokens=1, output_tokens=6)
            return Completion(text=str(score) if len(prompt) % 2 else "Your behavior history:", input_tokens=1,
                              output_tokens=3)

    table = ser.rq1_shape_effect(study, ["kang_basic"], method_names={"kang_basic": "zero-shot"}, mode="auto",
                                 store=tmp_path, provider=HalfEchoing())
    row = table.set_index("prompt").loc["kang_basic"]
    requests = study.requests("kang_basic")
    first = ser.rq1_shape_effect(study, ["kang_basic"], frame=study.sample.iloc[:5], mode="replay", store=tmp_path)
    assert first["replies"].tolist() == [5] and first["parsed_constrained"].tolist() == [5]  # a subset, replayed
    scores = {r.key: 1 + len(r.messages[-1]["content"]) % 5 for r in requests}
    numeric = [r.key for r in requests if len(r.messages[-1]["content"]) % 2]
    assert seen["schema"]["properties"] == {"rating": {"type": "integer", "enum": [1, 2, 3, 4, 5]}}
    assert row["method"] == "zero-shot" and row["replies"] == len(requests) == 20
    assert row["shape_violations"] == 0 and row["parsed_constrained"] == 20 and row["parsed_free"] == len(numeric)
    keys = list(scores)
    assert row["pearson_constrained"] == pytest.approx(
        100 * stats.pearsonr([scores[k] for k in keys], [truth[k] for k in keys]).statistic)
    assert row["mae_free"] == pytest.approx(np.mean([abs(scores[k] - truth[k]) for k in numeric]))


def test_each_readers_judge_takes_every_rq1_prompts_role():
    from recjudge.llm.judge_spec import parse_judge
    from recjudge.prompts.serendipity import METHOD_NAMES
    from recjudge.serendipity.ground_truth import reader_rq1_judges, rq1_judge

    judge = parse_judge("openai:gpt-4o-mini").to_parameter()
    triples = reader_rq1_judges([judge], ["kang_basic", "kang_fewshot"], scoring="generate")
    assert [(prompt, config.provider, config.model) for _, prompt, config in triples] == [
        ("kang_basic", "openai", "gpt-4o-mini"), ("kang_fewshot", "openai", "gpt-4o-mini")]
    name, prompt, config = triples[1]
    assert name.endswith(METHOD_NAMES["kang_fewshot"])
    own = rq1_judge("kang_fewshot", scoring="generate")
    assert (config.prompt, config.scoring, config.max_tokens) == (own.prompt, own.scoring, own.max_tokens)
    assert reader_rq1_judges([], ["kang_basic"]) == []  # the committed book: no reader's judge
