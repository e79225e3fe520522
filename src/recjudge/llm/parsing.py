"""Reading scores out of LLM replies: one grammar of what a score is.

Nothing here ever invents a score: a reply the grammar cannot read gives NaN, and the runner counts it. The paper
convention "unparsable -> 0" exists only as the named option ``JudgeRun.scores(fill_unparsable=0.0)``.

Every score reader of the package (``parse_likert``, ``parse_aspect_scores``, the prompt strategies'
``parse_serendipity`` and ``parse_step``, the authors' rules of Zhang et al.) reads a reply in the same two steps.

Step 1: what is no score is blanked (``score_text``)
----------------------------------------------------
However much it looks like a score, none of this is one. It becomes spaces, so what is left keeps its place:

* Markdown emphasis ``* ` #`` and word-edge ``_``;
* the *echo* of the prompt (``without_echo``): a line opening with a field label of the package's templates
  (``ECHOED_FIELDS``: "Your behavior history: Ice Age 2" holds no score); every stretch of a template's fixed text of
  at least ``ECHO_MIN_WORDS`` words, whatever punctuation ends it ("Persuasiveness: This explanation is convincing to
  me," repeats the template's "... to me."); and a reply line that is part of one, counting its words and not its
  numbers ("Please provide a serendipity rating for the recommended item using a 5" is an echo cut short, while
  "Summary: 3 3 3 3", the format the authors' prompt asks for, answers). The answer slots ("Your serendipity
  rating:", "Serendipity:", an aspect's name) are shorter and stay, so a reply that fills one answers;
* list numbers: "1." or "1)" opening a line and followed by text ("1. The movie ..."), and an inline "2) Transparency";
* a scale's *legend* (``legend_spans``): levels described in words ("1 – “strongly disagree”", "1 = not
  serendipitous at all", "5 indicates strongly agree", "1 being lowest", "1 (lowest)") that stand in a repeat of a
  template's text, that a scale's label introduces ("on this scale:\\n1 = ...", even a number cut short there), that go
  on from such a level, or that are two or more. One level alone ("4 – agree") is an answer, and so is a level after
  a label of its own ("Persuasiveness: 4 – agree") unless the legend goes on after it ("Score: 1 = lowest; 5 =
  highest");
* the notation of the reader's scale ``[low, high]`` (``without_scale``), wherever it stands: its bounds, with or
  without their levels' names ("1-5", "(1 to 5)", "between 1 and 5", "from 1 (lowest) to 5 (highest)"), its upper
  bound alone ("Score (out of 5): 2", "/5" after no number) and its size ("a 5-point Likert scale"). A denominator
  after a number ("4 out of 5") stays: it makes the number a fraction of the scale;
* what follows an N/A on its line ("N/A - fewer than 5 movies"): it says why there is no answer.

Step 2: the first value at an answer position decides
-----------------------------------------------------
A reader finds an answer position (below) and takes the first *value* there (``values``). The value is a score only
when it is a *score token*; otherwise the reply gives NaN, and no other number is looked for::

    value        = N/A | numeral
    N/A          = "N/A" | "n/a" | "N.A." | "NA" | "not applicable"          (the judge declined: no score)
    numeral      = the whole run a number is written in, with what is glued to it:
                   [sign] digits [decimal part] [exponent] [letters, "%" or "-star" glued on]
                   [range: ("-" | "to" | "or" | "and" after "between") numeral]
                   [fraction: ("/" | "out of") denominator]
    score token  = a numeral of ASCII digits alone ("4"; "4.0", whose value is whole), unsigned, with nothing glued
                   on, no range, and no fraction other than one of the reader's own scale ("4/5", "4 out of 5"),
                   whose value lies in [low, high]

So a score is a whole number in ``[low, high]`` standing alone where a score stands, and never

* a scale bound or a legend level: blanked in step 1, and another scale's bounds are a range ("Rating (1-10): 8"
  takes the range 1-10: NaN);
* a value after N/A ("Rating: N/A - fewer than 5 movies" takes the N/A: NaN);
* signed ("-3", "−3", "+3");
* the numerator of another scale ("4/10", "8 out of 10") or a denominator ("Rating (out of 10): 8" takes the 10);
* a mantissa, or a part or the whole of a number that is not whole ("1e1", "5e-1", ".5", "3.5": the prompts ask for
  one of the scale's levels, and 3.5 is none of them).

A run of digits glued to the word before it ("GPT4", "GPT-4", "mp3") is part of that word: no value at all. Numbers
spelled as words are not read.

Answer positions of ``parse_likert``, in order (case-insensitive):

0. A reply holding a JSON object: the value of its field named as a score (score, rating, grade, answer, e.g.
   "serendipity_score"), else of its only numeric field; NaN when it has several and none is named so
   (``{"relevance": 2, "serendipity": 4}`` is not read by ``parse_likert``, which does not know the answer's name).
   A JSON number is read as its text is (4 and 4.0 are 4; 3.5 is no score).
1. *Labelled*: the first value after one of the words score, rating, rate, rated, grade, on the same line and
   starting at most ``LABEL_REACH`` characters after it ("Score: 4", "I would rate it 4", "Rating - 3").
2. Otherwise a *fraction* of the scale: the first "x/high" or "x out of high" ("4/5", "3 out of 5").
3. Otherwise *bare*: the first value outside brackets (``outside_brackets``: a bracketed aside, "(1999)", "[2]", and
   everything after an opening bracket that is never closed, "... Christine (2", hold no score).

The fraction and the bare value must stand where a score stands (``in_score_position``): first in the reply, or after
a colon, an equals sign or one of the words is, was, be, say, said, give(s), gave, it, a, with, answer ("The answer is
4", "I'd give it a 4"), so the number of a title ("Ice Age 2", "Toy Story 3", "Conjuring (2013) 5/5") or of a count
("Give me back 5 recommendations") is not read; a colon that opens a list ("are:", "the following:") is no such place.

``parse_aspect_scores`` reads each aspect's value after its name (its docstring). A recorded judge's table holds
numbers, not replies: ``parse_recorded`` reads a number as itself (3.5 included) and anything else by the grammar.
"""

