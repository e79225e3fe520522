"""Every reply parser of the package, applied to every reply text in the committed response store.

The replies a parser accepts (turns into a score or a list) are listed in ``fixtures/accepted_replies.csv``. The table
pins what each parser accepts across the whole store, including replies to other prompts that no chapter reads
with that parser (so it also shows how permissive a rule is, the authors' last-digit rule of Zhang et al. above
all). A change of the parsers or of the store that accepts another reply, or stops accepting one, fails here until
the table is reviewed again (``RECJUDGE_UPDATE_ACCEPTED_REPLIES=1 pytest tests/test_parsers_on_stored_replies.py``
rewrites it; review the diff before committing it: at least every read of a reply that a chapter reads with that
parser, and every reply no longer accepted). Known false positives found this way became tests below and in
``test_llm_parsing`` and ``test_explanations``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

from recjudge.chapters.reply_readings import READERS
from recjudge.llm import ResponseStore

ROOT = Path(__file__).resolve().parents[1]
TABLE = Path(__file__).with_name("fixtures") / "accepted_replies.csv"

#: parser name -> reply text -> what it read (None: not accepted)
PARSERS = {name: reader for name, (_, reader) in READERS.items()}


def accepted_replies() -> pd.DataFrame:
    texts = sorted({reply.text for reply in ResponseStore(ROOT / "data" / "llm") if isinstance(reply.text, str)})
    rows = [(name, text, str(read)) for name, parser in PARSERS.items() for text in texts
            if (read := parser(text)) is not None]
    return pd.DataFrame(rows, columns=["parser", "reply", "read"])


def test_the_parsers_accept_exactly_the_reviewed_replies():
    found = accepted_replies()
    if os.environ.get("RECJUDGE_UPDATE_ACCEPTED_REPLIES") == "1":
        found.to_csv(TABLE, index=False)
    reviewed = pd.read_csv(TABLE, dtype=str, keep_default_na=False)
    assert len(found) >= 100, "the committed store should hold many parsed replies"
    merged = found.merge(reviewed, how="outer", indicator=True, on=["parser", "reply", "read"])
    changed = merged[merged["_merge"] != "both"]
    assert changed.empty, ("accepted replies differ from the reviewed table (left_only: newly accepted or read "
                           f"differently; right_only: no longer accepted):\n{changed.to_string(max_colwidth=80)}")


@pytest.mark.parametrize("parser", ["parse_likert", "serendipity[base]", "serendipity[ls]", "serendipity[ltm]"])
def test_no_parser_reads_a_score_from_an_echo_cut_inside_a_title(parser):
    """The false positives once found in the store: echoes of the user turn cut inside a title's year."""
    for echo in ("User's last movies: The (2", "User's last movies: Christine (2", "User's last movies: (no earlier",
                 "Seven (1995), Heat (1"):
        assert PARSERS[parser](echo) is None, echo


@pytest.mark.parametrize("parser", ["serendipity[base]", "serendipity[ls]", "serendipity[ltm]"])
def test_the_strategies_read_no_number_from_an_echoed_field(parser):
    for echo in ("User's last movies: 2 Fast 2 Furious (2003)", "Recommended movie: Heat (1995), genres: 2",
                 "user's last movies: 1 9 5 9 , 2 0 1 0"):
        assert PARSERS[parser](echo) is None, echo
    assert PARSERS[parser]("4\nUser's last movies: Heat (1995)") == 4


def test_every_filled_field_label_of_every_template_is_an_echoed_field():
    """A reply repeating any prompt of the package is read as an echo: every "Label: {field}" line of every
    template's user turns, rendered with the movie domain's words, opens with a label of ``ECHOED_FIELDS``, unless
    it is an answer slot (a solved example's score: a reply filling the slot answers)."""
    import re

    from recjudge.llm.parsing import ECHOED_FIELDS
    from recjudge.prompts import list_templates, load_template
    from recjudge.prompts.serendipity import domain_fields

    words = domain_fields("movies")
    labels = set()
    for name in list_templates():
        for role, text in load_template(name).sections:
            for line in text.splitlines() if role == "user" else ():
                label = re.match(r"\s*(\w[^{}\n]*?(?:\{\w+_?noun\}[^{}\n]*?)*):\s*'?\{(\w+)\}", line)
                if label and not re.search(r"score|rating|persuasiveness|transparency|accuracy|satisfaction",
                                           label.group(2)):
                    labels.add(label.group(1).format(**words) + ":")
    assert labels, "the templates' field labels were not found"
    for label in sorted(labels):
        assert any(label.lower().startswith(field.lower().rstrip(":")) for field in ECHOED_FIELDS), label


