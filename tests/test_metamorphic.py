"""Metamorphic relations, Kendall variants, overlap, rank-biased overlap and the title matcher."""

import dataclasses
import itertools
import math

import numpy as np
import pandas as pd
import pytest

from recjudge.metamorphic import rank, relations
from recjudge.metamorphic.rank import rank_biased_overlap as rbo
from recjudge.metamorphic.recommender import TitleMatcher, normalise_title, parse_titles, ranking_of

P = 0.9


# ------------------------------------------------------------------------------------------------------ relations

PROMPT = ("Given a user, as a recommender system, provide recommendations. The user 7 likes the following items: "
          "Toy Story (1995) 4/5, Fahrenheit 9/11 (2004) 4.5/5, Alien (1979) 5/5. (1 being lowest and 5 being "
          "highest).Give me back 5 recommendations")


def test_mr1_multiplies_every_rating_and_leaves_the_rest():
    out = relations.mr1_multiply(PROMPT, 2)
    assert "Toy Story (1995) 8/10" in out and "Fahrenheit 9/11 (2004) 9/10" in out and "Alien (1979) 10/10" in out
    assert "(1 being lowest and 5 being highest)" in out and "9/11" in out
    assert relations.mr1_multiply(PROMPT, 3).count("/15") == 3


def test_mr2_shifts_every_rating():
    out = relations.mr2_shift(PROMPT, 2)
    assert "Toy Story (1995) 6/7" in out and "(2004) 6.5/7" in out and "Alien (1979) 7/7" in out
    assert "Give me back 5 recommendations" in out


@pytest.mark.parametrize("fn,bad", [(relations.mr1_multiply, 1), (relations.mr1_multiply, 1.5),
                                    (relations.mr2_shift, 0), (relations.mr2_shift, -5)])
def test_rating_relations_reject_bad_lambda(fn, bad):
    with pytest.raises(ValueError):
        fn(PROMPT, bad)


def test_rating_relations_need_a_rating():
    with pytest.raises(ValueError, match="no rating"):
        relations.mr1_multiply("no ratings here", 2)


def test_mr3_spaces_between_characters():
    assert relations.mr3_spaces("Toy Story 4/5") == "T o y S t o r y 4 / 5"
    assert relations.mr3_spaces("a") == "a"


def test_mr4_inserts_seeded_words_only():
    text = "one two three four five six seven eight nine ten"
    out = relations.mr4_random_words(text, seed=3, n=4)
    assert out == relations.mr4_random_words(text, seed=3, n=4)
    words = out.split()
    assert len(words) == 14 and sum(w in relations.RANDOM_WORDS for w in words) == 4
    assert [w for w in words if w not in relations.RANDOM_WORDS] == text.split()
    assert relations.mr4_random_words(text, seed=4, n=4) != out
    assert len(relations.mr4_random_words(text, seed=0).split()) == 12  # default: one per five words


def test_shuffle_list_permutes_items():
    text = "A (1990), B (1991), C (1992), D (1993)"
    out = relations.shuffle_list(text, seed=1)
    assert out != text and sorted(out.split(", ")) == sorted(text.split(", "))
    assert out == relations.shuffle_list(text, seed=1)
    assert relations.shuffle_list("only one", seed=1) == "only one"
    titles = "Iron Giant, The (1999), Sex, Lies, and Videotape (1989), Alien (1979)"
    shuffled = relations.shuffle_list(titles, seed=2, split=r"(?<=\)), ")
    assert sorted(shuffled.split("), ")) != sorted(titles.split(", "))
    assert sorted(s.strip("()") for s in shuffled.split("), ")) == sorted(s.strip("()") for s in titles.split("), "))


def test_paraphrase_and_span():
    assert relations.paraphrase("Rate it. Be brief.", {"Rate it.": "Give a rating."}) == "Give a rating. Be brief."
    with pytest.raises(ValueError, match="does not contain"):
        relations.paraphrase("Rate it.", {"Score it.": "x"})
    out = relations.apply_to_span(PROMPT, "items: ", ". (1 being", relations.mr3_spaces)
    assert out.startswith("Given a user, as a recommender system") and "T o y" in out
    assert out.endswith(". (1 being lowest and 5 being highest).Give me back 5 recommendations")
    with pytest.raises(ValueError, match="not found"):
        relations.apply_to_span(PROMPT, "nowhere", None, str.upper)


# ------------------------------------------------------------------------------------------- Kendall and overlap

