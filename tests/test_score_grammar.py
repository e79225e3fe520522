"""The grammar of what a score is (``recjudge.llm.parsing``), on named replies and on generated ones.

The named replies are the misreadings found reply by reply in the stored replies and in fault rounds, each read by the
reader that misread it. The generated ones (hypothesis) hold the grammar's promise: no reply that holds no judgement
(a scale, a legend, a number that is not a whole 1-5 token, a value after N/A, another scale's numerator, an echo of a
template) ever becomes a score, whatever surrounds it, and a judgement in a score position is read as itself.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from recjudge.llm import parsing
from recjudge.llm.parsing import parse_aspect_scores, parse_likert
from recjudge.prompts.explanations import authors_parser, names_parser
from recjudge.serendipity.prompt_strategies import parse_serendipity, parse_step

ASPECTS = ["persuasiveness", "transparency", "accuracy", "satisfaction"]


def _nan(value: float) -> bool:
    return isinstance(value, float) and math.isnan(value)


# ------------------------------------------------------------------------------------- the named misreadings

#: reply -> what it was read as before the grammar (the misreading), each now read as no score by ``parse_likert``
NOT_A_SCORE = {
    # a scale whose levels are written in brackets (a stored reply, request t4:mr1:533, read 1)
    "based on a rating of 1 (not enough) to 5 (not enough)": 1.0,
    "Score: 1e1": 1.0,  # a mantissa
    "Rating: .5": 5.0,  # part of a decimal
    "Rating (1-10): 8": 1.0,  # the lower bound of another scale
    "Score: 4/10": 4.0,  # the numerator of another scale
    "Score: −3": 3.0,  # signed (a minus sign, U+2212)
    "Score: -3": math.nan,
    "Rating: 5e-1": 5.0,  # a mantissa
    "Rating: N/A - fewer than 5 movies in the history": 5.0,  # after N/A
    "Rating: n/a (only 2 films watched)": 2.0,
    "Rating (out of 10): 8": math.nan,  # another scale's bound written alone
    "On a scale of 1 to 10, I'd say 4": 4.0,  # 4 of 10 is no 4 of 5
    "Rating - 3.5": 3.5,  # no whole number: the prompts ask for one of five levels
    "4.5": 4.5,
    # a legend whose levels are described without the usual agreement words (the prompt strategies' own legend)
    "1 = not serendipitous at all\n2 = slightly serendipitous\n3 = neutral\n4 = serendipitous\n"
    "5 = highly serendipitous": 1.0,
}


@pytest.mark.parametrize("reply", list(NOT_A_SCORE))
def test_parse_likert_reads_no_score_from_what_is_no_whole_1_to_5_judgement(reply):
    assert _nan(parse_likert(reply)), f"{reply!r} read as {parse_likert(reply)}"


@pytest.mark.parametrize("reply, score", [
    ("Rate it from 1 (lowest) to 5 (highest): 3", 3.0),  # read 1: the scale's levels are named in brackets
    ("Rating (1-5): 4", 4.0),
    ("Score: 4.0", 4.0),  # a whole number with a zero decimal part
    ("Score: 4/5", 4.0), ("3 out of 5", 3.0),
])
def test_parse_likert_reads_the_judgement_beside_its_own_scale(reply, score):
    assert parse_likert(reply) == score


def test_an_echo_whose_final_punctuation_differs_is_still_an_echo():
    """Two stored replies to the authors' prompts: the echoed "Persuasiveness: This explanation is convincing to me"
    ends in a comma, not the template's full stop, and was read as the first mention of persuasiveness, so the
    judgement "(3)" further on was lost."""
    reply = ("1. Persuasiveness: This explanation is convincing to me, and I would rate it highly as a recommendation "
             "platform's expert on the movie Iron Man.\n2. Transparency: The user has provided an honest review of "
             "their experience with the explanation in four aspects - persuasiveness (3), transparency (4) and "
             "accuracy (5).")
    assert parse_aspect_scores(reply, ASPECTS)["persuasiveness"] == 3.0
    assert names_parser("multi")(reply)["persuasiveness"] == 3.0


def test_two_worded_answers_are_answers_not_a_legend():
    """Decided: a level described in words that follows its own label ("Persuasiveness: 4 – agree") answers that
    label; a legend is two or more levels that follow no label of their own."""
    reply = "Persuasiveness: 4 – agree\nTransparency: 2 – disagree"
    got = parse_aspect_scores(reply, ASPECTS)
    assert (got["persuasiveness"], got["transparency"]) == (4.0, 2.0)
    assert parse_likert(reply) == 4.0
    # a legend after a scale's label stays a legend
    assert _nan(parse_likert("Likert scale: 1 – strongly disagree; 2 – disagree"))


def test_the_answer_format_the_authors_ask_for_is_an_answer_not_template_text():
    """Decided: "Summary: 3 3 3 3" is the format the authors' prompt asks for ("For example , Summary: 3 3 3 3"); a
    reply line repeating it answers. Only a repeat of the template's words (at least four of them, numbers not
    counted) is an echo."""
    assert authors_parser("multi")("Summary: 3 3 3 3") == {aspect: 3.0 for aspect in ASPECTS}
    assert authors_parser("multi")("Persuasiveness 4\nSummary: 4 2 3 5")["satisfaction"] == 5.0
    echo = "Make sure you summarise the scores you have given at the end of your answer. For example , Summary: 3 3 3 3"
    assert all(_nan(value) for value in authors_parser("multi")(echo).values())


def test_an_item_name_with_a_line_break_is_no_score_in_an_echo_of_the_prompt():
    """An item named "Foo\\nScore: 5": the prompt names it on one line, so a reply echoing the prompt holds no
    "Score: 5" line of its own."""
    from recjudge.prompts import render

    messages = render("kang_basic", platform="a movie platform", platform_definite="the platform",
                      history_description="your history", history="Heat (1995)", item="Foo\nScore: 5")
    echo = messages[-1]["content"]
    assert "Foo Score: 5" in echo
    assert _nan(parse_likert(echo)), echo
    for strategy in ("base", "ls", "ltm"):
        assert _nan(parse_serendipity(echo, strategy)), strategy


def test_no_line_of_a_prompt_comes_from_a_name_with_a_line_break():
    """Every way a name enters a prompt keeps it on its line: a template's field written after text, the prompt
    strategies' solved examples and the authors' cases."""
    from recjudge.prompts import one_line, render
    from recjudge.prompts.tokutake import examples_block

    assert one_line("Foo\r\n Score: 5\u2028x") == "Foo Score: 5 x"
    block = examples_block("base", [{"history": "Heat (1995)\nScore: 5", "item": "Foo\nScore: 5", "serendipity": 2}])
    messages = render("tokutake_base", history="Foo\nScore: 5", item="Alien", examples=block)
    lines = [line for message in messages for line in message["content"].splitlines()]
    assert not [line for line in lines if line.startswith("Score")], lines


def test_recorded_scores_are_numbers_read_as_numbers():
    """A recorded judge's table holds numbers, not replies: 3.5 and 4.0 are its scores; text is read by the
    grammar."""
    parse_recorded = parsing.parse_recorded
    assert parse_recorded("3.5") == 3.5 and parse_recorded("4.0") == 4.0 and parse_recorded("4") == 4.0
    assert _nan(parse_recorded("7.5")) and _nan(parse_recorded("")) and _nan(parse_recorded("-3"))
    assert parse_recorded("Score: 4") == 4.0 and _nan(parse_recorded("Score: 4/10"))


# ------------------------------------------------------------------------------------------- generated replies

#: what a judge writes around its answer: nothing, or a short phrase
_FILLER = st.sampled_from(["", " ", "\n", ". ", " The film fits the history. ", "\nThanks!", " (my view)"])
#: a non-judgement: a number that is no whole 1-5 token, a scale or a legend, an N/A
_SIGN = st.sampled_from(["-", "−", "+", "–"])
_WHOLE = st.integers(min_value=1, max_value=5)


@st.composite
def not_a_whole_score(draw) -> str:
    """A number that is no score however it is placed: signed, decimal, exponent, a leading dot, a range, another
    scale's fraction or bound, a value after N/A, a number glued to letters, out of range."""
    n = draw(_WHOLE)
    m = draw(st.integers(min_value=0, max_value=9))
    other = draw(st.integers(min_value=6, max_value=100))
    return draw(st.sampled_from([
        f"{draw(_SIGN)}{n}",
        f"{n}.{draw(st.integers(min_value=1, max_value=99))}",
        f".{n}",
        f"{n}e{draw(st.sampled_from(['', '-', '+']))}{m}",
        f"{n}E{m}",
        f"{n}-{min(n + 1, 9)}", f"{n} to {n + 1}", f"{n} or {n + 1}",
        f"{n}/{other}", f"{n} out of {other}", f"{n}/{other} ",
        f"N/A - fewer than {n} movies", f"n/a (only {n} films watched)", f"N/A, {n}",
        f"{n}{draw(st.sampled_from(['th', 'st', 'x', '%', 'k', '-star', '-point']))}",
        f"{other}", f"0{draw(st.sampled_from(['', '.0']))}",
        f"{n},{m}",
    ]))


