"""Reply parsing rules and the expected score from log-probabilities, on hand-made replies."""

from __future__ import annotations

import math

import pytest

from recjudge.llm.parsing import expected_score, parse_aspect_scores, parse_likert


@pytest.mark.parametrize(
    "text, expected",
    [
        ("4", 4.0),
        ("  3\n", 3.0),
        ("Score: 4", 4.0),
        ("score=2", 2.0),
        ("**4**", 4.0),
        ("## Rating: **5**", 5.0),
        ("4/5", 4.0),
        ("3 out of 5", 3.0),
        ("4.0", 4.0),
        ("I would rate it 2 because it is dull.", 2.0),
        ("On a scale of 1 to 5, I'd say 4.", 4.0),
        ("Between 1 and 5: 3", 3.0),
        ("1. The film is good.\nScore: 5", 5.0),  # a labelled score beats list numbering
        ("Score: 4/5", 4.0),
    ],
)
def test_parse_likert_reads(text, expected):
    assert parse_likert(text) == expected


@pytest.mark.parametrize(
    "text",
    [None, "", "   ", "I cannot say.", "Score: 9", "7", "-1", "0", "four", "Score: 0", 4, "4.5", "Rating - 3.5"],
)
def test_parse_likert_nan_when_unreadable_or_out_of_range(text):
    assert math.isnan(parse_likert(text))


def test_parse_likert_other_ranges():
    assert parse_likert("8/10", low=1, high=10) == 8.0
    assert math.isnan(parse_likert("8/10"))  # out of the default 1-5 range: NaN, no second guess
    assert parse_likert("Score: 0", low=0, high=4) == 0.0


def test_parse_aspect_scores_lines_and_json():
    text = "Relevance: 4\n- Novelty (1-5): **2**\nserendipity = 3/5\nUnexpectedness: 9"
    got = parse_aspect_scores(text, ["relevance", "novelty", "serendipity", "unexpectedness", "diversity"])
    assert got["relevance"] == 4.0 and got["novelty"] == 2.0 and got["serendipity"] == 3.0
    assert math.isnan(got["unexpectedness"]) and math.isnan(got["diversity"])
    got = parse_aspect_scores('Here: {"Relevance": 5, "user_novelty": "2"}', ["relevance", "user novelty"])
    assert got == {"relevance": 5.0, "user novelty": 2.0}
    assert all(math.isnan(v) for v in parse_aspect_scores(None, ["a", "b"]).values())


def test_parse_aspect_scores_reads_no_score_from_the_next_item_of_an_inline_list():
    # replies found in the store: the number after an aspect name numbers the next item
    aspects = ["persuasiveness", "transparency", "accuracy"]
    for text in ("The user experience with explanation text: 1) Persuasiveness, 2) Transparency and 3) Accuracy",
                 "1) Persuasiveness; 2) Transparency; 3) Accuracy; 4) Satisfactory"):
        assert all(math.isnan(v) for v in parse_aspect_scores(text, aspects).values()), text
    assert parse_aspect_scores("Persuasiveness: 4\nTransparency (2)", aspects)["transparency"] == 2.0


def test_expected_score_weights_first_score_position():
    lp = [
        {"Score": -0.01, "Rating": -4.6},
        {":": -0.01},
        {" 4": math.log(0.5), " 5": math.log(0.2), "3": math.log(0.2), "hello": math.log(0.1)},
        {"2": 0.0},  # later positions are ignored
    ]
    # renormalised over score tokens: (4*.5 + 5*.2 + 3*.2) / .9
    assert expected_score(lp) == pytest.approx((4 * 0.5 + 5 * 0.2 + 3 * 0.2) / 0.9)


def test_expected_score_sums_token_variants_and_respects_range():
    lp = [{"4": math.log(0.3), " 4": math.log(0.3), "2": math.log(0.4), "9": math.log(0.9)}]
    assert expected_score(lp) == pytest.approx((4 * 0.6 + 2 * 0.4) / 1.0)
    assert expected_score([{"9": -0.1, "7": -1.0}], low=1, high=10) == pytest.approx(
        (9 * math.exp(-0.1) + 7 * math.exp(-1.0)) / (math.exp(-0.1) + math.exp(-1.0)))