from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping, Sequence

_EMPHASIS = re.compile(r"[*`#]+|(?<!\w)_+|_+(?!\w)")  # underscores inside words (user_novelty) stay

# ------------------------------------------------------------------------------------------------------ values

#: Digits with what makes them one number: a decimal part ("3.5", "4,5", ".5") and an exponent ("1e1", "5e-1").
_NUMERAL_BODY = r"(?:[0-9]+(?:[.,][0-9]+)*|[.,][0-9]+)(?:[eE][+\-−]?[0-9]+)?"
#: N/A: the judge declined ("NA" only in capitals: "na" is a word of other languages).
_NA_TEXT = r"(?i:\bn\s?/\s?a\b|\bn\.a\.|\bnot\s+applicable\b)|\bNA\b"
_NA = re.compile(_NA_TEXT)
_VALUE = re.compile(
    rf"(?P<na>{_NA_TEXT})"
    # a numeral: never inside a word or glued to one by a hyphen ("GPT4", "GPT-4"); a sign only where it can be one
    rf"|(?<![\w.,])(?<!\w[-–])(?P<sign>[+\-−–])?(?P<body>{_NUMERAL_BODY})"
    r"(?P<glued>(?:%|°|[^\W\d_]|[-–][^\W\d_])\w*)?"  # "4th", "80%", "5-star"
    # a range, its first level perhaps named in brackets ("3-4", "3 to 4", "3 or 4", "1 (worst) to 10")
    rf"(?P<range>(?:\s*\(\s*[^\W\d][^()\n]*\))?\s*(?:-|–|—|\bto\b|\bor\b)\s*[+\-−]?{_NUMERAL_BODY}(?!\w))?"
    rf"(?P<fraction>\s*(?:/|\bout\s+of\b)\s*(?P<denominator>{_NUMERAL_BODY}))?"
)
_BETWEEN_AND = re.compile(rf"\s*and\s*{_NUMERAL_BODY}", re.IGNORECASE)  # "between 3 and 4", after the 3
_BEFORE_BETWEEN = re.compile(r"\bbetween\s*$", re.IGNORECASE)
_BEFORE_DENOMINATOR = re.compile(r"(?:/|\bout\s+of)\s*$", re.IGNORECASE)  # "(out of 10)": the 10 is a bound
_WHOLE = re.compile(r"[0-9]+(?:\.0+)?")