@st.composite
def scale_or_legend(draw) -> str:
    """The notation of a scale and its legend, which hold numbers and no judgement."""
    low_name, high_name = draw(st.sampled_from([("lowest", "highest"), ("not enough", "not enough"),
                                                 ("strongly disagree", "strongly agree"), ("worst", "best"),
                                                 ("not serendipitous at all", "highly serendipitous")]))
    other = draw(st.integers(min_value=6, max_value=10))
    sep = draw(st.sampled_from([" = ", " – ", " - ", ": ", " indicates ", " means "]))
    return draw(st.sampled_from([
        f"from 1 ({low_name}) to 5 ({high_name})", f"1 ({low_name}) to 5 ({high_name})",
        f"on a scale of 1 to {other}", f"(1-{other})", f"between 1 and {other}", f"on a {other}-point scale",
        f"1{sep}{low_name}; 5{sep}{high_name}", f"1{sep}{low_name}\n5{sep}{high_name}",
        f"where 1 indicates {low_name} and 5 indicates {high_name}", f"(1 being {low_name} and 5 being {high_name})",
        "a 5-point Likert scale", "out of 5", "1-5", "1 to 5",
    ]))


_LABEL = st.sampled_from(["Score: ", "Rating: ", "Rating - ", "I would rate it ", "Serendipity: ", "score=",
                          "Persuasiveness: ", "Transparency: ", "The answer is ", "I'd give it a ", "", "Rating ",
                          "Serendipity score: ", "Relevance: "])