def test_kendall_variants_by_hand():
    x, y = list("abcde"), list("abcdf")
    assert rank.kendall_tau_shared(x, y) == pytest.approx(1.0)
    assert rank.kendall_tau_union(x, y) == pytest.approx(13 / 15)  # 15 pairs, only (e, f) discordant
    # disjoint lists: union ranks x = 1,2,3,3 and y = 3,3,1,2: C = 0, D = 4, one tie on each side
    assert rank.kendall_tau_union(list("ab"), list("cd")) == pytest.approx(-4 / 5)
    assert math.isnan(rank.kendall_tau_shared(list("ab"), list("cd")))
    assert rank.kendall_tau_shared(list("abc"), list("cba")) == pytest.approx(-1.0)


def test_overlap_ratio():
    assert rank.overlap_ratio(list("abcde"), list("abxyz")) == pytest.approx(0.4)
    assert rank.overlap_ratio(list("ab"), list("abcd")) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="duplicated"):
        rank.overlap_ratio(list("aa"), list("a"))


# -------------------------------------------------------------------------------------------- rank-biased overlap

def overlap_at(x, y, d):
    return len(set(x[:d]) & set(y[:d]))


def webber_ext(x, y, p):
    """Webber, Moffat & Zobel (2010) equation 32, written out (no ties)."""
    S, L = (x, y) if len(x) <= len(y) else (y, x)
    s, l = len(S), len(L)  # noqa: E741 (the RBO paper's s and l)
    X = {d: overlap_at(S, L, d) for d in range(1, l + 1)}
    head = sum(X[d] / d * p ** d for d in range(1, l + 1))
    head += sum(X[s] * (d - s) / (s * d) * p ** d for d in range(s + 1, l + 1))
    return (1 - p) / p * head + ((X[l] - X[s]) / l + X[s] / s) * p ** l


def series(x_ext, y_ext, p, depth=3000):
    """RBO of two (long) lists as the plain truncated series (1 - p) sum_d p^(d-1) A_d."""
    seen_x, seen_y, common, total = set(), set(), 0, 0.0
    for d in range(1, depth + 1):
        a, b = x_ext[d - 1], y_ext[d - 1]
        common += (a in seen_y) + (b in seen_x) + (a == b)
        seen_x.add(a)
        seen_y.add(b)
        total += (1 - p) * p ** (d - 1) * common / d
    return total


def test_rbo_hand_computed_even_lists():
    # x = a b c, y = a c b: X = 1, 1, 3, so A = 1, 1/2, 1
    expected_ext = (1 - P) / P * (1 * P + 0.5 * P ** 2 + 1 * P ** 3) + 1 * P ** 3
    assert rbo(list("abc"), list("acb"), P).ext == pytest.approx(expected_ext)
    same = rbo(list("abcd"), list("abcd"), P)
    assert same.ext == pytest.approx(1) and same.max == pytest.approx(1)
    apart = rbo(list("ab"), list("cd"), P)
    assert apart.ext == pytest.approx(0) and apart.min == pytest.approx(0) and apart.max > 0


@pytest.mark.parametrize("x,y", [(list("abcde"), list("bxaq")), (list("ab"), list("cabdef")),
                                 (list("abc"), list("abcdefg")), (list("z"), list("abcd")),
                                 (list("abcdef"), list("fedcba"))])
def test_rbo_uneven_lengths_against_equation_32_and_series(x, y):
    result = rbo(x, y, P)
    assert result.ext == pytest.approx(webber_ext(x, y, P))
    assert result.min <= result.ext <= result.max and result.res == pytest.approx(result.max - result.min)
    # min: both lists continue with new items nobody else holds
    assert result.min == pytest.approx(series(x + [f"x{i}" for i in range(3000)], y + [f"y{i}" for i in range(3000)],
                                              P), abs=1e-9)
    # max: each list continues with the other's missing items in order, then the same new items
    S, L = (x, y) if len(x) <= len(y) else (y, x)
    s_ext = S + [i for i in L if i not in S]
    l_ext = L + [i for i in S if i not in L]
    s_ext += [i for i in l_ext if i not in s_ext]
    l_ext += [i for i in s_ext if i not in l_ext]
    tail = [f"n{i}" for i in range(3000)]
    assert result.max == pytest.approx(series(s_ext + tail, l_ext + tail, P), abs=1e-9)
    assert rbo(y, x, P) == pytest.approx(result)


def test_similarity_row_with_empty_lists():
    one_empty = rank.similarity_row([], [1, 2])
    assert one_empty["rbo"] == 0 and one_empty["overlap"] == 0 and math.isnan(one_empty["kendall_tau"])
    assert all(math.isnan(v) for v in rank.similarity_row([], []).values())
    same = rank.similarity_row([1, 2, 3], [1, 2, 3])
    assert same == pytest.approx({"kendall_tau": 1, "kendall_tau_shared": 1, "rbo": 1, "overlap": 1})