_LONE_NUMBER_READERS = ("parse_likert", "serendipity[base]", "serendipity[ls]", "serendipity[ltm]")
#: echoes of the prompt found in the store, and the parsers that read a score out of them before echoes were refused
#: (the authors' last-digit rule of Zhang et al. still reads the last digit of a reply that is not an echoed field)
ECHOES = [
    ("Your behavior history: 1 – “", (*_LONE_NUMBER_READERS, "zhang_authors[single]")),  # an echoed field
    ("Your behavior history: Ice Age 2", (*_LONE_NUMBER_READERS, "zhang_authors[single]")),  # and a title in it
    ("Your behavior history:\n1. Judgment", _LONE_NUMBER_READERS),  # the field, then its list numbered
    ('1. The movie "Secret in Their', _LONE_NUMBER_READERS),  # a list number, not a score
    ("1. The user interacted with this movie", _LONE_NUMBER_READERS),
    ("Ice Age 2", _LONE_NUMBER_READERS),  # the number of a title
    ("You will get 5 recommendations.", _LONE_NUMBER_READERS),  # a count from another prompt
    ("Movie: 钢铁侠 Iron Man\nExplanation: 3", (*_LONE_NUMBER_READERS, "zhang_authors[single]")),
    ("User's last movies: T o y S t o r y 3 ( 2 0 1 0", ("parse_likert",)),
    ("The user's rated movies, oldest to newest: Babe (1995) (rated 4/5)", ("parse_likert", "zhang_authors[single]")),
    ("1. Conjuring (2013) 5/5", ("parse_likert",)),  # an echoed "Title (year) rating/5" list item
    ("Explanation: 这部电影的 accuracy 2 分", ("explanation_aspects",)),  # an aspect's name inside the echoed text
    ("Explanation: 1 2 3 4", ("zhang_authors[multi]",)),
    # the round's replies (issue 52, bug 9; issue 50, section 5): the whole prompt echoed ("a 5" of "a 5-point Likert
    # scale"), its legend alone, a list cut short, another JSON field first, an aspect list numbering its items
    ("Please provide a serendipity rating for the recommended item using a 5-point Likert scale: 1 – “strongly "
     "disagree”; 2 – “disagree”; 3 – “neither agree nor disagree”; 4 – “agree”; 5 – “strongly agree”.",
     ("parse_likert",)),
    ("Please provide a serendipity rating for the recommended item using a 5", ("parse_likert",)),
    ("1 – “strongly disagree”; 2 – “disagree”; 3 – “neither agree nor disagree”", ("parse_likert",)),
    ("The user's preferences are: 1", _LONE_NUMBER_READERS),
    ('{ "relevance": 2, "unexpectedness": 3, "serendipity": 4}', ("parse_likert",)),
    ("Movie: Heat\nExplanation: 1\nReply with four lines in this format, writing your integer score (1",
     ("parse_likert",)),
    ("Persuasiveness: 1.\nTransparency: 2.\nAccuracy: 3.\nSatisfaction: 4.", ("explanation_aspects",)),
    ("Persuasiveness: 1.\nTransparency: 2.\nAccuracy: 3.\nS", ("explanation_aspects", "zhang_authors_by_name[multi]")),
]


@pytest.mark.parametrize("echo, parser", [(echo, parser) for echo, parsers in ECHOES for parser in parsers])
def test_no_parser_reads_a_score_from_an_echo_of_the_prompt(echo, parser):
    assert PARSERS[parser](echo) is None


