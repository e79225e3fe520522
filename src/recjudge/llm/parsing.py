"""Reading scores out of LLM replies, by explicit rules.

Nothing here ever invents a score: a reply the rules cannot read gives NaN, and the runner counts it.  The paper
convention "unparsable -> 0" exists only as the named option ``JudgeRun.scores(fill_unparsable=0.0)``.

One place decides what is no score, however much it looks like one; every score parser of the package reads only
what is left (``score_text``, and ``in_score_position`` for a bare number; ``is_numbering`` for a list of aspects):

* an *echo* of the prompt (``without_echo``): tiny models often repeat their prompt instead of answering, and a
  number in the repeated text is part of a history, a title, a list or the instructions, not a rating. Blanked are
  a line opening with a field label of the package's prompt templates (``ECHOED_FIELDS``: "Your behavior history:",
  "User's last movies:", "Recommended movie:", "Movie:", "Explanation:", ...; "Your behavior history: Ice Age 2"
  holds no score), every stretch of a template's fixed text of at least ``ECHO_MIN_WORDS`` words and a reply line
  that is part of one (``without_template_text``: "... using a 5-point Likert scale: 1 – “strongly disagree”"); the
  answer slots ("Your serendipity rating:", "Serendipity:", an aspect's name) are shorter and stay, so a reply that
  fills one answers;
* a scale's *legend* (``without_legend``): two or more levels described in words ("1 – “strongly disagree”;
  2 – “disagree”", "where 1 indicates strongly disagree and 5 indicates strongly agree");
* list numbers: "1." or "1)" opening a line and followed by text on it ("1. The movie ...": the 1 numbers the
  item), and an inline "2) Transparency";
* the scale's own notation, wherever it stands, a label's side included (``without_scale``): its bounds ("Rating
  (1-5): 4" reads 4, not 1), a bound written alone ("Score (out of 5): 2" reads 2, not 5) and its size ("a 5-point
  Likert scale"); a fraction's denominator after a number ("4 out of 5") stays and is read as the fraction;
* a reply holding a JSON object is read as JSON (``json_fields``): a field's value, never the first number of
  another field.

``parse_likert`` rules, in order (all case-insensitive, after removing Markdown emphasis ``* ` #`` and word-edge ``_``
and everything listed above):

0. A reply holding a JSON object: the value of its field named as a score (score, rating, grade, answer, e.g.
   "serendipity_score"), else of its only numeric field; NaN when it has several and none is named so
   (``{"relevance": 2, "serendipity": 4}`` is not read by ``parse_likert``, which does not know the answer's name).
1. A *labelled* score: the first number following one of the words score, rating, rate, rated, grade (at most 20
   non-digit characters in between, a dash included, same line), e.g. "Score: 4", "I would rate it 4",
   "Rating - 3.5".
2. Otherwise a *fraction*: the first "x/high" or "x out of high", e.g. "4/5", "3 out of 5".
3. Otherwise the first standalone number, after blanking scale mentions such as "1-5", "1 to 5", "between 1 and 5"
   (so "On a scale of 1 to 5, I'd say 4" gives 4) and what cannot hold a bare score (``outside_brackets``): a
   bracketed aside ("(1999)", "[2]") and everything after an opening bracket that is never closed, which is what a
   reply looks like when it echoes a title and is cut inside its year ("... Christine (2" holds no score).
The fraction and the bare number must stand where a score stands (``in_score_position``): first in the reply, or
after a colon, an equals sign or one of the words is, was, be, say, said, give(s), gave, it, a, with, answer
("The answer is 4", "I'd give it a 4"), so the number of a title ("Ice Age 2", "Toy Story 3", "Conjuring (2013)
5/5") or of a count ("Give me back 5 recommendations") is not read; a colon that opens a list ("are:", "the
following:") is no such place ("The user's preferences are: 1" is a list cut short).
The chosen number (integer or decimal, e.g. 4.5) must lie in [low, high]; otherwise the result is NaN - the rules do
not go looking for another number.  Numbers spelled as words are not read.
"""

from __future__ import annotations

import functools
import json
import math
import re
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

NUMBER = r"-?\d+(?:\.\d+)?"
_EMPHASIS = re.compile(r"[*`#]+|(?<!\w)_+|_+(?!\w)")  # underscores inside words (user_novelty) stay
_LABELLED = re.compile(rf"\b(?:score|rating|rate|rated|grade)\b[^\d\n]{{0,20}}?({NUMBER})", re.IGNORECASE)
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


