"""Checks of comparisons on the same answers, and the checks a reader's judges' numbers give the claims.

A claim that one evaluator agrees better with the users than another on the same answers reads the difference of
their correlations with its interval (:func:`contrast_check`: Steiger's covariance, ``metaeval.dependent``). The
claims about capable LLM judges read a reader's judges (``recjudge run --judge``) from the rows their chapters write:
each function here turns those rows into :class:`~recjudge.compendium.claim_evidence.Check` s, by the reader's
judges (``READER_JUDGES``), each with the answers it was measured on (a check on fewer than the book's minimum decides
nothing). The claims' readers (:mod:`recjudge.compendium.claim_readers`) call them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace

import pandas as pd

from recjudge import papers
from recjudge.compendium.claim_evidence import READER_JUDGES, Check, Loader, named_row
from recjudge.compendium.claim_intervals import contrast_check
from recjudge.metaeval.dependent import contrast_interval, ratio_interval

#: Zhang et al.'s four aspects (a reader's evaluator is read over them).
ZHANG_ASPECTS = ("persuasiveness", "transparency", "accuracy", "satisfaction")


#: How the RQ1 chapter names a judge's zero-shot row (Kang et al.'s basic prompt): "<label> zero-shot".
ZERO_SHOT = "zero-shot"


def reader_versus_sog(load: Loader, readers: Sequence[str]) -> list[tuple[str, pd.Series, pd.Series]]:
    """Each reader's judge's zero-shot row of the RQ1 chapter's sample and SOG's row on the same answers:
    ``(label, judge row, SOG row)``; the judge row holds its correlation with SOG's scores (``r_with_versus``)."""
    if not readers:
        return []
    sample = load("proxy_vs_llm", "agreement_sample")
    sog = named_row(sample, "method", "SOG", "proxy_vs_llm/agreement_sample")
    return [(label, named_row(sample, "method", f"{label} {ZERO_SHOT}", "proxy_vs_llm/agreement_sample"), sog)
            for label in readers]


def versus_check(name: str, judge: pd.Series, other: pd.Series, *, reverse: bool = False) -> Check:
    """That ``judge``'s correlation with the users exceeds ``other``'s on the answers both scored, their
    correlation with each other measured (``r_with_versus`` of the row set against the other: ``judge``'s, or with
    ``reverse`` ``other``'s): :func:`contrast_check`, by one of ours."""
    against, row = (other, judge) if not reverse else (judge, other)
    if row.get("versus") != against["method"]:
        raise KeyError(f"the row of {row['method']} is not set against {against['method']} (column 'versus')")
    return replace(contrast_check(name, float(judge["pearson_pct"]), float(other["pearson_pct"]),
                                  int(row["n_with_versus"]), r_ab=float(row["r_with_versus"])),
                   by=READER_JUDGES, n=int(row["n_with_versus"]))


#: Kang et al.'s "approximately 100%" gain over SOG, read generously as this range (in %).
ABOUT_100_PCT = (75.0, 125.0)


def gain_check(name: str, judge: pd.Series, sog: pd.Series) -> Check:
    """That a judge's gain over SOG (ratio of correlations minus 1, %) is about 100% (:data:`ABOUT_100_PCT`), with
    Fieller's interval from their measured correlation with each other."""
    r_a, r_b = float(judge["pearson_pct"]) / 100, float(sog["pearson_pct"]) / 100
    n, r_ab = int(judge["n_with_versus"]), float(judge["r_with_versus"])

    def interval_at(level: float) -> tuple[float, float]:
        _, below, above = ratio_interval(r_a, r_b, n, r_ab=r_ab, level=level)
        return 100 * (below - 1), 100 * (above - 1)

    gain = 100 * (r_a / r_b - 1) if r_b else math.nan
    return Check(name, gain, *ABOUT_100_PCT, interval_at=interval_at, by=READER_JUDGES, n=n)


#: The auxiliary-data chapter's setting without auxiliary data, and its settings of a history length ("k=2").
NONE_SETTING = "none (NA)"
HISTORY_LENGTH = r"k=\d+$"


