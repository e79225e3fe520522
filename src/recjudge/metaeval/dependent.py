"""Comparisons on the same answers, read from the numbers a paper prints.

A paper compares two evaluators on the same answers (an LLM and a proxy, a prompt with and without auxiliary data) but
prints only each one's agreement with the users, not the answers. These functions give the interval such a comparison
has at the paper's own n, so that the paper's numbers can support a claim as well as contradict it:

- **Two correlations with the same truth** (r_a = r(A, users), r_b = r(B, users), the two evaluators correlating
  r_ab): their sampling covariance is Pearson & Filon's, in the form of Steiger (1980, eq. 3),
  ``n cov(r_a, r_b) = r_ab (1 − r_a² − r_b²) − ½ r_a r_b (1 − r_a² − r_b² − r_ab²)``, with ``n var(r) = (1 − r²)²``.
  :func:`contrast_interval` gives the normal interval of ``r_a − w r_b`` (``w = 1``: the difference, the quantity of
  Williams' test, ``agreement.williams_t``; ``w = 2``: "twice as strong"). A paper never prints r_ab: the book reads
  it as 0 (:data:`UNPRINTED_R_AB`), the least favourable value for a difference of positively related evaluators
  (the interval narrows as r_ab grows), and says so.
  :func:`ratio_interval` gives Fieller's interval of ``r_a / r_b`` from the same covariance ("about twice as strong"):
  unbounded when r_b itself is not distinguishable from 0.
- **Two mean absolute errors, or two accuracies, on the same answers** (:func:`paired_mean_interval`): the paired
  difference's standard deviation is at most the sum of the two standard deviations, and a mean ``m`` of values in
  ``[0, M]`` has a standard deviation of at most ``sqrt(m (M − m))``; the interval that uses both bounds holds
  whatever the answers were (it is wide, never too narrow).
- **The answers a paired comparison needs** (:func:`n_for_dependent_difference`): the n at which the difference's
  interval excludes 0 with 80% power.
"""

from __future__ import annotations

import math

from scipy import stats

#: The correlation between two evaluators' scores that a paper does not print, as this book reads it: 0, the value at
#: which a difference of two positively related evaluators' correlations has its widest interval.
UNPRINTED_R_AB = 0.0


def _z(level: float) -> float:
    if not 0 < level < 1:
        raise ValueError(f"a confidence level lies in (0, 1), got {level}")
    return float(stats.norm.ppf(0.5 + level / 2))


def overlap_covariance(r_a: float, r_b: float, r_ab: float) -> float:
    """n times the asymptotic covariance of r_a = r(A, T) and r_b = r(B, T) on the same n cases, A and B correlating
    r_ab (Steiger 1980, eq. 3)."""
    return r_ab * (1 - r_a**2 - r_b**2) - 0.5 * r_a * r_b * (1 - r_a**2 - r_b**2 - r_ab**2)


def contrast_interval(r_a: float, r_b: float, n: int, *, r_ab: float = UNPRINTED_R_AB, weight: float = 1.0,
                      level: float = 0.95) -> tuple[float, float, float]:
    """``(estimate, low, high)`` of ``r_a − weight · r_b``, two correlations with the same truth on the same ``n``
    cases (module docstring); NaN below 4 cases."""
    estimate = r_a - weight * r_b
    if n < 4 or not all(math.isfinite(v) for v in (r_a, r_b, r_ab)):
        return estimate, math.nan, math.nan
    variance = ((1 - r_a**2) ** 2 + weight**2 * (1 - r_b**2) ** 2
                - 2 * weight * overlap_covariance(r_a, r_b, r_ab)) / n
    half = _z(level) * math.sqrt(max(variance, 0.0))
    return estimate, estimate - half, estimate + half


def ratio_interval(r_a: float, r_b: float, n: int, *, r_ab: float = UNPRINTED_R_AB,
                   level: float = 0.95) -> tuple[float, float, float]:
    """``(estimate, low, high)`` of ``r_a / r_b`` by Fieller's theorem: the ratios ρ whose contrast ``r_a − ρ r_b``
    (:func:`contrast_interval`) does not exclude 0. When r_b's own interval holds 0 that set is unbounded (the whole
    line, or two rays): it is returned as the whole line, (−inf, inf), which decides nothing; NaN below 4 cases."""
    estimate = r_a / r_b if r_b != 0 else math.copysign(math.inf, r_a) if r_a else math.nan
    if n < 4 or not all(math.isfinite(v) for v in (r_a, r_b, r_ab)):
        return estimate, math.nan, math.nan
    q = _z(level) ** 2 / n
    v_a, v_b, c = (1 - r_a**2) ** 2, (1 - r_b**2) ** 2, overlap_covariance(r_a, r_b, r_ab)
    # (r_a − ρ r_b)² ≤ q (v_a + ρ² v_b − 2ρ c)  ⇔  a ρ² − 2 b ρ + d ≤ 0
    a, b, d = r_b**2 - q * v_b, r_a * r_b - q * c, r_a**2 - q * v_a
    discriminant = b * b - a * d
    if a > 0:  # r_b is distinguishable from 0: a bounded interval
        root = math.sqrt(max(discriminant, 0.0))
        return estimate, (b - root) / a, (b + root) / a
    return estimate, -math.inf, math.inf


