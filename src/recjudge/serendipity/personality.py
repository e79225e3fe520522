"""Curiosity (CEI-II) and Big-Five (TIPI) scores of the Taobao Serendipity survey, and regressions of the users'
serendipity answer on them (Kang et al. 2025, RQ2, Figure 1, answered with the data instead of an LLM judge).

Instruments, scored as their authors define them; item wording and order checked against the dataset's README
(fields 15-34, ``C1``..``C10`` and ``P1``..``P10``):

- **CEI-II** (Kashdan et al. 2009), ten items on a 1-5 scale, no reverse-keyed item. Two subscales of five items,
  alternating in the printed order: *Stretching* (seeking knowledge and new experiences) = items 1, 3, 5, 7, 9;
  *Embracing* (willingness to embrace the novel, uncertain and unpredictable) = items 2, 4, 6, 8, 10. Kashdan et al.
  sum the items: Stretching and Embracing 5-25 each, the total 10-50.
- **TIPI** (Gosling et al. 2003), ten items on a 1-7 scale, "I see myself as ...". Each trait is the mean of two
  items, one of them reverse-keyed (scored 8 - answer): Extraversion = 1, 6R; Agreeableness = 2R, 7;
  Conscientiousness = 3, 8R; Emotional Stability = 4R, 9; Openness to Experiences = 5, 10R.

Regressions (statsmodels): the serendipity answer (1-5, "The item recommended to me is a pleasant surprise") on
standardised scores (z: mean 0, sd 1 over the users), as an ordinal logit (``OrderedModel``; effect = odds ratio per
sd, explained variance = McFadden's pseudo-R², 1 - llf/llnull) and as OLS (effect = change in the answer per sd,
explained variance = R² and adjusted R²). Intervals are 95% Wald intervals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

#: CEI-II subscales (Kashdan et al. 2009): item columns of ``load_taobao_survey``; no reverse-keyed items.
CEI_II_SUBSCALES: Mapping[str, tuple[str, ...]] = {
    "stretching": ("c1", "c3", "c5", "c7", "c9"),
    "embracing": ("c2", "c4", "c6", "c8", "c10"),
}
CEI_II_SCALE = (1, 5)
#: TIPI traits (Gosling et al. 2003): (item, reverse-keyed?) pairs.
TIPI_TRAITS: Mapping[str, tuple[tuple[str, bool], tuple[str, bool]]] = {
    "extraversion": (("p1", False), ("p6", True)),
    "agreeableness": (("p2", True), ("p7", False)),
    "conscientiousness": (("p3", False), ("p8", True)),
    "emotional_stability": (("p4", True), ("p9", False)),
    "openness": (("p5", False), ("p10", True)),
}
TIPI_SCALE = (1, 7)
CURIOSITY = tuple(CEI_II_SUBSCALES)
BIG_FIVE = tuple(TIPI_TRAITS)
#: Demographic fields Kang et al. use (Figure 1b) that the public survey file lacks (the README reports 7,769
#: female users, but no column holds gender or age).
MISSING_DEMOGRAPHICS = ("age", "gender")


def _check_items(survey: pd.DataFrame, items: Sequence[str], scale: tuple[int, int], instrument: str) -> None:
    missing = [c for c in items if c not in survey.columns]
    if missing:
        raise KeyError(f"{instrument}: the survey frame lacks item column(s) {missing}")
    values = survey[list(items)].astype(float)
    low, high = scale
    bad = values[(values < low) | (values > high)].stack()
    if len(bad):
        (row, column), value = next(iter(bad.items()))
        raise ValueError(f"{instrument}: item {column!r} of row {row!r} is {value:g}, outside {low}-{high}")


def score_cei_ii(survey: pd.DataFrame) -> pd.DataFrame:
    """CEI-II Stretching, Embracing (sums of five items, 5-25) and total (10-50) per row; NaN when an item is
    missing (the authors define no pro-rating)."""
    items = [c for sub in CEI_II_SUBSCALES.values() for c in sub]
    _check_items(survey, items, CEI_II_SCALE, "CEI-II")
    out = pd.DataFrame(index=survey.index)
    for name, sub in CEI_II_SUBSCALES.items():
        out[name] = survey[list(sub)].astype(float).sum(axis=1, min_count=len(sub))
    out["curiosity_total"] = out["stretching"] + out["embracing"]
    return out


def score_tipi(survey: pd.DataFrame) -> pd.DataFrame:
    """TIPI traits per row: mean of the trait's two items, the reverse-keyed one scored 8 - answer (range 1-7)."""
    items = [item for pair in TIPI_TRAITS.values() for item, _ in pair]
    _check_items(survey, items, TIPI_SCALE, "TIPI")
    low, high = TIPI_SCALE
    out = pd.DataFrame(index=survey.index)
    for trait, pair in TIPI_TRAITS.items():
        parts = [(low + high - survey[item].astype(float)) if reverse else survey[item].astype(float)
                 for item, reverse in pair]
        out[trait] = (parts[0] + parts[1]) / 2
    return out


def instrument_scores(survey: pd.DataFrame) -> pd.DataFrame:
    """CEI-II and TIPI scores side by side (index aligned with ``survey``)."""
    return pd.concat([score_cei_ii(survey), score_tipi(survey)], axis=1)


