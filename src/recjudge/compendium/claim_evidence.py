"""The evidence a claim's reader finds in a build, and the one rule that turns it into a verdict.

:class:`Evidence` holds the paper's numbers and ours as text, the n and 95% interval of our key number, the
:class:`Check` s of our numbers and of the paper's own numbers against what the claim states, the
:class:`Difference` s between the paper's setup and ours, and what this build lacks to test it (``missing``,
:class:`SampleNeed`). :func:`verdict` alone turns evidence into one of :data:`VERDICTS` and :func:`reason` says why;
no page types a verdict word. The claims themselves are registered in :mod:`recjudge.compendium.claims`, their
readers are in :mod:`recjudge.compendium.claim_readers`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pandas as pd

Loader = Callable[[str, str], pd.DataFrame]

REPRODUCED = "reproduced"
PARTLY = "partly"
NOT_REPRODUCED = "not reproduced"
#: The paper's own numbers, read at the paper's n by the same test that can contradict the claim, decide it for it.
SUPPORTED = "supported by the paper's own numbers"
CONTRADICTED = "contradicted by the paper's own numbers"
#: The same, when the paper's checks read the authors' own text (a prompt), not numbers: a prompt is not a number.
SUPPORTED_BY_TEXT = "supported by the authors' own text"
CONTRADICTED_BY_TEXT = "contradicted by the authors' own text"
NOT_COMPARABLE = "not comparable here"
NOT_TESTABLE = "not testable here"
NOT_RUN = "not run in this build"
#: The same, as the title of the box of a chapter a build did not run.
NOT_RUN_TITLE = NOT_RUN[0].upper() + NOT_RUN[1:]
#: Every verdict, in the order the rule tries them last to first.
VERDICTS = (REPRODUCED, PARTLY, NOT_REPRODUCED, SUPPORTED, SUPPORTED_BY_TEXT, CONTRADICTED, CONTRADICTED_BY_TEXT,
            NOT_COMPARABLE, NOT_TESTABLE, NOT_RUN)

#: What this build lacks for any claim about what a capable LLM can do.
NEEDS_A_CAPABLE_LLM = "a capable LLM (the judges here are tiny local models)"
#: The same, in a variant that ran a reader's judge beside the book's (it is not true there that every judge is tiny).
NEEDS_A_CAPABLE_LLM_BESIDE_YOURS = ("a capable LLM's numbers in the claim's reading (it reads the book's tiny local "
                                    "judge; your judge's rows stand beside them in this chapter)")


#: Whose numbers a claim's checks read (``Evidence.judges``).
TINY_JUDGES = "the book's tiny local judges"
READER_JUDGES = "your judges"


def named_row(table: pd.DataFrame, column: str, value: object, table_name: str) -> pd.Series:
    """The one row of ``table`` whose ``column`` equals ``value``; KeyError naming the table when there is none or
    more than one."""
    found = table[table[column] == value]
    if len(found) != 1:
        raise KeyError(f"{table_name}: expected one row with {column} = {value!r}, found {len(found)}")
    return found.iloc[0]



#: What a check says of its claim: its number (its whole interval, when it has one) lies inside the range the claim
#: states, wholly outside it, or across its edge.
HOLDS, FAILS, UNDECIDED = "holds", "fails", "undecided"
#: The confidence of one check's interval.
LEVEL = 0.95


def simultaneous_level(checks: int) -> float:
    """The confidence of each of ``checks`` intervals that hold together at :data:`LEVEL` (Bonferroni)."""
    return 1 - (1 - LEVEL) / max(int(checks), 1)


@dataclass(frozen=True)
class Check:
    """One number tested against what a claim states, ``low <= value <= high`` (``strict``: ``low < value < high``,
    as "agrees better", "errs less" state). An exact number (a count, a recomputed cell) holds or fails; a number
    measured on a sample has an interval (``interval_at(level)``), and holds when the whole interval lies in the
    range, fails when the whole interval lies outside it, and is undecided otherwise: the same test says yes and no.
    NaN is undecided, and so is a number measured on fewer answers (``n``) than the book reads a number from
    (``pages.MIN_ANSWERS``): their spread cannot be estimated from so few (two answers can agree exactly, an interval
    of zero width)."""

    name: str
    value: float
    low: float = -math.inf
    high: float = math.inf
    #: The number's interval at a confidence level (``level -> (low, high)``); None: the number is exact.
    interval_at: Callable[[float], tuple[float, float]] | None = field(default=None, compare=False, repr=False)
    #: Whose number it is when not the evidence's ``judges`` (e.g. a recorded LLM beside :data:`TINY_JUDGES`).
    by: str = ""
    #: The range is open: an interval that touches its end does not hold (a difference of exactly 0 is no lead).
    strict: bool = False
    #: The answers the number was measured on, when a sample of ours (None: the paper's, or an exact number).
    n: int | None = None

    @property
    def interval(self) -> tuple[float, float] | None:
        """The 95% interval (:data:`LEVEL`), or None for an exact number."""
        return None if self.interval_at is None else self.interval_at(LEVEL)

    def state(self, level: float = LEVEL) -> str:
        from recjudge.compendium.pages import too_few

        value = float(self.value)
        below, above = (float(end) for end in self.interval_at(level)) if self.interval_at else (value, value)
        if math.isnan(value) or math.isnan(below) or math.isnan(above) or too_few(self.n):
            return UNDECIDED
        if self.strict:
            inside = self.low < below and above < self.high
            outside = above <= self.low or below >= self.high
        else:
            inside = self.low <= below and above <= self.high
            outside = above < self.low or below > self.high
        return HOLDS if inside else FAILS if outside else UNDECIDED

    def holds(self) -> bool:
        return self.state() == HOLDS

    def fails(self) -> bool:
        return self.state() == FAILS


def exact_interval(low: float, high: float) -> Callable[[float], tuple[float, float]]:
    """A fixed interval whatever the level (a number whose uncertainty is given, not computed)."""
    return lambda level: (low, high)


#: How a claim's checks combine: a claim about every case (every cell, every row) holds when every check holds and
#: fails when one fails; a claim about some case ("certain LLMs", "an LLM judge") holds when one holds and fails when
#: every one fails.
EVERY, SOME = "every", "some"


def holding(checks: Sequence[Check], quantifier: str = EVERY) -> list[Check]:
    """The checks that hold at the level that decides a claim of this ``quantifier`` for it (:func:`decision`):
    each at 95% for a claim about every case, together for a claim about some case."""
    level = LEVEL if quantifier == EVERY else simultaneous_level(len(checks))
    return [check for check in checks if check.state(level) == HOLDS]


def decision(checks: Sequence[Check], quantifier: str = EVERY) -> str:
    """:data:`HOLDS`, :data:`FAILS` or :data:`UNDECIDED`: what ``checks`` say together (``quantifier``). Saying that
    every check holds, or that every one fails, needs each check's 95% interval (an intersection-union test: no
    correction); saying that one of k holds, or that one fails, needs the k intervals together (Bonferroni,
    :func:`simultaneous_level`), so that a claim with many checks is no likelier to be decided by chance."""
    if quantifier not in (EVERY, SOME):
        raise ValueError(f"a claim's quantifier is {EVERY!r} or {SOME!r}, got {quantifier!r}")
    if not checks:
        return UNDECIDED
    each = [check.state(LEVEL) for check in checks]
    together = [check.state(simultaneous_level(len(checks))) for check in checks]
    if quantifier == EVERY:
        return FAILS if FAILS in together else HOLDS if all(state == HOLDS for state in each) else UNDECIDED
    return HOLDS if HOLDS in together else FAILS if all(state == FAILS for state in each) else UNDECIDED


@dataclass(frozen=True)
class Difference:
    """What differs between the paper's setup and ours (``aspect``: data, scoring, model class, tuning budget,
    sample, ...). ``blocks``: the two numbers answer different questions, so the claim is not comparable here."""

    aspect: str
    here: str
    paper: str
    blocks: bool = False

    def __str__(self) -> str:
        return f"{self.aspect}: {self.here} here, {self.paper} in the paper"


@dataclass(frozen=True)
class SampleNeed:
    """How far a claim is from testable by its sample: ``n_here`` answers here, ``n_needed`` to detect ``effect``
    with 80% power at α = 0.05 (``method``: how the need was computed, :mod:`recjudge.metaeval.power`)."""

    n_here: int
    n_needed: int
    effect: str
    method: str
    #: The answers the dataset holds in all, when known: a need beyond it cannot be met with this dataset.
    available: int | None = None

    def too_few(self) -> bool:
        return self.n_here < self.n_needed

    def __str__(self) -> str:
        counts = f"{self.n_here:,} here, {self.n_needed:,} needed to detect {self.effect} ({self.method})"
        if self.available is not None and self.n_needed > self.available:
            counts += f"; more than the {self.available:,} answers the dataset holds"
        return f"too few answers: {counts}" if self.too_few() else f"enough answers: {counts}"


@dataclass(frozen=True)
class Evidence:
    """What a build's tables say about one claim: ``key`` is our number that answers it, in plain words (the
    landing page and the chapters' verdicts show it; ``ours`` holds every number), ``n`` and ``interval`` its count
    and 95% interval."""

    paper_numbers: str = ""
    ours: str = ""
    key: str = ""
    n: int | None = None
    interval: tuple[float, float] | None = None
    checks: tuple[Check, ...] = ()
    paper_checks: tuple[Check, ...] = ()
    differences: tuple[Difference, ...] = ()
    missing: str | None = None
    not_run: str | None = None
    #: The paper's checks read the authors' own text (their prompt), not their printed numbers.
    paper_text: bool = False
    #: The trivial baselines beside the claim's numbers (a constant answer, Random), in words.
    baselines: str = ""
    #: How many answers the claim's comparison needs, against the answers here (``reason`` says it when not testable).
    sample: SampleNeed | None = None
    #: How the checks combine (:data:`EVERY`, :data:`SOME`), ours and the paper's.
    quantifier: str = EVERY
    paper_quantifier: str = EVERY
    #: Whose numbers ``checks`` read: :data:`TINY_JUDGES`, :data:`READER_JUDGES`, or no LLM judge ("").
    judges: str = ""
    #: The claim is about what capable LLM judges do (``Claim.about_capable_llms``): tiny judges' numbers cannot
    #: decide it, they are context.
    about_capable_llms: bool = False


def deciding_checks(evidence: Evidence) -> tuple[Check, ...]:
    """Our checks that may decide the claim: all of them, except tiny judges' numbers on a claim about capable LLM
    judges (context, never evidence)."""
    if not evidence.about_capable_llms:
        return evidence.checks
    return tuple(check for check in evidence.checks if (check.by or evidence.judges) != TINY_JUDGES)


def ours_decide(evidence: Evidence) -> bool:
    """Whether any of our checks may decide the claim (:func:`deciding_checks`)."""
    return bool(deciding_checks(evidence))


def verdict(evidence: Evidence) -> str:
    """The one rule. Not run; else contradicted when the paper's own numbers decide against the claim; else, when
    some of our checks may decide it (:func:`deciding_checks`) and nothing is missing or blocks: reproduced when they
    decide for it; for a claim about every case, partly when some but not all hold, not reproduced when none holds
    and one fails; else supported when the paper's own numbers decide for it; else not reproduced when ours decide
    against it, not testable when they decide nothing at this n. Without deciding checks of ours: supported when
    the paper's own numbers decide for it; else not testable when the build lacks something (a capable judge, more
    answers); else not comparable when a difference blocks the comparison."""
    if evidence.not_run:
        return NOT_RUN
    paper = decision(evidence.paper_checks, evidence.paper_quantifier) if evidence.paper_checks else None
    if paper == FAILS:
        return CONTRADICTED_BY_TEXT if evidence.paper_text else CONTRADICTED
    supported = SUPPORTED_BY_TEXT if evidence.paper_text else SUPPORTED
    blocked = any(difference.blocks for difference in evidence.differences)
    ours = deciding_checks(evidence)
    if ours and not evidence.missing and not blocked:
        states = [check.state() for check in ours]
        together = decision(ours, evidence.quantifier)
        if together == HOLDS:
            return REPRODUCED
        if evidence.quantifier == EVERY and HOLDS in states:
            return PARTLY
        if evidence.quantifier == EVERY and FAILS in states:
            return NOT_REPRODUCED
        if paper == HOLDS:  # a claim about some case is not refuted by ours failing: the paper's cases stand
            return supported
        return NOT_REPRODUCED if together == FAILS else NOT_TESTABLE
    if paper == HOLDS:
        return supported
    if evidence.missing:
        return NOT_TESTABLE
    if blocked:
        return NOT_COMPARABLE
    if evidence.checks or evidence.paper_checks:  # tiny judges' numbers only, or the paper's undecided
        return NOT_TESTABLE
    raise ValueError("a claim with nothing missing and nothing blocking needs checks of its numbers")


def _holding(checks: Sequence[Check], quantifier: str = EVERY, whose: str = "") -> str:
    """"3 of 4 hold", or with ``whose`` ("of its checks") "3 of 4 of its checks hold"."""
    held = len(holding(checks, quantifier))
    failing = sum(check.fails() for check in checks)
    undecided = len(checks) - held - failing
    together = " together" if quantifier == SOME and any(check.interval_at for check in checks) else ""
    return (f"{held} of {len(checks)}{f' {whose}' if whose else ''} hold{together}"
            + (f", {undecided} undecided" if undecided > 0 else ""))


def _failing(checks: Sequence[Check], quantifier: str = EVERY) -> str:
    """The failing checks' names, where they are what decides (a claim about every case)."""
    failing = [check.name for check in checks if check.fails()] if quantifier == EVERY else []
    return f" (failing: {', '.join(failing)})" if failing and len(failing) <= 4 else ""