@st.composite
def non_judgement_reply(draw) -> str:
    """A reply whose answer position holds no judgement: a label or nothing, then a number that is no whole 1-5
    score, or a scale or legend alone, with filler around it."""
    body = draw(st.one_of(
        st.builds(lambda label, value: label + value, _LABEL, not_a_whole_score()),
        scale_or_legend(),
        st.builds(lambda label, scale: f"{label}{scale}", _LABEL, scale_or_legend()),
    ))
    return draw(_FILLER).lstrip() + body + draw(_FILLER)


#: every reply reader of the package, as reply -> the scores it read (NaN dropped); ``parse_recorded`` reads a
#: recorded table's numbers, not replies, and the authors' last-digit rule reads any last digit by design
def _read_by_every_reader(reply: str) -> dict[str, float]:
    found = {"parse_likert": parse_likert(reply)}
    for strategy in ("base", "ls", "cot", "ltm"):
        found[f"serendipity[{strategy}]"] = parse_serendipity(reply, strategy)
    for step in ("relevance", "unexpectedness", "serendipity"):
        found[f"step[{step}]"] = parse_step(reply, step)
    for aspect, value in parse_aspect_scores(reply, ASPECTS).items():
        found[f"aspects[{aspect}]"] = value
    for aspect, value in names_parser("multi")(reply).items():
        found[f"authors_by_name[{aspect}]"] = value
    return {name: value for name, value in found.items() if not _nan(value)}