def test_expected_score_nan_without_score_tokens():
    assert math.isnan(expected_score(None))
    assert math.isnan(expected_score([]))
    assert math.isnan(expected_score([{"no": -0.1}, {"digits": -0.2}]))


def _expected_score_reference(logprobs, low=1, high=5):
    """The straightforward per-token loop ``expected_score`` replaced (kept here as the reference it must equal)."""
    if not logprobs:
        return math.nan
    scores = {}
    for k in range(low, high + 1):
        for text in (str(k), f" {k}", f"{k} ", f"\n{k}", f"  {k}", f"\t{k}"):
            scores[text] = k
    for alternatives in logprobs:
        mass = {}
        for token, logprob in alternatives.items():
            score = scores.get(token)
            if score is None:
                if type(token) is not str:
                    token = str(token)
                if not token or not (token[-1].isdigit() or token[-1].isspace()):
                    continue
                score = scores.get(token.strip())
                if score is None:
                    continue
            if logprob is not None and not math.isnan(logprob) and logprob <= 0:  # no probability above 1
                mass[score] = mass.get(score, 0.0) + math.exp(logprob)
        total = sum(mass.values())
        if total > 0:
            return sum(k * p for k, p in mass.items()) / total
    return math.nan


def test_expected_score_bitwise_equal_to_the_reference_loop():
    import random

    rnd = random.Random(11)
    vocabulary = ["1", "2", "3", "4", "5", "0", "6", "10", "-1", " 4", "4 ", "\n3", "\t2", "  5", " 5\n", "\u20033",
                  "4.0", "four", "Score", "**", "", " ", "\n", "x4", "4x", "٣", "²", "The", "-", 3, 4.0, None]
    checked = 0
    for _ in range(20000):
        positions = []
        for _ in range(rnd.choice([0, 1, 1, 2, 3])):
            tokens = rnd.sample(vocabulary, rnd.randint(0, 20))
            values = [rnd.choice([rnd.uniform(-40, 0), round(rnd.uniform(-20, 0), 4), 0.0, -0.0, None, math.nan,
                                  -math.inf, 1.5, -800.0, rnd.randint(-30, 0)]) for _ in tokens]
            positions.append(dict(zip(tokens, values)))
        low, high = rnd.choice([(1, 5), (1, 5), (0, 10), (-1, 3), (1, 7)])
        got = expected_score(positions, low, high)
        want = _expected_score_reference(positions, low, high)
        assert (math.isnan(got) and math.isnan(want)) or got.hex() == want.hex(), (positions, low, high)
        checked += not math.isnan(want)
    assert checked > 5000


# ------------------------------------------------------------- what only looks like a score is never read as one

#: The prompt of Kang et al.'s basic template, as a tiny model repeats it: its scale's size, its legend and its fields.
KANG_ECHO = ("Please provide a serendipity rating for the recommended item using a 5-point Likert scale: 1 – “strongly "
             "disagree”; 2 – “disagree”; 3 – “neither agree nor disagree”; 4 – “agree”; 5 – “strongly agree”.\n"
             "Rate the recommended item from the perspective of serendipity, based on your behavior history.")


@pytest.mark.parametrize("text", [
    KANG_ECHO,  # read 5: "a 5" stands where a score stands
    "Please provide a serendipity rating for the recommended item using a 5",  # the same echo, cut short
    "1 – “strongly disagree”; 2 – “disagree”; 3 – “neither agree nor disagree”",  # an echoed legend read 1
    "where 1 indicates strongly disagree and 5 indicates strongly agree",
    "The user's preferences are: 1",  # a list cut short read 1
    '{"relevance": 2, "unexpectedness": 3, "serendipity": 4}',  # JSON: another field's number came first (2)
    '{"year": 1999, "movies": 3, "comment": "fine"}',
    "Reply with four lines in this format, writing your integer score (1",  # a template's fixed text, cut short
])
def test_parse_likert_reads_no_echo_legend_list_or_other_field(text):
    assert math.isnan(parse_likert(text)), text


