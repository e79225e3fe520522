"""The claims registry: every claim of the five papers that a chapter examines, as a record, and one rule that chooses
its verdict.

A claim (:class:`Claim`) names the paper, its section, the claim in the paper's words, the chapter that examines it
and the result table its numbers come from; its reader turns the build's tables into :class:`Evidence`: the paper's
numbers and ours as text, the n and 95% interval of our key number, the checks of our numbers and of the paper's own
numbers against what the claim states, what differs between the paper's setup and ours, and what this build lacks to
test it. :func:`verdict` alone turns evidence into one of :data:`VERDICTS`; no page types a verdict word.

Every number is selected by name (:func:`named_row`), so a reordered table cannot put another number in a claim, and
a table the build did not write makes the claim "not run in this build", naming the table.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from IPython.display import Markdown

from recjudge import papers
from recjudge.compendium import trust_rules
from recjudge.compendium.pages import fmt, span, unless_too_few
from recjudge.compendium.results import in_variant, load_table, results_path
from recjudge.llm.judge_spec import JudgeSpec
from recjudge.metaeval import power
from recjudge.metaeval.baselines import MEAN, MODE, RANDOM
from recjudge.metaeval.papers_vs_baselines import tokutake_baselines, tokutake_table1_vs_baselines
from recjudge.prompts.explanations import distinct_runs

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
#: This book's own thresholds (no paper states one): |Pearson| below this (in %) is called weak agreement ...
WEAK_PEARSON_PCT = 20.0
#: ... a printed cell counts as recomputed when ours is within this many points (Zhang et al.'s Table 1, in %) ...
CLOSE_POINTS = 1.5
#: ... and a coefficient of variation of at least this (in %) is a non-negligible effect of a modelling choice.
NON_NEGLIGIBLE_CV_PCT = 10.0
#: Kang et al.'s "about 100%" gain over SOG, read generously as this range (in %).
ABOUT_100_PCT = (75.0, 125.0)
#: Tokutake et al. tuned every recommender with this many TPE trials per fold.
PAPER_TRIALS = 100

#: The book's own LLM judge, as the chapters' tables name it: in its label, in a run table, and by its model. A
#: variant's tables hold a reader's judge's rows beside it; a claim reads the book's judge's rows only.
BOOK_JUDGE = "SmolLM2-135M"
BOOK_JUDGE_MODEL = "smollm2-135m-instruct-q4_1"
BOOK_JUDGE_RUNS = f"local:{BOOK_JUDGE_MODEL}"
#: Whose numbers a claim reads (``Claim.numbers_of``).
BOOK_JUDGE_NUMBERS = f"{BOOK_JUDGE}'s (the book's own judge)"
POOL_NUMBERS = "the pool of LLM judges' (the book's and, where it joins the pool, yours)"
NO_JUDGE_NUMBERS = ""


def _book_judge_rows(table: pd.DataFrame, column: str, name: str, *, prefix: bool = False) -> pd.DataFrame:
    """The rows of the book's own judge (``column`` equal to ``name``, or starting with it when ``prefix``); a table
    without ``column`` holds no other judge's rows."""
    if column not in table.columns:
        return table
    values = table[column].astype(str)
    return table[values.str.startswith(name) if prefix else values == name]


def named_row(table: pd.DataFrame, column: str, value: object, table_name: str) -> pd.Series:
    """The one row of ``table`` whose ``column`` equals ``value``; KeyError naming the table when there is none or
    more than one."""
    found = table[table[column] == value]
    if len(found) != 1:
        raise KeyError(f"{table_name}: expected one row with {column} = {value!r}, found {len(found)}")
    return found.iloc[0]


# ------------------------------------------------------------------------------------------------ records and rule
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


@dataclass(frozen=True)
class Claim:
    """A claim of a paper that a chapter examines; ``read`` turns a build's tables into its evidence. ``finding``
    names the at-a-glance row (paper and question) it belongs to; ``numbers_of`` whose LLM judge's numbers it reads
    (``NO_JUDGE_NUMBERS``: none, e.g. proxies or the paper's own numbers)."""

    paper: str
    section: str
    claim: str
    finding: str
    chapter: str
    table: str
    read: Callable[[Loader], Evidence] = field(repr=False)
    numbers_of: str = NO_JUDGE_NUMBERS

    def evidence(self, load: Loader, *, strict: bool = True) -> Evidence:
        """The claim's evidence in a build; a table the build did not write makes it "not run". ``strict=False``
        (a variant's chapter, whose tables may hold other rows at another scale): a row the tables lack makes it
        "not run" too, naming the row, instead of an error."""
        try:
            return self.read(load)
        except FileNotFoundError as missing:
            return Evidence(not_run=str(missing))
        except KeyError as lacking:
            if strict:
                raise
            return Evidence(not_run=str(lacking).strip("'\""))


RECORD_COLUMNS = ["paper", "section", "claim", "verdict", "reason", "paper_numbers", "ours", "key_number", "n",
                  "ci_low",
                  "ci_high", "checks_holding", "checks_total", "paper_checks_holding", "paper_checks_total",
                  "differences", "finding", "chapter", "table", "baselines", "n_needed"]


def record(claim: Claim, load: Loader = load_table, *, strict: bool = True) -> dict[str, object]:
    """The claim's row of the registry (columns ``RECORD_COLUMNS``; ``strict``: see :meth:`Claim.evidence`)."""
    evidence = claim.evidence(load, strict=strict)
    low, high = evidence.interval or (math.nan, math.nan)
    return {"paper": claim.paper, "section": claim.section, "claim": claim.claim, "verdict": verdict(evidence),
            "reason": reason(evidence), "paper_numbers": evidence.paper_numbers, "ours": evidence.ours,
            "key_number": evidence.key or evidence.ours, "n": evidence.n, "ci_low": low, "ci_high": high,
            "checks_holding": sum(check.holds() for check in evidence.checks), "checks_total": len(evidence.checks),
            "paper_checks_holding": sum(check.holds() for check in evidence.paper_checks),
            "paper_checks_total": len(evidence.paper_checks),
            "differences": "; ".join(str(d) for d in evidence.differences), "finding": claim.finding,
            "chapter": claim.chapter, "table": claim.table, "baselines": evidence.baselines,
            "n_needed": evidence.sample.n_needed if evidence.sample else None}


def registry(load: Loader = load_table, claims: Sequence[Claim] | None = None, *, strict: bool = True
             ) -> pd.DataFrame:
    """Every claim's record in this build, one row each (columns ``RECORD_COLUMNS``); ``n`` is a count (nullable)."""
    frame = pd.DataFrame([record(claim, load, strict=strict) for claim in (CLAIMS if claims is None else claims)],
                         columns=RECORD_COLUMNS)
    return frame.astype({"n": "Int64", "n_needed": "Int64"})


# ------------------------------------------------------------------------------------------------ helpers for readers
#: Tokutake et al.'s prompt strategies, in the paper's order.
STRATEGIES = ("Base", "LS", "CoT", "LtM")


def in_order(table: pd.DataFrame, column: str, order: Sequence[str]) -> pd.DataFrame:
    """The rows of ``table`` in the given order of ``column`` (rows of other values after them, sorted), so that
    a text listing them does not depend on the table's row order."""
    rank = {value: i for i, value in enumerate(order)}
    return table.assign(_rank=table[column].map(rank)).sort_values(["_rank", column]).drop(columns="_rank")

def with_interval(value: float, low: float, high: float, decimals: int = 1, unit: str = "") -> str:
    """"9.3% [5.2, 13.5]": a number and its 95% interval for prose; the interval left out when it is undefined."""
    text = f"{fmt(value, decimals)}{unit}"
    if pd.notna(low) and pd.notna(high):
        text += f" [{fmt(low, decimals)}, {fmt(high, decimals)}]"
    return text


#: The proxies of Kang et al.'s Table 2.
KANG_PROXIES = ("SOG", "SNPR", "PURS", "DESR")


