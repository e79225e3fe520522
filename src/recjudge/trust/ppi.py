"""Prediction-powered inference: what a judge's scores add to a few human labels (Angelopoulos et al., Science 2023).

A population mean (the mean serendipity rating, or the share of serendipitous answers) is estimated from ``n`` human
labels and the judge's scores of ``N`` further answers nobody labelled. PPI++ (Angelopoulos, Duchi and Zrnic 2023)
weights the judge by a power-tuning factor λ estimated from the data, so its interval is asymptotically never
wider than the human-only (classical) one: a useless judge gets λ ≈ 0. Every estimate here is ``ppi-python``'s; this
module only draws the labelled samples, collects intervals and turns widths into labels saved.

Finite population. When the ``n`` labels are drawn without replacement from ``N`` answers and the estimand is the mean
of those ``N`` (the full-data value a complete user study would report), ``ppi-python``'s intervals, made for an
infinite population, are too wide once ``n`` is a large share of ``N``. With ``finite_population=True`` the interval
is design-based (Cochran, *Sampling Techniques*, 1977, §2.5 and §7.2): the human-only variance is
``(1 − n/N) s²/n``, and PPI++ with the judge's scores of all ``N`` answers is the survey difference estimator
``mean over labelled of Z + const`` with ``Z = Y − λ (N/(N−n)) Ŷ``, so its variance is ``(1 − n/N) s_Z²/n``. The
power-tuning λ is ``ppi-python``'s: its optimum ``cov/((1 + n/(N−n)) var)`` is also the finite-population one.

The worth of a judge in human labels: a human-only interval of the same width needs ``n × (w_classical / w_ppi)²``
labels, since widths shrink as 1/√n (in a finite population widths shrink as √(1/n − 1/N), and the count follows
from that). With many unlabelled answers and the optimal λ the variance of PPI++ is ``(1 − ρ²)`` times the classical
one (ρ: the correlation of judge and human scores), so a judge is worth ``n / (1 − ρ²)`` labels: the ρ² rule of
:func:`labels_worth_by_correlation`.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats


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


def _z_interval(estimate: float, standard_error: float, alpha: float) -> Interval:
    # A labelled sample with no variance (all zeros, say) has a standard error of 0 and so a zero-width interval;
    # scipy's normal distribution with scale 0 would return NaN, and a NaN width drops out of a mean width while a
    # NaN interval counts as a miss.
    if standard_error == 0:
        return Interval(float(estimate), float(estimate), float(estimate))
    low, high = stats.norm.interval(1 - alpha, loc=estimate, scale=standard_error)
    return Interval(float(estimate), float(low), float(high))


def power_tuning(human: Sequence[float], judge_labelled: Sequence[float], judge_unlabelled: Sequence[float]) -> float:
    """``ppi-python``'s power-tuning factor λ (in [0, 1]) for the mean, the one ``ppi_mean_ci`` uses."""
    from ppi_py.ppi import _calc_lam_glm

    y, yhat, yhat_unlabelled = _arrays(human, judge_labelled, judge_unlabelled)
    if np.ptp(y) == 0:
        # Labels with no variance have no covariance with the judge: λ is 0 (ppi-python's rounding gives ~1e-17,
        # enough to make a degenerate sample's PPI++ interval 1e-33 wide where the human-only one is exactly 0).
        return 0.0
    centre = yhat_unlabelled.mean() + (y - yhat).mean()
    return float(_calc_lam_glm(y - centre, yhat - centre, yhat_unlabelled - centre, np.eye(1), clip=True))


def ppi_mean(human: Sequence[float], judge_labelled: Sequence[float], judge_unlabelled: Sequence[float],
             alpha: float = 0.05, finite_population: bool = False, lam: float | None = None) -> Interval:
    """PPI++ (power-tuned) estimate and (1 − alpha) interval of the mean of ``human``'s population.

    finite_population: the labelled and unlabelled answers are the whole population (labels drawn without
    replacement) and the estimand is its mean: the design-based interval of the module's note. lam: a fixed λ
    (None: power-tuned)."""
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

    y, yhat, yhat_unlabelled = _arrays(human, judge_labelled, judge_unlabelled)
    if len(y) != len(yhat):
        raise ValueError(f"{len(y)} human labels but {len(yhat)} judge scores of the labelled answers")
    if lam is None:
        lam = power_tuning(y, yhat, yhat_unlabelled)
    estimate = float(np.ravel(ppi_mean_pointestimate(y, yhat, yhat_unlabelled, lam=lam))[0])
    if not finite_population:
        low, high = ppi_mean_ci(y, yhat, yhat_unlabelled, alpha=alpha, lam=lam)
        return Interval(estimate, float(np.ravel(low)[0]), float(np.ravel(high)[0]))
    n, size = len(y), len(y) + len(yhat_unlabelled)
    difference = y - lam * size / len(yhat_unlabelled) * yhat
    return _z_interval(estimate, np.sqrt((1 - n / size) * difference.var(ddof=1) / n), alpha)