def correlation_interval(r: float, n: int, level: float = 0.95) -> tuple[float, float]:
    """The ``level`` interval of one correlation on ``n`` cases by Fisher's z (``agreement.pearson_interval``)."""
    from recjudge.metaeval.agreement import pearson_interval

    return pearson_interval(r, n, level)


def max_sd(mean: float, top: float) -> float:
    """The largest standard deviation a variable on ``[0, top]`` with this mean can have (all its mass at the two
    ends): ``sqrt(mean (top − mean))``."""
    if not 0 <= mean <= top:
        raise ValueError(f"a mean of values in [0, {top}] lies in that range, got {mean}")
    return math.sqrt(mean * (top - mean))


def paired_mean_interval(mean_a: float, mean_b: float, n: int, top: float, *, sd_a: float | None = None,
                         sd_b: float | None = None, level: float = 0.95) -> tuple[float, float, float]:
    """``(estimate, low, high)`` of ``mean_a − mean_b``, two means of per-answer values in ``[0, top]`` on the same
    ``n`` answers (absolute errors on a 1–5 scale: top 4; hits of a classification: top 1), when the answers are not
    printed: a standard deviation not given is its largest possible value (:func:`max_sd`), and the two are taken as
    perfectly opposed, so the interval is never narrower than the true one."""
    estimate = mean_a - mean_b
    if n < 2:
        return estimate, math.nan, math.nan
    spread = (max_sd(mean_a, top) if sd_a is None else sd_a) + (max_sd(mean_b, top) if sd_b is None else sd_b)
    half = _z(level) * spread / math.sqrt(n)
    return estimate, estimate - half, estimate + half


def n_for_dependent_difference(r_a: float, r_b: float, *, r_ab: float = UNPRINTED_R_AB, alpha: float = 0.05,
                               power: float = 0.8) -> int:
    """The cases (each scored by both evaluators) at which the difference ``r_a − r_b`` is detected with ``power``
    at two-sided ``alpha``, by the interval of :func:`contrast_interval`."""
    gap = abs(r_a - r_b)
    if gap == 0:
        raise ValueError("two equal correlations have no difference to detect")
    unit_variance = (1 - r_a**2) ** 2 + (1 - r_b**2) ** 2 - 2 * overlap_covariance(r_a, r_b, r_ab)
    z_sum = float(stats.norm.isf(alpha / 2) + stats.norm.ppf(power))
    return math.ceil(unit_variance * (z_sum / gap) ** 2)


def n_for_ratio_within(r_b: float, ratio: float, low: float, high: float, *, r_ab: float = UNPRINTED_R_AB,
                       alpha: float = 0.05, power: float = 0.8) -> int:
    """The cases at which the ratio of two correlations with one truth, truly ``ratio`` (``r_a = ratio · r_b``), has
    an interval inside ``[low, high]`` with ``power`` (:func:`ratio_interval` at two-sided ``alpha``): each edge's
    contrast ``r_a − edge · r_b`` must be told from 0, and the edge that needs more cases decides."""
    if not low < ratio < high:
        raise ValueError(f"a true ratio of {ratio} lies outside [{low}, {high}]: no n puts its interval inside")
    r_a = ratio * r_b
    z_sum = float(stats.norm.isf(alpha / 2) + stats.norm.ppf(power))

    def need(edge: float) -> int:
        unit_variance = ((1 - r_a**2) ** 2 + edge**2 * (1 - r_b**2) ** 2
                         - 2 * edge * overlap_covariance(r_a, r_b, r_ab))
        return math.ceil(unit_variance * (z_sum / abs(r_a - edge * r_b)) ** 2)

    return max(need(low), need(high))


__all__ = ["UNPRINTED_R_AB", "contrast_interval", "correlation_interval", "max_sd", "n_for_dependent_difference",
           "n_for_ratio_within", "overlap_covariance", "paired_mean_interval", "ratio_interval"]