def _pearson(row: pd.Series) -> str:
    interval = with_interval(row["pearson_pct"], row["pearson_ci_low"], row["pearson_ci_high"], unit="%")
    return f"{row['method']} {interval}"


def _proxies(load: Loader) -> tuple[pd.DataFrame, pd.DataFrame]:
    agreement = load("proxy_vs_llm", "agreement_all_answers")
    ours = pd.DataFrame([named_row(agreement, "method", name, "proxy_vs_llm/agreement_all_answers")
                         for name in KANG_PROXIES])
    return agreement, ours


_PAPER_TABLE2 = "proxy_vs_llm/paper_table2"
_OUR_DATA = Difference("data", "Serendipity-2018 only (histories from the survey itself)",
                       "Taobao Serendipity and Serendipity-2018 (histories from the logs)")
#: Every Kang proxy and prompt reads a history: the public Serendipity-2018 lacks the logs (training.csv).
_SURVEY_HISTORY = Difference("history", "at most 4 of the user's earlier survey answers",
                             "the last 10 logged items before the target")
#: The re-evaluation's judge prompt.
_BASIC_PROMPT = Difference("prompt", "Kang et al.'s basic prompt, expected score over the tokens 1–5",
                           "the CoT prompt (Tokutake et al.'s best in Table 1)")


def resampled(table: pd.DataFrame) -> str:
    """What a chapter's 95% intervals resample: "users" when its agreement table says it resampled users (column
    ``interval_resamples``), else "answers"."""
    if "interval_resamples" in table.columns and (table["interval_resamples"] == "user_id").any():
        return "users"
    return "answers"


def _printed_pearson(load: Loader, method: str) -> float:
    return float(named_row(load("proxy_vs_llm", "paper_table2"), "method", method, _PAPER_TABLE2)["pearson_pct"])


def _proxies_weak(load: Loader) -> Evidence:
    agreement, ours = _proxies(load)
    printed = {name: _printed_pearson(load, name) for name in KANG_PROXIES}
    strongest = ours.loc[ours["pearson_pct"].abs().idxmax()]
    interval = with_interval(strongest["pearson_pct"], strongest["pearson_ci_low"], strongest["pearson_ci_high"],
                             unit="%")
    return Evidence(
        paper_numbers="Serendipity-2018: " + ", ".join(f"{name} {fmt(v, 2)}%" for name, v in printed.items()),
        ours=", ".join(_pearson(row) for _, row in ours.iterrows())
             + f" (95% intervals resample {resampled(agreement)})",
        key=f"the strongest proxy (selected among {len(ours)}), {strongest['method']}, correlates {interval} "
            f"with users on {int(strongest['n']):,} answers (Pearson; the interval resamples {resampled(agreement)})",
        n=int(strongest["n"]), interval=(float(strongest["pearson_ci_low"]), float(strongest["pearson_ci_high"])),
        checks=tuple(Check(row["method"], abs(float(row["pearson_pct"])), high=WEAK_PEARSON_PCT)
                     for _, row in ours.iterrows()),
        paper_checks=tuple(Check(f"printed {name}", abs(v), high=WEAK_PEARSON_PCT) for name, v in printed.items()),
        differences=(_OUR_DATA, _SURVEY_HISTORY,
                     Difference("threshold", f"weak means |Pearson| < {WEAK_PEARSON_PCT:.0f}% (this book's own)",
                                "no threshold stated")))


def _proxies_beat_random(load: Loader) -> Evidence:
    agreement, ours = _proxies(load)
    rnd = named_row(agreement, "method", "Random", "proxy_vs_llm/agreement_all_answers")
    random_pearson = float(rnd["pearson_pct"])
    printed_random = _printed_pearson(load, "Random")
    return Evidence(
        paper_numbers=f"Serendipity-2018: Random {fmt(printed_random, 2)}%; "
                      + ", ".join(f"{name} {fmt(_printed_pearson(load, name), 2)}%" for name in KANG_PROXIES),
        key=_below_random(ours, random_pearson),
        ours=f"{_pearson(rnd)} ({int(rnd['seeds']):,} seeds); "
             + ", ".join(_pearson(row) for _, row in ours.iterrows())
             + f" (95% intervals resample {resampled(agreement)})",
        n=int(ours["n"].min()),
        checks=tuple(Check(row["method"], float(row["pearson_pct"]), low=random_pearson)
                     for _, row in ours.iterrows()),
        paper_checks=tuple(Check(f"printed {name}", _printed_pearson(load, name), low=printed_random)
                           for name in KANG_PROXIES),
        differences=(_OUR_DATA, _SURVEY_HISTORY,))


def _below_random(proxies: pd.DataFrame, random_pearson: float) -> str:
    below = proxies[proxies["pearson_pct"] < random_pearson]
    if below.empty:
        return f"every proxy correlates with users above Random's {fmt(random_pearson)}%"
    return (", ".join(f"{row['method']} ({fmt(row['pearson_pct'])}%)" for _, row in below.iterrows())
            + f" correlate{'s' if len(below) == 1 else ''} with users below Random's {fmt(random_pearson)}%")


def _table2_significant(load: Loader) -> Evidence:
    checked = load("proxy_vs_llm", "paper_claim_significance")
    rows = checked[checked["family"] != "Random"].sort_values(["dataset", "method"])
    checks = tuple(Check(f"{row['method']} ({row['dataset']})", float(row["p_value"]), high=0.05)
                   for _, row in rows.iterrows())
    failing = sum(not check.holds() for check in checks)
    return Evidence(
        paper_numbers=f"{len(rows)} printed correlations (Taobao n = {int(rows['n'].max()):,}, Serendipity-2018 "
                      f"n = {int(rows['n'].min()):,})",
        ours=f"with the paper's own n, {failing} of {len(rows)} printed correlations are not significant at "
             "p < 0.05",
        key=f"by the paper's own n, {failing} of its {len(rows)} correlations are not significant at p < 0.05",
        paper_checks=checks)


def _gain_over_sog(load: Loader) -> Evidence:
    gains = load("proxy_vs_llm", "paper_claim_gain_over_sog").sort_values(["dataset", "judge"])
    low, high = ABOUT_100_PCT
    return Evidence(
        paper_numbers="; ".join(f"{row['judge']} on {row['dataset']}: {fmt(row['pearson_pct'], 2)}% vs SOG "
                                f"{fmt(row['sog_pearson_pct'], 2)}%" for _, row in gains.iterrows()),
        ours=("gain over SOG by the paper's own Table 2: "
              + ", ".join(f"{row['judge']} {row['dataset']} +{fmt(row['gain_over_sog_pct'], 1)}%"
                          for _, row in gains.iterrows())
              + f"; 'about 100%' read as {low:.0f}–{high:.0f}%"),
        key=f"by the paper's own Table 2 the gains over SOG are {fmt(gains['gain_over_sog_pct'].min(), 0)}% to "
            f"{fmt(gains['gain_over_sog_pct'].max(), 0)}%, about 100% in "
            f"{int(gains['gain_over_sog_pct'].between(low, high).sum())} of {len(gains)} cases",
        paper_checks=tuple(Check(f"{row['judge']} on {row['dataset']}", float(row["gain_over_sog_pct"]), low, high)
                           for _, row in gains.iterrows()),
        missing=NEEDS_A_CAPABLE_LLM)