def reader_settings_versus_none(settings: pd.DataFrame, readers: Sequence[str]) -> tuple[Check, ...]:
    """Each reader's judge's gain in each auxiliary-data setting over its own prompt without auxiliary data, on the
    same answers: one check per (judge, setting) of the chapter's ``agreement_by_setting`` rows."""
    checks = []
    for label in readers:
        mine = settings[settings["judge"] == label]
        none = named_row(mine, "method", NONE_SETTING, f"auxiliary_data/agreement_by_setting ({label})")
        # a shorter history (k=N) is less interaction data, not an auxiliary datum (the chapter's own reading)
        data = mine[(mine["method"] != NONE_SETTING) & ~mine["method"].astype(str).str.match(HISTORY_LENGTH)]
        checks += [versus_check(f"{label}: {row['method']} − {NONE_SETTING}", row, none)
                   for _, row in data.iterrows()]
    return tuple(checks)


#: The row of the average of a reader's judges in the RQ3 chapter (``serendipity.ground_truth.readers_average``).
READERS_AVERAGE = "mean of your judges"
#: What an average needs that one judge cannot give.
NEEDS_SEVERAL_JUDGES = "two or more of your judges (an average of one judge is that judge)"


def readers_average_checks(load: Loader, readers: Sequence[str]) -> tuple[Check, ...]:
    """That the mean of the reader's judges agrees better with the users than each of them, on the answers all
    scored (the RQ3 chapter's ``readers_average``): one check per judge, each of the reader's numbers; none with
    fewer than two judges."""
    if len(readers) < 2:
        return ()
    table = load("llm_ensembles", "readers_average")
    where = "llm_ensembles/readers_average"
    mean = named_row(table, "method", READERS_AVERAGE, where)
    return tuple(versus_check(f"{READERS_AVERAGE} − {label}", mean, named_row(table, "judge", label, where),
                               reverse=True) for label in readers)


def reader_gaps_to_cot(metrics: pd.DataFrame, readers: Sequence[str]) -> tuple[Check, ...]:
    """Each reader's judge's MAE gap of every other prompt to its own CoT prompt on the items both parsed (the
    chapter's ``mae_gap``, ``mae_gap_sd`` and ``n_paired``): one check per (judge, prompt) that CoT errs less."""
    from scipy import stats

    checks = []
    for label in readers:
        mine = metrics[(metrics["judge"] == label) & (metrics["template"] != "CoT")]
        if mine.empty:
            raise KeyError(f"prompt_strategies/metrics: no row of {label}")
        for _, row in mine.iterrows():
            gap, sd, n = float(row["mae_gap"]), float(row["mae_gap_sd"]), int(row["n_paired"])

            def interval_at(level: float, gap: float = gap, sd: float = sd, n: int = n) -> tuple[float, float]:
                # the spread is estimated from the n paired items: Student's t with n − 1 degrees of freedom
                half = stats.t.ppf(0.5 + level / 2, n - 1) * sd / math.sqrt(n) if n > 1 else math.nan
                return gap - half, gap + half

            checks.append(Check(f"{label}: {row['template']} − CoT", gap, low=0.0, interval_at=interval_at,
                                by=READER_JUDGES, strict=True, n=n))
    return tuple(checks)


#: Draws of the interval of Kendall's τ between a judge's recommender means and the printed ones (normal draws of each
#: mean with its standard error), and their seed: a fixed seed, so that a verdict is the same at every reading.
RANKING_DRAWS = 20_000
RANKING_SEED = 0


def kendall_interval(means: Sequence[float], errors: Sequence[float], printed: Sequence[float]
                     ) -> Callable[[float], tuple[float, float]]:
    """The interval of Kendall's τ between recommenders' means (each with its standard error) and the printed
    values, at any level: τ of normal draws of every mean (seeded), its quantiles. NaN when an error is unknown."""
    import numpy as np

    means, errors, printed = (np.asarray(v, dtype=float) for v in (means, errors, printed))
    if np.isnan(errors).any() or np.isnan(means).any():
        return lambda level: (math.nan, math.nan)
    draws = np.random.default_rng(RANKING_SEED).normal(means, errors, size=(RANKING_DRAWS, len(means)))
    first, second = np.triu_indices(len(means), k=1)
    taus = (np.sign(draws[:, first] - draws[:, second]) * np.sign(printed[first] - printed[second])).mean(axis=1)

    def interval_at(level: float) -> tuple[float, float]:
        low, high = np.quantile(taus, [(1 - level) / 2, (1 + level) / 2])
        return float(low), float(high)

    return interval_at