#: The package's prompt templates (text files). Their fixed sentences are read as data, so that a reply repeating
#: one is recognised (the parser does not import the prompts layer, which sits above it).
TEMPLATE_DIR = Path(__file__).resolve().parents[1] / "prompts" / "templates"
#: A fixed stretch of a template shorter than this many words is no echo: "Your serendipity rating:" and an aspect's
#: name are answer slots, and a reply filling one answers.
ECHO_MIN_WORDS = 4
_TEMPLATE_HEADER = re.compile(r"^### (?:system|user|assistant)\s*$", re.MULTILINE)
_TEMPLATE_FIELD = re.compile(r"\{\w*\}")


@functools.lru_cache(maxsize=1)
def template_fixed_text() -> tuple[str, ...]:
    """Every stretch of fixed text of every prompt template (a line cut at its fields), of at least
    ``ECHO_MIN_WORDS`` words and not opening with a number, lower-cased with its whitespace collapsed, longest
    first."""
    stretches: set[str] = set()
    for path in sorted(TEMPLATE_DIR.glob("*.txt")):
        parts = _TEMPLATE_HEADER.split(path.read_text(encoding="utf-8"))
        for section in parts[1:]:  # parts[0] is the template's description, never sent
            for line in section.splitlines():
                for stretch in _TEMPLATE_FIELD.split(line.replace("{{", "{").replace("}}", "}")):
                    words = _normalise_text(stretch).strip(" :-#")
                    # a stretch opening with a number is a legend's level ("5 = highly serendipitous"): one level
                    # alone is an answer, a legend is blanked by ``without_legend``
                    if len(words.split()) >= ECHO_MIN_WORDS and not words[0].isdigit():
                        stretches.add(words)
    return tuple(sorted(stretches, key=len, reverse=True))


def _normalise_text(text: str) -> str:
    return " ".join(_EMPHASIS.sub("", text).lower().split())


@functools.lru_cache(maxsize=1)
def _fixed_text_corpus() -> str:
    return "\n".join(template_fixed_text())


@functools.lru_cache(maxsize=256)
def _stretches_pattern(stretches: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(r"\s+".join(re.escape(word) for word in stretch.split()) for stretch in stretches),
                      re.IGNORECASE)


def without_template_text(text: str) -> str:
    """``text`` with every repeat of a template's fixed text blanked: a stretch of it found in the reply, and a reply
    line that is part of one (an echo cut short, "Please provide a serendipity rating for the recommended item
    using a 5")."""
    normalised = _normalise_text(text)
    present = tuple(stretch for stretch in template_fixed_text() if stretch in normalised)  # substring tests: fast
    if present:
        text = _stretches_pattern(present).sub(_blank, text)
    corpus = _fixed_text_corpus()
    lines = text.split("\n")
    for index, line in enumerate(lines):
        words = _normalise_text(line).strip(" :-#>\"'“”")
        if len(words.split()) >= ECHO_MIN_WORDS and words in corpus:
            lines[index] = " " * len(line)
    return "\n".join(lines)


#: What a scale's levels are called: a number beside one of these describes the scale, it does not use it.
_ANCHOR = (r"(?:strongly|disagree|agree|neither|neutral|not\s+at\s+all|very|somewhat|slightly|extremely|lowest|"
           r"highest|worst|best|poor|excellent|fair|good|bad|low|high|least|most)")
#: One level of a scale legend: "1 – “strongly disagree”", "5 indicates strongly agree", "1 being lowest".
_LEGEND_ITEM = re.compile(rf"(?<![\w.]){NUMBER}\s*(?:[-–—=:]|\bindicates\b|\bmeans\b|\bbeing\b|\bis\b|\bfor\b)"
                          rf"[\s\"'“”]*{_ANCHOR}\b", re.IGNORECASE)


def without_legend(text: str) -> str:
    """``text`` with a scale's legend blanked: two or more levels described in words ("1 – “strongly disagree”;
    2 – “disagree”", "where 1 indicates strongly disagree and 5 indicates strongly agree"). One level alone
    ("4 – agree") is an answer and stays."""
    items = list(_LEGEND_ITEM.finditer(text))
    if len(items) < 2:
        return text
    return _LEGEND_ITEM.sub(lambda match: " " * len(match.group(0)), text)