def _auxiliary_data(load: Loader) -> Evidence:
    settings = _book_judge_rows(load("auxiliary_data", "agreement_by_setting"), "judge", BOOK_JUDGE, prefix=True)
    versus = load("auxiliary_data", "tables45_vs_paper")
    none = named_row(versus, "method", "none (NA)", "auxiliary_data/tables45_vs_paper")
    best = named_row(versus, "method", "Auxiliary Data", "auxiliary_data/tables45_vs_paper")
    others = settings[settings["method"] != "none (NA)"]
    differ = int((others["p_pearson_vs_ref"] < 0.05).sum())
    return Evidence(
        paper_numbers=f"Qwen2.5-14B few-shot: none {fmt(none['paper_pearson_pct'], 2)}%, best auxiliary data "
                      f"{fmt(best['paper_pearson_pct'], 2)}%",
        ours=f"SmolLM2-135M: {differ} of {len(others)} settings differ from none at p < 0.05",
        n=int(none["n"]),
        differences=(_SURVEY_HISTORY, Difference("scoring", "expected score over the tokens 1–5", "integer score"),
                     Difference("model class", "SmolLM2-135M", "Qwen2.5 and GPT-4"),
                     Difference("sample", f"{int(none['n'])} answers", "all answers")),
        missing=NEEDS_A_CAPABLE_LLM,
        sample=_correlation_gain_need(int(none["n"]), float(none["paper_pearson_pct"]),
                                      float(best["paper_pearson_pct"]), _serendipity_2018_answers()))


def _correlation_gain_need(n_here: int, before_pct: float, after_pct: float,
                           available: int | None = None) -> SampleNeed:
    """The answers a paper's gain in Pearson (``before_pct`` → ``after_pct``) needs, by Fisher z on two independent
    samples (this book's reading: the paper does not say how its settings share answers)."""
    return SampleNeed(n_here, power.n_for_correlation_difference(before_pct / 100, after_pct / 100),
                      f"the paper's gain of {fmt(after_pct - before_pct, 1)} points in Pearson ({fmt(before_pct, 1)}% "
                      f"→ {fmt(after_pct, 1)}%)", "Fisher z, two independent samples, 80% power, α = 0.05",
                      available)


def _serendipity_2018_answers() -> int:
    """Serendipity-2018's survey answers in all (the sum of Tokutake et al.'s printed distribution of g)."""
    from recjudge import papers

    return int(papers.table("tokutake2025framework_g_distribution")["answers"].sum())


def splits(cell: str) -> str:
    """"13 distinct cells in 20 splits": how a held-out row of the ensembles' table was chosen, without its
    "chosen per split (...)" wrapper."""
    inner = re.fullmatch(r"chosen per split \((.*)\)", cell)
    return inner.group(1) if inner else cell


def answers_per_half(row: pd.Series) -> str:
    """The answers of one held-out half, from a held-out row's fewest (``n``) and most (``n_max``) over the splits:
    "6", or "5–6" (halves of an odd number of users differ); counts, never a mean such as 5.5."""
    low, high = int(row["n"]), int(row["n_max"])
    return f"{low}" if low == high else f"{low}–{high}"


def _ensembles(load: Loader) -> Evidence:
    table5 = load("llm_ensembles", "table5_ours")
    held = named_row(table5, "method", "Multi-LLM & Auxiliary Data, held out", "llm_ensembles/table5_ours")
    printed = papers.table("kang2025serendipity_tables4_5").query("table == 5 and dataset == 'Serendipity-2018'")
    return Evidence(
        paper_numbers="Table 5, Serendipity-2018 (Pearson): " + ", ".join(
            f"{row['method']} {fmt(row['pearson_pct'], 2)}%" for _, row in printed.iterrows()),
        key=unless_too_few(f"chosen on half of the users, the tiny judges' best ensemble agrees "
                           f"{fmt(held['pearson_pct'])}% (Pearson) with the other half", int(held["n"]),
                           detail=f"{answers_per_half(held)} per held-out half"),
        n=int(held["n"]),
        ours=f"tiny judges' ensemble on held-out users: {fmt(held['pearson_pct'])}% ({splits(held['cell'])}; about "
             f"{answers_per_half(held)} answers per held-out half)",
        differences=(_SURVEY_HISTORY, Difference("model class", "tiny local models", "GPT-4, Qwen2.5, LLaMA2")),
        missing=NEEDS_A_CAPABLE_LLM,
        sample=_correlation_gain_need(int(held["n"]), *_kang_table5_gain(), _serendipity_2018_answers()))


def _kang_table5_gain() -> tuple[float, float]:
    """Kang et al.'s Table 5 on Serendipity-2018: Pearson (%) with auxiliary data, and with several LLMs as well."""
    from recjudge import papers

    table5 = papers.table("kang2025serendipity_tables4_5")
    rows = table5[(table5["table"] == 5) & (table5["dataset"] == "Serendipity-2018")].set_index("method")
    return float(rows.loc["Auxiliary Data", "pearson_pct"]), float(rows.loc["Multi-LLM & Auxiliary Data",
                                                                           "pearson_pct"])


def _g_distribution(load: Loader) -> Evidence:
    search = load("prompt_strategies", "ground_truth_search")
    closest = named_row(search, "rank", 1, "prompt_strategies/ground_truth_search")
    distance = int(closest["distance"])
    return Evidence(
        paper_numbers="the counts of g = 1…5 printed in section 4.1",
        ours=f"{len(search):,} readings of the survey searched; the closest, {closest['candidate']}, has an L1 "
             f"distance of {distance} between its histogram and the printed one (sum of the count differences)",
        key=f"the closest of {len(search):,} readings of the survey has an L1 distance of {distance} from the printed "
            "histogram of g (the sum of the count differences)",
        checks=(Check("L1 distance of the closest reading", distance, high=0),))


def _avg_score_vs_g(load: Loader) -> Evidence:
    alignment = load("recommender_reevaluation", "paper_claim_avg_score_vs_g").sort_values(["dataset", "recommender"])
    g_mean = float(alignment["g_mean"].iloc[0])
    table3 = _book_judge_rows(load("recommender_reevaluation", "table3_latest-small"), "judge", BOOK_JUDGE_MODEL)
    ours = table3[table3["recommender"] != "Random"]["avg_score_mean"]
    users, per_fold = _judged_users(table3)
    return Evidence(
        paper_numbers=f"Avg. Score@20 {fmt(alignment['avg_score'].min(), 3)}–{fmt(alignment['avg_score'].max(), 3)} "
                      f"over {len(alignment)} dataset × recommender cells; g's mean {fmt(g_mean, 3)}",
        ours=f"SmolLM2-135M's Avg. score (expected) {fmt(ours.min(), 2)}–{fmt(ours.max(), 2)} on {per_fold} judged "
             f"user(s) per fold; a judge that answered {fmt(g_mean, 2)} for every item would match g's mean as well",
        key=f"a judge answering {fmt(g_mean, 2)} for every item matches g's mean exactly; by the paper's own "
            f"Table 1 its Table 3 judge (GPT-4o-mini, CoT) errs {_more_or_less('GPT-4o-mini')} on g than answering "
            f"{_tokutake_baselines().loc[MODE, 'answer']} every time ({_cot_versus_constant('GPT-4o-mini')})",
        n=users,
        paper_checks=(*(Check(f"{row['dataset']} {row['recommender']}", float(row["avg_score"]), 2.1, 2.4)
                        for _, row in alignment.iterrows()), Check("g's mean", g_mean, 2.1, 2.4),
                      *_beats_the_constant("GPT-4o-mini", "CoT")),
        baselines=_tokutake_baseline_words(),
        differences=(_BASIC_PROMPT,),
        missing=NEEDS_A_CAPABLE_LLM)


def _tokutake_baselines() -> pd.DataFrame:
    return tokutake_baselines().set_index("baseline")


def _tokutake_baseline_words() -> str:
    """The constant answers and Random on Tokutake et al.'s printed g, in words."""
    base = _tokutake_baselines()
    mode, mean, rnd = base.loc[MODE], base.loc[MEAN], base.loc[RANDOM]
    return (f"on the paper's printed g (n = {int(mode['n']):,}), answering {mode['answer']} for every item (the most "
            f"frequent level, chosen leaving each answer out) has MAE {fmt(mode['mae'], 3)} and three-class accuracy "
            f"{fmt(mode['accuracy_pct'], 1)}%; answering the mean ({mean['answer']}) MAE {fmt(mean['mae'], 3)}, "
            f"{fmt(mean['accuracy_pct'], 1)}%; Random MAE {fmt(rnd['mae'], 3)}, {fmt(rnd['accuracy_pct'], 1)}% "
            "(expected)")