def test_rbo_weight_of_the_top_ten_at_p_09():
    # Webber et al.: at p = 0.9 the first ten ranks carry about 86% of the weight
    assert rank.rbo_weight(10, 0.9) == pytest.approx(0.8556, abs=1e-4)


def test_rbo_variants_agree_without_ties():
    x, y = list("abcdefg"), list("bdaqz")
    values = [rbo(x, y, P, ties=t) for t in rank.TIE_VARIANTS]
    for other in values[1:]:
        assert other == pytest.approx(values[0])


def resolutions(ranking):
    groups = [list(e) if isinstance(e, (tuple, set, frozenset, list)) else [e] for e in ranking]
    for perms in itertools.product(*(itertools.permutations(g) for g in groups)):
        yield [item for perm in perms for item in perm]


@pytest.mark.parametrize("x,y", [([("a", "b"), "c", "d"], ["b", "c", "a", "e"]),
                                 (["a", ("b", "c", "d")], [("a", "c"), "e", "b"]),
                                 ([("a", "b", "c")], ["c", "x", "a", "y", "b"])])
def test_rbo_a_min_is_the_mean_over_orders_of_the_ties(x, y):
    mins = [rbo(xx, yy, P).min for xx in resolutions(x) for yy in resolutions(y)]
    assert rbo(x, y, P, ties="a").min == pytest.approx(np.mean(mins))


def test_rbo_w_and_b_by_hand():
    # w: x = (a b) c, y = a b c. Depth 1: X = 1, |S| = 2, |L| = 1 -> A = 2/3; depths 2, 3: A = 1
    w = rbo([("a", "b"), "c"], list("abc"), P, ties="w")
    assert w.ext == pytest.approx((1 - P) / P * (2 / 3 * P + P ** 2 + P ** 3) + P ** 3)
    # b: x = (a b), y = a b. Depth 1: c_x = (.5, .5), c_y = (1, 0): X = .5, A = .5 / (sqrt(.5) sqrt(1))
    b = rbo([("a", "b")], list("ab"), P, ties="b")
    assert b.ext == pytest.approx((1 - P) / P * (math.sqrt(0.5) * P + P ** 2) + P ** 2)
    # a: depth 1: X = .5, A = .5
    a = rbo([("a", "b")], list("ab"), P, ties="a")
    assert a.ext == pytest.approx((1 - P) / P * (0.5 * P + P ** 2) + P ** 2)


def test_rbo_rejects_bad_input():
    with pytest.raises(ValueError, match="twice"):
        rbo(["a", ("a", "b")], ["a"], P)
    with pytest.raises(ValueError, match="non-empty"):
        rbo([], ["a"], P)
    with pytest.raises(ValueError, match="p must"):
        rbo(["a"], ["a"], 1.0)
    with pytest.raises(ValueError, match="ties"):
        rbo(["a"], ["a"], P, ties="x")


# ------------------------------------------------------------------------------------------ replies and matching

CATALOGUE = pd.DataFrame({"item_id": [1, 2, 3, 4, 5],
                          "title": ["Toy Story (1995)", "Toy Story 2 (1999)", "Matrix, The (1999)",
                                    "Shining, The (1980)", "Alien (1979)"]})


def test_normalise_title():
    assert normalise_title("Matrix, The (1999)") == normalise_title("The Matrix") == "the matrix"
    assert normalise_title("Amélie (Fabuleux destin d'Amélie Poulain, Le) (2001)") == "amelie"


@pytest.mark.parametrize("title,expected", [("The Matrix (1999)", 3), ("the matrix", 3), ("Toy Story 2", 2),
                                            ("Toy Story (1995)", 1), ("THE SHINING", 4), ("Aliens: Reloaded", None),
                                            ("Gone with the Wind", None)])
def test_title_matcher(title, expected):
    item, score = TitleMatcher(CATALOGUE).match(title)
    assert item == expected
    assert (score >= 90) == (expected is not None)


def test_title_matcher_collision_rate_and_errors():
    matcher = TitleMatcher(CATALOGUE)
    assert matcher.collision_rate([90, 96]).tolist() == pytest.approx([2 / 5, 0])  # Toy Story / Toy Story 2 (score 95)
    with pytest.raises(ValueError, match="title"):
        TitleMatcher(pd.DataFrame({"item_id": [1]}))