def reliability(survey: pd.DataFrame) -> pd.DataFrame:
    """Internal consistency per scale: Cronbach's alpha for the CEI-II subscales (items as scored), and for each
    two-item TIPI trait the Pearson correlation of its two items after reversal (Gosling et al. report test-retest
    reliability instead, since two-item alphas are low by design)."""
    from scipy import stats

    rows = []
    for name, sub in CEI_II_SUBSCALES.items():
        items = survey[list(sub)].astype(float).dropna()
        k = items.shape[1]
        alpha = k / (k - 1) * (1 - items.var(ddof=1).sum() / items.sum(axis=1).var(ddof=1))
        rows.append({"scale": name, "instrument": "CEI-II", "statistic": "Cronbach's alpha", "value": alpha,
                     "n": len(items)})
    for trait, pair in TIPI_TRAITS.items():
        a, b = ((8 - survey[item].astype(float)) if rev else survey[item].astype(float) for item, rev in pair)
        both = pd.concat([a, b], axis=1).dropna()
        rows.append({"scale": trait, "instrument": "TIPI", "statistic": "inter-item r (after reversal)",
                     "value": stats.pearsonr(both.iloc[:, 0], both.iloc[:, 1])[0], "n": len(both)})
    return pd.DataFrame(rows)


#: The regression models: name -> predictors.
MODELS: Mapping[str, tuple[str, ...]] = {
    "curiosity": CURIOSITY,
    "big_five": BIG_FIVE,
    "curiosity + big_five": CURIOSITY + BIG_FIVE,
}


def _design(frame: pd.DataFrame, outcome: str, predictors: Sequence[str]) -> tuple[pd.Series, pd.DataFrame]:
    missing = [c for c in (outcome, *predictors) if c not in frame.columns]
    if missing:
        raise KeyError(f"regression frame lacks column(s) {missing}")
    data = frame[[outcome, *predictors]].astype(float).dropna()
    x = data[list(predictors)]
    sd = x.std(ddof=0)
    constant = sd[sd == 0].index.tolist()
    if constant:
        raise ValueError(f"predictor(s) {constant} are constant; cannot standardise")
    return data[outcome], (x - x.mean()) / sd


def fit_regressions(frame: pd.DataFrame, outcome: str = "serendipity",
                    models: Mapping[str, Sequence[str]] = MODELS) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Ordinal-logit and OLS regressions of ``outcome`` on standardised predictors, one pair per model.

    Returns (coefficients, fit): coefficients has model, kind ("ordinal logit" | "OLS"), term, estimate (log-odds
    or answer points per sd), ci_low, ci_high, p_value, effect (odds ratio per sd for the ordinal model, the
    estimate for OLS) with effect_ci_low/high; fit has model, kind, n, explained (McFadden pseudo-R² or R²),
    adj_r2 (OLS), llf, aic, and the likelihood-ratio test against the intercept-only model (lr_stat, lr_df,
    lr_p) for the ordinal model or the F-test for OLS."""
    import statsmodels.api as sm
    from statsmodels.miscmodels.ordinal_model import OrderedModel

    coef_rows, fit_rows = [], []
    for name, predictors in models.items():
        y, x = _design(frame, outcome, predictors)
        ordinal = OrderedModel(y.astype(int), x, distr="logit").fit(method="bfgs", disp=False, maxiter=500)
        ci = ordinal.conf_int()
        for term in predictors:
            est = float(ordinal.params[term])
            low, high = (float(v) for v in ci.loc[term])
            coef_rows.append({"model": name, "kind": "ordinal logit", "term": term, "estimate": est,
                              "ci_low": low, "ci_high": high, "p_value": float(ordinal.pvalues[term]),
                              "effect": np.exp(est), "effect_ci_low": np.exp(low), "effect_ci_high": np.exp(high)})
        lr_stat = 2 * (ordinal.llf - ordinal.llnull)
        from scipy import stats

        fit_rows.append({"model": name, "kind": "ordinal logit", "n": int(ordinal.nobs),
                         "explained": 1 - ordinal.llf / ordinal.llnull, "adj_r2": np.nan, "llf": float(ordinal.llf),
                         "aic": float(ordinal.aic), "test_stat": lr_stat, "test_df": len(predictors),
                         "test_p": float(stats.chi2.sf(lr_stat, len(predictors)))})
        ols = sm.OLS(y, sm.add_constant(x)).fit()
        ci = ols.conf_int()
        for term in predictors:
            est = float(ols.params[term])
            low, high = (float(v) for v in ci.loc[term])
            coef_rows.append({"model": name, "kind": "OLS", "term": term, "estimate": est, "ci_low": low,
                              "ci_high": high, "p_value": float(ols.pvalues[term]), "effect": est,
                              "effect_ci_low": low, "effect_ci_high": high})
        fit_rows.append({"model": name, "kind": "OLS", "n": int(ols.nobs), "explained": float(ols.rsquared),
                         "adj_r2": float(ols.rsquared_adj), "llf": float(ols.llf), "aic": float(ols.aic),
                         "test_stat": float(ols.fvalue), "test_df": len(predictors), "test_p": float(ols.f_pvalue)})
    return pd.DataFrame(coef_rows), pd.DataFrame(fit_rows)


def incremental_variance(fit: pd.DataFrame, base: str = "curiosity", added: str = "big_five",
                         full: str = "curiosity + big_five") -> pd.DataFrame:
    """Explained variance each block adds over the other (OLS R² and ordinal pseudo-R² differences)."""
    rows = []
    for kind, part in fit.groupby("kind", sort=False):
        value = part.set_index("model")["explained"]
        rows.append({"kind": kind, f"{added} over {base}": value[full] - value[base],
                     f"{base} over {added}": value[full] - value[added]})
    return pd.DataFrame(rows)