def _table1_row(model: str, strategy: str) -> pd.Series:
    rows = tokutake_table1_vs_baselines()
    return rows[(rows["model"] == model) & (rows["strategy"] == strategy)].iloc[0]


def _more_or_less(model: str) -> str:
    """"more" when answering the most frequent level of g has a lower MAE than ``model``'s CoT row, else "less"."""
    return "more" if bool(_table1_row(model, "CoT")["constant_beats_mae"]) else "less"


def _cot_versus_constant(model: str) -> str:
    row = _table1_row(model, "CoT")
    return (f"MAE {fmt(row['mae'], 3)} vs {fmt(row['constant_mode_mae'], 3)}, accuracy "
            f"{fmt(row['accuracy_pct'], 2)}% vs {fmt(row['constant_mode_accuracy_pct'], 1)}%")


def _beats_the_constant(model: str, strategy: str) -> tuple[Check, Check]:
    """Checks that a Table 1 row of Tokutake et al. beats answering the most frequent level of g, on MAE and on
    three-class accuracy (the paper's own numbers: its Table 1 and its printed distribution of g)."""
    row = _table1_row(model, strategy)
    answer = row["constant_mode_answer"]
    return (Check(f"{model} {strategy}'s MAE below answering {answer} ({fmt(row['constant_mode_mae'], 3)})",
                  float(row["mae"]), high=float(row["constant_mode_mae"])),
            Check(f"{model} {strategy}'s accuracy above answering {answer} "
                  f"({fmt(row['constant_mode_accuracy_pct'], 1)}%)", float(row["accuracy_pct"]),
                  low=float(row["constant_mode_accuracy_pct"])))


def _judged_users(table3: pd.DataFrame) -> tuple[int, str]:
    """The users the judge scored in a re-evaluation table (its ``n_users``, "1/1/1": per fold), summed over the
    folds, for the recommender with the fewest, and per fold in words ("1", "2–3")."""
    per_fold = [[int(users) for users in str(cell).split("/")] for cell in table3["n_users"]]
    fewest = min(per_fold, key=sum)
    low, high = min(fewest), max(fewest)
    return sum(fewest), f"{low}" if low == high else f"{low}–{high}"


def _strategies(load: Loader) -> Evidence:
    metrics = in_order(_book_judge_rows(load("prompt_strategies", "metrics"), "judge", BOOK_JUDGE), "template",
                       STRATEGIES)
    parsed = metrics[metrics["n"] > 0]
    table1 = tokutake_table1_vs_baselines()
    lowest = tuple(Check(f"{model}'s CoT has the lowest MAE of the {len(rows)} prompts",
                         float(rows.loc[rows["strategy"] == "CoT", "mae"].iloc[0]), high=float(rows["mae"].min()))
                   for model, rows in table1.groupby("model", sort=True))
    against_constant = tuple(check for model in sorted(table1["model"].unique())
                             for check in _beats_the_constant(model, "CoT"))
    best = _table1_row("GPT-4o-mini", "CoT")
    return Evidence(
        paper_numbers="MAE and three-class accuracy by prompt (Table 1): GPT-4o-mini CoT "
                      f"{fmt(best['mae'], 3)}, {fmt(best['accuracy_pct'], 2)}% (the paper's best)",
        key=f"the paper's best judge, GPT-4o-mini with CoT, errs {_more_or_less('GPT-4o-mini')} on its own g than "
            f"answering {best['constant_mode_answer']} for every item ({_cot_versus_constant('GPT-4o-mini')})",
        paper_checks=lowest + against_constant,
        baselines=_tokutake_baseline_words(),
        ours=("SmolLM2-135M's MAE " + ", ".join(f"{row['template']} {fmt(row['mae'], 2)} (n = {int(row['n'])})"
                                               for _, row in parsed.iterrows())
              if len(parsed) else "no reply of SmolLM2-135M held a score"),
        missing=NEEDS_A_CAPABLE_LLM)


def _serendipity_ranking(load: Loader) -> Evidence:
    table3 = _book_judge_rows(load("recommender_reevaluation", "table3_latest-small"), "judge", BOOK_JUDGE_MODEL)
    scores = table3[table3["recommender"] != "Random"]["avg_score_mean"]
    users, per_fold = _judged_users(table3)
    ours = (f"SmolLM2-135M's Avg. score (expected) {fmt(scores.min(), 2)}–{fmt(scores.max(), 2)} on "
            f"ml-latest-small ({per_fold} judged user(s) per fold)")
    return Evidence(
        paper_numbers="GPT-4o-mini's Precision/NDCG_ser@20 and Avg. Score@20 by recommender",
        ours=ours, key=unless_too_few(ours, users, "judged users", f"{per_fold} per fold"), n=users,
        differences=(Difference("data", "ml-latest-small", "ML-1M, Goodreads, Amazon"), _BASIC_PROMPT),
        missing=NEEDS_A_CAPABLE_LLM)


def _accuracy_order(load: Loader) -> Evidence:
    order = named_row(load("recommender_reevaluation", "order_vs_paper_1m"), "metric", "n_acc",
                      "recommender_reevaluation/order_vs_paper_1m")
    tuned = load("recommender_reevaluation", "tuned_values_1m")
    six = tuned[tuned["recommender"].isin(["BPRMF", "SASRec", "KFN", "UAUM", "DESR", "PURS"])]
    trials = six.groupby("recommender")["trials"].max()
    short = trials[trials < PAPER_TRIALS]
    budget = span(short.min(), short.max(), 0) if len(short) else ""
    tau, p = float(order["tau"]), float(order["p"])
    # the claim is a positive association: the one-sided p-value of Kendall's two-sided test
    one_sided = p / 2 if tau > 0 else 1 - p / 2
    return Evidence(
        key=f"Kendall's τ between our order and the paper's is {fmt(tau, 2)} ({int(order['n'])} recommenders)",
        paper_numbers=f"{order['paper_order']} (NDCG_acc@20)",
        ours=f"{order['our_order']}; Kendall's τ {fmt(order['tau'], 2)} (p {fmt(order['p'], 2)}, n = "
             f"{int(order['n'])} recommenders)",
        n=int(order["n"]),
        checks=(Check("one-sided p of τ > 0", one_sided, high=0.05),),
        differences=(Difference("tuning budget", f"{budget} TPE trials per fold" if budget else
                                f"at least {PAPER_TRIALS} trials", f"{PAPER_TRIALS} trials per fold",
                                blocks=not short.empty),))


def _zhang_rows(names: tuple[str, ...]) -> Callable[[Loader], Evidence]:
    def read(load: Loader) -> Evidence:
        gaps = load("explanation_evaluators", "table1_agreement_by_row")
        where = "explanation_evaluators/table1_agreement_by_row"
        rows = {name: named_row(gaps, "evaluator", name, where) for name in names}
        return Evidence(
            paper_numbers=f"{sum(int(row['cells']) for row in rows.values())} printed cells",
            ours="mean gap to the printed cells: " + ", ".join(
                f"{name} {fmt(row['mean_abs_difference'], 2)}" for name, row in rows.items())
                 + f" points (within {CLOSE_POINTS} counts as recomputed: this book's threshold)",
            key=_gaps_in_words(rows),
            checks=tuple(Check(name, float(row["mean_abs_difference"]), high=CLOSE_POINTS)
                         for name, row in rows.items()))
    return read


