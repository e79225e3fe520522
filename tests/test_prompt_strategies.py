"""Tokutake et al. (2025) prompt strategies: ground-truth search, the four templates' parsers, LtM chain replay,
metrics."""

from __future__ import annotations

import json
import math
import threading

import numpy as np
import pandas as pd
import pytest

from recjudge.llm import JudgeConfig, MissingReplies
from recjudge.llm.providers.base import Completion
from recjudge.prompts import tokutake
from recjudge.serendipity import prompt_strategies as ps

nan = np.nan


# ------------------------------------------------------------------------------------------------ ground truth

def _answers() -> pd.DataFrame:
    return pd.DataFrame({
        "user_id": [1, 2, 3, 4], "item_id": [10, 11, 12, 13], "rating": [4.0, 3.0, 5.0, 2.0],
        "s1": [1, 2, 5, nan], "s2": [1, 3, 5, nan], "s3": [5, 1, 1, nan],
        "s4": [1, 3, 5, nan], "s5": [2, 2, 4, nan], "s6": [1, 3, 4, 2],
        "s7": [5, 4, 5, 5], "s8": [1, 2, 5, 3],
    })


def test_rounding_rules_by_hand():
    x = pd.Series([1.5, 2.5, 3.49, 3.5, nan])
    assert ps.round_level(x, "half_up").tolist()[:4] == [2, 3, 3, 4]
    assert ps.round_level(x, "half_even").tolist()[:4] == [2, 2, 3, 4]
    assert ps.round_level(x, "half_down").tolist()[:4] == [1, 2, 3, 3]
    assert ps.round_level(x, "floor").tolist()[:4] == [1, 2, 3, 3]
    assert ps.round_level(x, "ceil").tolist()[:4] == [2, 3, 4, 4]
    assert np.isnan(ps.round_level(x, "half_up").iloc[4])
    with pytest.raises(ValueError, match="rounding"):
        ps.round_level(x, "nearest")


def test_candidate_na_rules_and_reverse_keying_by_hand():
    a = _answers()
    six = ("s1", "s2", "s3", "s4", "s5", "s6")
    skip = ps.GroundTruthCandidate(six, s3_reversed=True, na_rule="skip")
    # row 0: (1, 1, 6-5, 1, 2, 1) -> 7/6; row 3: only s6 = 2 answered -> 2
    assert skip.mean(a).iloc[0] == pytest.approx(7 / 6)
    assert skip.mean(a).iloc[3] == pytest.approx(2.0)
    assert np.isnan(ps.GroundTruthCandidate(six, True, "complete").mean(a).iloc[3])
    assert ps.GroundTruthCandidate(six, True, "as_3").mean(a).iloc[3] == pytest.approx((5 * 3 + 2) / 6)
    assert ps.GroundTruthCandidate(six, True, "as_1").mean(a).iloc[3] == pytest.approx((5 * 1 + 2) / 6)
    # s3 as answered: row 1 (2, 3, 1, 3, 2, 3) -> 14/6 = 2.33 -> 2; reversed (.., 5, ..) -> 18/6 = 3
    assert ps.GroundTruthCandidate(six).levels(a).iloc[1] == 2
    assert ps.GroundTruthCandidate(six, True).levels(a).iloc[1] == 3
    with pytest.raises(ValueError, match="s3_reversed"):
        ps.GroundTruthCandidate(("s1", "s2"), s3_reversed=True)
    with pytest.raises(ValueError, match="unknown statement"):
        ps.GroundTruthCandidate(("s9",))


def test_search_space_size_and_distance():
    candidates = ps.ground_truth_candidates()
    # 28 six-subsets, 21 of them with s3 (two keyings): 49 statement sets x 4 NA rules x 5 roundings
    assert len(candidates) == 49 * 4 * 5
    assert len(set(candidates)) == len(candidates)
    assert ps.distribution_distance({1: 321, 2: 1022, 3: 586, 4: 208, 5: 13}) == 0
    assert ps.distribution_distance({1: 320, 2: 1024, 3: 586, 4: 208, 5: 0}) == 1 + 2 + 13


