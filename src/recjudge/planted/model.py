"""The planted judge's model: how it scores an answer whose truth it holds, and the population statistics that make
each planted effect a known number.

A planted judge answers an integer 1–5, as the papers' judges do. For an answer with standardised truth ``z`` it draws
a latent ``X = μ + ρ z + sqrt(1 − ρ²) e`` and answers ``1 + #{k : X > τ_k}`` (four thresholds ``τ``, chosen so that
the answers are spread as the truth's levels are, :func:`thresholds_for`). The noise ``e`` is a standard normal made
of three parts, each drawn from a hash of what it belongs to (:func:`normals`), so that the same judge asked the same
prompt twice answers the same, and the server and the in-process simulation draw the same numbers:

- ``ζ``, one per answer, shared by every judge (what all LLMs get wrong alike), weight ``q``;
- ``η``, one per judge and answer, shared by that judge's prompts (a judge's own view of the answer), weight
  ``(1 − q) c``;
- ``ε``, one per judge, kind of prompt and prompt (the rest), weight ``(1 − q)(1 − c)``.

``e = sqrt(q) ζ + sqrt(1 − q) (sqrt(c) η + sqrt(1 − c) ε)``. Averaging k judges shrinks the last two parts only, so
``q`` sets how much an average helps (:func:`ensemble_pearson`).

The statistics a claim tests (a Pearson correlation of the integer answers with the truth, a mean absolute error, a
three-class accuracy) are computed exactly over the dataset's population of truths (:func:`pearson_of`,
:func:`errors_of`), so that a planted effect is solved for (:func:`solve_rho`, :func:`solve_shift`) rather than
guessed; an average of several judges' answers is computed by a seeded Monte Carlo integral (:func:`ensemble_pearson`).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special, stats

#: The answers a planted judge gives.
LEVELS = (1, 2, 3, 4, 5)
#: A latent correlation at most this (1 would leave no noise at all).
MAX_RHO = 0.995
#: The share of a judge's noise that its prompts of one answer share (``c``): two prompts of one judge about one
#: answer err alike by this much beyond what every judge shares (this book's choice; no paper measures it).
PROMPT_SHARED = 0.5
#: Draws of the Monte Carlo integral of an average of judges (:func:`ensemble_pearson`), and its seed.
ENSEMBLE_DRAWS = 400_000
ENSEMBLE_SEED = 20240601

_MASK = np.uint64(0xFFFFFFFFFFFFFFFF)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def text_hash(text: str) -> int:
    """A 64-bit number naming ``text`` (the first 8 bytes of its SHA-256)."""
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")


def _mix(values: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser, element by element (wrapping unsigned arithmetic)."""
    with np.errstate(over="ignore"):
        z = values + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
        return z ^ (z >> np.uint64(31))


def combined(*parts: int | Sequence[int] | np.ndarray) -> np.ndarray:
    """One 64-bit hash per element of the broadcast ``parts`` (numbers or arrays of 64-bit numbers), each part mixed
    in turn: the same parts give the same hash in any array, of any length."""
    arrays = np.broadcast_arrays(*(np.asarray(part, dtype=np.uint64) for part in parts))
    state = _mix(arrays[0].copy())
    for part in arrays[1:]:
        state = _mix(state ^ part)
    return state


def normals(hashes: np.ndarray) -> np.ndarray:
    """A standard normal per hash (the inverse normal CDF of its top 53 bits, never 0 or 1)."""
    uniform = ((np.asarray(hashes, dtype=np.uint64) >> np.uint64(11)).astype(np.float64) + 0.5) / 2.0**53
    return special.ndtri(uniform)


@dataclass(frozen=True)
class Noise:
    """How a judge's noise is shared (module docstring): ``q`` between judges, ``c`` between one judge's prompts."""

    q: float = 0.0
    c: float = PROMPT_SHARED

    def draw(self, seed: int, judge: str, kind: str, views: np.ndarray, answers: np.ndarray) -> np.ndarray:
        """The noise of ``judge`` asked a prompt of ``kind`` about each answer (``answers``: the answer's hash, shared
        by its prompts; ``views``: the prompt's own hash): standard normals."""
        seed = np.uint64(seed)
        common = normals(combined(seed, text_hash("common"), answers))
        own = normals(combined(seed, text_hash(f"judge {judge}"), answers))
        rest = normals(combined(seed, text_hash(f"judge {judge}"), text_hash(f"kind {kind}"), views))
        return (math.sqrt(self.q) * common
                + math.sqrt(1 - self.q) * (math.sqrt(self.c) * own + math.sqrt(1 - self.c) * rest))


def answers_from_latent(latent: np.ndarray, thresholds: Sequence[float]) -> np.ndarray:
    """The integer answer 1–5 of each latent value: one more than the thresholds it exceeds."""
    return 1 + (np.asarray(latent, dtype=float)[..., None] > np.asarray(thresholds, dtype=float)).sum(axis=-1)