def _gaps_in_words(rows: dict[str, pd.Series]) -> str:
    """"all 36 printed cells recomputed within 0.005 points" when every cell is within this book's threshold, else
    the rows' mean gaps."""
    cells = sum(int(row["cells"]) for row in rows.values())
    largest = max(float(row["max_abs_difference"]) for row in rows.values())
    if largest <= CLOSE_POINTS:
        return f"all {cells} printed cells recomputed within {fmt(largest, 3)} points"
    gaps = [float(row["mean_abs_difference"]) for row in rows.values()]
    return f"mean gaps of {span(min(gaps), max(gaps), 1)} points to the {cells} printed cells"


def evaluator_replies(load: Loader) -> tuple[int, int]:
    """Zhang et al.'s chapter: (replies that held a score, replies) of every LLM evaluator run of the book's own
    judge, with our reconstructed prompts and with the authors' own; a reply read two ways counts once, as its first
    reading (``distinct_runs``)."""
    runs = pd.concat([_book_judge_rows(load("explanation_evaluators", "llm_runs"), "model", BOOK_JUDGE_RUNS),
                      _book_judge_rows(load("explanation_evaluators", "authors_runs"), "model", BOOK_JUDGE_RUNS)],
                     ignore_index=True)
    runs = distinct_runs(runs)
    total = int(runs["n_replies"].sum())
    return total - int(runs["n_unparsable"].sum()), total


def _llm_evaluators(load: Loader) -> Evidence:
    held, total = evaluator_replies(load)
    printed = papers.table("zhang2024explanations_table1")
    average = printed[printed["aspect"] == "average"].set_index("evaluator")["dataset"]
    llms = average[average.index.str.endswith(")")]
    references = average[average.index.str.startswith(("BLEU", "ROUGE"))]
    return Evidence(paper_numbers=f"Table 1, Average column, dataset level: the best LLM {llms.idxmax()} "
                                  f"{fmt(llms.max(), 2)}%, the best reference metric {references.idxmax()} "
                                  f"{fmt(references.max(), 2)}% (Pearson)",
                    ours=f"SmolLM2-135M: {held:,} of {total:,} distinct replies held a score (every run, the authors' "
                         "prompt included; a reply read two ways counted once)", n=total, missing=NEEDS_A_CAPABLE_LLM,
                    sample=_correlation_gain_need(held, *_zhang_best_llm_over_metrics()))


def _zhang_best_llm_over_metrics() -> tuple[float, float]:
    """Zhang et al.'s Table 1, dataset level, average of the aspects: the best reference metric's Pearson (%) and the
    best LLM evaluator's."""
    from recjudge import papers

    table1 = papers.table("zhang2024explanations_table1")
    average = table1[table1["aspect"] == "average"].set_index("evaluator")["dataset"]
    metrics = average[["BLEU-1", "BLEU-4", "ROUGE-1-F", "ROUGE-L-F"]]
    llms = average[average.index.str.contains(r"\((?:S|M)\)$")]
    return float(metrics.max()), float(llms.max())


_LATEST_SMALL = Difference("data", "ml-latest-small (embedded sample)", "MovieLens-1M with movie descriptions")
#: Lima & Peres: "at least 30 intervals of at least 30 users" (Table 2's setting).
PAPER_MIN_USERS = PAPER_INTERVALS = 30


def _lima_frames(load: Loader) -> Difference:
    """The time frames Lima & Peres's chapter used (its threshold of common users and the intervals it kept)."""
    scope = load("normalised_surprise", "experiment2_scope").iloc[0]
    return Difference("time frames", f"{int(scope['intervals_used'])} intervals of at least "
                                     f"{int(scope['min_common_users'])} common users",
                      f"at least {PAPER_INTERVALS} intervals of at least {PAPER_MIN_USERS} users")


def _lima_table2_means() -> str:
    """Lima & Peres's Table 2 as printed: the range of each recommender's mean normalised surprise over the cells."""
    printed = papers.table("lima_limits_to_surprise_table2")
    return "Table 2, mean normalised surprise over " + f"{len(printed)} item model × distance cells: " + ", ".join(
        f"{name} {fmt(printed[f'{name}_mean'].min(), 3)}–{fmt(printed[f'{name}_mean'].max(), 3)}"
        for name in ("MSI", "kNN", "LSI"))


def _surprise_order(load: Loader) -> Evidence:
    ordering = load("normalised_surprise", "ordering_check").sort_values(["model", "distance", "inequality"])
    cells = ordering[["model", "distance"]].drop_duplicates()
    return Evidence(
        paper_numbers=_lima_table2_means(),
        ours=f"{int(ordering['holds_on_means'].astype(bool).sum())} of {len(ordering)} inequalities hold on the "
             f"means ({len(cells)} model × distance cells × {ordering['inequality'].nunique()} inequalities)",
        key=f"the order holds on the means in {int(ordering['holds_on_means'].astype(bool).sum())} of "
            f"{len(ordering)} comparisons (every item model and distance)",
        checks=tuple(Check(f"{row['model']} {row['distance']} {row['inequality']}", float(row["mean_difference"]),
                           low=0.0) for _, row in ordering.iterrows()),
        differences=(_LATEST_SMALL, _lima_frames(load)))


def _magnitudes(load: Loader) -> Evidence:
    load("normalised_surprise", "table2_vs_paper")
    return Evidence(paper_numbers=_lima_table2_means(), differences=(_LATEST_SMALL, _lima_frames(load)),
                    missing="MovieLens-1M's movie descriptions used by the paper")


def _coefficients_of_variation(load: Loader) -> Evidence:
    cv = load("normalised_surprise", "paper_claim_coefficients_of_variation").sort_values(["varies", "fixed"])

    def name(row: pd.Series) -> str:
        return f"{row['varies']} ({row['fixed']})"

    return Evidence(
        paper_numbers=", ".join(f"{name(row)} {fmt(row['printed_cv_pct'], 1)}%" for _, row in cv.iterrows()),
        ours=", ".join(f"{name(row)} {fmt(row['cv_pct_ours'], 1)}%" for _, row in cv.iterrows())
             + f" (kNN; non-negligible read as at least {NON_NEGLIGIBLE_CV_PCT:.0f}%: this book's threshold)",
        key=f"coefficients of variation of {fmt(cv['cv_pct_ours'].min(), 1)}% to {fmt(cv['cv_pct_ours'].max(), 1)}% "
            "here",
        checks=tuple(Check(name(row), float(row["cv_pct_ours"]), low=NON_NEGLIGIBLE_CV_PCT)
                     for _, row in cv.iterrows()),
        paper_checks=tuple(Check(f"recomputed {name(row)}", float(row["cv_pct_paper_table"]),
                                 float(row["printed_cv_pct"]) - 0.05, float(row["printed_cv_pct"]) + 0.05)
                           for _, row in cv.iterrows()),
        differences=(_LATEST_SMALL, _lima_frames(load)))


def _metamorphic_lists(load: Loader) -> Evidence:
    parsing = load("metamorphic_recommender", "reply_parsing")
    printed = papers.table("khirbat2024metamorphic_table4")
    return Evidence(paper_numbers="Table 4, GPT-3.5-turbo's Kendall's τ to the reference list: " + ", ".join(
                        f"{row['relation']} {fmt(row['kendall_tau'], 4)}" for _, row in printed.iterrows()),
                    ours=f"SmolLM2-135M: {int(parsing['not_a_list'].sum())} of {int(parsing['replies'].sum())} "
                         "replies are not a list of titles",
                    missing=NEEDS_A_CAPABLE_LLM)