def without_echo(text: str) -> str:
    """``text`` with what echoes the prompt blanked (the module docstring): lines opening with an echoed field, the
    templates' fixed text, a scale's legend and list numbers. Blanked parts become spaces, so the lines stay where
    they were."""
    if ":" in text or "'" in text:  # every echoed field has one
        text = _ECHO_LINE.sub(" ", text)
    text = _LINE_LIST_MARKERS.sub(r"\1 ", text)  # before the templates' text goes: "1. <echoed text>" is numbering
    text = _LIST_MARKER.sub(" ", text) if ")" in text else text
    return without_legend(without_template_text(text))


def without_scale(text: str, low: float = 1, high: float = 5) -> str:
    """``text`` with the notation of its scale blanked, wherever it stands, a label's side included: the scale's
    bounds ("1-5", "(1 to 5)", "between 1 and 5"), a bound written alone ("Score (out of 5): 2", "/5" after no
    number) and a scale's size ("a 5-point Likert scale"). A fraction's denominator after a number ("4 out of 5")
    stays: it is read as the fraction."""
    bounds, bound_alone = _scale_patterns(_format_number(low), _format_number(high))
    text = bounds.sub(_blank, text)
    text = bound_alone.sub(lambda match: match.group(0) if _after_number(match) else _blank(match), text)
    return _SCALE_SIZE.sub(_blank, text)