def test_search_counts_every_candidate_as_its_pandas_reading_does():
    """The search reads every candidate from arrays, each reading's means once for its roundings: the same counts as
    each candidate's pandas mean (NaN skipped, completed or filled), rounded and counted one by one."""
    rng = np.random.default_rng(3)
    answers = pd.DataFrame(rng.integers(1, 6, size=(300, 8)).astype(float), columns=list(ps.STATEMENTS))
    answers = answers.mask(rng.random(answers.shape) < 0.08)
    answers.iloc[0] = np.nan  # an answer with no statement at all
    answers.index = answers.index * 7  # not a range index

    def pandas_mean(cand):
        values = answers[list(cand.statements)].astype(float)
        if cand.s3_reversed:
            values = values.assign(s3=6.0 - values["s3"])
        if cand.na_rule == "skip":
            return values.mean(axis=1)
        if cand.na_rule == "complete":
            return values.mean(axis=1).where(values.notna().all(axis=1))
        return values.fillna(3.0 if cand.na_rule == "as_3" else 1.0).mean(axis=1)

    table = ps.search_ground_truth(answers).set_index("candidate")
    for cand in ps.ground_truth_candidates():
        expected = ps.round_level(pandas_mean(cand), cand.rounding)
        pd.testing.assert_series_equal(cand.mean(answers), pandas_mean(cand), check_names=False)
        row = table.loc[cand.label]
        assert [row[f"n_{k}"] for k in range(1, 6)] == [int((expected == k).sum()) for k in range(1, 6)]
        assert row["n_without_g"] == int(expected.isna().sum())


def test_search_finds_the_generating_definition():
    """Answers built so that one candidate reproduces a target distribution exactly: the search ranks it first."""
    rng = np.random.default_rng(3)
    a = pd.DataFrame(rng.integers(1, 6, size=(400, 8)).astype(float), columns=list(ps.STATEMENTS))
    a.loc[rng.choice(400, 40, replace=False), "s2"] = nan
    truth = ps.GroundTruthCandidate(("s1", "s2", "s4", "s5", "s6", "s8"), False, "skip", "half_down")
    counts = ps.level_counts(truth.levels(a))
    table = ps.search_ground_truth(a, ps.ground_truth_candidates())
    assert {"rank", "candidate", "distance", "exact", "n_without_g"} <= set(table.columns)
    assert table["distance"].is_monotonic_increasing
    # against the paper's distribution nothing on random data is exact
    assert not table["exact"].any()
    # scored against the generating definition's own counts it is found, with distance 0
    original = ps.PAPER_G_DISTRIBUTION.copy()
    try:
        ps.PAPER_G_DISTRIBUTION.clear()
        ps.PAPER_G_DISTRIBUTION.update(counts)
        best = ps.search_ground_truth(a).iloc[0]
        assert best["distance"] == 0 and bool(best["exact"])
        assert ps.candidate_from_row(ps.search_ground_truth(a).iloc[0]).levels(a).equals(truth.levels(a))
    finally:
        ps.PAPER_G_DISTRIBUTION.clear()
        ps.PAPER_G_DISTRIBUTION.update(original)


# ------------------------------------------------------------------------------------------------------ parsers

@pytest.mark.parametrize("strategy", ["base", "ls", "ltm"])
@pytest.mark.parametrize("reply, expected", [
    ("Serendipity: 4", 4.0),
    ("**Serendipity:** 2", 2.0),
    ("3", 3.0),
    ("I would say 4.", 4.0),
    ("Serendipity: 4/5", 4.0),
    ("On a scale from 1 to 5, I'd say 2", 2.0),
    ("Serendipity: 3-4", nan),            # a range
    ("Somewhere between 3 and 4", nan),   # a range without a label
    ("It could be 2 or 3", nan),
    ("I'm sorry, I cannot rate this movie.", nan),  # refusal
    ("", nan),
    ("Serendipity: 7", nan),              # out of range: no other number is searched
    ("User's last movies: Heat (1995)", nan),  # echo of the prompt with a year only
    ("Relevance 4, unexpectedness 2, so 2", nan),  # several numbers, no label
])
def test_single_step_parsers(strategy, reply, expected):
    got = ps.parse_serendipity(reply, strategy)
    assert (math.isnan(got) and math.isnan(expected)) or got == expected