def _authors_prompt_aspects(load: Loader) -> Evidence:
    statements = load("explanation_evaluators", "authors_prompt_statements").sort_values("aspect")
    asks = statements["asks_its_aspect"].astype(bool)
    aspect_of = dict(zip(statements["questionnaire_statement"], statements["aspect"]))
    wrong = statements[~asks]
    return Evidence(
        paper_numbers=f"the authors' prompt: one line per aspect ({', '.join(statements['aspect'])})",
        ours=(f"{int(asks.sum())} of {len(statements)} lines state their aspect's questionnaire statement"
              + "".join(f"; the {row['line']} line states the {aspect_of.get(row['statement_asked'], 'no')} "
                        f"statement (“{row['statement_asked']}”)" for _, row in wrong.iterrows())),
        key=("every aspect's line asks its own questionnaire statement" if wrong.empty else
             "; ".join(f"the prompt never asks about {row['aspect']} (its {row['line']} line repeats the "
                       f"{aspect_of.get(row['statement_asked'], 'no')} statement, “{row['statement_asked']}”)"
                       for _, row in wrong.iterrows())),
        paper_checks=tuple(Check(f"{row['line']} line", float(bool(row["asks_its_aspect"])), low=1.0)
                           for _, row in statements.iterrows()),
        paper_text=True)


#: A judge is said to save human labels when, with this many labels, PPI++ with its scores is worth at least ...
TRUST_LABELS = 100
#: ... this many labels more than the labels alone (this book's own threshold: one whole label).
SAVED_LABELS = trust_rules.SAVED_LABELS


def _labels_saved(load: Loader) -> Evidence:
    worth = load("trust_judges", "labels_worth")
    kinds = dict(zip(*(load("trust_judges", "judges")[column] for column in ("judge", "kind"))))
    mean = worth[(worth["estimand"] == "mean serendipity") & (worth["n"] == TRUST_LABELS)]
    llms = mean[mean["judge"].map(kinds).fillna("").str.contains("LLM")].sort_values("judge")
    if llms.empty:
        raise KeyError(f"trust_judges/labels_worth: no LLM judge's row for the mean at n = {TRUST_LABELS}")
    best = llms.loc[llms["labels_worth"].idxmax()]
    gains = llms["labels_worth"] - TRUST_LABELS
    return Evidence(
        ours=f"with {TRUST_LABELS} human labels, PPI++ with each LLM judge's scores is worth "
             + ", ".join(f"{row['judge']} {fmt(row['labels_worth'], 1)}" for _, row in llms.iterrows())
             + " labels (one whole label saved counts: this book's threshold)",
        key=(f"with {TRUST_LABELS} human labels, the most useful of {len(llms)} LLM judges here (selected: "
             f"{best['judge']}) "
             f"is worth {fmt(best['labels_worth'], 1)} labels, {fmt(float(gains.max()), 1)} more than the labels "
             "alone" + (f": no saving (under this book's threshold of {fmt(SAVED_LABELS, 0)} whole label)"
                        if float(gains.max()) < SAVED_LABELS else "")),
        n=TRUST_LABELS,
        # The saving is read as the part V rule reads it (trust_rules.saved_labels: beyond the simulation's noise
        # and its tuning bias); a table written before the Monte Carlo interval existed gives the worth itself.
        checks=tuple(Check(str(row["judge"]), trust_rules.saved_labels(row, TRUST_LABELS)
                           if "labels_worth_mc_low" in row else float(row["labels_worth"]) - TRUST_LABELS,
                           low=SAVED_LABELS) for _, row in llms.iterrows()),
        differences=(Difference("model class", "tiny local models and recorded gpt-3.5-turbo",
                                "no paper measures what its judge is worth in labels"),))


KANG, TOKUTAKE, ZHANG, LIMA, KHIRBAT = ("Kang et al. 2025", "Tokutake et al. 2025", "Zhang et al. 2024",
                                        "Lima & Peres", "Khirbat et al. 2024")
KANG_RQ1, KANG_RQ23 = "Kang et al. 2025, RQ1", "Kang et al. 2025, RQ2–RQ3"
TOKUTAKE_REEVAL = "Tokutake et al. 2025, re-evaluation"
#: The trust part asks a question of this book's own, not a paper's; its claim is the hope behind all five papers.
THIS_BOOK, TRUST = "This book", "Beyond the papers: part V"

CLAIMS = (
    Claim(KANG, "Table 2", "The proxy metrics agree only weakly with users' serendipity ratings", KANG_RQ1,
          "proxy_vs_llm", "agreement_all_answers", _proxies_weak),
    Claim(KANG, "section 3.1", "Every proxy metric agrees with users better than random", KANG_RQ1,
          "proxy_vs_llm", "agreement_all_answers", _proxies_beat_random),
    Claim(KANG, "section 2.5", "Every Pearson correlation of Table 2 is significant at p < 0.05", KANG_RQ1,
          "proxy_vs_llm", "paper_claim_significance", _table2_significant),
    Claim(KANG, "section 3.2", "Zero-shot LLM judges beat the best proxy (SOG) by about 100% in Pearson", KANG_RQ1,
          "proxy_vs_llm", "paper_claim_gain_over_sog", _gain_over_sog),
    Claim(KANG, "RQ2, Tables 4–5", "Auxiliary data in the prompt makes the judge agree better with users",
          KANG_RQ23, "auxiliary_data", "agreement_by_setting", _auxiliary_data, BOOK_JUDGE_NUMBERS),
    Claim(KANG, "RQ3, Table 5", "Averaging several LLM judges agrees better with users than one", KANG_RQ23,
          "llm_ensembles", "table5_ours", _ensembles, POOL_NUMBERS),
    Claim(TOKUTAKE, "section 4.1", "The ground truth g has the printed distribution", TOKUTAKE,
          "prompt_strategies", "ground_truth_search", _g_distribution),
    Claim(TOKUTAKE, "Table 1", "Chain-of-thought makes the best serendipity judge", TOKUTAKE,
          "prompt_strategies", "metrics", _strategies, BOOK_JUDGE_NUMBERS),
    Claim(TOKUTAKE, "Table 3", "The six recommenders rank by accuracy on ML-1M as printed", TOKUTAKE_REEVAL,
          "recommender_reevaluation", "order_vs_paper_1m", _accuracy_order),
    Claim(TOKUTAKE, "Table 3", "An LLM judge ranks the recommenders' serendipity as printed", TOKUTAKE_REEVAL,
          "recommender_reevaluation", "table3_latest-small", _serendipity_ranking, BOOK_JUDGE_NUMBERS),
    Claim(TOKUTAKE, "section 5.2, finding (3)", "An Avg. Score@20 of 2.1–2.4 aligns with g, so the judge reflects "
          "real users' serendipity", TOKUTAKE_REEVAL, "recommender_reevaluation", "paper_claim_avg_score_vs_g",
          _avg_score_vs_g, BOOK_JUDGE_NUMBERS),
    Claim(ZHANG, "Table 1", "The annotator rows", ZHANG, "explanation_evaluators", "table1_agreement_by_row",
          _zhang_rows(("Annotator-1", "Annotator-2", "Average"))),
    Claim(ZHANG, "Table 1", "The BLEU and ROUGE rows", ZHANG, "explanation_evaluators", "table1_agreement_by_row",
          _zhang_rows(("BLEU-1", "BLEU-4", "ROUGE-1-F", "ROUGE-L-F"))),
    Claim(ZHANG, "Table 1", "LLMs evaluate explanations as well as or better than the reference metrics", ZHANG,
          "explanation_evaluators", "llm_runs", _llm_evaluators, BOOK_JUDGE_NUMBERS),
    Claim(ZHANG, "the authors' prompt", "The LLM is asked about each aspect with the users' questionnaire statement",
          ZHANG, "explanation_evaluators", "authors_prompt_statements", _authors_prompt_aspects),
    Claim(LIMA, "Table 2", "Normalised surprise orders MSI ≥ kNN ≥ LSI", LIMA, "normalised_surprise",
          "ordering_check", _surprise_order),
    Claim(LIMA, "Table 2", "The magnitudes of normalised surprise on MovieLens-1M with movie descriptions", LIMA,
          "normalised_surprise", "table2_vs_paper", _magnitudes),
    Claim(LIMA, "Discussion", "The choice of item model and distance has a non-negligible effect (coefficients of "
          "variation 13.6%, 29.9%, 13.8%, 20.7%)", LIMA, "normalised_surprise",
          "paper_claim_coefficients_of_variation", _coefficients_of_variation),
    Claim(KHIRBAT, "Tables 2–4", "An LLM recommender's lists move under semantics-preserving prompt changes",
          KHIRBAT, "metamorphic_recommender", "reply_parsing", _metamorphic_lists, BOOK_JUDGE_NUMBERS),
    Claim(THIS_BOOK, "part V", "An LLM judge's scores save human labels", TRUST, "trust_judges", "labels_worth",
          _labels_saved, POOL_NUMBERS),
)


