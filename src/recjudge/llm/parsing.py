"""Reading scores out of LLM replies, by explicit rules.

Nothing here ever invents a score: a reply the rules cannot read gives NaN, and the runner counts it.  The paper
convention "unparsable -> 0" exists only as the named option ``JudgeRun.scores(fill_unparsable=0.0)``.

An *echo* of the prompt holds no score (``without_echo``, used by every score parser of the package): tiny models
often repeat their prompt instead of answering, and a number in the repeated text is part of a history, a title or a
list, not a rating.  Before any rule below looks for a number,

* a line opening with a field label of the package's prompt templates (``ECHOED_FIELDS``: "Your behavior history:",
  "User's last movies:", "Recommended movie:", "Movie:", "Explanation:", ...) is blanked to its end ("Your behavior
  history: Ice Age 2" holds no score); the answer slots ("Your serendipity rating:", "Serendipity:", an aspect's
  name) are no such labels;
* list numbers are blanked: "1." or "1)" opening a line and followed by text on it ("1. The movie ...": the 1 numbers
  the item), and an inline "2) Transparency".

``parse_likert`` rules, in order (all case-insensitive, after removing Markdown emphasis ``* ` #`` and word-edge ``_``
and the echo above):

1. A *labelled* score: the first number following one of the words score, rating, rate, rated, grade (at most 20
   non-digit characters in between, same line), e.g. "Score: 4", "I would rate it 4", "Rating - 3.5".
2. Otherwise a *fraction*: the first "x/high" or "x out of high", e.g. "4/5", "3 out of 5".
3. Otherwise the first standalone number, after blanking scale mentions such as "1-5", "1 to 5", "between 1 and 5"
   (so "On a scale of 1 to 5, I'd say 4" gives 4) and what cannot hold a bare score (``outside_brackets``): a
   bracketed aside ("(1999)", "[2]") and everything after an opening bracket that is never closed, which is what a
   reply looks like when it echoes a title and is cut inside its year ("... Christine (2" holds no score).
The fraction and the bare number must stand where a score stands (``in_score_position``): first in the reply, or
after a colon, an equals sign or one of the words is, was, be, say, said, give(s), gave, it, a, with, answer
("The answer is 4", "I'd give it a 4"), so the number of a title ("Ice Age 2", "Toy Story 3", "Conjuring (2013)
5/5") or of a count ("Give me back 5 recommendations") is not read.
The chosen number (integer or decimal, e.g. 4.5) must lie in [low, high]; otherwise the result is NaN - the rules do
not go looking for another number.  Numbers spelled as words are not read.
"""

from __future__ import annotations

import functools
import json
import math
import re
from typing import Callable, Iterable, Mapping, Sequence

NUMBER = r"-?\d+(?:\.\d+)?"
_EMPHASIS = re.compile(r"[*`#]+|(?<!\w)_+|_+(?!\w)")  # underscores inside words (user_novelty) stay
_LABELLED = re.compile(rf"\b(?:score|rating|rate|rated|grade)\b[^\d\n-]{{0,20}}({NUMBER})", re.IGNORECASE)
_STANDALONE = re.compile(rf"(?<![\w.])({NUMBER})(?![\w]|\.\d)")
# The number of the next item of an inline list ("Persuasiveness, 2) Transparency"), not a score.
_LIST_MARKER = re.compile(r"(?<![(\w.])\d+\)\s*(?=[^\W\d])")
#: A scale written out ("1-5", "1 to 5", "between 1 and 5"): its numbers are no score.
SCALE_MENTION = re.compile(rf"(?<![\w.]){NUMBER}\s*(?:-|–|to|and)\s*{NUMBER}(?![\w]|\.\d)", re.IGNORECASE)