def test_parse_titles_and_ranking():
    reply = ("Here are my picks:\n1. **The Matrix** (1999) - mind-bending\n2) Toy Story 2: sequel\n"
             "- Unknown Film (2020)\n3. The Matrix (1999)\n")
    assert parse_titles(reply).titles == ["The Matrix (1999)", "Toy Story 2", "Unknown Film (2020)",
                                          "The Matrix (1999)"]
    assert ranking_of(reply, TitleMatcher(CATALOGUE), 5) == [3, 2, "?unknown film"]
    assert ranking_of(reply, TitleMatcher(CATALOGUE), 2) == [3, 2]
    prose = parse_titles("I would suggest watching some good films.")
    assert not prose.is_list and prose.titles == []
    shaped = '{"titles": ["**The Matrix** (1999)", "Toy Story 2", "Unknown Film (2020)"]}'
    assert parse_titles(shaped).titles == ["The Matrix (1999)", "Toy Story 2", "Unknown Film (2020)"]
    assert ranking_of(shaped, TitleMatcher(CATALOGUE), 5) == [3, 2, "?unknown film"]
    assert not parse_titles('{"titles": []}').is_list and not parse_titles('{"titles": "x"}').is_list
    assert parse_titles('{"titles": ["A"').titles == []  # a cut JSON reply is not a list either


# ------------------------------------------------------------------------------------------------- judge relations

from recjudge.llm import JudgeConfig, JudgeRequest  # noqa: E402
from recjudge.metamorphic import judges  # noqa: E402


def fake_judge(history="A (1990), B (1991), C (1992)"):
    messages = [{"role": "system", "content": "Rate the item. Reply with a number."},
                {"role": "user", "content": f"Your behavior history: {history}\nRecommended item: D (2000)\nRating:"}]
    return judges.JudgeUnderTest(label="fake", config=JudgeConfig(provider="local", model="m"),
                                 requests=[JudgeRequest("u:i", messages)], parser=float,
                                 span_start="Your behavior history: ", span_end="\nRecommended item:", list_sep=", ",
                                 paraphrase={"Rate the item.": "Give the item a rating."})


def test_judge_relations_change_only_their_part():
    judge = fake_judge()
    spaced = judges.perturb(judge, "mr3")[0].messages
    assert spaced[1]["content"].startswith("Your behavior history: A ( 1 9 9 0 ) ,")
    assert spaced[1]["content"].endswith("\nRecommended item: D (2000)\nRating:")
    assert spaced[0] == judge.requests[0].messages[0]
    shuffled = judges.perturb(judge, "shuffle")[0].messages[1]["content"]
    assert shuffled != judge.requests[0].messages[1]["content"] and "D (2000)" in shuffled
    para = judges.perturb(judge, "paraphrase")[0].messages
    assert para[0]["content"] == "Give the item a rating. Reply with a number."
    assert para[1] == judge.requests[0].messages[1]
    assert judges.applicable(judge, "mr1") == (False, "no ratings in the prompt")
    rated = fake_judge("A (1990) 4/5, B (1991) 3.5/5")
    assert judges.applicable(rated, "mr1")[0]
    assert "A (1990) 8/10, B (1991) 7/10" in judges.perturb(rated, "mr1")[0].messages[1]["content"]


def _strategy_study():
    from types import SimpleNamespace

    from recjudge.prompts.tokutake import examples_block

    example = {"history": "E (1980), F (1981)", "item": "G (1982), genres: Drama", "relevance": 4,
               "unexpectedness": 2, "serendipity": 3}
    items = pd.DataFrame({"key": ["1:10", "2:20"], "g": [2, 4],
                          "item": ["D (2000), genres: Comedy", "H (2001), genres: War"],
                          "history": ["A (1990), B, The (1991), C (1992)", "X (1970), Y (1971)"]})
    return SimpleNamespace(items=items, examples_block=lambda strategy: examples_block(strategy, [example]))


def test_tokutake_judge_asks_the_chapters_prompts_and_perturbs_only_the_users_part():
    from recjudge.prompts.tokutake import first_messages
    from recjudge.serendipity.prompt_strategies import parse_serendipity

    study = _strategy_study()
    for strategy in ("base", "ls", "cot"):
        judge = judges.tokutake_judge(study, JudgeConfig(provider="local", model="m"), strategy, n=2)
        # the prompt-strategies chapter's own requests, so its stored replies are the originals
        examples = study.examples_block(strategy)
        assert [r.messages for r in judge.requests] == [
            first_messages(strategy, h, i, examples) for h, i in zip(study.items["history"], study.items["item"])]
        assert judge.config.prompt == f"tokutake_{strategy}" and judge.truth == {"1:10": 2.0, "2:20": 4.0}
        paraphrased = judges.perturb(judge, "paraphrase")[0].messages
        assert paraphrased[0] != judge.requests[0].messages[0] and paraphrased[1] == judge.requests[0].messages[1]
        assert "Serendipity:" in paraphrased[0]["content"] and "E (1980), F (1981)" in paraphrased[0]["content"]
    judge = judges.tokutake_judge(study, JudgeConfig(provider="local", model="m"), "cot", n=1)
    assert len(judge.requests) == 1 and judge.parser("Relevance: 4\nSerendipity: 2") == parse_serendipity(
        "Relevance: 4\nSerendipity: 2", "cot") == 2.0
    shuffled = judges.perturb(judge, "shuffle")[0].messages
    assert shuffled[0] == judge.requests[0].messages[0]  # the examples stay
    user = shuffled[1]["content"]
    assert user != judge.requests[0].messages[1]["content"]
    assert user.endswith("\nRecommended movie: D (2000), genres: Comedy")
    assert sorted(user.split("\n")[0].removeprefix("User's last movies: ").split(", ")) == sorted(
        ["A (1990)", "B", "The (1991)", "C (1992)"])  # titles holding a comma move whole
    assert "B, The (1991)" in user
    assert [judges.applicable(judge, r)[0] for r in judges.RELATIONS] == [True, True, True, False, False, True]
    with pytest.raises(ValueError, match="single-call"):
        judges.tokutake_judge(study, JudgeConfig(provider="local", model="m"), "ltm")