def reason(evidence: Evidence) -> str:
    """Why the verdict is what it is, in a few words: what is missing, what blocks, or how many checks hold (and
    which fail), and whose numbers decided."""
    status = verdict(evidence)
    if status == NOT_RUN:
        return evidence.not_run or ""
    source = "the authors' own text" if evidence.paper_text else "the paper's own numbers"
    if status in (CONTRADICTED, CONTRADICTED_BY_TEXT, SUPPORTED, SUPPORTED_BY_TEXT):
        # the verdict names its source ("contradicted by the paper's own numbers"): the reason does not again
        return (_holding(evidence.paper_checks, evidence.paper_quantifier, "of its checks")
                + _failing(evidence.paper_checks, evidence.paper_quantifier))
    if status == NOT_TESTABLE:
        parts = []
        if evidence.missing:  # which of "no capable judge" and "too few answers" holds, with the numbers
            parts.append(f"no capable judge: needs {evidence.missing}" if NEEDS_A_CAPABLE_LLM in evidence.missing
                         else f"needs {evidence.missing}")
        elif ours_decide(evidence):
            parts.append("our numbers leave it undecided at this n")
        else:
            parts.append(f"no capable judge: {TINY_JUDGES}' numbers are context, not evidence, for a claim about "
                         "capable LLM judges")
        if evidence.paper_checks:
            parts.append(f"{source} leave it undecided at the paper's n")
        if evidence.sample:
            parts.append(str(evidence.sample))
        return "; ".join(parts)
    if status == NOT_COMPARABLE:
        return "; ".join(str(d) for d in evidence.differences if d.blocks)
    ours = deciding_checks(evidence)
    return f"our numbers: {_holding(ours, evidence.quantifier)}" + _failing(ours, evidence.quantifier)