@pytest.mark.parametrize("reply, expected", [
    ("Relevance: 4\nUnexpectedness: 2\nSerendipity: 2", 2.0),          # intermediate scores first
    ("Step 1 relevance: 5. Step 2 unexpectedness: 1. Step 3 serendipity: 3", 3.0),
    ("Relevance: 4\nUnexpectedness: 5\nSerendipity: 4\nFinal answer - serendipity 5", 5.0),  # last label counts
    ("Relevance: 4\nUnexpectedness: 2", nan),   # no serendipity step: never the first number
    ("4\n2\n3", nan),
    ("Relevance: 4\nUnexpectedness: 2\nSerendipity: 2 to 3", nan),  # a range
    ("I can't help with that.", nan),
    ("Serendipity (step 3): 4 out of 5", 4.0),
])
def test_cot_parser_reads_the_serendipity_step(reply, expected):
    got = ps.parse_serendipity(reply, "cot")
    assert (math.isnan(got) and math.isnan(expected)) or got == expected


def test_step_parser_and_unknowns():
    reply = "Relevance: 4\nUnexpectedness: 2\nSerendipity: 3"
    assert [ps.parse_step(reply, s) for s in ps.STEP_NAMES] == [4, 2, 3]
    assert math.isnan(ps.parse_step("no numbers", "relevance"))
    with pytest.raises(ValueError, match="unknown step"):
        ps.parse_step(reply, "novelty")
    with pytest.raises(ValueError, match="unknown prompt strategy"):
        ps.parse_serendipity(reply, "tot")
    assert ps.parser_for("cot")("Relevance: 1\nSerendipity: 5") == 5


# ------------------------------------------------------------------------------------------------- templates

def _examples() -> list[dict]:
    return [{"history": f"Movie {k} (2000)", "item": f"Pick {k} (2001), genres: Drama", "relevance": 4,
             "unexpectedness": k, "serendipity": k} for k in range(1, 6)]


def test_templates_render_and_are_marked_reconstructions():
    from recjudge.prompts import load_template

    for strategy in ps.STRATEGIES:
        block = tokutake.examples_block(strategy, _examples())
        messages = tokutake.first_messages(strategy, "Heat (1995)", "Up (2009), genres: Animation", block)
        assert [m["role"] for m in messages] == ["system", "user"]
        assert "Pick 5 (2001)" in messages[0]["content"] and "Up (2009)" in messages[1]["content"]
        if strategy in ("cot", "ltm"):
            assert "Unexpectedness: 3" in block
        else:
            assert "Unexpectedness" not in block and "Serendipity: 3" in block
    for name in ps.RECONSTRUCTED:
        assert "RECONSTRUCTION" in load_template(name).description
    assert "1 = not serendipitous at all" not in tokutake.first_messages("base", "h", "i", "e")[0]["content"]
    assert "1 = not serendipitous at all" in tokutake.first_messages("ls", "h", "i", "e")[0]["content"]


# --------------------------------------------------------------------------------------------- LtM chain replay

class ChainProvider:
    """Answers each LtM step from the question asked; records every chat it saw."""

    name = "scripted"

    def __init__(self):
        self.seen: list[list[dict]] = []
        self.lock = threading.Lock()

    def complete(self, messages, *, model, temperature, max_tokens, seed=None, logprobs=False, options=None):
        with self.lock:
            self.seen.append(messages)
        question = messages[-1]["content"]
        item = next(m["content"] for m in messages if m["role"] == "user")
        level = 1 + sum(map(ord, item)) % 5
        if "Step 3" in question:
            previous = [m["content"] for m in messages if m["role"] == "assistant"]
            return Completion(text=f"Serendipity: {level}" if len(previous) == 2 else "??", input_tokens=1,
                              output_tokens=1)
        if "Step 2" in question:
            return Completion(text="Unexpectedness: 5", input_tokens=1, output_tokens=1)
        return Completion(text="Relevance: 2", input_tokens=1, output_tokens=1)