#: genuine replies (parser name prefix -> reply -> what it reads), kept by the echo rules
GENUINE = [
    ("parse_likert", "4", "4.0"), ("parse_likert", "Score: 4", "4.0"), ("parse_likert", "I would rate it 4", "4.0"),
    ("parse_likert", "4/5", "4.0"), ("parse_likert", "On a scale of 1 to 5, I'd say 4", "4.0"),
    ("parse_likert", "The answer is 2.", "2.0"), ("parse_likert", "Your serendipity rating: 3", "3.0"),
    ("parse_likert", "Your behavior history: Heat (1995)\nRecommended item: Alien (1979)\nYour serendipity rating:\n5",
     "5.0"),
    ("parse_likert", "1. Persuasiveness: 2\n2. Transparency: 3", "2.0"),  # the list number is no score
    ("serendipity[base]", "Serendipity: 4", "4.0"), ("serendipity[base]", "4", "4.0"),
    ("serendipity[ls]", "User's last movies: Heat (1995)\nSerendipity: 2", "2.0"),
    ("serendipity[ltm]", "I'd say 3", "3.0"),
    ("step[relevance]", "User's last movies: Seven (1995)\n\nRelevance: 5", "5.0"),
    ("zhang_authors[single]", "Persuasiveness: 4\nSo I summarise: 4", "4.0"),
    ("zhang_authors[multi]", "Movie: Heat\nSummary: 4 3 4 5", "persuasiveness=4; transparency=3; accuracy=4; "
                                                               "satisfaction=5"),
    ("explanation_aspects", "Movie: 钢铁侠 Iron Man\nPersuasiveness: 3", "persuasiveness=3"),
    # the round's replies: a scale written beside a label is no score, the score after it is
    ("parse_likert", "Rating (1-5): 4", "4.0"), ("parse_likert", "Score (out of 5): 2", "2.0"),
    ("parse_likert", "Rating - 3", "3.0"), ("parse_likert", '{"reasoning": "2 films", "score": 4}', "4.0"),
    ("serendipity[base]", "Serendipity (out of 5): 2", "2.0"), ("serendipity[ls]", "Serendipity (1-5): 3", "3.0"),
    ("serendipity[cot]", '{ "relevance": 2, "unexpectedness": 3, "serendipity": 4}', "4.0"),
    ("explanation_aspects", "Persuasiveness - 4\nTransparency (out of 5): 2",
     "persuasiveness=4; transparency=2"),
    ("explanation_aspects", "Persuasiveness: 1\nTransparency: 2\nAccuracy: 4", "persuasiveness=1; transparency=2; "
                                                                              "accuracy=4"),
]


@pytest.mark.parametrize("parser, reply, read", GENUINE)
def test_the_echo_rules_keep_genuine_replies(parser, reply, read):
    assert str(PARSERS[parser](reply)) == read


def test_a_rule_change_is_counted_per_reader_and_model_once_per_moved_reply():
    from recjudge.chapters.reply_readings import changed_readings

    def table(rows):
        return pd.DataFrame(rows, columns=["reader", "model", "reply", "read"])

    before = table([("parse_likert", "m", "Rating (1-5): 4", "1.0"), ("parse_likert", "m", "4", "4.0"),
                    ("parse_likert", "m", "The user's preferences are: 1", "1.0"),
                    ("parse_likert", "other", "4", "4.0"), ("parse_likert", "m", "Score: x", "")])
    after = table([("parse_likert", "m", "Rating (1-5): 4", "4.0"), ("parse_likert", "m", "4", "4.0"),
                   ("parse_likert", "m", "The user's preferences are: 1", ""),
                   ("parse_likert", "other", "4", "4.0"), ("parse_likert", "m", "Score: x", "")])
    counts = changed_readings(before, after).set_index("model")
    assert counts.loc["m", ["replies", "read_before", "read_after", "changed", "changed_texts"]].tolist() == [
        4, 3, 2, 2, 2]
    assert counts.loc["other", "changed"] == 0
    assert "proxy_vs_llm" in counts.loc["m", "chapters"]
    # a text a tiny model gave to many requests counts once per stored reply
    counts = changed_readings(before.assign(entries=[30, 1, 2, 1, 1]), after.assign(entries=[30, 1, 2, 1, 1]))
    assert counts.set_index("model").loc["m", ["replies", "changed", "changed_texts"]].tolist() == [34, 32, 2]
