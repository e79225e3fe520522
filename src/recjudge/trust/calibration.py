"""Calibration: maps from a judge's score to the human 1–5 scale, learned on other users only.

A judge's raw score can carry information about serendipity on the wrong scale (a tiny model's expected scores sit
near 2; a proxy's min-max rescaling, Kang et al.'s eq. 6, stretches whatever it gets). MAE and RMSE mix the two: a
judge that always says the population mean has a low MAE and no information. Calibrating first separates them:

- ``isotonic``: the monotone map (``sklearn.isotonic.IsotonicRegression``) from score to the mean human rating;
- ``ordinal``: an ordinal logit of the human rating on the score (``statsmodels`` ``OrderedModel``), whose
  prediction is the expected rating under the fitted category probabilities.

Both are fitted out of fold with the folds made of whole users (``GroupKFold``), so no answer is calibrated with
its own user's ratings: the calibrated error is what a new user's answers would get.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

METHODS = ("isotonic", "ordinal")
LIKERT = (1, 5)


def _fit_predict(method: str, train_score: np.ndarray, train_human: np.ndarray, test_score: np.ndarray) -> np.ndarray:
    if method == "isotonic":
        from sklearn.isotonic import IsotonicRegression

        model = IsotonicRegression(y_min=LIKERT[0], y_max=LIKERT[1], out_of_bounds="clip")
        return model.fit(train_score, train_human).predict(test_score)
    if method == "ordinal":
        from statsmodels.miscmodels.ordinal_model import OrderedModel

        levels = np.unique(train_human)
        if len(levels) < 2 or np.ptp(train_score) == 0:  # nothing to fit: the training mean
            return np.full(len(test_score), float(train_human.mean()))
        centre, spread = train_score.mean(), train_score.std()
        exog = ((train_score - centre) / spread).reshape(-1, 1)
        fitted = OrderedModel(pd.Series(pd.Categorical(train_human, categories=levels, ordered=True)), exog,
                              distr="logit").fit(method="bfgs", disp=False, maxiter=1000)
        probabilities = fitted.model.predict(fitted.params, exog=((test_score - centre) / spread).reshape(-1, 1))
        return np.asarray(probabilities) @ levels.astype(float)
    raise ValueError(f"unknown calibration {method!r}; known: {METHODS}")


def calibration_map(score: Sequence[float], human: Sequence[float], at: Sequence[float],
                    method: str = "isotonic") -> np.ndarray:
    """The map from score to human rating fitted on every answer (NaN scores left out), read at the scores ``at``:
    the shape of a judge's calibration, for a figure (an error is measured out of fold,
    :func:`calibrate_out_of_fold`)."""
    score, human = np.asarray(score, dtype=float), np.asarray(human, dtype=float)
    judged = np.isfinite(score) & np.isfinite(human)
    return _fit_predict(method, score[judged], human[judged], np.asarray(at, dtype=float))


def calibrate_out_of_fold(score: Sequence[float], human: Sequence[float], users: Sequence[object],
                          method: str = "isotonic", n_splits: int = 5) -> np.ndarray:
    """Each answer's calibrated score, from a map fitted on the other folds' users (NaN where ``score`` is NaN)."""
    from sklearn.model_selection import GroupKFold

    score, human = np.asarray(score, dtype=float), np.asarray(human, dtype=float)
    users = np.asarray(users)
    if not (len(score) == len(human) == len(users)):
        raise ValueError("score, human and users must have one entry per answer")
    result = np.full(len(score), np.nan)
    judged = np.flatnonzero(np.isfinite(score) & np.isfinite(human))
    if len(np.unique(users[judged])) < n_splits:
        raise ValueError(f"{n_splits} folds need at least {n_splits} users with judged answers")
    for train, test in GroupKFold(n_splits=n_splits).split(judged, groups=users[judged]):
        result[judged[test]] = _fit_predict(method, score[judged[train]], human[judged[train]], score[judged[test]])
    return result


def gain_over_constant(values: Sequence[float], constant: Sequence[float], human: Sequence[float],
                       users: Sequence[object], alpha: float = 0.05) -> tuple[float, float, float]:
    """How much lower the absolute error of ``values`` is than the constant answer's, on the answers both score: the
    mean paired difference and its (1 − alpha) interval, clustered by user (an answer's errors are not independent
    of its user's other answers)."""
    import statsmodels.api as sm

    values, constant, human = (np.asarray(x, dtype=float) for x in (values, constant, human))
    both = np.isfinite(values) & np.isfinite(constant) & np.isfinite(human)
    difference = np.abs(constant[both] - human[both]) - np.abs(values[both] - human[both])
    groups = pd.factorize(np.asarray(users)[both])[0]
    if len(difference) < 2 or len(np.unique(groups)) < 2:
        return float(difference.mean()) if len(difference) else np.nan, np.nan, np.nan
    fitted = sm.OLS(difference, np.ones(len(difference))).fit(cov_type="cluster", cov_kwds={"groups": groups})
    low, high = np.ravel(fitted.conf_int(alpha))
    return float(fitted.params[0]), float(low), float(high)


def error_table(scores: pd.DataFrame, human: pd.Series, users: pd.Series, judges: Sequence[str],
                n_splits: int = 5) -> pd.DataFrame:
    """Per judge: MAE and RMSE of the raw score, after eq. 6 rescaling, and after each calibration, and of a judge
    that always answers the mean human rating of the other folds (the constant baseline); each reading's
    ``gain_over_constant`` (the constant's MAE minus its, paired) with its interval clustered by user
    (:func:`gain_over_constant`)."""
    from recjudge.metaeval.agreement import agreement, rescale_to_likert

    rows = []
    constant = calibrate_out_of_fold(np.zeros(len(human)), human, users, "isotonic", n_splits)
    for judge in judges:
        raw = scores[judge].to_numpy(dtype=float)
        readings = {"raw": raw, "eq. 6 rescaled": np.asarray(rescale_to_likert(raw), dtype=float)}
        for method in METHODS:
            readings[f"calibrated ({method})"] = calibrate_out_of_fold(raw, human, users, method, n_splits)
        for reading, values in readings.items():
            found = agreement(values, human.to_numpy(dtype=float))
            gain, low, high = gain_over_constant(values, constant, human, users)
            rows.append({"judge": judge, "reading": reading, "n": found["n"], "pearson_pct": 100 * found["pearson_r"],
                         "mae": found["mae"], "rmse": found["rmse"], "gain_over_constant": gain,
                         "gain_ci_low": low, "gain_ci_high": high})
    found = agreement(constant, human.to_numpy(dtype=float))
    rows.append({"judge": "constant (mean of other users)", "reading": "calibrated (isotonic)", "n": found["n"],
                 "pearson_pct": np.nan, "mae": found["mae"], "rmse": found["rmse"]})
    return pd.DataFrame(rows)


def error_table_per_judge(frame: pd.DataFrame, judges: Sequence[str], human: str = "truth", users: str = "user_id",
                          n_splits: int = 5) -> pd.DataFrame:
    """``error_table`` of each judge on the rows it scored, its constant baseline fitted on those same rows (reading
    "constant answer", under the judge's name), so that a judge that scored a sample meets its own baseline."""
    tables = []
    for judge in judges:
        rows = frame[frame[judge].notna()]
        table = error_table(rows, rows[human], rows[users], [judge], n_splits)
        table.loc[table["judge"].str.startswith("constant"), ["judge", "reading"]] = [judge, "constant answer"]
        tables.append(table)
    return pd.concat(tables, ignore_index=True)