def classical_mean(human: Sequence[float], alpha: float = 0.05, population_size: int | None = None) -> Interval:
    """The human-only interval (central limit theorem) of the same mean; with ``population_size`` N the labels are a
    sample without replacement from N answers and the interval has the finite-population correction."""
    from ppi_py import classical_mean_ci

    (y,) = _arrays(human)
    if population_size is None:
        low, high = classical_mean_ci(y, alpha=alpha)
        return Interval(float(y.mean()), float(np.ravel(low)[0]), float(np.ravel(high)[0]))
    if not len(y) <= population_size:
        raise ValueError(f"{len(y)} labels cannot be a sample of {population_size} answers")
    return _z_interval(y.mean(), np.sqrt((1 - len(y) / population_size) * y.var(ddof=1) / len(y)), alpha)


def labels_worth(n: int, classical_width: float, ppi_width: float, population_size: int | None = None) -> float:
    """How many human labels alone give an interval as narrow as PPI's with ``n`` labels (widths ∝ 1/√n, or with
    ``population_size`` N, widths ∝ √(1/n − 1/N)). Two zero widths (every draw degenerate) mean the judge adds
    nothing: ``n``."""
    if classical_width == 0 and ppi_width == 0:
        return float(n)
    if population_size is None:
        return float(n * (classical_width / ppi_width) ** 2)
    return float(1.0 / ((ppi_width / classical_width) ** 2 * (1 / n - 1 / population_size) + 1 / population_size))


def labels_worth_by_correlation(n: int, correlation: float, population_size: int | None = None) -> float:
    """The ρ² rule: with many unlabelled answers and the optimal λ, ``n`` labels plus the judge are worth
    ``n / (1 − ρ²)`` labels alone (with ``population_size`` N: the labels whose finite-population variance is
    (1 − ρ²) times that of ``n``)."""
    return labels_worth(n, 1.0, float(np.sqrt(1.0 - correlation ** 2)), population_size)


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
                   alpha: float = 0.05, seed: int | Sequence[int] = 0, group: Sequence[float] | None = None,
                   finite_population: bool = True) -> pd.DataFrame:
    """Repeatedly label ``n`` answers drawn at random (without replacement) from the population, treat the rest as
    unlabelled, and compare PPI++ with the human-only interval.

    The estimand is the mean of ``human``, or with ``group`` (0/1 per answer) the difference in mean between group 1
    and group 0. One row per (n, draw, method): estimate, low, high, width, and ``covers`` (the interval holds the
    full-data value, the one a complete user study would report), with the population size, the nominal coverage and
    whether the intervals have the finite-population correction (means only: ``ppi-python``'s regression intervals
    of a difference have none). ``degenerate``: the draw's human labels are all equal (s = 0), the same for both
    methods; such a draw has zero-width intervals, not NaN ones."""
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
    corrected = finite_population and group is None
    rng = np.random.default_rng(seed)
    rows = []
    for n in sizes:
        if not 2 <= n < len(y):
            raise ValueError(f"a labelled sample of {n} from {len(y)} answers leaves nothing to estimate with")
        for draw in range(draws):
            labelled = np.zeros(len(y), dtype=bool)
            labelled[rng.choice(len(y), size=n, replace=False)] = True
            if group is None:
                intervals = (("PPI++", ppi_mean(y[labelled], yhat[labelled], yhat[~labelled], alpha,
                                                finite_population=corrected)),
                             ("human only", classical_mean(y[labelled], alpha, len(y) if corrected else None)))
            else:
                intervals = (("PPI++", ppi_difference(y[labelled], yhat[labelled], g[labelled], yhat[~labelled],
                                                      g[~labelled], alpha)),
                             ("human only", classical_difference(y[labelled], g[labelled], alpha)))
            degenerate = bool(np.ptp(y[labelled]) == 0)
            for method, interval in intervals:
                rows.append({"n": n, "draw": draw, "method": method, "estimate": interval.estimate,
                             "low": interval.low, "high": interval.high, "width": interval.width,
                             "covers": interval.low <= truth <= interval.high, "degenerate": degenerate})
    table = pd.DataFrame(rows)
    return table.assign(population=len(y), nominal=1 - alpha, finite_population=corrected)