def test_ltm_chain_is_three_chained_calls_and_replays(tmp_path):
    items = pd.DataFrame({"key": ["1:10", "2:11", "3:12"], "history": ["A (1999)", "B (2000)", "C (2001)"],
                          "item": ["X (2002), genres: Drama", "Y (2003), genres: Comedy", "Z (2004), genres: War"]})
    block = tokutake.examples_block("ltm", _examples())
    config = JudgeConfig(provider="openai", model="chain-test", max_tokens=16)
    provider = ChainProvider()
    live = ps.run_strategy(config, "ltm", items, block, mode="live", store=tmp_path, provider=provider)
    assert live.calls_per_item == 3 and len(provider.seen) == 9
    # step 2's chat is step 1's chat, its reply and the step-2 question; step 3 likewise
    step3 = [m for m in provider.seen if "Step 3" in m[-1]["content"]][0]
    assert [m["role"] for m in step3] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert step3[2]["content"] == "Relevance: 2" and step3[4]["content"] == "Unexpectedness: 5"
    assert live.table["relevance"].tolist() == [2, 2, 2]
    assert live.table["unexpectedness"].tolist() == [5, 5, 5]
    assert live.table["predicted"].notna().all() and live.n_unparsable == 0
    chain = ps.ltm_chain(live, "2:11")
    assert [c["step"] for c in chain] == list(ps.STEP_NAMES) and chain[2]["reply"].startswith("Serendipity")

    replay = ps.run_strategy(config, "ltm", items, block, mode="replay", store=tmp_path)
    pd.testing.assert_frame_equal(replay.table, live.table)
    assert sum(r.n_from_store for r in replay.reports) == 9
    assert replay.model_seconds == live.model_seconds >= 0

    # a chain whose first reply differs is a different chain: replay refuses instead of mixing
    with pytest.raises(MissingReplies):
        ps.run_strategy(config, "ltm", items.assign(item=items["item"] + "!"), block, mode="replay", store=tmp_path)


class ShapedProvider:
    """Answers with an instance of the schema it is sent (and records the schemas); free text without one."""

    name = "scripted"

    def __init__(self):
        self.schemas: list[dict | None] = []
        self.lock = threading.Lock()

    def complete(self, messages, *, model, temperature, max_tokens, seed=None, logprobs=False, options=None):
        from mock_openai_server import instance_of

        schema = (options or {}).get("output_schema")
        with self.lock:
            self.schemas.append(schema)
        text = json.dumps(instance_of(schema, 4)) if schema else "I think it is fine."
        return Completion(text=text, input_tokens=1, output_tokens=1)


@pytest.mark.parametrize("strategy", ["base", "ls", "cot", "ltm"])
def test_constrained_strategies_ask_each_templates_shape_and_read_it(tmp_path, strategy):
    from recjudge.prompts.output_shapes import output_shape

    items = pd.DataFrame({"key": ["1:10", "2:11"], "history": ["A (1999)", "B (2000)"],
                          "item": ["X (2002), genres: Drama", "Y (2003), genres: Comedy"]})
    block = tokutake.examples_block(strategy, _examples())
    config = JudgeConfig(provider="openai", model="shape-test", max_tokens=16)
    provider = ShapedProvider()
    free = ps.run_strategy(config, strategy, items, block, mode="live", store=tmp_path, provider=provider)
    shaped = ps.run_strategy(config, strategy, items, block, mode="live", store=tmp_path, provider=provider,
                             constrained=True)
    assert free.n_unparsable == 2 and shaped.n_unparsable == 0
    assert shaped.table["predicted"].tolist() == [4.0, 4.0]
    steps = ps.LTM_STEPS if strategy == "ltm" else [ps.TEMPLATES[strategy]]
    asked = [schema for schema in provider.schemas if schema is not None]
    assert asked == [output_shape(t).schema for t in steps for _ in range(2)]
    if strategy == "cot":
        assert shaped.table[list(ps.STEP_NAMES)].values.tolist() == [[4.0] * 3] * 2