@dataclass(frozen=True)
class Value:
    """A value of a reply (the module docstring): where it stands, its text, its digits ("" for an N/A; "3" of "−3",
    "4" of "4/10"), the score it is on the reader's scale (None when it is no score: an N/A, a number that is not a
    score token), whether it is written as a fraction of that scale ("4/5") and whether it writes bounds rather
    than a number (a range, "3-4", "1 to 10"; a denominator alone, "out of 10")."""

    start: int
    end: int
    text: str
    digits: str
    score: float | None
    fraction_of_scale: bool = False
    bounds: bool = False


def values(text: str, low: float = 1, high: float = 5, start: int = 0, end: int | None = None) -> Iterator[Value]:
    """The values of ``text[start:end]`` in order, each with the score it is (``Value.score``), by the grammar of
    the module docstring."""
    for match in _VALUE.finditer(text, start, len(text) if end is None else end):
        yield _value(match, low, high)


def _value(match: re.Match[str], low: float, high: float) -> Value:
    text = match.string
    start, end = match.span()
    if match.group("na") is not None:
        return Value(start, end, match.group(0), "", None)
    body, denominator = match.group("body"), match.group("denominator")
    of_scale = denominator is not None and _whole(denominator) == high
    between = _BETWEEN_AND.match(text, end) if _BEFORE_BETWEEN.search(text, max(0, start - 12), start) else None
    if between:
        end = between.end()
    bounds = bool(match.group("range") or between or _BEFORE_DENOMINATOR.search(text, max(0, start - 10), start))
    not_a_score = bounds or match.group("sign") or match.group("glued") or (denominator is not None and not of_scale)
    number = None if not_a_score else _whole(body)
    score = number if number is not None and low <= number <= high else None
    return Value(start, end, text[start:end], body, score, of_scale, bounds)


def _whole(body: str) -> float | None:
    """The whole number a numeral's digits write ("4", "4.0"), or None ("3.5", ".5", "1e1", "4,5")."""
    return float(body.split(".")[0]) if _WHOLE.fullmatch(body) else None


def _score(value: Value | None) -> float:
    return math.nan if value is None or value.score is None else value.score


def first_value(text: str, low: float = 1, high: float = 5, start: int = 0, end: int | None = None) -> Value | None:
    """The first value of ``text[start:end]``, or None when it holds none."""
    return next(values(text, low, high, start, end), None)


#: How far after its label a labelled value may start (characters, on the label's line).
LABEL_REACH = 20


def labelled_values(text: str, label: re.Pattern[str], low: float = 1, high: float = 5,
                    reach: int = LABEL_REACH) -> list[Value]:
    """For each occurrence of ``label`` in ``text`` that a value follows on its line within ``reach`` characters,
    that value (the first after it), in order."""
    found = []
    for match in label.finditer(text):
        line_end = text.find("\n", match.end())
        value = first_value(text, low, high, match.end(), len(text) if line_end < 0 else line_end)
        if value is not None and value.start - match.end() <= reach:
            found.append(value)
    return found


# ------------------------------------------------------------------------------- step 1: what is no score

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
# The number of the next item of an inline list ("Persuasiveness, 2) Transparency"), not a score.
_LIST_MARKER = re.compile(r"(?<![(\w.\-–])\d+\)\s*(?=[^\W\d])")


#: The package's prompt templates (text files). Their fixed sentences are read as data, so that a reply repeating
#: one is recognised (the parser does not import the prompts layer, which sits above it).
TEMPLATE_DIR = Path(__file__).resolve().parents[1] / "prompts" / "templates"
#: A fixed stretch of a template with fewer words than this (numbers not counted) is no echo: "Your serendipity
#: rating:", an aspect's name and "Summary: 3 3 3 3" are answer slots or formats, and a reply filling one answers.
ECHO_MIN_WORDS = 4
_TEMPLATE_HEADER = re.compile(r"^### (?:system|user|assistant)\s*$", re.MULTILINE)
_TEMPLATE_FIELD = re.compile(r"\{\w*\}")
#: What ends a sentence or a clause: a repeat of a template's sentence is an echo whatever ends it.
_FINAL_PUNCTUATION = " .,;:!?-#"