#: The labels of the fields the package's prompt templates fill in (histories, items, explanations, a user's profile
#: and auxiliary data), with the domain words of the book's movie prompts. A reply line opening with one repeats the
#: prompt. Answer slots ("Your serendipity rating:", "Serendipity:", an aspect's name) are not listed: a reply that
#: repeats one and fills it in answers.
ECHOED_FIELDS = (
    # Kang et al. (kang_basic, kang_fewshot, kang_fewshot_aux and their auxiliary lines)
    "Your behavior history:", "Recommended item:", "Popularity of the recommended movie:",
    "Similarity to your history:", "Your long-term profile:", "Your short-term profile:",
    # the reconstructed prompts compared with Kang et al.'s, the profile summariser and the generic prompt
    "A user interacted with the following", "The recommender system then recommended this", "Candidate movie:",
    "Candidate item:", "Here is a user's history of", "The user's rated movies, oldest to newest:",
    "The user previously liked:",
    # Tokutake et al.'s strategies
    "User's last movies:", "Recommended movie:",
    # Zhang et al. (reconstructed and the authors' prompts, with the authors' user profile)
    "Movie:", "Explanation:", "You are a user of this type:", "Your gender is", "Your interest in movies is",
    "Number of movies you watch per year is", "The total number of films you've watched is around",
)
_ECHO_LINE = re.compile(r"^[ \t>\-•\"'“]*(?:" + "|".join(re.escape(field) for field in ECHOED_FIELDS) + r").*$",
                        re.IGNORECASE | re.MULTILINE)
# "1. The ...", "2) Alien": numbers of a list's items at the start of a line (repeated: "1. 1. The")
_LINE_LIST_MARKERS = re.compile(r"^([ \t]*)(?:\d+[.)][ \t]+(?=\S))+", re.MULTILINE)


def without_echo(text: str) -> str:
    """``text`` with what echoes the prompt blanked (the module docstring): lines opening with an echoed field and
    list numbers. Blanked parts become spaces, so the lines stay where they were."""
    if ":" in text or "'" in text:  # every echoed field has one
        text = _ECHO_LINE.sub(" ", text)
    text = _LINE_LIST_MARKERS.sub(r"\1 ", text)
    return _LIST_MARKER.sub(" ", text) if ")" in text else text


_SCORE_POSITION = re.compile(r"(?:^|[:=]|\b(?:is|was|be|say|said|give|gives|gave|it|a|with|answer))[\s\"'“”]*$",
                             re.IGNORECASE)


def in_score_position(text: str, start: int) -> bool:
    """Whether a number starting at ``start`` of ``text`` stands where a score stands: first in the text, or after a
    colon, an equals sign or a word that introduces an answer (the module docstring)."""
    return _SCORE_POSITION.search(text, max(0, start - 40), start) is not None


def _clean(text: object) -> str | None:
    if not isinstance(text, str):
        return None
    if "*" in text or "`" in text or "#" in text or "_" in text:  # four scans in C beat one regex pass
        text = _EMPHASIS.sub("", text)
    return without_echo(text).strip()


_BRACKETED = re.compile(r"\([^()\n]*\)|\[[^\[\]\n]*\]")
_UNCLOSED_TAIL = re.compile(r"[(\[].*", re.DOTALL)


def outside_brackets(text: str) -> str:
    """``text`` with bracketed asides blanked and cut at an opening bracket that is never closed: the parts where a
    bare number is no score (a year, a footnote, an echoed title cut inside its year)."""
    if "(" not in text and "[" not in text:
        return text
    previous = None
    while previous != text:  # innermost first, so "(a (b) c)" goes whole
        previous, text = text, _BRACKETED.sub(" ", text)
    return _UNCLOSED_TAIL.sub(" ", text)


def _in_range(value: str, low: float, high: float) -> float:
    number = float(value)
    return number if low <= number <= high else math.nan


def parse_likert(text: str | None, low: float = 1, high: float = 5) -> float:
    """The Likert score in ``text`` by the module's rules, or NaN (none found, or the chosen number out of range)."""
    cleaned = _clean(text)
    if not cleaned:
        return math.nan
    labelled = _LABELLED.search(cleaned)
    if labelled:
        return _in_range(labelled.group(1), low, high)
    high_text = _format_number(high)
    fraction = re.search(
        rf"(?<![\w.])({NUMBER})\s*(?:/|out of)\s*{re.escape(high_text)}(?:\.0+)?(?![\w]|\.\d)", cleaned, re.IGNORECASE
    )
    if fraction:
        return _in_range(fraction.group(1), low, high) if in_score_position(cleaned, fraction.start()) else math.nan
    without_scale = SCALE_MENTION.sub(" ", outside_brackets(cleaned))
    first = _STANDALONE.search(without_scale)
    if first and in_score_position(without_scale, first.start()):
        return _in_range(first.group(1), low, high)
    return math.nan


def _format_number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _normalise_name(name: str) -> str:
    return re.sub(r"[\s_-]+", " ", name.strip().lower())