# ------------------------------------------------------------------------------------------------------ metrics

def test_metrics_by_hand_and_against_sklearn():
    from sklearn.metrics import accuracy_score, mean_absolute_error

    pred = np.array([1, 2, 3, 5, nan, 4, 2, 3])
    true = np.array([2, 2, 4, 5, 3, 3, nan, 3])
    m = ps.strategy_metrics(pred, true, n_boot=200, seed=1)
    both = ~np.isnan(pred) & ~np.isnan(true)
    assert m["n"] == 6 and m["n_unparsable"] == 1
    assert m["mae"] == pytest.approx(mean_absolute_error(true[both], pred[both])) == pytest.approx(3 / 6)
    # classes: pred (neg, neg, neu, pos, pos, neu) vs true (neg, neg, pos, pos, neu, neu) -> 4 of 6
    assert m["accuracy_pct"] == pytest.approx(100 * accuracy_score(ps.three_class(true[both]),
                                                                   ps.three_class(pred[both])))
    assert m["accuracy_pct"] == pytest.approx(400 / 6)
    assert m["mae_ci_low"] <= m["mae"] <= m["mae_ci_high"]
    assert m["accuracy_pct_ci_low"] <= m["accuracy_pct"] <= m["accuracy_pct_ci_high"]
    levels = ps.confusion(pred, true)
    assert levels.to_numpy().sum() == 6 and levels.loc["3", "4"] == 1 and levels.loc["4", "3"] == 1
    three = ps.confusion(pred, true, "three")
    assert np.trace(three.to_numpy()) == 4 and list(three.columns) == list(ps.CLASS_NAMES)
    empty = ps.confusion([nan, nan], [2, 3])
    assert empty.shape == (5, 5) and empty.to_numpy().sum() == 0
    none = ps.strategy_metrics([nan, nan], [2, 3])
    assert none["n"] == 0 and none["n_unparsable"] == 2 and math.isnan(none["mae"])


def test_paper_table1_and_default():
    table = ps.paper_table1()
    assert table.set_index("strategy").loc["cot", "mae_gpt"] == pytest.approx(0.847)
    assert table["mae_gpt"].idxmin() == table.index[table["strategy"] == "cot"][0]
    assert ps.DEFAULT_STRATEGY in ps.STRATEGIES


def test_select_examples_two_per_level_outside_the_sample():
    rng = np.random.default_rng(0)
    pool = pd.DataFrame({"user_id": np.arange(60) % 12, "g": np.tile([1, 2, 3, 4, 5], 12).astype(float),
                         "rating": 3.0, "s4": 2.0, "s5": 3.0, "s6": 4.0})
    chosen = ps.select_examples(pool, "g", seed=5, exclude_users=[0, 1])
    assert sorted(chosen["g"].tolist()) == [1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    assert not chosen["user_id"].isin([0, 1]).any()
    assert chosen.index.equals(ps.select_examples(pool, "g", seed=5, exclude_users=[0, 1]).index)
    steps = ps.example_step_scores(chosen, "g")
    assert set(steps["unexpectedness"]) == {3} and set(steps["relevance"]) == {3}
    with pytest.raises(ValueError, match="level 5"):
        ps.select_examples(pool[pool["g"] < 5], "g")
    del rng


def test_select_examples_lenient_fills_from_the_nearest_level():
    pool = pd.DataFrame({"user_id": np.arange(40), "g": np.repeat([1.0, 2.0, 3.0, 4.0], 10),
                         "rating": 3.0, "s4": 2.0, "s5": 3.0, "s6": 4.0})
    chosen = ps.select_examples(pool, "g", seed=1, strict=False)
    assert len(chosen) == 10 and chosen.index.is_unique
    assert sorted(chosen["g"].tolist()) == [1, 1, 2, 2, 3, 3, 4, 4, 4, 4]