def answers_of(z: np.ndarray, noise: np.ndarray, rho: float | np.ndarray, thresholds: Sequence[float],
               shift: float | np.ndarray = 0.0) -> np.ndarray:
    """A judge's integer answers: ``1 + #{k : μ + ρ z + sqrt(1 − ρ²) e > τ_k}``."""
    rho = np.asarray(rho, dtype=float)
    return answers_from_latent(shift + rho * z + np.sqrt(1 - rho**2) * noise, thresholds)


def thresholds_for(levels: np.ndarray) -> tuple[float, ...]:
    """Four thresholds of a standard normal that split it as ``levels`` (integers 1–5) are split: a judge with
    ``μ = 0`` answers each level about as often as the truth holds it."""
    levels = np.asarray(levels, dtype=float)
    levels = levels[~np.isnan(levels)]
    shares = np.array([(levels <= k).mean() for k in LEVELS[:-1]])
    shares = np.clip(shares, 1e-4, 1 - 1e-4)
    return tuple(float(v) for v in np.maximum.accumulate(stats.norm.ppf(shares) + np.arange(4) * 1e-9))


def standardised(truth: np.ndarray) -> np.ndarray:
    """``(t − mean) / sd`` over the truths present (population sd); an answer without a truth is 0."""
    truth = np.asarray(truth, dtype=float)
    present = truth[~np.isnan(truth)]
    z = (truth - present.mean()) / present.std()
    return np.where(np.isnan(z), 0.0, z)


