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
from dataclasses import dataclass

import pandas as pd

Loader = Callable[[str, str], pd.DataFrame]

REPRODUCED = "reproduced"
PARTLY = "partly"
NOT_REPRODUCED = "not reproduced"
CONTRADICTED = "contradicted by the paper's own numbers"
#: The same, when the paper's checks read the authors' own text (a prompt), not numbers: a prompt is not a number.
CONTRADICTED_BY_TEXT = "contradicted by the authors' own text"
NOT_COMPARABLE = "not comparable here"
NOT_TESTABLE = "not testable here"
NOT_RUN = "not run in this build"
#: Every verdict, in the order the rule tries them last to first.
VERDICTS = (REPRODUCED, PARTLY, NOT_REPRODUCED, CONTRADICTED, CONTRADICTED_BY_TEXT, NOT_COMPARABLE, NOT_TESTABLE,
            NOT_RUN)

#: What this build lacks for any claim about what a capable LLM can do.
NEEDS_A_CAPABLE_LLM = "a capable LLM (the judges here are tiny local models)"
#: The same, in a variant that ran a reader's judge beside the book's (it is not true there that every judge is tiny).
NEEDS_A_CAPABLE_LLM_BESIDE_YOURS = ("a capable LLM's numbers in the claim's reading (it reads the book's tiny local "
                                    "judge; your judge's rows stand beside them in this chapter)")


def named_row(table: pd.DataFrame, column: str, value: object, table_name: str) -> pd.Series:
    """The one row of ``table`` whose ``column`` equals ``value``; KeyError naming the table when there is none or
    more than one."""
    found = table[table[column] == value]
    if len(found) != 1:
        raise KeyError(f"{table_name}: expected one row with {column} = {value!r}, found {len(found)}")
    return found.iloc[0]



@dataclass(frozen=True)
class Check:
    """One number tested against what a claim states: it holds when ``low <= value <= high`` (NaN never holds)."""

    name: str
    value: float
    low: float = -math.inf
    high: float = math.inf

    def holds(self) -> bool:
        return bool(self.low <= float(self.value) <= self.high)


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


def verdict(evidence: Evidence) -> str:
    """The one rule: not run; else contradicted when a check of the paper's own numbers fails; else not testable when
    the build lacks something; else not comparable when a difference blocks the comparison; else reproduced when
    every check of ours holds (of the paper's own numbers when the claim is about them alone), partly when some do,
    not reproduced when none does."""
    if evidence.not_run:
        return NOT_RUN
    if evidence.paper_checks and not all(check.holds() for check in evidence.paper_checks):
        return CONTRADICTED_BY_TEXT if evidence.paper_text else CONTRADICTED
    if evidence.missing:
        return NOT_TESTABLE
    if any(difference.blocks for difference in evidence.differences):
        return NOT_COMPARABLE
    # A claim about the paper's own numbers alone (recomputed here) is decided by them.
    checks = evidence.checks or evidence.paper_checks
    if not checks:
        raise ValueError("a claim with nothing missing and nothing blocking needs checks of its numbers")
    holding = sum(check.holds() for check in checks)
    return REPRODUCED if holding == len(checks) else PARTLY if holding else NOT_REPRODUCED


def _holding(checks: Sequence[Check]) -> str:
    return f"{sum(check.holds() for check in checks)} of {len(checks)} hold"


def reason(evidence: Evidence) -> str:
    """Why the verdict is what it is, in a few words: what is missing, what blocks, or how many checks hold."""
    status = verdict(evidence)
    if status == NOT_RUN:
        return evidence.not_run or ""
    if status in (CONTRADICTED, CONTRADICTED_BY_TEXT):
        failing = [check.name for check in evidence.paper_checks if not check.holds()]
        source = "the authors' own text" if evidence.paper_text else "the paper's own numbers"
        return (f"{source}: {_holding(evidence.paper_checks)}"
                + (f" (failing: {', '.join(failing)})" if len(failing) <= 4 else ""))
    if status == NOT_TESTABLE:
        # which of "no capable judge" and "too few answers" holds, with the numbers
        needs = (f"no capable judge: needs {evidence.missing}" if NEEDS_A_CAPABLE_LLM in evidence.missing
                 else f"needs {evidence.missing}")
        return needs + (f"; {evidence.sample}" if evidence.sample else "")
    if status == NOT_COMPARABLE:
        return "; ".join(str(d) for d in evidence.differences if d.blocks)
    if evidence.checks:
        return f"our numbers: {_holding(evidence.checks)}"
    return f"the paper's own numbers, recomputed: {_holding(evidence.paper_checks)}"