def reader_rankings(load: Loader, readers: Sequence[str]) -> tuple[Check, ...]:
    """That each reader's judge ranks the recommenders Table 3 prints (ML-1M) by their Avg. Score@20 as the paper's
    judge does: Kendall's τ between its means and the printed ones above 0, its interval from the means' standard
    errors over the judged lists (:func:`kendall_interval`)."""
    if not readers:
        return ()
    from scipy import stats

    table3 = load("recommender_reevaluation", "table3_latest-small")
    printed = papers.table("tokutake2025framework_table3").query("dataset == 'ML-1M'").set_index("recommender")
    checks = []
    for label in readers:
        mine = table3[table3["judge"] == label].set_index("recommender")
        if mine.empty:
            raise KeyError(f"recommender_reevaluation/table3_latest-small: no row of {label}")
        both = [name for name in printed.index if name in mine.index]
        means, errors = mine.loc[both, "avg_score_mean"], mine.loc[both, "avg_score_se"]
        tau = float(stats.kendalltau(means, printed.loc[both, "avg_score"]).statistic)
        # the judged lists each mean rests on: as few as the page shows as too few decide nothing
        lists = int(mine.loc[both, "n_lists"].min()) if "n_lists" in mine.columns else None
        checks.append(Check(f"{label}: Kendall's τ with the printed Avg. Score@20 ({len(both)} recommenders)", tau,
                            low=0.0, interval_at=kendall_interval(means, errors, printed.loc[both, "avg_score"]),
                            by=READER_JUDGES, n=lists))
    return tuple(checks)


def reader_evaluators_versus(load: Loader, readers: Sequence[str], reference: str) -> tuple[Check, ...]:
    """That each evaluator of the reader's judges (a prompt setting of one judge, the chapter's
    ``readers_versus_reference`` rows) evaluates better than ``reference`` on the same texts, on average over the
    aspects: the difference of the mean correlations, with an interval whose half-width is the mean of the aspects'
    half-widths (``contrast_interval`` with the two evaluators' measured correlation), never narrower than the true
    one (:func:`average_contrast_check`)."""
    if not readers:
        return ()
    table = load("explanation_evaluators", "readers_versus_reference")
    where = "explanation_evaluators/readers_versus_reference"
    if len(table) and set(table["reference"]) != {reference}:
        raise KeyError(f"{where}: the evaluators are set against {sorted(set(table['reference']))}, not {reference}")
    from recjudge.prompts.explanations import evaluator_judge

    mine = table[table["evaluator"].map(evaluator_judge).isin(list(readers))]
    if mine.empty:
        raise KeyError(f"{where}: no evaluator of {', '.join(readers)}")
    checks = []
    for evaluator, rows in mine.groupby("evaluator", sort=True):
        rows = rows.set_index("aspect").reindex(list(ZHANG_ASPECTS))
        difference = 100 * float((rows["pearson"] - rows["reference_pearson"]).mean())

        def interval_at(level: float, rows: pd.DataFrame = rows, difference: float = difference
                        ) -> tuple[float, float]:
            if rows["n"].isna().any():  # an aspect this evaluator did not score: undecided
                return math.nan, math.nan
            halves = [(high - low) / 2 for _, low, high in (
                contrast_interval(float(row["pearson"]), float(row["reference_pearson"]), int(row["n"]),
                                  r_ab=float(row["r_with_reference"]), level=level) for _, row in rows.iterrows())]
            half = 100 * sum(halves) / len(halves)
            return difference - half, difference + half

        checks.append(Check(f"{evaluator} − {reference}", difference, low=0.0, interval_at=interval_at,
                            by=READER_JUDGES))
    return tuple(checks)