def against_nominal(mc_low: float, mc_high: float, nominal: float) -> str:
    """Where a simulated coverage stands against the nominal level: "short of nominal" when the nominal level lies
    above the Monte Carlo interval of the coverage, "above nominal" when below it, else "consistent with nominal"."""
    if nominal > mc_high:
        return "short of nominal"
    if nominal < mc_low:
        return "above nominal"
    return "consistent with nominal"


def chance_short_of_nominal(draws: int, nominal: float, mc_alpha: float = 0.05) -> float:
    """The probability that a method whose true coverage is exactly ``nominal`` is judged "short of nominal" over
    ``draws`` draws (the binomial chance that the Wilson interval of its coverage lies below nominal): the share of
    cells that fall short by chance alone."""
    from statsmodels.stats.proportion import proportion_confint

    covered = np.arange(draws + 1)
    _, high = proportion_confint(covered, draws, alpha=mc_alpha, method="wilson")
    return float(stats.binom.pmf(covered[np.asarray(high) < nominal], draws, nominal).sum())


METHOD_COLUMNS = {"human only": "human_only", "PPI++": "ppi"}


def summarise_draws(draws: pd.DataFrame, mc_alpha: float = 0.05) -> pd.DataFrame:
    """Per n: mean width and coverage of each method, the coverage's Monte Carlo (1 − mc_alpha) Wilson interval
    over the draws and where it stands against the nominal level (``against_nominal``), and the labels PPI++ is
    worth (from the mean widths) with its Monte Carlo interval (``labels_worth_mc_low``/``_high``), and
    ``degenerate_draws``: how many draws' human labels were all equal.

    Both methods are read over the same draws: a draw whose interval is not finite for either method (a regression
    interval of a difference on a sample with one group, say) leaves both mean widths, and counts as a miss for
    both."""
    from statsmodels.stats.proportion import proportion_confint

    population, nominal = int(draws["population"].iloc[0]), float(draws["nominal"].iloc[0])
    corrected = bool(draws["finite_population"].iloc[0])
    finite = draws.assign(finite=np.isfinite(draws["width"])).groupby(["n", "draw"])["finite"].transform("all")
    draws = draws.assign(width=draws["width"].where(finite), covers=draws["covers"] & finite)
    grouped = draws.groupby(["n", "method"]).agg(width=("width", "mean"), covered=("covers", "sum"),
                                                 draws=("covers", "size"))
    table = pd.DataFrame({"n": grouped.index.get_level_values("n").unique()})
    for method, suffix in METHOD_COLUMNS.items():
        part = grouped.xs(method, level="method").reindex(table["n"])
        low, high = proportion_confint(part["covered"], part["draws"], alpha=mc_alpha, method="wilson")
        table[f"width_{suffix}"] = part["width"].to_numpy()
        table[f"coverage_{suffix}"] = (part["covered"] / part["draws"]).to_numpy()
        table[f"coverage_{suffix}_mc_low"] = np.asarray(low, dtype=float)
        table[f"coverage_{suffix}_mc_high"] = np.asarray(high, dtype=float)
        table[f"coverage_{suffix}_against_nominal"] = [against_nominal(lo, hi, nominal) for lo, hi in
                                                       zip(table[f"coverage_{suffix}_mc_low"],
                                                           table[f"coverage_{suffix}_mc_high"])]
    table["draws"] = grouped.xs("PPI++", level="method")["draws"].reindex(table["n"]).to_numpy()
    degenerate = draws[draws["method"] == "PPI++"].groupby("n")["degenerate"].sum()
    table["degenerate_draws"] = degenerate.reindex(table["n"]).astype(int).to_numpy()
    table["nominal"] = nominal
    table["finite_population"] = corrected
    table["labels_worth"] = [labels_worth(n, c, p, population if corrected else None) for n, c, p in
                             zip(table["n"], table["width_human_only"], table["width_ppi"])]
    bounds = [_worth_mc_interval(draws[draws["n"] == n], n, population if corrected else None, mc_alpha)
              for n in table["n"]]
    table["labels_worth_mc_low"] = [low for low, _ in bounds]
    table["labels_worth_mc_high"] = [high for _, high in bounds]
    return table