def _population(truth: np.ndarray, driver: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The truths present and the standardised truth that drives the judge's answer to each (``driver``: per
    answer, e.g. the mean over the answers a prompt cannot tell apart; default: the answer's own)."""
    truth = np.asarray(truth, dtype=float)
    present = ~np.isnan(truth)
    z = standardised(truth) if driver is None else np.asarray(driver, dtype=float)
    return truth[present], z[present]


def _exceed(z: np.ndarray, rho: float, thresholds: Sequence[float], shift: float) -> np.ndarray:
    """``P(X > τ_k | z)``, one column per threshold."""
    spread = math.sqrt(1 - rho**2)
    return stats.norm.sf((np.asarray(thresholds)[None, :] - shift - rho * np.asarray(z)[:, None]) / spread)


def pearson_of(truth: np.ndarray, rho: float, thresholds: Sequence[float], shift: float = 0.0,
               driver: np.ndarray | None = None) -> float:
    """The Pearson correlation, over the population ``truth`` (answers without one left out), of a judge's integer
    answers with the truth: exact, the noise integrated out (``driver``: :func:`_population`)."""
    truth, z = _population(truth, driver)
    exceed = _exceed(z, rho, thresholds, shift)
    mean_given = 1 + exceed.sum(axis=1)
    square_given = 1 + 2 * exceed.sum(axis=1) + (exceed * (2 * np.arange(1, 5) - 1)).sum(axis=1)
    mean = mean_given.mean()
    variance = square_given.mean() - mean**2
    covariance = (truth * mean_given).mean() - mean * truth.mean()
    return float(covariance / math.sqrt(variance * truth.var()))


def level_probabilities(z: np.ndarray, rho: float, thresholds: Sequence[float], shift: float = 0.0) -> np.ndarray:
    """``P(answer = k | z)`` for k = 1..5, one row per z."""
    exceed = _exceed(z, rho, thresholds, shift)
    upper = np.hstack([np.ones((len(exceed), 1)), exceed])
    lower = np.hstack([exceed, np.zeros((len(exceed), 1))])
    return upper - lower


def three_class_of(levels: np.ndarray) -> np.ndarray:
    """Negative (below 3), neutral (3), positive (above 3): 0, 1, 2 (``metaeval.baselines.three_class``)."""
    levels = np.asarray(levels, dtype=float)
    return np.where(levels < 3, 0, np.where(levels > 3, 2, 1))


def errors_of(levels: np.ndarray, rho: float, thresholds: Sequence[float], shift: float = 0.0,
              driver: np.ndarray | None = None) -> tuple[float, float]:
    """The mean absolute error and the three-class accuracy (a share) of a judge's integer answers against integer
    truth ``levels`` over their population (answers without one left out): exact (``driver``: :func:`_population`)."""
    levels, z = _population(levels, driver)
    probabilities = level_probabilities(z, rho, thresholds, shift)
    answers = np.arange(1, 6, dtype=float)
    mae = float((probabilities * np.abs(answers[None, :] - levels[:, None])).sum(axis=1).mean())
    same = three_class_of(answers)[None, :] == three_class_of(levels)[:, None]
    return mae, float((probabilities * same).sum(axis=1).mean())


def solve_rho(truth: np.ndarray, target: float, thresholds: Sequence[float], *, clamp: bool = False,
              driver: np.ndarray | None = None) -> float:
    """The latent ρ at which a judge's integer answers correlate ``target`` with the population ``truth``
    (:func:`pearson_of`); ValueError when no ρ in [0, ``MAX_RHO``] reaches it, unless ``clamp``: then the nearest
    end (a planted multiple of an effect beyond what integer answers can carry)."""
    low, high = pearson_of(truth, 0.0, thresholds, driver=driver), pearson_of(truth, MAX_RHO, thresholds, driver=driver)
    if clamp and not low <= target <= high:
        return 0.0 if target < low else MAX_RHO
    if not low <= target <= high:
        raise ValueError(f"a planted correlation of {target:.4f} is out of reach: integer answers correlate between "
                         f"{low:.4f} and {high:.4f} with this truth")
    return float(optimize.brentq(lambda rho: pearson_of(truth, rho, thresholds, driver=driver) - target, 0.0,
                                 MAX_RHO, xtol=1e-12))


def solve_errors(truth_levels: np.ndarray, mae: float, accuracy: float, thresholds: Sequence[float],
                 driver: np.ndarray | None = None) -> tuple[float, float]:
    """The latent (ρ, μ) whose integer answers have mean absolute error ``mae`` and three-class accuracy
    ``accuracy`` (a share) against the integer truth (:func:`errors_of`), by least squares within ρ in
    [0, ``MAX_RHO``] and μ in [−3, 3]."""
    def misses(values: np.ndarray) -> np.ndarray:
        got = errors_of(truth_levels, float(values[0]), thresholds, float(values[1]), driver)
        return np.array([got[0] - mae, got[1] - accuracy])

    best = min((optimize.least_squares(misses, start, bounds=([0.0, -3.0], [MAX_RHO, 3.0]), xtol=1e-12, ftol=1e-12)
                for start in ([0.5, 0.0], [0.5, 1.0], [0.2, 1.5], [0.8, 0.5])), key=lambda fit: fit.cost)
    return float(best.x[0]), float(best.x[1])


def solve_bias(truth_levels: np.ndarray, mae: float, rho: float, thresholds: Sequence[float], lowest: float,
               driver: np.ndarray | None = None) -> float:
    """The latent shift, at least ``lowest`` (the shift of least error or above: a judge biased upwards), at which a
    judge of latent ``rho`` errs by ``mae`` on average against the integer truth (:func:`errors_of`)."""
    def miss(shift: float) -> float:
        return errors_of(truth_levels, rho, thresholds, shift, driver)[0] - mae

    if miss(lowest) >= 0:
        return lowest
    if miss(6.0) <= 0:  # more error than integer answers can make: the most they make
        return 6.0
    return float(optimize.brentq(miss, lowest, 6.0, xtol=1e-12))


def mean_answer(shift: float, thresholds: Sequence[float]) -> float:
    """The expected integer answer of a judge whose latent is ``shift`` plus a standard normal."""
    return float(1 + stats.norm.sf(np.asarray(thresholds) - shift).sum())


def solve_mean(target: float, thresholds: Sequence[float]) -> float:
    """The latent shift at which a judge's expected answer is ``target`` (kept within (1, 5): a planted multiple of
    an effect beyond the scale is its nearest end)."""
    target = min(max(target, mean_answer(-8.0, thresholds)), mean_answer(8.0, thresholds))
    return float(optimize.brentq(lambda shift: mean_answer(shift, thresholds) - target, -8.0, 8.0, xtol=1e-12))


def ensemble_pearson(truth: np.ndarray, rhos: Sequence[float], q: float, thresholds: Sequence[float],
                     draws: int = ENSEMBLE_DRAWS, seed: int = ENSEMBLE_SEED, driver: np.ndarray | None = None
                     ) -> tuple[float, np.ndarray]:
    """The Pearson correlation with the truth of the mean of k judges' integer answers (latent ρ of each, their
    noises correlating ``q``), and of each judge alone, by a seeded Monte Carlo integral over the population
    ``truth`` (answers without one left out): ``(mean's r, each judge's r)``. The same seed gives the same draws,
    so that two calls differ only by their parameters (common random numbers)."""
    truth, z_all = _population(truth, driver)
    rng = np.random.default_rng(seed)
    picked = rng.integers(0, len(truth), draws)
    t, z = truth[picked], z_all[picked]
    shared = rng.standard_normal(draws)
    own = rng.standard_normal((len(rhos), draws))
    noise = math.sqrt(q) * shared[None, :] + math.sqrt(1 - q) * own
    rhos = np.asarray(rhos, dtype=float)[:, None]
    judged = answers_from_latent(rhos * z[None, :] + np.sqrt(1 - rhos**2) * noise, thresholds).astype(float)
    each = np.array([np.corrcoef(row, t)[0, 1] for row in judged])
    return float(np.corrcoef(judged.mean(axis=0), t)[0, 1]), each