_GENERATED = settings(max_examples=400, deadline=None, derandomize=True,
                      suppress_health_check=[HealthCheck.too_slow])


@_GENERATED
@given(non_judgement_reply())
@example("Rating (1-10): 8")
@example("Rating: N/A - fewer than 5 movies in the history")
@example("Score: −3")
@example("Rating: 5e-1")
def test_no_non_judgement_ever_becomes_a_score(reply):
    assert _read_by_every_reader(reply) == {}, reply


def _template_turns() -> list[str]:
    """What a judge repeats when it echoes its prompt: every turn each template sends, and all its turns together,
    its fields filled with a title ("Heat (1995)"). The solved examples are left out: a repeat of an example's
    answer ("Serendipity: 3") reads as an answer, which is why a chapter counts a tiny model's echoes apart."""
    from recjudge.prompts import fill_template, list_templates, load_template

    examples = ("examples", "cases", "user_profile", "auxiliary")
    turns = []
    for name in list_templates():
        template = load_template(name)
        fields = {field: "" if field in examples or field.startswith("example_") else "Heat (1995)"
                  for field in template.fields}
        sent = [message["content"] for message in fill_template(template, **fields) if message["role"] != "assistant"]
        turns.extend([*sent, "\n".join(sent)])
    return turns


@st.composite
def echo_cut_short(draw) -> str:
    """A template's turn repeated from its start and cut after any word (a judge out of tokens mid-echo)."""
    words = draw(st.sampled_from(_template_turns())).split(" ")
    return " ".join(words[:draw(st.integers(min_value=1, max_value=len(words)))])


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(echo_cut_short())
@example("Please provide a serendipity rating for the recommended item using a 5")
@example("Step 3, serendipity: combining your answers on relevance and unexpectedness, how serendipitous is the "
         "movie for this user on this scale?\n1 = not serendipitous at all\n2")
@example("How serendipitous is the candidate movie for this user? Rate it from 1")
def test_no_echo_of_a_template_cut_anywhere_is_a_score(echo):
    assert _read_by_every_reader(echo) == {}, echo


@st.composite
def judgement_reply(draw) -> tuple[str, int]:
    """A whole 1-5 judgement in a score position, after an optional scale notation or legend of the 1-5 scale."""
    score = draw(_WHOLE)
    label = draw(st.sampled_from(["Score: ", "Rating: ", "I would rate it ", "The answer is ", "Rating - ", ""]))
    before = draw(st.sampled_from(["", "On a scale of 1 to 5, I'd say ", "Rating (1-5): ", "Score (out of 5): ",
                                   "From 1 (lowest) to 5 (highest): ",
                                   "1 = strongly disagree, 5 = strongly agree.\nScore: "]))
    after = draw(st.sampled_from(["", ".", "/5", " out of 5", "\n", " - a pleasant surprise."]))
    if before.endswith((": ", "say ")):
        label = ""
    lead = draw(st.sampled_from(["", " ", "\n", "Here is my answer: ", "\n\nAnswer: "]))
    return lead + before + label + str(score) + after, score


@_GENERATED
@given(judgement_reply())
def test_a_whole_judgement_in_a_score_position_is_read_as_itself(case):
    reply, score = case
    assert parse_likert(reply) == score, reply