def for_chapter(chapter: str, load: Loader = load_table, *, strict: bool = True) -> pd.DataFrame:
    """The registry's records of the claims one chapter examines."""
    return registry(load, [claim for claim in CLAIMS if claim.chapter == chapter], strict=strict)


#: Per chapter, the claim whose verdict answers the chapter's question: its verdict box opens with it.
ANSWERS = {
    "proxy_vs_llm": "Zero-shot LLM judges beat the best proxy (SOG) by about 100% in Pearson",
    "auxiliary_data": "Auxiliary data in the prompt makes the judge agree better with users",
    "llm_ensembles": "Averaging several LLM judges agrees better with users than one",
    "prompt_strategies": "Chain-of-thought makes the best serendipity judge",
    "recommender_reevaluation": "An LLM judge ranks the recommenders' serendipity as printed",
    "explanation_evaluators": "LLMs evaluate explanations as well as or better than the reference metrics",
    "normalised_surprise": "Normalised surprise orders MSI ≥ kNN ≥ LSI",
    "metamorphic_recommender": "An LLM recommender's lists move under semantics-preserving prompt changes",
    "trust_judges": "An LLM judge's scores save human labels",
}
#: A chapter's verdict box holds its answer and at most this many bullets.
MAX_VERDICT_BULLETS = 4
#: Verdicts whose reason (what is missing, what blocks the comparison) a reader needs beside the number.
_REASON_NEEDED = (NOT_TESTABLE, NOT_COMPARABLE, NOT_RUN)


def _why(row: object) -> str:
    """A claim's number in plain words, and, where the verdict rests on it, what is missing or blocks."""
    parts = [row.key_number] if row.key_number else []
    if row.verdict in _REASON_NEEDED and row.reason:
        parts.append(row.reason)
    return "; ".join(parts)


def verdict_bullets(records: pd.DataFrame) -> list[str]:
    """One bullet per claim: the claim, its verdict in bold and the number behind it (for a chapter's verdict
    box)."""
    return [f"*{row.claim}* ({row.paper}, {row.section}): **{row.verdict}**" + (f"; {_why(row)}." if _why(row)
                                                                                 else ".")
            for row in records.itertuples(index=False)]


def answer_line(row: object) -> str:
    """The verdict box's first line: the verdict of the claim that answers the chapter's question, then the claim
    and its number."""
    why = _why(row)
    return (f"**{row.verdict[0].upper()}{row.verdict[1:]}:** *{row.claim}* ({row.paper}, {row.section})"
            + (f"; {why}." if why else "."))


@dataclass(frozen=True)
class ReplyCount:
    """Where a chapter counts a judge's replies: ``table`` has one row per run, the judge named in ``column`` (by
    ``name(judge)``; ``prefix``: the name starts the cell), with ``replies`` and ``unusable`` (unparsable, or for a
    recommender not a list of titles) counts; ``once``: rows repeating a run (another reading of the same replies)
    are counted once."""

    table: str
    column: str
    name: Callable[[JudgeSpec], str]
    replies: str
    unusable: str
    prefix: bool = False
    once: bool = False
    what: str = "unparsable"

    def counts(self, chapter: str, load: Loader, judge: JudgeSpec) -> tuple[int, int]:
        """(unusable replies, replies) of ``judge``; KeyError when the table has no run of it."""
        table = load(chapter, self.table)
        cells = table[self.column].astype(str)
        mine = table[cells.str.startswith(self.name(judge)) if self.prefix else cells == self.name(judge)]
        if self.once:
            mine = mine.drop_duplicates(self.column)
        if mine.empty:
            raise KeyError(f"{chapter}/{self.table}: no run of {judge.display_label}")
        return int(mine[self.unusable].sum()), int(mine[self.replies].sum())


def asks_as(judge: JudgeSpec) -> str:
    """How the chapters' run tables name a judge's requests: ``<provider>:<model>`` (``JudgeConfig.label``'s head)."""
    return f"{judge.provider}:{judge.model}"


#: Per chapter, where its tables count a reader's judge's replies (the runs' reports).
REPLY_COUNTS = {
    "proxy_vs_llm": ReplyCount("judge_runs", "judge", lambda judge: f"{asks_as(judge)}/", "prompts", "unparsable",
                               prefix=True, once=True),
    "auxiliary_data": ReplyCount("judge_runs", "judge", lambda judge: judge.display_label, "prompts", "unparsable"),
    "prompt_strategies": ReplyCount("judge_runs", "judge", lambda judge: judge.display_label, "items",
                                    "unparsable"),
    "explanation_evaluators": ReplyCount("llm_runs", "model", asks_as, "n_replies", "n_unparsable"),
    "metamorphic_recommender": ReplyCount("reader_reply_parsing", "recommender", lambda judge: judge.display_label,
                                          "replies", "not_a_list", what="not a list of titles"),
}


def replies_of(chapter: str, judge: JudgeSpec, load: Loader = load_table) -> str:
    """"3 of 40 replies unparsable (7.5%)": the share of ``judge``'s replies in ``chapter`` that held no answer, or
    why it is not known here."""
    count = REPLY_COUNTS.get(chapter)
    if count is None:
        return "this chapter's tables do not count its replies"
    try:
        unusable, replies = count.counts(chapter, load, judge)
    except (FileNotFoundError, KeyError) as missing:
        return f"no replies counted ({str(missing).strip(chr(39) + chr(34))})"
    if replies == 0:
        return "no replies"
    return f"{unusable:,} of {replies:,} replies {count.what} ({fmt(100 * unusable / replies, 1)}%)"


def judges_statement(numbers_of: str, chapter: str, judges: Sequence[JudgeSpec], load: Loader = load_table) -> str:
    """What a verdict of a variant with reader's judges rests on: whose numbers the claim read, and each reader's
    judge with the share of its replies in this chapter that held no answer."""
    if not judges:
        return ""
    yours = "; ".join(f"{judge.display_label}, {replies_of(chapter, judge, load)}" for judge in judges)
    read = (f"read from {numbers_of} numbers, not yours alone" if numbers_of == POOL_NUMBERS else
            f"read from {numbers_of} numbers in this variant's tables, not your judge's" if numbers_of else
            "read from no LLM judge's numbers")
    return f"Verdict {read}; your judge in this chapter: {yours}."


#: A copied chapter's page imports its original's page module (``from recjudge.chapters import <original> as page``).
_PAGE_MODULE = re.compile(r"^\s*from\s+recjudge\.chapters\s+import\s+(\w+)\s+as\s+page\b", re.MULTILINE)


def original_chapter(chapter: str, runs: Sequence[object] | None = None, root: Path | None = None) -> str | None:
    """The chapter whose claims the run ``chapter`` examines when the registry does not name it: a copy of a
    chapter, found through its notebook in the run plan (``runs``; default: the project's ``runplan.yaml``) — the
    original's own notebook run under a new name, or a copied notebook that still imports the original's page
    module. None for a chapter the registry names, a run the plan lacks, a demonstration run (a ``variant``, whose
    numbers are never set beside a paper's) and a notebook that is a copy of no chapter with claims."""
    examined = {claim.chapter for claim in CLAIMS}
    if chapter in examined:
        return None
    from recjudge.paths import project_root

    root = Path(root) if root is not None else project_root()
    run = _plan_run(chapter, runs, root)
    if run is None or run.variant:
        return None
    notebook = Path(run.notebook)
    if notebook.stem in examined:
        return notebook.stem
    path = notebook if notebook.is_absolute() else root / notebook
    try:
        modules = _PAGE_MODULE.findall(path.read_text(encoding="utf-8"))
    except OSError:
        return None
    return next((module for module in modules if module in examined), None)


