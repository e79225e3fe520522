"""Meta-evaluation: how well do an evaluator's scores agree with the scores users gave?

Four building blocks, shared by every research question of the compendium:

- :func:`rescale_to_likert` puts raw metric outputs on the users' 1–5 Likert scale (Kang et al. 2025, eq. 6);
- :func:`agreement` gives Pearson's r with its p-value, MAE and RMSE (the three metrics of Kang et al. 2025);
- :func:`bootstrap_ci` gives a seeded, paired bootstrap confidence interval for any of those statistics (resampling
  users rather than answers when the answers cluster by user), and
  :func:`compare_dependent_correlations` tests whether two evaluators correlate differently with the same truth;
- :func:`multilevel_correlation` is the three-level meta-evaluation of Zhang et al. 2024 (dataset, user, pair level)
  with Pearson, Spearman and Kendall, reporting how many groups had an undefined correlation and were left out.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats

__all__ = [
    "CALLED_SERENDIPITOUS",
    "CORRELATION_METHODS",
    "agreement",
    "bootstrap_ci",
    "compare_dependent_correlations",
    "correlation",
    "multilevel_correlation",
    "ranking_auc",
    "RankingAUCStatistic",
    "ranking_auc_statistic",
    "rescale_to_likert",
]

CORRELATION_METHODS = ("pearson", "spearman", "kendall")
LEVELS = ("dataset", "user", "pair")


# --------------------------------------------------------------------------------------------------------------------
# Rescaling
# --------------------------------------------------------------------------------------------------------------------
def rescale_to_likert(
    values: Sequence[float] | np.ndarray | pd.Series,
    low: float = 1,
    high: float = 5,
    *,
    round_result: bool = True,
    constant: Literal["midpoint", "raise"] = "midpoint",
) -> np.ndarray | pd.Series:
    """Min-max rescale raw evaluator outputs onto a Likert scale (Kang et al. 2025, eq. 6).

    ``score = round((output - min_output) / (max_output - min_output) * (high - low) + low)``, where the minimum and
    maximum are taken over the *given* values (NaN ignored and kept as NaN). With the defaults this is exactly eq. 6:
    ``round(... * 4 + 1)``. Rounding uses :func:`numpy.rint` (halves go to the even integer, like Python's
    ``round``); pass ``round_result=False`` to keep the continuous rescaled value.

    Constant input (every non-NaN value equal, including a single value): the min-max ratio is 0/0 and eq. 6 is
    undefined. A constant metric carries no information about which items are better, so by default every value is
    mapped to the scale's midpoint ``(low + high) / 2`` (3 on a 1–5 scale) and a :class:`RuntimeWarning` is emitted;
    ``constant="raise"`` raises :class:`ValueError` instead. All-NaN input is returned unchanged.

    A :class:`pandas.Series` input returns a Series with the same index and name; anything else returns an ndarray.
    """
    if not high > low:
        raise ValueError(f"rescale_to_likert: high ({high}) must be greater than low ({low})")
    is_series = isinstance(values, pd.Series)
    raw = np.asarray(values.to_numpy() if is_series else values, dtype=float)
    out = np.full(raw.shape, np.nan)
    finite = ~np.isnan(raw)
    if finite.any():
        lo, hi = np.min(raw[finite]), np.max(raw[finite])
        if hi == lo:
            if constant == "raise":
                raise ValueError("rescale_to_likert: all values are equal, so the min-max rescaling is undefined")
            warnings.warn(
                "rescale_to_likert: all values are equal; mapping them to the scale midpoint", RuntimeWarning,
                stacklevel=2,
            )
            out[finite] = (low + high) / 2
        else:
            out[finite] = (raw[finite] - lo) / (hi - lo) * (high - low) + low
            if round_result:
                out[finite] = np.rint(out[finite])
    if is_series:
        return pd.Series(out, index=values.index, name=values.name)
    return out


# --------------------------------------------------------------------------------------------------------------------
# Agreement between one evaluator and the truth
# --------------------------------------------------------------------------------------------------------------------
def _paired_finite(pred, true) -> tuple[np.ndarray, np.ndarray]:
    """Aligned float arrays with every pair holding a NaN in either member dropped."""
    p = np.asarray(pred, dtype=float).ravel()
    t = np.asarray(true, dtype=float).ravel()
    if p.shape != t.shape:
        raise ValueError(f"pred and true must have the same length, got {p.size} and {t.size}")
    keep = ~(np.isnan(p) | np.isnan(t))
    return p[keep], t[keep]


def _is_constant(x: np.ndarray) -> bool:
    return x.size == 0 or bool(np.all(x == x[0]))


def correlation(pred, true, method: str = "pearson") -> float:
    """Correlation coefficient (``pearson``, ``spearman`` or Kendall's tau-b ``kendall``) of the NaN-free pairs.

    Returns NaN (silently) when it is undefined: fewer than two pairs, or either side constant.
    """
    p, t = _paired_finite(pred, true)
    return _correlation_clean(p, t, method)


def _correlation_clean(p: np.ndarray, t: np.ndarray, method: str) -> float:
    if method not in CORRELATION_METHODS:
        raise ValueError(f"unknown correlation method {method!r}; expected one of {CORRELATION_METHODS}")
    if p.size < 2 or _is_constant(p) or _is_constant(t):
        return float("nan")
    if method == "pearson":
        return float(stats.pearsonr(p, t).statistic)
    if method == "spearman":
        return float(stats.spearmanr(p, t).statistic)
    return float(stats.kendalltau(p, t).statistic)


def agreement(pred, true) -> dict[str, float | int]:
    """Pearson r with its two-sided p-value, MAE and RMSE between an evaluator's scores and the truth.

    Pairs where either value is NaN are dropped; ``n`` is the number of pairs used. Pearson r and p are NaN when
    undefined (fewer than 3 pairs for a p-value, fewer than 2 for r, or a constant side); MAE/RMSE are NaN only
    when no pair is left. Scores should be on the same scale as the truth for MAE/RMSE to be meaningful (see
    :func:`rescale_to_likert`).
    """
    p, t = _paired_finite(pred, true)
    n = int(p.size)
    r = pval = float("nan")
    if n >= 2 and not (_is_constant(p) or _is_constant(t)):
        if n == 2:
            r = float(np.sign((p[1] - p[0]) * (t[1] - t[0])))
        else:
            res = stats.pearsonr(p, t)
            r, pval = float(res.statistic), float(res.pvalue)
    err = p - t
    mae = float(np.mean(np.abs(err))) if n else float("nan")
    rmse = float(np.sqrt(np.mean(err**2))) if n else float("nan")
    return {"pearson_r": r, "pearson_p": pval, "mae": mae, "rmse": rmse, "n": n}


# --------------------------------------------------------------------------------------------------------------------
# Bootstrap confidence intervals
# --------------------------------------------------------------------------------------------------------------------
def _pearson_vectorised(p: np.ndarray, t: np.ndarray, axis: int = -1) -> np.ndarray:
    pc = p - p.mean(axis=axis, keepdims=True)
    tc = t - t.mean(axis=axis, keepdims=True)
    num = (pc * tc).sum(axis=axis)
    den = np.sqrt((pc**2).sum(axis=axis) * (tc**2).sum(axis=axis))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def agreement_pct(pred, true) -> dict[str, float | int]:
    """Pearson (%), MAE, RMSE and n of one evaluator against the truth (:func:`agreement` with r in percent), the
    metric the chapters select cells by."""
    result = agreement(pred, true)
    return {"pearson_pct": 100 * result["pearson_r"], "mae": result["mae"], "rmse": result["rmse"], "n": result["n"]}


def _mae_vectorised(p: np.ndarray, t: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.abs(p - t).mean(axis=axis)


def _rmse_vectorised(p: np.ndarray, t: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.sqrt(((p - t) ** 2).mean(axis=axis))


_VECTORISED_STATISTICS: dict[str, Callable[..., np.ndarray]] = {
    "pearson": _pearson_vectorised,
    "mae": _mae_vectorised,
    "rmse": _rmse_vectorised,
}
STATISTICS = ("pearson", "spearman", "kendall", "mae", "rmse")

#: A rating at or above this level is one the user called serendipitous (4 or 5 on the 1–5 scale): what a judge used
#: to rank items should put first.
CALLED_SERENDIPITOUS = 4.0


def ranking_auc(pred, true, threshold: float = CALLED_SERENDIPITOUS) -> float:
    """How well a judge's scores rank the answers users rated at least ``threshold`` above the others: the area
    under the ROC curve (scikit-learn's ``roc_auc_score``), the chance that a random answer of the first kind scores
    higher than one of the second (ties count half). A constant answer and Random are 0.5. NaN when either kind is
    absent or the scores hold a NaN pair only."""
    from sklearn.metrics import roc_auc_score

    p, t = _paired_finite(pred, true)
    positive = t >= threshold
    if positive.all() or not positive.any():
        return float("nan")
    return float(roc_auc_score(positive, p))


class RankingAUCStatistic:
    """:func:`ranking_auc` at ``threshold`` as a statistic for :func:`bootstrap_ci`: ``auc(pred, true)``, and
    ``auc.weighted(pred, true, weights)`` for many resamples at once, which a cluster bootstrap uses (a resample of
    whole groups is each pair counted as often as its group was drawn)."""

    __name__ = "auc"

    def __init__(self, threshold: float = CALLED_SERENDIPITOUS):
        self.threshold = threshold

    def __call__(self, pred: np.ndarray, true: np.ndarray) -> float:
        return ranking_auc(pred, true, self.threshold)

    def weighted(self, pred: np.ndarray, true: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """The AUC of each row of ``weights`` (whole counts, one per pair of ``pred``/``true``, which hold no NaN):
        the pairs counted that often, ties half a point, as :func:`ranking_auc` scores the pairs repeated; NaN where
        a row counts no answer of one kind. Sums of whole counts are exact in floating point, so the value is the
        exact fraction, rounded once."""
        order = np.argsort(pred, kind="stable")
        scores, positive = np.asarray(pred)[order], np.asarray(true)[order] >= self.threshold
        weights = np.asarray(weights, dtype=float)[:, order]
        starts = np.flatnonzero(np.r_[True, scores[1:] != scores[:-1]])  # where each level of tied scores begins
        negatives_up_to = np.cumsum(weights * ~positive, axis=1)
        ends = np.r_[starts[1:], scores.size] - 1
        negatives_below = np.where(starts > 0, negatives_up_to[:, np.maximum(starts - 1, 0)], 0.0)
        negatives_tied = negatives_up_to[:, ends] - negatives_below
        positives_at = np.add.reduceat(weights * positive, starts, axis=1)
        pairs = positives_at.sum(axis=1) * negatives_up_to[:, -1]
        with np.errstate(invalid="ignore", divide="ignore"):
            return (positives_at * (negatives_below + negatives_tied / 2)).sum(axis=1) / pairs


def ranking_auc_statistic(threshold: float = CALLED_SERENDIPITOUS) -> RankingAUCStatistic:
    """:func:`ranking_auc` at ``threshold`` as a statistic for :func:`bootstrap_ci` (:class:`RankingAUCStatistic`)."""
    return RankingAUCStatistic(threshold)


def bootstrap_ci(
    pred,
    true,
    statistic: str | Callable[[np.ndarray, np.ndarray], float] = "pearson",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    *,
    method: Literal["BCa", "percentile", "basic"] = "BCa",
    groups=None,
) -> dict[str, float | int | str]:
    """Seeded paired bootstrap confidence interval of ``statistic(pred, true)``.

    ``groups`` (one label per pair, e.g. the user who gave the answer): answers of one user are not independent, so
    the bootstrap resamples whole groups with replacement (a cluster bootstrap: scipy resamples the group labels and
    the statistic is computed on every pair of the groups drawn); ``n_groups`` says how many there were.

    ``statistic`` is one of ``"pearson"``, ``"spearman"``, ``"kendall"``, ``"mae"``, ``"rmse"`` or a callable
    ``f(pred, true) -> float``. Pairs holding a NaN are dropped first. Resampling is of (pred, true) *pairs*
    (:func:`scipy.stats.bootstrap` with ``paired=True``), ``n_boot`` resamples drawn from
    ``numpy.random.default_rng(seed)``, so the same call always returns the same interval. The default interval
    is the bias-corrected and accelerated (BCa) one; ``method="percentile"`` gives the plain percentile interval.

    Returns a dict: ``estimate`` (statistic on the full data), ``ci_low``, ``ci_high``, ``standard_error`` (sd of
    the bootstrap distribution), ``level``, ``n`` (pairs used), ``n_boot``, ``method``. The interval is NaN when
    the statistic is undefined on the data (e.g. a constant side) or fewer than 3 pairs remain.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    if groups is not None:
        return _cluster_bootstrap_ci(pred, true, groups, statistic, n_boot, seed, level, method)
    p, t = _paired_finite(pred, true)
    n = int(p.size)
    if isinstance(statistic, str):
        if statistic not in STATISTICS:
            raise ValueError(f"unknown statistic {statistic!r}; expected one of {STATISTICS} or a callable")
        name = statistic
        if statistic in _VECTORISED_STATISTICS:
            stat_fn, vectorised = _VECTORISED_STATISTICS[statistic], True
        else:
            def stat_fn(a, b, _m=statistic):
                return _correlation_clean(a, b, _m)
            vectorised = False
    else:
        name, stat_fn, vectorised = getattr(statistic, "__name__", "custom"), statistic, False

    estimate = float(stat_fn(p, t)) if n >= 1 else float("nan")
    result: dict[str, float | int | str] = {
        "statistic": name, "estimate": estimate, "ci_low": float("nan"), "ci_high": float("nan"),
        "standard_error": float("nan"), "level": level, "n": n, "n_boot": int(n_boot), "method": method,
    }
    if n < 3 or np.isnan(estimate):
        return result
    with warnings.catch_warnings():
        # Degenerate resamples (e.g. all-equal scores) make a correlation NaN; scipy warns and the interval is NaN.
        warnings.simplefilter("ignore", category=RuntimeWarning)
        warnings.simplefilter("ignore", category=stats.DegenerateDataWarning)
        res = stats.bootstrap(
            (p, t), stat_fn, n_resamples=n_boot, paired=True, vectorized=vectorised, confidence_level=level,
            method=method, rng=np.random.default_rng(seed),
        )
    result.update(
        ci_low=float(res.confidence_interval.low), ci_high=float(res.confidence_interval.high),
        standard_error=float(res.standard_error),
    )
    return result


def _statistic_function(statistic: str | Callable[[np.ndarray, np.ndarray], float]
                        ) -> tuple[str, Callable[[np.ndarray, np.ndarray], float]]:
    if not isinstance(statistic, str):
        return getattr(statistic, "__name__", "custom"), statistic
    if statistic not in STATISTICS:
        raise ValueError(f"unknown statistic {statistic!r}; expected one of {STATISTICS} or a callable")
    if statistic in _VECTORISED_STATISTICS:
        return statistic, _VECTORISED_STATISTICS[statistic]
    return statistic, lambda a, b: _correlation_clean(a, b, statistic)


def _cluster_bootstrap_ci(pred, true, groups, statistic, n_boot: int, seed: int, level: float,
                          method: str) -> dict[str, float | int | str]:
    """:func:`bootstrap_ci` resampling whole groups: scipy's bootstrap draws group indices with replacement, and the
    statistic is computed on the pairs of every group drawn (as often as it was drawn)."""
    p, t = (np.asarray(x, dtype=float).ravel() for x in (pred, true))
    labels = np.asarray(groups, dtype=object).ravel()
    if not p.shape == t.shape == labels.shape:
        raise ValueError(f"pred, true and groups must have the same length, got {p.size}, {t.size} and "
                         f"{labels.size}")
    keep = ~(np.isnan(p) | np.isnan(t))
    p, t, labels = p[keep], t[keep], labels[keep]
    codes, uniques = pd.factorize(labels)
    members = [np.flatnonzero(codes == group) for group in range(len(uniques))]
    name, stat_fn = _statistic_function(statistic)
    n = int(p.size)
    estimate = float(stat_fn(p, t)) if n >= 1 else float("nan")
    result: dict[str, float | int | str] = {
        "statistic": name, "estimate": estimate, "ci_low": float("nan"), "ci_high": float("nan"),
        "standard_error": float("nan"), "level": level, "n": n, "n_groups": len(uniques), "n_boot": int(n_boot),
        "method": method}
    if len(uniques) < 3 or np.isnan(estimate):
        return result

    def on_groups(drawn: np.ndarray) -> float:
        rows = np.concatenate([members[int(group)] for group in drawn])
        return float(stat_fn(p[rows], t[rows]))

    def on_group_counts(drawn: np.ndarray, axis: int = -1) -> np.ndarray:
        # Every resample at once: how often each group was drawn, given to each of its pairs as a weight.
        drawn = np.moveaxis(drawn, axis, -1)
        rows = drawn.reshape(-1, drawn.shape[-1])
        offsets = np.arange(len(rows))[:, None] * len(uniques)
        counts = np.bincount((offsets + rows).ravel(), minlength=len(rows) * len(uniques)).reshape(len(rows), -1)
        return stat_fn.weighted(p, t, counts[:, codes]).reshape(drawn.shape[:-1])

    weighted = callable(getattr(stat_fn, "weighted", None))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=RuntimeWarning)
        warnings.simplefilter("ignore", category=stats.DegenerateDataWarning)
        res = stats.bootstrap((np.arange(len(uniques)),), on_group_counts if weighted else on_groups,
                              n_resamples=n_boot, vectorized=weighted, confidence_level=level, method=method,
                              rng=np.random.default_rng(seed))
    result.update(ci_low=float(res.confidence_interval.low), ci_high=float(res.confidence_interval.high),
                  standard_error=float(res.standard_error))
    return result


def random_baseline_over_seeds(true, n_seeds: int = 1000, seed: int = 0, low: int = 1,
                               high: int = 5) -> pd.DataFrame:
    """Agreement of the Random baseline (independent uniform draws from {low, ..., high}) with ``true`` for
    ``n_seeds`` seeds: one row per seed with ``pearson``, ``mae``, ``rmse``.

    One seed is one draw of a random variable; its expected agreement (the mean over many seeds) is what a baseline
    row should report, with the spread beside it. ``auc``: how each draw ranks the answers users called serendipitous
    (:func:`ranking_auc`). Draws for all seeds come from one ``default_rng(seed)``, so the
    table is reproducible; NaN truths are dropped first.
    """
    t = np.asarray(true, dtype=float)
    t = t[np.isfinite(t)]
    draws = np.random.default_rng(seed).integers(low, high + 1, size=(n_seeds, t.size)).astype(float)
    target = np.broadcast_to(t, draws.shape)
    return pd.DataFrame({"seed": np.arange(n_seeds), "pearson": _pearson_vectorised(draws, target),
                         "mae": _mae_vectorised(draws, target), "rmse": _rmse_vectorised(draws, target),
                         "auc": _auc_vectorised(draws, t >= CALLED_SERENDIPITOUS)})


def _auc_vectorised(scores: np.ndarray, positive: np.ndarray) -> np.ndarray:
    """:func:`ranking_auc` of each row of ``scores`` (Mann-Whitney: the positives' mid-ranks, ties counted half);
    NaN when either kind is absent."""
    n1, n0 = int(positive.sum()), int((~positive).sum())
    if n1 == 0 or n0 == 0:
        return np.full(scores.shape[0], np.nan)
    ranks = stats.rankdata(scores, axis=1)
    return (ranks[:, positive].sum(axis=1) - n1 * (n1 + 1) / 2) / (n1 * n0)


def random_baseline_expectation(true, low: int = 1, high: int = 5) -> dict[str, float]:
    """Exact expectations for uniform random scores on {low, ..., high}: Pearson 0 (independent of the truth), MAE
    = mean over rows of E|U - t|, and the root of the expected mean squared error (an upper bound of E[RMSE] by
    Jensen's inequality, within a fraction of a percent for a few hundred rows)."""
    t = np.asarray(true, dtype=float)
    t = t[np.isfinite(t)]
    levels = np.arange(low, high + 1, dtype=float)
    differences = levels[None, :] - t[:, None]
    return {"pearson": 0.0, "mae": float(np.abs(differences).mean()),
            "rmse_of_expected_mse": float(np.sqrt((differences**2).mean())), "n": int(t.size)}


# --------------------------------------------------------------------------------------------------------------------
# Comparing two evaluators against the same truth
# --------------------------------------------------------------------------------------------------------------------
def compare_dependent_correlations(pred_a, pred_b, true) -> dict[str, float | int | str]:
    """Two-sided test that evaluators A and B correlate equally (Pearson) with the same truth.

    The two correlations r(A, truth) and r(B, truth) are computed on the same items, so they are dependent and
    share one variable; an independent-samples Fisher z test would be wrong. This uses Williams' (1959) t test in
    the form recommended by Steiger (1980, eq. 7), which is also what the ``cocor`` R package calls
    ``williams1959``::

        t = (r_at - r_bt) * sqrt( (n-1)(1 + r_ab) / ( 2 (n-1)/(n-3) |R| + rbar^2 (1 - r_ab)^3 ) ),   df = n - 3

    with |R| = 1 - r_at^2 - r_bt^2 - r_ab^2 + 2 r_at r_bt r_ab (determinant of the 3×3 correlation matrix) and
    rbar = (r_at + r_bt) / 2. Rows with a NaN in any of the three columns are dropped.

    Returns ``r_a``, ``r_b``, ``r_ab``, ``difference`` (r_a - r_b), ``t``, ``df``, ``p_value``, ``n``, ``test``.
    The statistic is NaN when n < 4 or any correlation is undefined.
    """
    a = np.asarray(pred_a, dtype=float).ravel()
    b = np.asarray(pred_b, dtype=float).ravel()
    y = np.asarray(true, dtype=float).ravel()
    if not (a.size == b.size == y.size):
        raise ValueError(f"pred_a, pred_b and true must have the same length, got {a.size}, {b.size}, {y.size}")
    keep = ~(np.isnan(a) | np.isnan(b) | np.isnan(y))
    a, b, y = a[keep], b[keep], y[keep]
    n = int(a.size)
    r_a, r_b, r_ab = (_correlation_clean(u, v, "pearson") for u, v in ((a, y), (b, y), (a, b)))
    return {**williams_t(r_a, r_b, r_ab, n), "r_a": r_a, "r_b": r_b, "r_ab": r_ab}


def pearson_interval(r: float, n: int, level: float = 0.95) -> tuple[float, float]:
    """The ``level`` confidence interval of a Pearson correlation ``r`` on ``n`` pairs by Fisher's z transform
    (``tanh(atanh r ± z / sqrt(n − 3))``); (NaN, NaN) below 4 pairs or when ``r`` is undefined."""
    if not np.isfinite(r) or n < 4:
        return float("nan"), float("nan")
    z = np.arctanh(np.clip(r, -1 + 1e-15, 1 - 1e-15))
    half = stats.norm.ppf(0.5 + level / 2) / np.sqrt(n - 3)
    return float(np.tanh(z - half)), float(np.tanh(z + half))


def williams_t(r_jk: float, r_jh: float, r_kh: float, n: int) -> dict[str, float | int | str]:
    """Williams' t (Steiger 1980) from the three correlations: compares r_jk with r_jh, given r_kh, n cases.

    See :func:`compare_dependent_correlations` for the formula. Returns ``difference``, ``t``, ``df``,
    ``p_value`` (two-sided), ``n`` and ``test``.
    """
    out: dict[str, float | int | str] = {
        "difference": r_jk - r_jh, "t": float("nan"), "df": n - 3, "p_value": float("nan"), "n": n,
        "test": "williams1959",
    }
    if n < 4 or any(np.isnan(v) for v in (r_jk, r_jh, r_kh)):
        return out
    if abs(r_kh) > 1 - 1e-12:
        # Collinear evaluators: the statistic is 0/0 (rounding decides its value), so report it as undefined.
        return out
    det_r = 1 - r_jk**2 - r_jh**2 - r_kh**2 + 2 * r_jk * r_jh * r_kh
    r_bar = (r_jk + r_jh) / 2
    denominator = 2 * (n - 1) / (n - 3) * det_r + r_bar**2 * (1 - r_kh) ** 3
    if denominator <= 0:
        return out
    t = (r_jk - r_jh) * np.sqrt((n - 1) * (1 + r_kh) / denominator)
    out["t"] = float(t)
    out["p_value"] = float(2 * stats.t.sf(abs(t), n - 3))
    return out


# --------------------------------------------------------------------------------------------------------------------
# Three-level meta-evaluation (Zhang et al. 2024, section 2.4)
# --------------------------------------------------------------------------------------------------------------------
def multilevel_correlation(
    frame: pd.DataFrame,
    pred_col: str,
    true_col: str,
    user_col: str = "user_id",
    item_col: str = "item_id",
    methods: Sequence[str] = CORRELATION_METHODS,
) -> pd.DataFrame:
    """Dataset-, user- and pair-level correlation between evaluator scores and user labels (Zhang et al. 2024).

    ``frame`` holds one row per rated object: in Zhang et al. one row per (user, item, explanation generator),
    so each (user, item) pair has several rows (|G| explanations), each user |I_u|·|G| rows.

    - **dataset**: one correlation over all rows, ``h_D = r(s, ŝ)``.
    - **user**: ``h_U = mean_u r(s_u, ŝ_u)`` — correlation within each user's rows, then the plain (unweighted)
      mean over users.
    - **pair**: ``h_P = mean_(u,i) r(s_ui, ŝ_ui)`` — correlation within each (user, item) group, i.e. across the
      explanations of that pair, then the plain mean over pairs.

    Rows with NaN in ``pred_col`` or ``true_col`` are dropped first (callers wanting Zhang et al.'s convention —
    missing user labels set to 3, unparsable evaluator replies set to 0 — apply it before calling). A group whose
    correlation is undefined (fewer than two rows, or constant scores on either side, which is common with 1–5
    labels) is *left out* of the mean and counted in ``n_undefined``; the paper's formula averages over all groups
    and does not say how it treated those, so the count is reported beside every value.

    Returns one row per (level, method) with columns ``level``, ``method``, ``value`` (NaN when every group is
    undefined), ``n_groups`` (groups whose correlation was defined and averaged), ``n_undefined`` (groups left
    out) and ``n_rows`` (rows used after dropping NaN). Kendall's coefficient is tau-b (ties corrected).
    """
    for col in (pred_col, true_col, user_col, item_col):
        if col not in frame.columns:
            raise KeyError(f"multilevel_correlation: column {col!r} not in frame (columns: {list(frame.columns)})")
    for m in methods:
        if m not in CORRELATION_METHODS:
            raise ValueError(f"unknown correlation method {m!r}; expected one of {CORRELATION_METHODS}")
    data = frame[[user_col, item_col, pred_col, true_col]].copy()
    data[pred_col] = pd.to_numeric(data[pred_col], errors="raise").astype(float)
    data[true_col] = pd.to_numeric(data[true_col], errors="raise").astype(float)
    data = data.dropna(subset=[pred_col, true_col])
    n_rows = len(data)

    pred, true = data[pred_col].to_numpy(), data[true_col].to_numpy()
    rows = []
    for method in methods:
        value = _correlation_clean(pred, true, method)
        defined = not np.isnan(value)
        rows.append(("dataset", method, value, int(defined), int(not defined), n_rows))
    for level, keys in (("user", [user_col]), ("pair", [user_col, item_col])):
        groups = [
            (g[pred_col].to_numpy(), g[true_col].to_numpy())
            for _, g in data.groupby(keys, sort=False, dropna=False)
        ]
        for method in methods:
            values = np.array([_correlation_clean(p, t, method) for p, t in groups], dtype=float)
            ok = ~np.isnan(values)
            mean = float(values[ok].mean()) if ok.any() else float("nan")
            rows.append((level, method, mean, int(ok.sum()), int((~ok).sum()), n_rows))
    table = pd.DataFrame(rows, columns=["level", "method", "value", "n_groups", "n_undefined", "n_rows"])
    return table
