"""The numbers' intervals and the checks built from them that the claims' readers
(:mod:`recjudge.compendium.claim_readers`) and the pages share: a number with its interval for prose, an interval at
any level from a 95% bootstrap interval, Fisher's interval of a Pearson, the contrast of two correlations on the same
answers, which correlations an interval sets above, beside or below Random's, and the human labels a judge's
correlation saves by the ρ² rule."""

from __future__ import annotations

import math
from collections.abc import Callable

import pandas as pd

from recjudge.compendium.claim_evidence import Check
from recjudge.compendium.pages import fmt
from recjudge.metaeval.dependent import UNPRINTED_R_AB, contrast_interval


def with_interval(value: float, low: float, high: float, decimals: int = 1, unit: str = "") -> str:
    """"9.3% [5.2, 13.5]": a number and its 95% interval for prose; the interval left out when it is undefined, and
    an undefined number is "undefined" (no unit, no interval)."""
    if pd.isna(value):
        return fmt(value, decimals)
    text = f"{fmt(value, decimals)}{unit}"
    if pd.notna(low) and pd.notna(high):
        text += f" [{fmt(low, decimals)}, {fmt(high, decimals)}]"
    return text


def fisher_pct(pearson_pct: float, n: int) -> str:
    """"38.3% [−24.4, 78.5]": a Pearson (in %) on ``n`` answers with its 95% interval by Fisher's z (none on 3 answers
    or fewer)."""
    from recjudge.metaeval.dependent import correlation_interval

    low, high = correlation_interval(float(pearson_pct) / 100, n) if n > 3 else (math.nan, math.nan)
    return with_interval(pearson_pct, 100 * low, 100 * high, unit="%")


def bootstrap_interval(value: float, low: float, high: float) -> Callable[[float], tuple[float, float]]:
    """A number's interval at any level from its 95% bootstrap interval: each side scaled by the normal quantile of
    the level (the bootstrap gives the 95% ends only)."""
    from scipy import stats

    value, low, high = float(value), float(low), float(high)

    def interval_at(level: float) -> tuple[float, float]:
        scale = stats.norm.ppf(0.5 + level / 2) / stats.norm.ppf(0.975)
        return value - scale * (value - low), value + scale * (high - value)

    return interval_at


#: How the book reads a correlation between two evaluators that a paper does not print, in words.
R_AB_WORDS = (f"r₁₂ = {UNPRINTED_R_AB:.0f}, the correlation between the two evaluators' scores, which the paper does "
              "not print (a positive one would narrow the intervals)")


def contrast_check(name: str, r_a_pct: float, r_b_pct: float, n: int, *, weight: float = 1.0,
                   r_ab: float = UNPRINTED_R_AB) -> Check:
    """That ``r_a`` exceeds ``weight × r_b`` (Pearson, %) on the same ``n`` answers: the difference (points) and its
    interval at any level (``metaeval.dependent.contrast_interval``); it holds when the interval lies above 0, not
    at it (two identical evaluators differ by exactly 0 with an interval of no width)."""
    def interval_at(level: float) -> tuple[float, float]:
        _, low, high = contrast_interval(r_a_pct / 100, r_b_pct / 100, n, r_ab=r_ab, weight=weight, level=level)
        return 100 * low, 100 * high

    return Check(name, r_a_pct - weight * r_b_pct, low=0.0, interval_at=interval_at, strict=True)


def points(check: Check) -> str:
    """"Δr = +0.062 [0.029, 0.095]": a contrast check's difference of two correlations held in per cent (points),
    and its interval, for prose as r."""
    low, high = check.interval
    sign = "+" if check.value > 0 else ""
    return f"Δr = {sign}{fmt(check.value / 100, 3)} [{fmt(low / 100, 3)}, {fmt(high / 100, 3)}]"


def labels_saved_per_100(r: float) -> float:
    """The labels beyond 100 that 100 labels and a judge correlating ``r`` with the users are worth by the ρ² rule
    (``100 / (1 − ρ²) − 100``)."""
    return 100 / (1 - r**2) - 100


def saved_interval(r_pct: float, n: int) -> Callable[[float], tuple[float, float]]:
    """The interval of :func:`labels_saved_per_100` at any level, from ``r``'s (Fisher z): ρ² grows with |ρ|, so an
    interval of ρ that holds 0 starts at 0."""
    from recjudge.metaeval.dependent import correlation_interval

    def interval_at(level: float) -> tuple[float, float]:
        low, high = correlation_interval(r_pct / 100, n, level)
        nearest = 0.0 if low <= 0 <= high else min(abs(low), abs(high))
        return labels_saved_per_100(nearest), labels_saved_per_100(max(abs(low), abs(high)))

    return interval_at


def against_random(proxies: pd.DataFrame, random_pearson: float) -> str:
    """Which proxies correlate with users above Random's mean with their whole 95% interval, and which cannot be
    told from it (an interval that holds it) or fall below it: a point below Random whose interval holds Random is
    no proxy below Random."""
    above = proxies[proxies["pearson_ci_low"] > random_pearson]
    below = proxies[proxies["pearson_ci_high"] < random_pearson]
    unclear = proxies[~proxies.index.isin(above.index) & ~proxies.index.isin(below.index)]

    def listed(rows: pd.DataFrame) -> str:
        return ", ".join(f"{row['method']} ({interval_pct(row)})" for _, row in rows.iterrows())

    parts = [f"{len(above)} of {len(proxies)} proxies correlate with users above Random's {fmt(random_pearson)}% "
             "with their whole 95% interval"]
    if len(unclear):
        holds = "its interval holds" if len(unclear) == 1 else "their intervals hold"
        parts.append(f"{listed(unclear)} cannot be told from Random: {holds} it")
    if len(below):
        parts.append(f"{listed(below)} correlate{'s' if len(below) == 1 else ''} below it")
    return "; ".join(parts)


def interval_pct(row: pd.Series) -> str:
    return with_interval(row["pearson_pct"], row["pearson_ci_low"], row["pearson_ci_high"], unit="%")


def labels_worth_words(row: pd.Series) -> str:
    """"100.4 [100.3, 100.5]": the labels a judge is worth, with the simulation's Monte Carlo interval."""
    return with_interval(row["labels_worth"], row.get("labels_worth_mc_low", math.nan),
                         row.get("labels_worth_mc_high", math.nan))