def _worth_mc_interval(draws: pd.DataFrame, n: int, population_size: int | None,
                       mc_alpha: float) -> tuple[float, float]:
    """The Monte Carlo (1 − mc_alpha) interval of the labels PPI++ is worth at ``n``: the delta-method interval of the
    ratio of the mean widths over the draws (each draw pairs the two methods' widths), carried through
    :func:`labels_worth`. A judge whose interval holds ``n`` saves no label the simulation can tell apart from
    noise (a judge with ρ = 0 is worth about n, give or take this interval)."""
    wide = draws.pivot(index="draw", columns="method", values="width").dropna()
    classical, powered = wide["human only"].to_numpy(), wide["PPI++"].to_numpy()
    if len(wide) < 2 or classical.mean() == 0:
        return np.nan, np.nan
    ratio = powered.mean() / classical.mean()
    error = np.std(powered - ratio * classical, ddof=1) / (np.sqrt(len(wide)) * classical.mean())
    z = stats.norm.ppf(1 - mc_alpha / 2)
    low_ratio, high_ratio = ratio - z * error, ratio + z * error
    high = (np.inf if population_size is None else float(population_size)) if low_ratio <= 0 else \
        labels_worth(n, 1.0, low_ratio, population_size)
    return labels_worth(n, 1.0, high_ratio, population_size), high


def judge_seed(seed: int, *names: str | None) -> list[int]:
    """A seed of its own for each judge (and estimand): the base seed and a checksum of the names, so that judges
    draw independent labelled samples, reproducibly, and a judge's draws do not depend on which other judges run."""
    return [seed, zlib.crc32("\x1f".join(str(name) for name in names).encode())]


def worth_table(frame: pd.DataFrame, judges: Sequence[str], human: str, sizes: Sequence[int], draws: int = 200,
                alpha: float = 0.05, seed: int = 0, group: str | None = None,
                finite_population: bool = True) -> pd.DataFrame:
    """Per judge and n: PPI++ against human-only intervals over ``draws`` random labelled samples of the rows the
    judge scored (``summarise_draws``; each judge and estimand its own draws, ``judge_seed``), with the judge's
    Pearson correlation there and the labels the ρ² rule predicts. Sizes that leave fewer unlabelled answers than
    labelled ones are skipped for that judge."""
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
        table = summarise_draws(simulate_draws(y, yhat, usable, draws, alpha, judge_seed(seed, judge, human, group),
                                               group=g, finite_population=finite_population))
        rho = float(np.corrcoef(y, yhat)[0, 1]) if np.ptp(yhat) > 0 else 0.0
        table.insert(0, "judge", judge)
        table.insert(1, "population", len(rows))
        table["pearson"] = rho
        table["labels_worth_by_rho2"] = [
            labels_worth_by_correlation(n, rho, len(rows) if corrected else None)
            for n, corrected in zip(table["n"], table["finite_population"])]
        tables.append(table)
    return pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=worth_columns())


def worth_columns() -> list[str]:
    """The columns of ``worth_table``, which a table with no row (no judge scored enough answers: a plan, a judge
    whose judgments all failed) has too, so that a page selecting them shows an empty table instead of failing."""
    per_method = [f"{kind}_{suffix}{end}" for suffix in METHOD_COLUMNS.values()
                  for kind, end in (("width", ""), ("coverage", ""), ("coverage", "_mc_low"), ("coverage", "_mc_high"),
                                    ("coverage", "_against_nominal"))]
    return ["judge", "population", "n", *per_method, "draws", "degenerate_draws", "nominal", "finite_population",
            "labels_worth", "labels_worth_mc_low", "labels_worth_mc_high", "pearson", "labels_worth_by_rho2"]