@pytest.mark.parametrize("text, expected", [
    ("Rating (1-5): 4", 4.0),  # read 1, the scale's lower bound
    ("Score (out of 5): 2", 2.0),  # read 5, the scale's upper bound
    ("Score (1 to 5): 3", 3.0),
    ("Rating on a 5-point scale: 2", 2.0),
    ("4 – agree", 4.0),  # one level alone is an answer, not a legend
    ('{"reasoning": "the 2 films differ", "score": 4}', 4.0),  # the field named as a score
    ('{"serendipity_rating": 3}', 3.0),
    ('{"relevance": 2, "score": 5', 5.0),  # a JSON reply cut short: still read field by field
    ("Your serendipity rating: 3", 3.0),  # an answer slot of a template is no echo
    ("You gave it a 5-star rating? I'd say 4.", 4.0),
])
def test_parse_likert_reads_the_score_beside_a_scale_legend_or_json(text, expected):
    assert parse_likert(text) == expected


@pytest.mark.parametrize("text, expected", [
    # the module docstring's examples, each read as it says
    ("Score: 4", 4.0), ("I would rate it 4", 4.0), ("Rating - 3", 3.0), ("4/5", 4.0), ("3 out of 5", 3.0),
    ("On a scale of 1 to 5, I'd say 4", 4.0), ("The answer is 4", 4.0), ("I'd give it a 4", 4.0),
])
def test_parse_likert_reads_its_docstring_examples(text, expected):
    assert parse_likert(text) == expected


@pytest.mark.parametrize("text", ["Your behavior history: Ice Age 2", "Ice Age 2", "Toy Story 3",
                                  "Conjuring (2013) 5/5", "Give me back 5 recommendations", "... Christine (2",
                                  "Rating: -1", "Rating (1-10): 8", "Rating: N/A - fewer than 5 movies",
                                  "Score: 4/10", "Score: −3", "Score: 1e1", "Rating: .5", "Rating: 3.5"])
def test_parse_likert_reads_none_of_its_docstring_counterexamples(text):
    assert math.isnan(parse_likert(text)), text


ASPECTS = ["persuasiveness", "transparency", "accuracy", "satisfaction"]


@pytest.mark.parametrize("text", [
    "Persuasiveness: 1.\nTransparency: 2.\nAccuracy: 3.\nSatisfaction: 4.",  # the robustness chapter's free replies
    "Persuasiveness: 1.\nTransparency: 2.\nAccuracy: 3.\nS",
    "the four aspects: Persuasiveness (1), Transparency (2) and Accuracy (3)",
])
def test_parse_aspect_scores_reads_no_score_from_a_list_numbering_its_items(text):
    assert all(math.isnan(value) for value in parse_aspect_scores(text, ASPECTS).values()), text


def test_parse_aspect_scores_reads_its_docstring_examples_and_real_judgements():
    got = parse_aspect_scores("Relevance: 4\n- novelty = 3/5\n**Serendipity** (1-5): 2\nPersuasiveness - 4",
                              ["relevance", "novelty", "serendipity", "persuasiveness"])
    assert got == {"relevance": 4.0, "novelty": 3.0, "serendipity": 2.0, "persuasiveness": 4.0}
    # 1, 2, 4 and 1, 2, 3 out of order are judgements, not numbering
    assert parse_aspect_scores("Persuasiveness: 1\nTransparency: 2\nAccuracy: 4", ASPECTS)["accuracy"] == 4.0
    assert parse_aspect_scores("Persuasiveness: 2\nTransparency: 1\nAccuracy: 3", ASPECTS)["persuasiveness"] == 2.0
    assert parse_aspect_scores("Persuasiveness (out of 5): 3", ASPECTS)["persuasiveness"] == 3.0