def parse_aspect_scores(
    text: str | None, aspects: Sequence[str], low: float = 1, high: float = 5
) -> dict[str, float]:
    """One score per aspect from a multi-aspect reply, NaN for an aspect not found or out of range.

    Rules: if the reply contains a JSON object, its keys are matched to the aspects (case, spaces, hyphens and
    underscores ignored) and values read with ``parse_likert``.  Otherwise, for each aspect, the first line
    mentioning the aspect name is read: the first number after the name on that line (at most 40 non-digit
    characters in between), e.g. "Relevance: 4", "- novelty = 3/5", "**Serendipity** (1-5): 2".
    """
    result = {aspect: math.nan for aspect in aspects}
    cleaned = _clean(text)
    if not cleaned:
        return result
    wanted = {_normalise_name(a): a for a in aspects}
    for block in re.findall(r"\{[^{}]*\}", str(text), re.DOTALL):
        try:
            obj = json.loads(block)
        except ValueError:
            continue
        if isinstance(obj, Mapping):
            for name, value in obj.items():
                aspect = wanted.get(_normalise_name(str(name)))
                if aspect is not None and math.isnan(result[aspect]):
                    result[aspect] = parse_likert(str(value), low, high)
    for norm, aspect in wanted.items():
        if not math.isnan(result[aspect]):
            continue
        name_pattern = r"[\s_-]+".join(re.escape(part) for part in norm.split(" "))
        match = re.search(rf"\b{name_pattern}\b([^\n]*)", cleaned, re.IGNORECASE)
        if not match:
            continue
        without_scale = re.sub(r"\(\s*" + NUMBER + r"\s*(?:-|–|to)\s*" + NUMBER + r"\s*\)", " ", match.group(1))
        rest = _LIST_MARKER.sub(" ", SCALE_MENTION.sub(" ", without_scale))
        number = re.match(rf"[^\d\n-]{{0,40}}({NUMBER})", rest)
        if number:
            result[aspect] = _in_range(number.group(1), low, high)
    return result


@functools.lru_cache(maxsize=32)
def _score_tokens(low: int, high: int) -> dict[str, int]:
    """Score token text ("4") -> score; ``expected_score`` looks tokens up stripped of whitespace (" 4", "\n4")."""
    return {str(k): k for k in range(low, high + 1)}


def expected_score(logprobs: Sequence[Mapping[str, float]] | None, low: int = 1, high: int = 5) -> float:
    """Probability-weighted mean score from per-token log-probabilities.

    At the first generated position whose top alternatives contain any score token (a token that, stripped of
    whitespace, is one of the integers low..high), the probabilities of the score tokens are summed per score
    (" 4" and "4" both count for 4), renormalised over the scores, and averaged: sum_k k * p_k.  NaN when no
    position carries a score token or ``logprobs`` is empty/None.
    """
    if not logprobs:
        return math.nan
    lookup = _score_tokens(int(low), int(high)).get
    for alternatives in logprobs:
        pairs = alternatives.items()
        try:
            mass = _score_mass(pairs, lookup)
        except AttributeError:  # a token that is not a string (not from JSON): read as its text
            mass = _score_mass([(str(token), logprob) for token, logprob in pairs], lookup)
        total = sum(mass.values())
        if total > 0:
            return sum(k * p for k, p in mass.items()) / total
    return math.nan


def modal_score(logprobs: Sequence[Mapping[str, float]] | None, low: int = 1, high: int = 5) -> float:
    """The most probable score at the position ``expected_score`` reads: the integer a judge held to a single score
    token would answer at temperature 0, as the papers' judges generate integers. Ties go to the lower score; NaN
    where ``expected_score`` is NaN."""
    if not logprobs:
        return math.nan
    lookup = _score_tokens(int(low), int(high)).get
    for alternatives in logprobs:
        mass = _score_mass([(str(token), logprob) for token, logprob in alternatives.items()], lookup)
        if sum(mass.values()) > 0:
            return float(max(sorted(mass), key=mass.__getitem__))
    return math.nan


def _score_mass(pairs: Iterable[tuple[str, float | None]], lookup: Callable[[str], int | None]) -> dict[int, float]:
    """Probability per score at one position, summed in token order (so results are bitwise reproducible)."""
    mass: dict[int, float] = {}
    exp, isnan = math.exp, math.isnan
    for token, logprob in pairs:
        score = lookup(token.strip())  # " 4", "4\n" count for 4
        # A log-probability is at most 0: anything else (NaN, 1e308 from a misbehaving server) is no probability.
        if score is not None and logprob is not None and not isnan(logprob) and logprob <= 0:
            mass[score] = mass.get(score, 0.0) + exp(logprob)
    return mass