def test_robustness_summary_by_hand():
    scores = pd.DataFrame({"judge": "j", "relation": "r", "case": list("abcde"),
                           "original": [1.0, 3.0, 4.0, 5.0, np.nan], "perturbed": [1.0, 3.4, 2.0, 4.0, 2.0],
                           "truth": [1.0, 2.0, 4.0, 5.0, 3.0]})
    row = judges.robustness(scores).iloc[0]
    assert row["cases"] == 5 and row["filtered"] == 1 and row["scored"] == 4
    assert row["mean_abs_change"] == pytest.approx((0 + 0.4 + 2 + 1) / 4)
    assert row["verdict_flip_rate"] == pytest.approx(1 / 4)  # 4 -> 2 flips; 3 -> 3.4 rounds to 3; 5 -> 4 stays > 3
    assert "share_changed" not in row.index  # a move that keeps the verdict is no flip, and no column of its own
    assert list(judges.verdict([2.4, 2.5, 3.49, 3.5])) == [-1, 0, 0, 1]


def test_a_verdict_flip_is_a_change_of_side_of_the_midpoint_not_any_move():
    # by hand: 1.2 -> 2.4 both below 3 (no flip); 2.4 -> 2.6 crosses to the midpoint's point 3 (flip);
    # 3.4 -> 3.6 crosses from 3 to above (flip); 4 -> 5 both above (no flip); 2 -> 4 below to above (flip);
    # 3 -> 3.01 stays at 3 (no flip)
    original = [1.2, 2.4, 3.4, 4.0, 2.0, 3.0]
    perturbed = [2.4, 2.6, 3.6, 5.0, 4.0, 3.01]
    assert list(judges.verdict_flips(original, perturbed)) == [False, True, True, False, True, False]
    scores = pd.DataFrame({"judge": "j", "relation": "r", "case": list("abcdef"), "original": original,
                           "perturbed": perturbed})
    row = judges.robustness(scores).iloc[0]
    assert row["verdict_flip_rate"] == pytest.approx(3 / 6)
    assert row["mean_abs_change"] == pytest.approx((1.2 + 0.2 + 0.2 + 1 + 2 + 0.01) / 6)


def test_a_constrained_twin_asks_the_templates_shape_and_reads_its_answer():
    from recjudge.prompts.output_shapes import output_shape

    judge = judges.tokutake_judge(_strategy_study(), JudgeConfig(provider="local", model="m", max_tokens=24), "cot")
    twin = judges.constrained(judge, max_tokens=48)
    assert twin.label == "Tokutake CoT, constrained"
    assert twin.config.shape == output_shape("tokutake_cot") and twin.config.max_tokens == 48
    assert twin.requests == judge.requests and twin.truth == judge.truth
    assert twin.parser('{"relevance": 4, "unexpectedness": 2, "serendipity": 3}') == 3.0
    assert math.isnan(twin.parser("Serendipity: 3"))  # out of shape: no score, never read loosely
    reading_logprobs = dataclasses.replace(fake_judge(), config=JudgeConfig(
        provider="local", model="m", prompt="kang_basic", scoring="expected", max_tokens=1))
    with pytest.raises(ValueError, match="expected score"):
        judges.constrained(reading_logprobs)


def test_shape_effect_pairs_each_judge_with_its_twin_by_relation():
    table = pd.DataFrame({
        "judge": ["j", "j", "j, constrained", "j, constrained", "k"], "relation": ["a", "b", "b", "a", "a"],
        "cases": [5, 5, 5, 5, 3], "filtered": [3, 2, 0, 1, 0], "mean_abs_change": [0.5, 0.2, 0.1, 0.0, 1.0],
        "verdict_flip_rate": [0.4, 0.2, 0.0, 0.1, 0.3], "spearman": [0.1, 0.2, 0.9, 0.8, 0.5]})
    effect = judges.shape_effect(table).set_index("relation")
    assert list(effect.index) == ["a", "b"] and set(effect["judge"]) == {"j"}  # k has no twin
    assert effect.loc["a", "filtered_free"] == 3 and effect.loc["a", "filtered_constrained"] == 1
    assert effect.loc["b", "verdict_flip_rate_free"] == 0.2 and effect.loc["b", "spearman_constrained"] == 0.9
    assert judges.shape_effect(table[table["judge"] == "k"]).empty


