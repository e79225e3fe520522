"""Prediction-powered inference: what a judge's scores add to a few human labels (Angelopoulos et al., Science 2023).

A population mean (the mean serendipity rating, or the share of serendipitous answers) is estimated from ``n`` human
labels and the judge's scores of ``N`` further answers nobody labelled. PPI++ (Angelopoulos, Duchi and Zrnic 2023)
weights the judge by a power-tuning factor λ estimated from the data, so its interval is asymptotically never
wider than the human-only (classical) one: a useless judge gets λ ≈ 0. Every estimate here is ``ppi-python``'s; this
module only draws the labelled samples, collects intervals and turns widths into labels saved.

The worth of a judge in human labels: a human-only interval of the same width needs ``n × (w_classical / w_ppi)²``
labels, since widths shrink as 1/√n. With many unlabelled answers and the optimal λ the variance of PPI++ is
``(1 − ρ²)`` times the classical one (ρ: the correlation of judge and human scores), so a judge is worth
``n / (1 − ρ²)`` labels: the ρ² rule of :func:`labels_worth_by_correlation`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float

    @property
    def width(self) -> float:
        return self.high - self.low


def _arrays(*values) -> list[np.ndarray]:
    arrays = [np.asarray(v, dtype=float) for v in values]
    for array in arrays:
        if array.ndim != 1 or not np.isfinite(array).all():
            raise ValueError("labels and scores must be one-dimensional and finite (drop unjudged answers first)")
    return arrays


def ppi_mean(human: Sequence[float], judge_labelled: Sequence[float], judge_unlabelled: Sequence[float],
             alpha: float = 0.05) -> Interval:
    """PPI++ (power-tuned) estimate and (1 − alpha) interval of the mean of ``human``'s population."""
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

    y, yhat, yhat_unlabelled = _arrays(human, judge_labelled, judge_unlabelled)
    if len(y) != len(yhat):
        raise ValueError(f"{len(y)} human labels but {len(yhat)} judge scores of the labelled answers")
    low, high = ppi_mean_ci(y, yhat, yhat_unlabelled, alpha=alpha)
    estimate = ppi_mean_pointestimate(y, yhat, yhat_unlabelled)
    return Interval(float(np.ravel(estimate)[0]), float(np.ravel(low)[0]), float(np.ravel(high)[0]))


def classical_mean(human: Sequence[float], alpha: float = 0.05) -> Interval:
    """The human-only interval (central limit theorem) of the same mean."""
    from ppi_py import classical_mean_ci

    (y,) = _arrays(human)
    low, high = classical_mean_ci(y, alpha=alpha)
    return Interval(float(y.mean()), float(np.ravel(low)[0]), float(np.ravel(high)[0]))


def labels_worth(n: int, classical_width: float, ppi_width: float) -> float:
    """How many human labels alone give an interval as narrow as PPI's with ``n`` labels (widths ∝ 1/√n)."""
    return float(n * (classical_width / ppi_width) ** 2)


def labels_worth_by_correlation(n: int, correlation: float) -> float:
    """The ρ² rule: with many unlabelled answers and the optimal λ, ``n`` labels plus the judge are worth
    ``n / (1 − ρ²)`` labels alone."""
    return float(n / (1.0 - correlation ** 2))


def _design(group: np.ndarray) -> np.ndarray:
    return np.column_stack([np.ones(len(group)), group])


def ppi_difference(human: Sequence[float], judge_labelled: Sequence[float], group_labelled: Sequence[float],
                   judge_unlabelled: Sequence[float], group_unlabelled: Sequence[float],
                   alpha: float = 0.05) -> Interval:
    """PPI++ estimate and interval of the difference in means between the answers of group 1 and group 0: the slope
    of a least-squares regression of the human label on the group indicator (``ppi_py.ppi_ols_ci``, power-tuned for
    that coefficient)."""
    from ppi_py import ppi_ols_ci, ppi_ols_pointestimate

    y, yhat, g, yhat_u, g_u = _arrays(human, judge_labelled, group_labelled, judge_unlabelled, group_unlabelled)
    if not (len(y) == len(yhat) == len(g)) or len(yhat_u) != len(g_u):
        raise ValueError("each answer needs a human label (labelled only), a judge score and a group")
    x, x_u = _design(g), _design(g_u)
    low, high = ppi_ols_ci(x, y, yhat, x_u, yhat_u, alpha=alpha, coord=1)
    estimate = ppi_ols_pointestimate(x, y, yhat, x_u, yhat_u, coord=1)
    return Interval(float(np.ravel(estimate)[1]), float(np.ravel(low)[1]), float(np.ravel(high)[1]))


