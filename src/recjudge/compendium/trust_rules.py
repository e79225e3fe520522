"""The rules that word part V's findings, in one place for the trust chapter and the at-a-glance page: whether a
calibrated judge beats a constant answer, and whether a judge saves human labels. Each reads n and the noise of its
number (an interval), never a bare margin: a judge with no correlation is worth about its n labels give or take the
simulation's noise, and an MAE gain of 0.0056 whose interval holds zero is no gain."""

from __future__ import annotations

import pandas as pd

#: A calibrated judge beats a constant answer when its MAE is lower by more than this (this book's threshold) and the
#: 95% interval of the difference, clustered by user, lies above zero.
MAE_MARGIN = 0.005


#: The vocabulary of that rule (:func:`judges_beating_constant`), for the trust chapter and the at-a-glance page.
BEATS = "beats"
BEAT = "beat"
NO_JUDGE_BEATS = "no judge beats"


def beating_words(judges: list[str]) -> str:
    """"A beats", "A, B beat", or "no judge beats": who beats a constant answer by the rule, as a sentence's start."""
    if not judges:
        return NO_JUDGE_BEATS
    return f"{', '.join(judges)} {BEATS if len(judges) == 1 else BEAT}"


def calibrated_gains(errors: pd.DataFrame) -> pd.DataFrame:
    """The calibrated readings of a calibration error table (``recjudge.trust.calibration.error_table``) with their
    gain over the constant answer and its interval (``gain_over_constant``, ``gain_ci_low``, ``gain_ci_high``)."""
    missing = {"gain_over_constant", "gain_ci_low", "gain_ci_high"} - set(errors.columns)
    if missing:
        raise KeyError(f"the calibration error table has no {', '.join(sorted(missing))} column (rerun the chapter)")
    return errors[errors["reading"].str.startswith("calibrated")].dropna(subset=["gain_over_constant"])


def judges_beating_constant(errors: pd.DataFrame) -> list[str]:
    """The judges with a calibrated reading whose MAE is lower than the constant answer's by more than
    ``MAE_MARGIN``, with an interval of that gain above zero."""
    gains = calibrated_gains(errors)
    beating = gains[(gains["gain_over_constant"] > MAE_MARGIN) & (gains["gain_ci_low"] > 0)]
    return list(dict.fromkeys(beating["judge"]))


#: A judge saves labels when it is worth at least this many labels more than its n (this book's threshold: one whole
#: label) ...
SAVED_LABELS = 1.0


def saved_labels(worth: pd.Series, n: int) -> float:
    """The labels a judge saves beyond its ``n``, read cautiously: the lower of the simulation's Monte Carlo bound
    (``labels_worth_mc_low``) and the ρ² rule (``labels_worth_by_rho2``). The simulated worth carries the in-sample
    tuning of λ, which flatters every judge a little (one with ρ ≈ 0 is worth a fraction of a label more than its n);
    the ρ² rule has no such bias but no simulation noise either."""
    return float(min(worth["labels_worth_mc_low"], worth["labels_worth_by_rho2"]) - n)


def saves_labels(worth: pd.Series, n: int) -> bool:
    """... beyond the simulation's noise and its tuning bias (:func:`saved_labels`)."""
    return saved_labels(worth, n) >= SAVED_LABELS
