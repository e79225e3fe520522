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

import functools
import math
import os
from pathlib import Path

import pandas as pd
import pytest

from recjudge.llm import ResponseStore, parse_likert
from recjudge.metamorphic.recommender import parse_titles
from recjudge.prompts import explanations as explanation_prompts
from recjudge.serendipity import prompt_strategies

ROOT = Path(__file__).resolve().parents[1]
TABLE = Path(__file__).with_name("fixtures") / "accepted_replies.csv"


def _one_score(parser):
    return lambda text: (value if not math.isnan(value := parser(text)) else None)


def _read_aspects(parser):
    def read(text):
        scores = parser(text)
        found = {aspect: value for aspect, value in scores.items() if not math.isnan(value)}
        return "; ".join(f"{aspect}={value:g}" for aspect, value in found.items()) or None
    return read


def _titles(text):
    parsed = parse_titles(text)
    return " | ".join(parsed.titles) if parsed.is_list else None


#: parser name -> reply text -> what it read (None: not accepted)
PARSERS = {
    "parse_likert": _one_score(parse_likert),
    **{f"serendipity[{strategy}]": _one_score(functools.partial(prompt_strategies.parse_serendipity,
                                                                  strategy=strategy))
       for strategy in ("base", "ls", "cot", "ltm")},
    **{f"step[{step}]": _one_score(functools.partial(prompt_strategies.parse_step, step=step))
       for step in ("relevance", "unexpectedness")},
    "explanation_aspects": _read_aspects(explanation_prompts.parser_for("multi")),
    "zhang_authors[multi]": _read_aspects(explanation_prompts.authors_parser("multi")),
    "zhang_authors[single]": _one_score(explanation_prompts.authors_parser("single")),
    "zhang_authors_by_name[multi]": _read_aspects(explanation_prompts.names_parser("multi")),
    "list_titles": _titles,
}


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