@functools.lru_cache(maxsize=1)
def template_fixed_text() -> tuple[str, ...]:
    """Every stretch of fixed text of every prompt template (a line cut at its fields), of at least
    ``ECHO_MIN_WORDS`` words and not opening with a number, lower-cased with its whitespace collapsed and without
    the punctuation that ends it, longest first."""
    stretches: set[str] = set()
    for path in sorted(TEMPLATE_DIR.glob("*.txt")):
        parts = _TEMPLATE_HEADER.split(path.read_text(encoding="utf-8"))
        for section in parts[1:]:  # parts[0] is the template's description, never sent
            for line in section.splitlines():
                for stretch in _TEMPLATE_FIELD.split(line.replace("{{", "{").replace("}}", "}")):
                    words = _normalise_text(stretch).strip(_FINAL_PUNCTUATION).lstrip(" :-#")
                    # a stretch opening with a number is a legend's level ("5 = highly serendipitous"): one level
                    # alone is an answer, a legend is blanked by ``without_legend``
                    if _word_count(words) >= ECHO_MIN_WORDS and not words[0].isdigit():
                        stretches.add(words)
    return tuple(sorted(stretches, key=len, reverse=True))


def _normalise_text(text: str) -> str:
    return " ".join(_EMPHASIS.sub("", text).lower().split())


def _word_count(words: str) -> int:
    """The words of a normalised text, numbers not counted ("summary: 3 3 3 3" has one)."""
    return sum(1 for word in words.split() if any(character.isalpha() for character in word))


@functools.lru_cache(maxsize=1)
def _fixed_text_corpus() -> str:
    return "\n".join(template_fixed_text())


@functools.lru_cache(maxsize=256)
def _stretches_pattern(stretches: tuple[str, ...]) -> re.Pattern[str]:
    # a stretch matches whole words only ("convincing to me" is not the start of "convincing to meet"), with the
    # punctuation that ends it in the reply
    return re.compile("|".join(r"(?<!\w)" + r"\s+".join(re.escape(word) for word in stretch.split())
                               + r"(?!\w)[.,;:!?]*" for stretch in stretches), re.IGNORECASE)


def without_template_text(text: str, spans: Sequence[tuple[int, int]] | None = None) -> str:
    """``text`` with every repeat of a template's fixed text blanked: a stretch of it found in the reply, whatever
    punctuation ends it there (``template_spans``, or ``spans`` when they are known), and the end of a reply line
    that is part of one (an echo cut short, "... for this user? Rate it from 1") when that end has
    ``ECHO_MIN_WORDS`` words, numbers not counted."""
    text = _blank_spans(text, template_spans(text) if spans is None else spans)
    lines = text.split("\n")
    for index, line in enumerate(lines):
        echoed = _echoed_end(line)
        if echoed:
            lines[index] = line[:len(line) - echoed] + " " * echoed
    return "\n".join(lines)


