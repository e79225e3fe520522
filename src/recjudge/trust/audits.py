"""Judge audits: how reliable a judge's scores are, and what besides serendipity they follow.

- ``reliability``: Krippendorff's α (interval level, PyPI ``krippendorff``) among several readings of the same
  answers — the same model under different prompts, or different models — with a seeded bootstrap over answers.
- ``bias_table``: does a judge's score depend on an item or answer property (popularity, release year, title length,
  history length) once the human rating is held fixed?  An ordinary least squares regression of the judge's score on
  the human rating and the standardised properties (``statsmodels``, heteroscedasticity-robust HC3 errors, errors
  clustered by user when ``groups`` is given), one coefficient per property: the change in the judge's score per
  standard deviation of the property at equal human rating. A judge that reads only serendipity has zeros there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

#: Scores are rounded to this step before α: ``krippendorff`` builds a matrix over the distinct values, which for
#: continuous expected scores would hold millions of cells; on a 1–5 scale the rounding moves α by far less than its
#: sampling error (checked in the tests).
ALPHA_RESOLUTION = 0.05


def krippendorff_alpha(readings: pd.DataFrame, level: str = "interval",
                       resolution: float | None = ALPHA_RESOLUTION) -> float:
    """Krippendorff's α of the columns of ``readings`` (one row per answer, one column per reading; NaN = missing),
    with scores rounded to ``resolution`` (None: as given)."""
    import krippendorff

    data = readings.to_numpy(dtype=float).T
    if resolution:
        data = np.round(data / resolution) * resolution
    if data.shape[0] < 2:
        raise ValueError("Krippendorff's alpha needs at least two readings")
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))


def alpha_is_defined(readings: pd.DataFrame) -> bool:
    """Whether α has a value: the scores take at least two values, and some answer has at least two readings (with
    no score at all, as in a plan, or one value everywhere, α is undefined)."""
    values = readings.to_numpy(dtype=float)
    scored = values[~np.isnan(values)]
    return len(np.unique(scored)) > 1 and bool(((~np.isnan(values)).sum(axis=1) >= 2).any())


def reliability(readings: pd.DataFrame, n_boot: int = 500, seed: int = 0, level: str = "interval") -> dict:
    """α of ``readings`` with a percentile bootstrap 95% interval over answers (rows), and the number of answers
    every reading scored; α and its interval are NaN where α is undefined (:func:`alpha_is_defined`)."""
    complete = readings.dropna()
    alpha = krippendorff_alpha(readings, level) if alpha_is_defined(readings) else np.nan
    rng = np.random.default_rng(seed)
    boot = []
    values = readings.to_numpy(dtype=float)
    for _ in range(n_boot if alpha_is_defined(readings) else 0):
        rows = rng.integers(len(values), size=len(values))
        sample = pd.DataFrame(values[rows])
        if sample.nunique(dropna=True).max() > 1:
            boot.append(krippendorff_alpha(sample, level))
    low, high = (np.percentile(boot, [2.5, 97.5]) if boot else (np.nan, np.nan))
    return {"n_readings": readings.shape[1], "answers": len(readings), "answers_complete": len(complete),
            "alpha": alpha, "alpha_ci_low": float(low), "alpha_ci_high": float(high)}


#: The columns of ``reliability``'s record, and of ``reliability_table`` after its ``readings`` column.
RELIABILITY_COLUMNS = ("n_readings", "answers", "answers_complete", "alpha", "alpha_ci_low", "alpha_ci_high")
#: The columns of ``bias_table``.
BIAS_COLUMNS = ("judge", "term", "coefficient", "ci_low", "ci_high", "p_value", "n")


def reliability_table(reading_sets: Mapping[str, pd.DataFrame], n_boot: int = 500, seed: int = 0) -> pd.DataFrame:
    """One row per set of readings (its name in ``readings``): ``reliability`` of each; with no set (no judge scored
    anything: a plan, judges whose judgments all failed) a table with the same columns and no row."""
    return pd.DataFrame([{"readings": name, **reliability(readings, n_boot, seed)}
                         for name, readings in reading_sets.items()], columns=["readings", *RELIABILITY_COLUMNS])


def bias_table(frame: pd.DataFrame, judges: Sequence[str], properties: Mapping[str, str], human: str = "truth",
               groups: str | None = None) -> pd.DataFrame:
    """One row per (judge, property): the coefficient of the standardised property in an OLS regression of the
    judge's score on the human rating and every property, its 95% interval and p-value, and the number of answers.

    properties: column -> readable name. Rows with a missing judge score or property are left out per judge."""
    import statsmodels.api as sm

    rows = []
    columns = list(properties)
    for judge in judges:
        used = frame[[judge, human, *columns] + ([groups] if groups else [])].dropna()
        if len(used) <= len(columns) + 2:
            raise ValueError(f"judge {judge!r}: {len(used)} complete answers, too few for {len(columns)} properties")
        design = used[columns].astype(float)
        spread = design.std(ddof=0).replace(0.0, np.nan)
        if spread.isna().any():
            raise ValueError(f"judge {judge!r}: constant properties {list(spread.index[spread.isna()])}")
        design = (design - design.mean()) / spread
        design.insert(0, human, used[human].astype(float))
        model = sm.OLS(used[judge].astype(float), sm.add_constant(design))
        if groups:
            fitted = model.fit(cov_type="cluster", cov_kwds={"groups": pd.factorize(used[groups])[0]})
        else:
            fitted = model.fit(cov_type="HC3")
        intervals = fitted.conf_int(0.05)
        for column in [human, *columns]:
            rows.append({"judge": judge, "term": properties.get(column, "human rating"),
                         "coefficient": float(fitted.params[column]), "ci_low": float(intervals.loc[column, 0]),
                         "ci_high": float(intervals.loc[column, 1]), "p_value": float(fitted.pvalues[column]),
                         "n": int(fitted.nobs)})
    return pd.DataFrame(rows, columns=list(BIAS_COLUMNS))