@functools.lru_cache(maxsize=32)
def _scale_patterns(low: str, high: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The scale's bounds written out, and its upper bound written alone (``without_scale``)."""
    low, high = re.escape(low), re.escape(high)
    return (re.compile(rf"(?:\b(?:between|from)\s+)?(?<![\w.]){low}\s*(?:-|–|—|to|and)\s*{high}(?![\w]|\.\d)",
                       re.IGNORECASE),
            re.compile(rf"(?:/|\bout\s+of)\s*{high}(?![\w]|\.\d)", re.IGNORECASE))


_SCALE_SIZE = re.compile(r"(?<![\w.])\d+(?:\s*-\s*(?:point|level)\b|\s+(?:points?|levels?)\s+(?:likert\s+)?scale)",
                         re.IGNORECASE)


def _after_number(match: re.Match[str]) -> bool:
    """Whether a denominator follows a number ("4 out of 5"), i.e. is part of a fraction."""
    before = match.string[:match.start()].rstrip()
    return bool(before) and before[-1].isdigit()


def _blank(match: re.Match[str]) -> str:
    return " " * len(match.group(0))


_SCORE_POSITION = re.compile(r"(?:^|[:=]|\b(?:is|was|be|say|said|give|gives|gave|it|a|with|answer))[\s\"'“”]*$",
                             re.IGNORECASE)


#: A colon that opens a list ("The user's preferences are: 1", "the following: 2"): the number after it numbers the
#: list's first item (a reply cut short), it is no score.
_LIST_INTRO = re.compile(r"\b(?:are|were|following|follows|include|includes|including|these|those|items|list)\s*:"
                         r"[\s\"'“”]*$", re.IGNORECASE)


def in_score_position(text: str, start: int) -> bool:
    """Whether a number starting at ``start`` of ``text`` stands where a score stands: first in the text, or after a
    colon, an equals sign or a word that introduces an answer (the module docstring), and not after a colon that
    opens a list."""
    window = max(0, start - 40)
    return (_SCORE_POSITION.search(text, window, start) is not None
            and _LIST_INTRO.search(text, window, start) is None)


def score_text(text: str, low: float = 1, high: float = 5) -> str:
    """``text`` with everything blanked that is no score however much it looks like one (the module docstring):
    Markdown emphasis, the echo of the prompt (``without_echo``: echoed fields, the templates' fixed text, a scale's
    legend, list numbers) and the notation of the ``low``-``high`` scale (``without_scale``). The one place that
    decides it: every score parser of the package reads what is left."""
    if "*" in text or "`" in text or "#" in text or "_" in text:  # four scans in C beat one regex pass
        text = _EMPHASIS.sub("", text)
    return without_scale(without_echo(text), low, high)


def _clean(text: object, low: float = 1, high: float = 5) -> str | None:
    return score_text(text, low, high).strip() if isinstance(text, str) else None


_JSON_KEY_VALUE = re.compile(rf'"([^"\n]{{1,60}})"\s*:\s*"?\s*({NUMBER})?')
_SCORE_KEY = re.compile(r"\b(?:score|rating|grade|answer)\b", re.IGNORECASE)


def json_fields(text: str) -> list[tuple[str, object]] | None:
    """The fields of the JSON object(s) in a reply, in order, or None when it holds none. An object that does not
    parse (a reply cut inside it) gives its ``"name": number`` pairs, so a field is still read as that field."""
    if "{" not in text:
        return None
    fields: list[tuple[str, object]] = []
    for block in re.findall(r"\{[^{}]*\}", text, re.DOTALL):
        try:
            obj = json.loads(block)
        except ValueError:
            continue
        if isinstance(obj, Mapping):
            fields.extend((str(name), value) for name, value in obj.items())
    if fields:
        return fields
    if re.search(r'\{\s*"', text):
        return [(name, value) for name, value in _JSON_KEY_VALUE.findall(text[text.index("{"):])]
    return None


def _json_score(fields: list[tuple[str, object]], low: float, high: float) -> float:
    """A JSON reply's score: the field named as one (score, rating, grade, answer, "serendipity_score"), else its
    only numeric field; NaN when there is none or several without a name that says which."""
    named = [value for name, value in fields if _SCORE_KEY.search(_normalise_name(name))]
    if named:
        return _in_range_value(named[0], low, high)
    numeric = [value for _, value in fields if _as_number(value) is not None]
    return _in_range_value(numeric[0], low, high) if len(numeric) == 1 else math.nan


def _as_number(value: object) -> float | None:
    if isinstance(value, bool) or value is None or value == "":
        return None
    if isinstance(value, (int, float)):
        return float(value)
    match = re.fullmatch(rf"\s*({NUMBER})\s*", str(value))
    return float(match.group(1)) if match else None


def _in_range_value(value: object, low: float, high: float) -> float:
    number = _as_number(value)
    return math.nan if number is None or math.isnan(number) else _in_range(str(number), low, high)


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
    cleaned = _clean(text, low, high)
    if not cleaned:
        return math.nan
    fields = json_fields(cleaned)
    if fields is not None:  # JSON is read as JSON: a field's value, never the first number of another field
        return _json_score(fields, low, high)
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

    Rules, after blanking what is no score (the module docstring): if the reply contains a JSON object, its keys
    are matched to the aspects (case, spaces, hyphens and underscores ignored) and values read with
    ``parse_likert``.  Otherwise, for each aspect, the first line mentioning the aspect name is read: the first
    number after the name on that line (at most 40 non-digit characters in between, a dash included), e.g.
    "Relevance: 4", "- novelty = 3/5", "**Serendipity** (1-5): 2", "Persuasiveness - 4".  Values read from the
    text that are 1, 2, ..., k in the order the reply lists them (``is_numbering``: "Persuasiveness: 1.\n
    Transparency: 2.\nAccuracy: 3.") number the list; none of them is read.
    """
    result = {aspect: math.nan for aspect in aspects}
    cleaned = _clean(text, low, high)
    if not cleaned:
        return result
    wanted = {_normalise_name(a): a for a in aspects}
    for name, value in json_fields(str(text)) or ():
        aspect = wanted.get(_normalise_name(name))
        if aspect is not None and math.isnan(result[aspect]):
            result[aspect] = parse_likert(str(value), low, high)
    read_at: dict[str, int] = {}  # aspect read from the text -> where its name stands
    for norm, aspect in wanted.items():
        if not math.isnan(result[aspect]):
            continue
        name_pattern = r"[\s_-]+".join(re.escape(part) for part in norm.split(" "))
        match = re.search(rf"\b{name_pattern}\b([^\n]*)", cleaned, re.IGNORECASE)
        if not match:
            continue
        rest = _LIST_MARKER.sub(" ", SCALE_MENTION.sub(" ", match.group(1)))
        number = re.match(rf"[^\d\n]{{0,40}}?({NUMBER})", rest)
        if number:
            result[aspect] = _in_range(number.group(1), low, high)
            read_at[aspect] = match.start()
    if is_numbering([result[aspect] for aspect in sorted(read_at, key=read_at.__getitem__)]):
        result.update({aspect: math.nan for aspect in read_at})
    return result


#: The fewest items whose values 1, 2, ..., k in the order listed are read as the list's own numbering.
NUMBERING_MIN_ITEMS = 3


def is_numbering(values: Sequence[float]) -> bool:
    """Whether the values read for a reply's items, in the order the reply lists them, are 1, 2, ..., k (at least
    ``NUMBERING_MIN_ITEMS``): the list numbering its items ("Persuasiveness: 1.\nTransparency: 2.\nAccuracy: 3."),
    not a judgement of each."""
    return len(values) >= NUMBERING_MIN_ITEMS and list(values) == [float(k) for k in range(1, len(values) + 1)]


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