# ------------------------------------------------------------------------------------------------- study tables

from recjudge.metamorphic import study  # noqa: E402


def fake_replies():
    rows = []
    for k in (5, 10):
        for it, ranking in enumerate([[1, 2, 3], [1, 3, 2]]):
            rows.append({"table": "2", "condition": f"k={k}", "user_id": 1, "iteration": it, "ranking": ranking})
    for it in range(4):
        rows.append({"table": "3", "condition": "l=20", "user_id": 1, "iteration": it,
                     "ranking": [1, 2, 3] if it % 2 == 0 else [1, 2, 4]})
    for name in ("mr1", "mr2", "mr3", "mr4"):
        for it in range(3):
            rows.append({"table": "4", "condition": name, "user_id": 1, "iteration": it,
                         "ranking": [1, 2, 3] if name == "mr1" else [7, 8, it + 10]})
    return pd.DataFrame(rows)


def test_study_tables_compare_as_described():
    replies = fake_replies()
    t2 = study.table_2(replies).set_index("condition")
    assert t2.loc["k=5", "overlap"] == pytest.approx(1.0)
    assert t2.loc["k=5", "kendall_tau"] == pytest.approx(1 / 3)  # one of three pairs discordant
    t3 = study.table_3(replies).set_index("condition")
    assert t3.loc["l=20", "overlap"] == pytest.approx(np.mean([2 / 3, 1, 2 / 3]))  # iterations 1-3 vs 0
    t4, per_iteration = study.table_4(replies)
    t4 = t4.set_index("relation")
    assert t4.loc["No change (baseline)", "iterations"] == 3
    assert t4.loc["MR1: Multiply", "overlap"] == pytest.approx(1.0) and t4.loc["MR1: Multiply", "overlap_sd"] == 0
    assert t4.loc["MR3: Spaces", "overlap"] == pytest.approx(0.0)
    assert 0 <= t4.loc["MR3: Spaces", "overlap_p"] < 0.05
    assert len(per_iteration) == 15


def test_shape_effect_sets_each_table_beside_its_constrained_twin_and_reply_summary_counts():
    free = fake_replies()
    shaped = free.assign(ranking=[[1, 2, 3]] * len(free))  # every constrained reply the same list
    effect = study.shape_effect(free, shaped).set_index(["table", "condition"])
    assert effect.loc[("Table 2", "k=5"), "kendall_tau_free"] == pytest.approx(1 / 3)
    assert effect.loc[("Table 2", "k=5"), "kendall_tau_constrained"] == pytest.approx(1.0)
    assert effect.loc[("Table 4", "MR3: Spaces"), ["overlap_free", "overlap_constrained"]].tolist() == [0.0, 1.0]
    assert list(effect.index.get_level_values("table").unique()) == ["Table 2", "Table 3", "Table 4"]
    summary_input = pd.DataFrame({"table": ["2", "2", "3"], "is_list": [True, False, True], "n_titles": [2, 0, 1],
                                  "ranking": [[5, "?unknown"], [], [7]]})
    summary = study.reply_summary(summary_input).set_index("table")
    assert summary.loc["Table 2", ["replies", "not_a_list", "ranked_entries"]].tolist() == [2, 1, 2]
    assert summary.loc["Table 2", "matched_share"] == 0.5 and summary.loc["Table 3", "mean_titles"] == 1.0


def test_choice_sensitivity_recomputes_table_4_per_choice():
    replies = fake_replies()
    extra = pd.DataFrame([{"table": "4", "condition": "mr1:λ=5", "user_id": 1, "iteration": it, "ranking": [2, 1, 3]}
                          for it in range(3)])
    choices = study.choice_sensitivity(pd.concat([replies, extra], ignore_index=True), p_values=(0.5, 0.9),
                                       lambdas=(5, 7))
    rbo = choices[choices["measure"] == "rbo"].set_index(["relation", "choice"])["mean"]
    # MR1 repeats the reference [1, 2, 3] exactly: RBO 1 at every p; table_4 at p = 0.9 is the chapter's value
    assert rbo[("MR1: Multiply", "p = 0.5")] == pytest.approx(1.0)
    assert rbo[("No change (baseline)", "p = 0.9")] == pytest.approx(study.table_4(replies)[0].set_index(
        "relation").loc["No change (baseline)", "rbo"])
    # λ = 5 swaps the two top items of the reference: RBO ext = p (Webber et al., two lists of three)
    assert rbo[("MR1: Multiply", "λ = 5")] == pytest.approx(0.9)
    assert ("MR2: Addition", "λ = 5") not in rbo.index and ("MR1: Multiply", "λ = 7") not in rbo.index
    assert study.relation_name("mr2:λ=3") == "MR2: Addition (λ = 3)"