def _plan_run(chapter: str, runs: Sequence[object] | None, root: Path | None = None) -> object | None:
    """The run named ``chapter`` in ``runs`` (default: the project's run plan; none when it cannot be read)."""
    if runs is None:
        from recjudge.compendium.runplan import RunPlanError, load_runplan

        try:
            runs = load_runplan(root=root)
        except RunPlanError:
            return None
    return next((run for run in runs if run.name == chapter), None)


def _reading_copy(load: Loader, original: str, copy: str) -> Loader:
    """``load`` with the original chapter's tables replaced by the copy's own (a claim reads its chapter's tables by
    the original's name)."""
    return lambda chapter, table: load(copy if chapter == original else chapter, table)


def no_claims_note(chapter: str) -> str:
    """A copied chapter's verdict box when the claims registry cannot tell which chapter it copies."""
    return (f"**No verdict:** the run `{chapter}` examines none of the papers' claims: the claims registry "
            "(`recjudge.compendium.claims`) names the chapters that examine claims, and this run is not one of them "
            "nor a copy of one (its notebook neither is a chapter's notebook nor imports a chapter's page module).")


def copy_note(chapter: str, original: str) -> str:
    """What a copied chapter's verdicts rest on."""
    return (f"*This chapter is a copy of {{doc}}`{original}`: the verdicts below read the claims of `{original}` "
            f"from this chapter's own tables (`results/{chapter}/`), at its own parameters.*")


def chapter_verdicts(chapter: str, load: Loader = load_table, judges: Sequence[dict | JudgeSpec] = (), *,
                     runs: Sequence[object] | None = None, root: Path | None = None,
                     lenient: bool = False) -> Markdown:
    """The verdicts of the claims a chapter examines, as the bullets that open its verdict box (glued as
    ``claims_checked``); a copy of a chapter (:func:`original_chapter`) gets its original's, read from its own
    tables; a demonstration run (a ``variant``) gets none, and any other run says plainly that it has none. In a
    variant, whose tables are of another scale or judge, a claim whose rows its tables lack says "not run in this
    build" and why; with a reader's ``judges`` (the chapter's ``judges`` parameter), each verdict says whose numbers
    it read and what share of each reader's judge's replies held no answer. ``runs`` and ``root``: the run plan and
    the project it lies in (default: the project's); ``lenient``: tables of another scale (a copy's), read as a
    variant's."""
    specs = [judge if isinstance(judge, JudgeSpec) else JudgeSpec.from_parameter(judge) for judge in judges]
    chosen = [claim for claim in CLAIMS if claim.chapter == chapter]
    if not chosen:
        run = _plan_run(chapter, runs, root)
        if in_variant() or run is not None and run.variant:
            return Markdown("")
        original = original_chapter(chapter, [run] if run is not None else [], root)
        if original is None:
            return Markdown(no_claims_note(chapter))
        copied = chapter_verdicts(original, _reading_copy(load, original, chapter), judges, lenient=True)
        return Markdown(f"{copy_note(chapter, original)}\n\n{copied.data}")
    records = registry(load, chosen, strict=not (lenient or in_variant()))
    if specs:
        records["reason"] = records["reason"].str.replace(NEEDS_A_CAPABLE_LLM, NEEDS_A_CAPABLE_LLM_BESIDE_YOURS,
                                                          regex=False)
    lines = [" ".join(part for part in (line, judges_statement(claim.numbers_of, chapter, specs, load)) if part)
             for line, claim in zip(verdict_bullets(records), chosen)]
    if not chosen:
        return Markdown("")
    first = next((i for i, claim in enumerate(chosen) if claim.claim == ANSWERS.get(chapter)), None)
    if first is None:
        raise KeyError(f"{chapter}: no claim answers the chapter's question (claims.ANSWERS)")
    answer = " ".join(part for part in (answer_line(next(records.iloc[[first]].itertuples(index=False))),
                                        judges_statement(chosen[first].numbers_of, chapter, specs, load)) if part)
    bullets = [line for i, line in enumerate(lines) if i != first]
    if len(bullets) > MAX_VERDICT_BULLETS:
        raise ValueError(f"{chapter}: {len(bullets)} claims beside the answer, more than a verdict box holds "
                         f"({MAX_VERDICT_BULLETS})")
    return Markdown("\n".join([answer, "", *(f"- {bullet}" for bullet in bullets)]).rstrip())


def matrix_markdown(records: pd.DataFrame) -> str:
    """The claims as a three-column MyST table (claim, verdict, evidence); each claim names its paper and links to
    its chapter and the CSV its evidence comes from."""
    lines = ["| Claim | Verdict | Evidence |", "|---|---|---|"]
    for row in records.itertuples(index=False):
        claim = (f"**{row.paper}** ({row.section}). {row.claim} ({{doc}}`chapter <{row.chapter}>`, "
                 f"{{download}}`table <../../results/{row.chapter}/{row.table}.csv>`)")
        evidence = "; ".join(part for part in (row.ours, f"paper: {row.paper_numbers}" if row.paper_numbers else "")
                             if part)
        cells = [claim, f"**{row.verdict}**: {row.reason}", evidence]
        lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)


#: The findings the landing page opens with, in order: each one or two claims of the registry (by their words).
LANDING_FINDINGS = (
    ("The proxy metrics agree only weakly with users' serendipity ratings",),
    ("Every Pearson correlation of Table 2 is significant at p < 0.05",),
    ("The annotator rows", "The LLM is asked about each aspect with the users' questionnaire statement"),
    ("Normalised surprise orders MSI ≥ kNN ≥ LSI",),
    ("An LLM judge's scores save human labels",),
)
#: Where the at-a-glance run writes the landing page's findings (``book/intro.md`` includes it).
LANDING_FILE = "findings_first.md"


def landing_markdown(records: pd.DataFrame, chapters: str = "notebooks") -> str:
    """The landing page's findings: per finding of ``LANDING_FINDINGS`` one bullet, each claim's verdict in bold
    (chosen by the rule), the claim, its paper, the number behind it with its n, and a link to its chapter
    (``chapters``: the chapters' folder relative to the landing page). A claim the registry lacks is a KeyError."""
    by_claim = records.set_index("claim")
    bullets = []
    for finding in LANDING_FINDINGS:
        missing = [claim for claim in finding if claim not in by_claim.index]
        if missing:
            raise KeyError(f"the claims registry has no claim {missing[0]!r} (claims.LANDING_FINDINGS)")
        parts = []
        for claim in finding:
            row = by_claim.loc[claim]
            number = row["key_number"] if isinstance(row["key_number"], str) else ""
            if pd.notna(row["n"]) and f"{int(row['n']):,}" not in number:
                number += f" (n = {int(row['n']):,})"
            parts.append(f"**{row['verdict'][0].upper()}{row['verdict'][1:]}:** {claim[0].lower()}{claim[1:]} "
                         f"({row['paper']}, {row['section']})" + (f": {number}" if number else ""))
        chapter = by_claim.loc[finding[0], "chapter"]
        bullets.append("- " + ". ".join(parts) + f". {{doc}}`Chapter <{chapters}/{chapter}>`")
    return "\n".join(bullets) + "\n"


def write_landing(records: pd.DataFrame, notebook: str) -> Path:
    """Write the landing page's findings (``landing_markdown``) next to the run's tables, where ``book/intro.md``
    includes them from; returns the file."""
    path = results_path(notebook, "findings").parent / LANDING_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(landing_markdown(records), encoding="utf-8")
    return path