def classical_difference(human: Sequence[float], group: Sequence[float], alpha: float = 0.05) -> Interval:
    """The human-only interval of the same difference (``ppi_py.classical_ols_ci``)."""
    from ppi_py import classical_ols_ci

    y, g = _arrays(human, group)
    x = _design(g)
    low, high = classical_ols_ci(x, y, alpha=alpha)
    estimate = float(y[g == 1].mean() - y[g == 0].mean())
    return Interval(estimate, float(np.ravel(low)[1]), float(np.ravel(high)[1]))


def simulate_draws(human: Sequence[float], judge: Sequence[float], sizes: Sequence[int], draws: int = 200,
                   alpha: float = 0.05, seed: int = 0, group: Sequence[float] | None = None) -> pd.DataFrame:
    """Repeatedly label ``n`` answers drawn at random (without replacement) from the population, treat the rest as
    unlabelled, and compare PPI++ with the human-only interval.

    The estimand is the mean of ``human``, or with ``group`` (0/1 per answer) the difference in mean between group 1
    and group 0. One row per (n, draw, method): estimate, low, high, width, and ``covers`` (the interval holds the
    full-data value, the one a complete user study would report)."""
    y, yhat = _arrays(human, judge)
    if len(y) != len(yhat):
        raise ValueError(f"{len(y)} human labels but {len(yhat)} judge scores")
    if group is None:
        truth = float(y.mean())
    else:
        (g,) = _arrays(group)
        if len(g) != len(y) or not np.isin(g, (0.0, 1.0)).all():
            raise ValueError("group must hold 0 or 1 for every answer")
        truth = float(y[g == 1].mean() - y[g == 0].mean())
    rng = np.random.default_rng(seed)
    rows = []
    for n in sizes:
        if not 2 <= n < len(y):
            raise ValueError(f"a labelled sample of {n} from {len(y)} answers leaves nothing to estimate with")
        for draw in range(draws):
            labelled = np.zeros(len(y), dtype=bool)
            labelled[rng.choice(len(y), size=n, replace=False)] = True
            if group is None:
                intervals = (("PPI++", ppi_mean(y[labelled], yhat[labelled], yhat[~labelled], alpha)),
                             ("human only", classical_mean(y[labelled], alpha)))
            else:
                intervals = (("PPI++", ppi_difference(y[labelled], yhat[labelled], g[labelled], yhat[~labelled],
                                                      g[~labelled], alpha)),
                             ("human only", classical_difference(y[labelled], g[labelled], alpha)))
            for method, interval in intervals:
                rows.append({"n": n, "draw": draw, "method": method, "estimate": interval.estimate,
                             "low": interval.low, "high": interval.high, "width": interval.width,
                             "covers": interval.low <= truth <= interval.high})
    return pd.DataFrame(rows)


def summarise_draws(draws: pd.DataFrame) -> pd.DataFrame:
    """Per n: mean width and coverage of each method, and the labels PPI++ is worth (from the mean widths)."""
    wide = draws.groupby(["n", "method"]).agg(width=("width", "mean"), coverage=("covers", "mean")).unstack("method")
    table = pd.DataFrame({"n": wide.index,
                          "width_human_only": wide[("width", "human only")].to_numpy(),
                          "width_ppi": wide[("width", "PPI++")].to_numpy(),
                          "coverage_human_only": wide[("coverage", "human only")].to_numpy(),
                          "coverage_ppi": wide[("coverage", "PPI++")].to_numpy()})
    table["labels_worth"] = [labels_worth(n, c, p) for n, c, p in
                             zip(table["n"], table["width_human_only"], table["width_ppi"])]
    return table


def worth_table(frame: pd.DataFrame, judges: Sequence[str], human: str, sizes: Sequence[int], draws: int = 200,
                alpha: float = 0.05, seed: int = 0, group: str | None = None) -> pd.DataFrame:
    """Per judge and n: PPI++ against human-only intervals over ``draws`` random labelled samples of the rows the
    judge scored (``summarise_draws``), with the judge's Pearson correlation there and the labels the ρ² rule
    predicts. Sizes that leave fewer unlabelled answers than labelled ones are skipped for that judge."""
    tables = []
    for judge in judges:
        rows = frame[frame[judge].notna() & frame[human].notna()]
        if group is not None:
            rows = rows[rows[group].notna()]
        usable = [n for n in sizes if 2 * n <= len(rows)]
        if not usable:
            continue
        y, yhat = rows[human].to_numpy(dtype=float), rows[judge].to_numpy(dtype=float)
        g = None if group is None else rows[group].to_numpy(dtype=float)
        table = summarise_draws(simulate_draws(y, yhat, usable, draws, alpha, seed, group=g))
        rho = float(np.corrcoef(y, yhat)[0, 1]) if np.ptp(yhat) > 0 else 0.0
        table.insert(0, "judge", judge)
        table.insert(1, "population", len(rows))
        table["pearson"] = rho
        table["labels_worth_by_rho2"] = [labels_worth_by_correlation(n, rho) for n in table["n"]]
        tables.append(table)
    return pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()