def test_plan_adds_lambda_variants_of_mr1_and_mr2_only():
    from recjudge.data.loaders import load_movielens

    ml = load_movielens("latest-small")
    users = study.sample_users(ml.ratings, 1, seed=0)
    groups = study.plan(ml.ratings, ml.items, users, iterations=2, tables=("4",), lambdas=(2, 5))
    conditions = [g.condition for g in groups]
    assert conditions == ["l=20", "mr1", "mr2", "mr3", "mr4", "mr1:λ=5", "mr2:λ=5"]
    mr1_5 = groups[conditions.index("mr1:λ=5")].requests[0].messages[-1]["content"]
    assert "/25" in mr1_5 and "/5 " not in mr1_5.split("likes the following items: ")[1].split(". (1 being")[0]
    constrained = study.plan(ml.ratings, ml.items, users, iterations=2, tables=("2",), constrained=True)
    plain = study.plan(ml.ratings, ml.items, users, iterations=2, tables=("2",))
    for shaped, free in zip(constrained, plain):
        k = int(shaped.condition.split("=")[1])
        assert shaped.config.shape.schema["properties"]["titles"]["minItems"] == k and free.config.shape is None
        assert shaped.requests == free.requests  # the same prompt, only the reply is constrained


def test_the_plan_for_a_readers_judge_keeps_each_groups_role():
    from recjudge.data.loaders import load_movielens
    from recjudge.llm.judge_spec import JudgeSpec

    ml = load_movielens("latest-small")
    users = study.sample_users(ml.ratings, 1, seed=0)
    groups = study.plan(ml.ratings, ml.items, users, iterations=2, tables=("2", "4"))
    judges = [JudgeSpec("openai", "gpt-4o-mini").to_parameter(),
              JudgeSpec("anthropic", "claude-3-5-haiku", label="Haiku", temperature=1.0).to_parameter()]
    plans = study.for_judges(groups, judges)
    assert list(plans) == ["gpt-4o-mini", "Haiku"] and study.for_judges(groups, []) == {}
    for label, judged in plans.items():
        assert [(g.table, g.condition, g.requests) for g in judged] == [
            (g.table, g.condition, g.requests) for g in groups]
        for mine, theirs in zip(groups, judged):
            assert (theirs.config.prompt, theirs.config.max_tokens, theirs.config.runs) == (
                mine.config.prompt, mine.config.max_tokens, mine.config.runs)
    assert {g.config.model for g in plans["gpt-4o-mini"]} == {"gpt-4o-mini"}
    assert {g.config.temperature for g in plans["gpt-4o-mini"]} == {0.7}  # the chapter's temperature ...
    assert {g.config.temperature for g in plans["Haiku"]} == {1.0}        # ... unless the judge sets its own


def test_perturbation_table_against_closed_forms():
    rows = {row["change"]: row for row in rank.perturbation_table(5, (0.5, 0.9))}
    # Webber et al.'s RBO_ext of two five-item lists: swapping the top two gives p; a new last item 1 - 0.2 p^4
    for p in (0.5, 0.9):
        assert rows["swap ranks 1 and 2"][f"rbo_p{p:g}"] == pytest.approx(p)
        assert rows["new item at rank 5"][f"rbo_p{p:g}"] == pytest.approx(1 - 0.2 * p ** 4)
    assert rows["reversed"]["kendall_tau"] == pytest.approx(-1.0)
    assert rows["new item at rank 1"]["kendall_tau_shared"] == pytest.approx(1.0)
    assert rows["last 2 items new"]["overlap"] == pytest.approx(0.6)


def test_judge_slug_names_files():
    from recjudge.metamorphic.judges import judge_slug

    assert judge_slug("Explanation (Zhang)") == "explanation_zhang"
    assert judge_slug("Kang basic") == "kang_basic"
    with pytest.raises(ValueError, match="no letters or digits"):
        judge_slug(" () ")


