"""How far from testable: the smallest effect a sample can detect, and the sample an effect needs (80% power).

- A correlation (H0: ρ = 0, two-sided): by Fisher's z, n pairs detect ``tanh((z_{1−α/2} + z_{power}) / √(n − 3))``,
  and ρ needs ``((z_{1−α/2} + z_{power}) / atanh ρ)² + 3`` pairs (:func:`detectable_correlation`,
  :func:`n_for_correlation`).
- Two correlations of independent samples of n each (e.g. a judge with and without auxiliary data, on different
  answers): ``2 ((z_{1−α/2} + z_{power}) / (atanh ρ₁ − atanh ρ₂))² + 3`` answers in all
  (:func:`n_for_correlation_difference`).
- A paired difference of errors (two judges' absolute errors on the same answers): statsmodels' ``TTestPower`` in
  Cohen's d (the mean difference over its standard deviation) (:func:`detectable_paired_effect`,
  :func:`n_for_paired_effect`).
"""

from __future__ import annotations

import math

from scipy import stats

POWER, ALPHA = 0.8, 0.05


def _z_sum(alpha: float, power: float) -> float:
    if not (0 < alpha < 1 and 0 < power < 1):
        raise ValueError(f"alpha and power must lie in (0, 1), got {alpha} and {power}")
    return float(stats.norm.isf(alpha / 2) + stats.norm.ppf(power))


def detectable_correlation(n: int, alpha: float = ALPHA, power: float = POWER) -> float:
    """The smallest |ρ| that ``n`` pairs detect with ``power`` at two-sided ``alpha`` (Fisher z); NaN below 4 pairs."""
    if n <= 3:
        return math.nan
    return math.tanh(_z_sum(alpha, power) / math.sqrt(n - 3))


def n_for_correlation(rho: float, alpha: float = ALPHA, power: float = POWER) -> int:
    """The pairs a correlation ``rho`` needs to be detected with ``power`` at two-sided ``alpha`` (Fisher z)."""
    if not 0 < abs(rho) < 1:
        raise ValueError(f"a correlation to detect must lie in (-1, 1) and differ from 0, got {rho}")
    return math.ceil((_z_sum(alpha, power) / math.atanh(abs(rho))) ** 2 + 3)


def n_for_correlation_difference(rho_a: float, rho_b: float, alpha: float = ALPHA, power: float = POWER) -> int:
    """The answers in all (two independent samples, half each) that detect ``rho_a`` ≠ ``rho_b`` (Fisher z)."""
    gap = abs(math.atanh(rho_a) - math.atanh(rho_b))
    if gap == 0:
        raise ValueError("two equal correlations have no difference to detect")
    return 2 * math.ceil((_z_sum(alpha, power) / gap) ** 2 + 3)


def detectable_paired_effect(n: int, alpha: float = ALPHA, power: float = POWER) -> float:
    """The smallest Cohen's d of a paired difference that ``n`` pairs detect (statsmodels' ``TTestPower``, two-sided);
    NaN below 2 pairs."""
    from statsmodels.stats.power import TTestPower

    if n < 2:
        return math.nan
    return float(TTestPower().solve_power(effect_size=None, nobs=n, alpha=alpha, power=power,
                                          alternative="two-sided"))


def n_for_paired_effect(effect_size: float, alpha: float = ALPHA, power: float = POWER) -> int:
    """The pairs a paired difference of Cohen's d ``effect_size`` needs (statsmodels' ``TTestPower``, two-sided)."""
    from statsmodels.stats.power import TTestPower

    if effect_size == 0 or not math.isfinite(effect_size):
        raise ValueError(f"an effect to detect must be finite and non-zero, got {effect_size}")
    return math.ceil(TTestPower().solve_power(effect_size=abs(effect_size), nobs=None, alpha=alpha, power=power,
                                              alternative="two-sided"))


__all__ = ["ALPHA", "POWER", "detectable_correlation", "detectable_paired_effect", "n_for_correlation",
           "n_for_correlation_difference", "n_for_paired_effect"]