def template_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text`` repeats a whole stretch of a template's fixed text (``template_fixed_text``), with the
    punctuation that ends it there."""
    normalised = _normalise_text(text)
    present = tuple(stretch for stretch in template_fixed_text() if stretch in normalised)  # substring tests: fast
    return [match.span() for match in _stretches_pattern(present).finditer(text)] if present else []


_NOT_IN_WORDS = str.maketrans("", "", "*`#")


def _echoed_end(line: str) -> int:
    """How many characters at the end of ``line`` repeat a template's fixed text (the longest such end that has
    ``ECHO_MIN_WORDS`` words, numbers not counted), 0 when none does."""
    words = [(match.start(), match.group(0).translate(_NOT_IN_WORDS).strip("_").lower())
             for match in re.finditer(r"\S+", line)]
    corpus = _fixed_text_corpus()
    longest, counted = 0, 0
    for first in range(len(words) - 1, -1, -1):
        counted += any(character.isalpha() for character in words[first][1])
        if counted < ECHO_MIN_WORDS:
            continue
        end = " ".join(word for _, word in words[first:] if word).strip(_FINAL_PUNCTUATION + ">\"'“”")
        if end not in corpus:
            break  # a longer end holds this one, so it is in no template either
        longest = len(line) - words[first][0]
    return longest


#: What a scale's levels are called: a number beside one of these describes the scale, it does not use it.
_LEVEL_WORD = (r"(?:strongly|disagree|agree|neither|neutral|not|very|somewhat|slightly|extremely|lowest|highest|"
               r"worst|best|poor|excellent|fair|good|bad|low|high|least|most|fully|highly|clearly|completely|"
               r"serendipitous|unexpected|expected|relevant|irrelevant)")
#: One level of a scale legend: "1 – “strongly disagree”", "5 is best", "1 = not serendipitous at all",
#: "5 indicates strongly agree", "1 being lowest", "1 (lowest)".
_LEGEND_LEVEL = re.compile(
    rf"(?<![\w.])[0-9]+\s*(?:(?:[-–—:]|\bis\b|\bfor\b)[\s\"'“”]*{_LEVEL_WORD}\b"
    r"|(?:=|\bindicates\b|\bmeans\b|\bbeing\b)[ \t\"'“”]*[^\W\d]"
    rf"|\([\s\"'“”]*{_LEVEL_WORD}\b[^()\n]*\))", re.IGNORECASE)
#: The label a level may follow on its line: a name and a separator ("Persuasiveness: 4 – agree").
_LABEL_BEFORE = re.compile(r"[ \t>•*\-]*(?P<label>[^\W\d_][^\n:=]{0,40}?)[ \t]*[:=\-–—][ \t\"'“”]*")
#: Labels that introduce a legend, not an answer ("Likert scale: 1 – strongly disagree; ...").
_LEGEND_LABEL = re.compile(r"\b(?:scales?|levels?|legend|key|where|follows|following|example|e\.g)\W*$",
                           re.IGNORECASE)


def _answers_a_label(text: str, start: int) -> bool:
    """Whether the number at ``start`` follows a label of its own on its line (and is that label's answer)."""
    label = _LABEL_BEFORE.fullmatch(text, text.rfind("\n", 0, start) + 1, start)
    return label is not None and _LEGEND_LABEL.search(label.group("label")) is None


def without_legend(text: str) -> str:
    """``text`` with a scale's legend blanked (``legend_spans``)."""
    return _blank_spans(text, legend_spans(text))


#: A label that introduces a scale's levels ("... on this five-level scale:", "Levels:"): what follows is a legend.
_SCALE_INTRO = re.compile(r"\b(?:scales?|levels?|legend)\s*[:?][ \t\"'“”]*$", re.IGNORECASE)
#: A number opening a line (a legend's level cut short, "on this scale:\n1").
_LINE_OPENING_NUMBER = re.compile(r"^[ \t]*([0-9]+)(?![0-9.,])", re.MULTILINE)


def legend_spans(text: str, template: Sequence[tuple[int, int]] = ()) -> list[tuple[int, int]]:
    """Where the levels of a scale's legend stand in ``text``: levels described in words ("1 – “strongly
    disagree”", "1 = not serendipitous at all", "5 indicates strongly agree", "1 being lowest", "1 (lowest)").

    A level is part of a legend when it stands in a repeat of a template's text (``template``, spans of
    ``template_spans``), when a scale's label introduces it (``_SCALE_INTRO``, on its line or ending the line before:
    "on this scale:\\n1 = not serendipitous at all", and then even a number cut short, "on this scale:\\n1"), or when
    it goes on from such a level (on its line, or opening the next one). Otherwise two or more levels are a legend;
    one level alone ("4 – agree") is an answer, and so is a level after a label of its own ("Persuasiveness: 4 –
    agree") unless the legend goes on after it ("Score: 1 = lowest; 5 = highest" is a legend)."""
    levels = {match.span(): True for match in _LEGEND_LEVEL.finditer(text)}
    if ":" in text:  # a number opening a line can only be a level a scale's label introduces
        levels.update({match.span(1): False for match in _LINE_OPENING_NUMBER.finditer(text)
                       if match.span(1) not in levels and not any(start == match.start(1) for start, _ in levels)})
    ordered = sorted(levels)
    sure: list[tuple[int, int]] = []
    candidates: list[tuple[int, int]] = []
    for index, (start, end) in enumerate(ordered):
        following = ordered[index + 1] if index + 1 < len(ordered) else None
        if (any(start < stop and begin < end for begin, stop in template) or _introduced(text, start)
                or (sure and _goes_on(text, sure[-1], start))):
            sure.append((start, end))
        elif not levels[(start, end)]:
            continue  # a bare number opening a line, introduced by nothing: no level
        elif not _answers_a_label(text, start) or (following is not None and _goes_on(text, (start, end),
                                                                                     following[0])):
            candidates.append((start, end))
    return sure + (candidates if len(candidates) >= 2 else [])


def _introduced(text: str, start: int) -> bool:
    """Whether a scale's label introduces the level at ``start``: on its line, or ending the line before."""
    line_start = text.rfind("\n", 0, start) + 1
    before = text[line_start:start]
    if not before.strip() and line_start > 0:
        before = text[text.rfind("\n", 0, line_start - 1) + 1:line_start - 1]
    return _SCALE_INTRO.search(before) is not None


def _goes_on(text: str, level: tuple[int, int], start: int) -> bool:
    """Whether the level at ``start`` goes on from ``level``: on the same line, or opening the next one."""
    between = text[level[1]:start]
    if "\n" not in between:
        return True
    return between.count("\n") == 1 and not between.split("\n")[1].strip(" \t([•*-")


def _blank_spans(text: str, spans: Iterable[tuple[int, int]]) -> str:
    for start, end in sorted(set(spans), reverse=True):
        text = text[:start] + " " * (end - start) + text[end:]
    return text


def without_echo(text: str) -> str:
    """``text`` with what echoes the prompt blanked (the module docstring): lines opening with an echoed field, the
    templates' fixed text, a scale's legend and list numbers. Blanked parts become spaces, so the lines stay where
    they were."""
    if ":" in text or "'" in text:  # every echoed field has one
        text = _ECHO_LINE.sub(" ", text)
    text = _LINE_LIST_MARKERS.sub(r"\1 ", text)  # before the templates' text goes: "1. <echoed text>" is numbering
    text = _LIST_MARKER.sub(" ", text) if ")" in text else text
    # the legend is found before the template's text goes: the labels that introduce it are there
    template = template_spans(text)
    legend = legend_spans(text, template)
    return _blank_spans(without_template_text(text, template), legend)


def without_scale(text: str, low: float = 1, high: float = 5) -> str:
    """``text`` with the notation of its scale blanked, wherever it stands, a label's side included: the scale's
    bounds, with or without their levels' names ("1-5", "(1 to 5)", "between 1 and 5", "from 1 (lowest) to 5
    (highest)"), a bound written alone ("Score (out of 5): 2", "/5" after no number) and a scale's size ("a 5-point
    Likert scale"). A fraction's denominator after a number ("4 out of 5") stays: it is read as the fraction."""
    bounds, bound_alone = _scale_patterns(_format_number(low), _format_number(high))
    text = bounds.sub(_blank, text)
    text = bound_alone.sub(lambda match: match.group(0) if _after_number(match) else _blank(match), text)
    return _SCALE_SIZE.sub(_blank, text)


@functools.lru_cache(maxsize=32)
def _scale_patterns(low: str, high: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The scale's bounds written out, and its upper bound written alone (``without_scale``)."""
    low, high = re.escape(low), re.escape(high)
    named = r"(?:\s*\(\s*[^\W\d][^()\n]*\))?"  # a level's name in brackets: "1 (not enough) to 5 (not enough)"
    return (re.compile(rf"(?:\b(?:between|from)\s+)?(?<![\w.]){low}{named}\s*(?:-|–|—|to|and)\s*{high}"
                       rf"(?![\w]|\.\d){named}", re.IGNORECASE),
            re.compile(rf"(?:/|\bout\s+of)\s*{high}(?![\w]|\.\d)", re.IGNORECASE))


_SCALE_SIZE = re.compile(r"(?<![\w.])\d+(?:\s*-\s*(?:point|level)\b|\s+(?:points?|levels?)\s+(?:likert\s+)?scale)",
                         re.IGNORECASE)


def _after_number(match: re.Match[str]) -> bool:
    """Whether a denominator follows a number ("4 out of 5"), i.e. is part of a fraction."""
    before = match.string[:match.start()].rstrip()
    return bool(before) and before[-1].isdigit()


def _blank(match: re.Match[str]) -> str:
    return " " * len(match.group(0))


def without_reasons_for_na(text: str) -> str:
    """``text`` with the rest of each line after an N/A blanked: the answer there is that there is none, and the
    rest says why ("N/A - fewer than 5 movies in the history"). The N/A itself stays: it is the value there."""
    for match in reversed(list(_NA.finditer(text))):
        line_end = text.find("\n", match.end())
        line_end = len(text) if line_end < 0 else line_end
        text = text[:match.end()] + " " * (line_end - match.end()) + text[line_end:]
    return text


_SCORE_POSITION = re.compile(r"(?:^|[:=]|\b(?:is|was|be|say|said|give|gives|gave|it|a|with|answer))[\s\"'“”]*$",
                             re.IGNORECASE)


#: A colon that opens a list ("The user's preferences are: 1", "the following: 2"): the number after it numbers the
#: list's first item (a reply cut short), it is no score.
_LIST_INTRO = re.compile(r"\b(?:are|were|following|follows|include|includes|including|these|those|items|list)\s*:"
                         r"[\s\"'“”]*$", re.IGNORECASE)


def in_score_position(text: str, start: int) -> bool:
    """Whether a value starting at ``start`` of ``text`` stands where a score stands: first in the text, or after a
    colon, an equals sign or a word that introduces an answer (the module docstring), and not after a colon that
    opens a list."""
    window = max(0, start - 40)
    return (_SCORE_POSITION.search(text, window, start) is not None
            and _LIST_INTRO.search(text, window, start) is None)


def score_text(text: str, low: float = 1, high: float = 5) -> str:
    """``text`` with everything blanked that is no score however much it looks like one (step 1 of the module
    docstring): Markdown emphasis, the echo of the prompt (``without_echo``: echoed fields, the templates' fixed
    text, a scale's legend, list numbers), the notation of the ``low``-``high`` scale (``without_scale``) and what
    follows an N/A on its line (``without_reasons_for_na``). The one place that decides it: every score reader of
    the package reads what is left."""
    if "*" in text or "`" in text or "#" in text or "_" in text:  # four scans in C beat one regex pass
        text = _EMPHASIS.sub("", text)
    return without_reasons_for_na(without_scale(without_echo(text), low, high))


def _clean(text: object, low: float = 1, high: float = 5) -> str | None:
    return score_text(text, low, high).strip() if isinstance(text, str) else None


_JSON_KEY_VALUE = re.compile(r'"([^"\n]{1,60})"\s*:\s*"?\s*([^",}\n]*)')
_SCORE_KEY = re.compile(r"\b(?:score|rating|grade|answer)\b", re.IGNORECASE)


def json_fields(text: str) -> list[tuple[str, object]] | None:
    """The fields of the JSON object(s) in a reply, in order, or None when it holds none. An object that does not
    parse (a reply cut inside it) gives its ``"name": value`` pairs, so a field is still read as that field."""
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
        return [(name, value.strip()) for name, value in _JSON_KEY_VALUE.findall(text[text.index("{"):])]
    return None


def _json_score(fields: list[tuple[str, object]], low: float, high: float) -> float:
    """A JSON reply's score: the field named as one (score, rating, grade, answer, "serendipity_score"), else its
    only numeric field; NaN when there is none or several without a name that says which."""
    named = [value for name, value in fields if _SCORE_KEY.search(_normalise_name(name))]
    if named:
        return json_value_score(named[0], low, high)
    numeric = [value for _, value in fields if _json_value(value, low, high) is not None]
    return json_value_score(numeric[0], low, high) if len(numeric) == 1 else math.nan


def _json_value(value: object, low: float, high: float) -> Value | None:
    """A JSON field's value as the grammar reads it: its text must be one value and nothing else (4 and "4" are
    values, "4 stars" and true are not)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    text = str(value).strip()
    found = first_value(text, low, high)
    return found if found is not None and found.start == 0 and found.end == len(text) else None


def json_value_score(value: object, low: float = 1, high: float = 5) -> float:
    """The score a JSON field's value is (``_json_value``), or NaN."""
    return _score(_json_value(value, low, high))


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


_SCORE_LABEL = re.compile(r"\b(?:score|rating|rate|rated|grade)\b", re.IGNORECASE)


def parse_likert(text: str | None, low: float = 1, high: float = 5) -> float:
    """The Likert score in ``text`` by the module's grammar, or NaN (no value at an answer position, or the value
    there is no score token of ``[low, high]``)."""
    cleaned = _clean(text, low, high)
    if not cleaned:
        return math.nan
    fields = json_fields(cleaned)
    if fields is not None:  # JSON is read as JSON: a field's value, never the first number of another field
        return _json_score(fields, low, high)
    labelled = labelled_values(cleaned, _SCORE_LABEL, low, high)
    if labelled:
        return _score(labelled[0])
    fraction = next((value for value in values(cleaned, low, high) if value.fraction_of_scale), None)
    if fraction is not None:
        return _score(fraction) if in_score_position(cleaned, fraction.start) else math.nan
    unbracketed = outside_brackets(cleaned)
    first = first_value(unbracketed, low, high)
    return _score(first) if first is not None and in_score_position(unbracketed, first.start) else math.nan


#: A recorded judge's cell that is a number: the judge's score as the source gives it (3.5 included).
_RECORDED_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?")


def parse_recorded(text: str | None, low: float = 1, high: float = 5) -> float:
    """A recorded judgment (``llm.providers.recorded``): a cell that is a number is that score when it lies in
    ``[low, high]`` (a recorded table holds numbers, 3.5 and 4.0 included, not replies); any other text is a reply,
    read by ``parse_likert``."""
    if isinstance(text, str) and _RECORDED_NUMBER.fullmatch(text.strip()):
        number = float(text)
        return number if low <= number <= high else math.nan
    return parse_likert(text, low, high)


def _format_number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _normalise_name(name: str) -> str:
    return re.sub(r"[\s_-]+", " ", name.strip().lower())


#: How far after an aspect's name its value may start (characters, on the name's line).
ASPECT_REACH = 40


def parse_aspect_scores(
    text: str | None, aspects: Sequence[str], low: float = 1, high: float = 5
) -> dict[str, float]:
    """One score per aspect from a multi-aspect reply, NaN for an aspect not found or whose value is no score.

    Read by the module's grammar: if the reply contains a JSON object, its keys are matched to the aspects (case,
    spaces, hyphens and underscores ignored) and values read with ``parse_likert``. Otherwise, for each aspect, the
    first line mentioning the aspect name is read: the first value after the name on that line, starting at most
    ``ASPECT_REACH`` characters after it, e.g. "Relevance: 4", "- novelty = 3/5", "**Serendipity** (1-5): 2",
    "Persuasiveness - 4", "persuasiveness (3)". Values read from the text that are 1, 2, ..., k in the order the
    reply lists them (``is_numbering``: "Persuasiveness: 1.\\nTransparency: 2.\\nAccuracy: 3.") number the list;
    none of them is read.
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
        match = re.search(rf"\b{name_pattern}\b", cleaned, re.IGNORECASE)
        if not match:
            continue
        line_end = cleaned.find("\n", match.end())
        value = first_value(cleaned, low, high, match.end(), len(cleaned) if line_end < 0 else line_end)
        if value is not None and value.start - match.end() <= ASPECT_REACH:
            result[aspect] = _score(value)
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