def test_a_readers_judge_plays_each_judge_under_test_with_its_relations(tmp_path, monkeypatch):
    from recjudge.llm.judge_spec import parse_judge

    own = dataclasses.replace(fake_judge(), config=JudgeConfig(provider="local", model="m", prompt="kang_basic",
                                                               scoring="expected", max_tokens=1,
                                                               options=(("n_batch", 64),)))
    reader = parse_judge("openai:gpt-4o-mini", batch=True).to_parameter()
    (played,) = judges.for_readers(own, [reader])
    assert played.label == "fake, gpt-4o-mini" and played.batch is True and own.batch is None
    assert (played.config.provider, played.config.model, played.config.options) == ("openai", "gpt-4o-mini", ())
    assert (played.config.prompt, played.config.scoring, played.config.max_tokens) == ("kang_basic", "expected", 1)
    assert played.requests == own.requests and played.paraphrase == own.paraphrase  # the same relations apply
    assert judges.perturb(played, "mr3")[0].messages == judges.perturb(own, "mr3")[0].messages
    assert judges.for_readers(own, []) == []
    monkeypatch.setenv("RECJUDGE_PLAN_LOG", str(tmp_path / "plan.jsonl"))
    scores, _ = judges.run_relations(played, ["mr3"], mode="plan", store=tmp_path / "store")  # batch: priced so
    assert scores["judge"].unique().tolist() == ["fake, gpt-4o-mini"] and scores["perturbed"].isna().all()


def test_run_robustness_asks_each_judge_its_readers_and_the_twins_of_the_generating_ones(monkeypatch):
    from recjudge.llm.judge_spec import parse_judge

    expected = dataclasses.replace(fake_judge(), label="Kang basic", config=JudgeConfig(
        provider="local", model="m", prompt="kang_basic", scoring="expected", max_tokens=1))
    generating = judges.tokutake_judge(_strategy_study(), JudgeConfig(provider="local", model="m", max_tokens=24),
                                       "cot")
    asked = []

    def run_relations(judge, relations, mode=None, store=None):
        asked.append((judge.label, judge.config.max_tokens, tuple(relations), mode))
        return (pd.DataFrame({"case": ["a"], "original": [3.0], "perturbed": [4.0], "judge": judge.label,
                              "relation": "MR3: spaces"}),
                pd.DataFrame({"judge": [judge.label], "relation": ["MR1"], "reason": ["no ratings"]}))

    monkeypatch.setattr(judges, "run_relations", run_relations)
    reader = parse_judge("openai:gpt-4o-mini").to_parameter()
    result = judges.run_robustness([expected, generating], ["mr3"], readers=[reader], twins=True, twin_max_tokens=48,
                                   mode="replay")
    assert [label for label, *_ in asked] == [
        "Kang basic", "Tokutake CoT", "Kang basic, gpt-4o-mini", "Tokutake CoT, gpt-4o-mini",
        "Tokutake CoT, constrained", "Tokutake CoT, gpt-4o-mini, constrained"]  # Kang reads log-probabilities
    assert asked[4][1:] == (48, ("mr3",), "replay")
    assert result.judges == [expected, generating]
    assert result.roles == {"Kang basic, gpt-4o-mini": "Kang basic", "Tokutake CoT, gpt-4o-mini": "Tokutake CoT"}
    assert result.scores["judge"].tolist() == [label for label, *_ in asked]
    assert result.scores.index.tolist() == list(range(6)) and len(result.skipped) == 6
    alone = judges.run_robustness([generating], ["mr3"])
    assert [judge.label for judge in alone.under_test] == ["Tokutake CoT"] and alone.roles == {}
    nothing = judges.run_robustness([], ["mr3"])
    assert nothing.scores.empty and nothing.skipped.columns.tolist() == ["judge", "relation", "reason"]


def test_serendipity_judges_builds_the_judges_its_list_names_on_their_samples(monkeypatch):
    from recjudge.serendipity import prompt_strategies

    drawn = []

    def prepare_study(source, sample_size, seed, history_k):
        drawn.append((source, sample_size, seed, history_k))
        return _strategy_study()

    monkeypatch.setattr(prompt_strategies, "prepare_study", prepare_study)
    config = JudgeConfig(provider="local", model="m")
    (built,) = judges.serendipity_judges("mirror", ["tokutake"], config, config, "ls", kang_sample=200, kang_cases=5,
                                         tokutake_sample=15, tokutake_cases=1, suffix=" (Serendipity-2018)")
    assert drawn == [("mirror", 15, 0, 10)]
    assert built.label == "Tokutake LS (Serendipity-2018)" and len(built.requests) == 1
    assert built.config.prompt == "tokutake_ls"
    assert judges.serendipity_judges("synthetic", ["explanation"], config, config, kang_sample=40, kang_cases=1,
                                     tokutake_sample=15) == []
    with pytest.raises(ValueError, match=r"judge_list names \['kang'\]"):
        judges.serendipity_judges("synthetic", ["kang"], config, config, kang_sample=40, kang_cases=1,
                                  tokutake_sample=15)
