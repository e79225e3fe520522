"""Potential surprise and normalised surprise (Lima & Peres, "Limits to surprise in recommender systems").

The model, in the paper's numbering:

- eq. 11: the surprise of an unknown item i for a user who knows the items E is its distance to the closest known
  item, ``S_i(i, E) = min_{j ∈ E} dist(i, j)``; eq. 12 is the similarity form ``max_{j ∈ E} sim(i, j)``
  (larger = *less* surprising; with a decreasing map sim → dist the two agree).
- eq. 13: consuming items one after another grows the known set, so a sequence's surprise is
  ``S_s(seq, E) = S_i(seq_1, E) + S_s(seq_2.., E ∪ {seq_1})`` — each item's surprise is taken w.r.t. E plus every
  item consumed before it.
- eq. 14–15: the maximum / minimum potential surprise over all orders of the unknown items N.
- eq. 17–20: greedy estimates (take the currently most / least surprising item, add it to E, repeat).
- eq. 16 / 21: normalised surprise ``(S_s − S_pmin) / (S_pmax − S_pmin)`` (exact / greedy limits), clipped to [0, 1].
- section 3.6: a truncated sequence of k < |N| items is measured against the limits over k-arrangements of N.

Exact limits beyond brute force: the surprise an item adds depends only on the *set* of items already known, not
on their order, so the best total over the items in a set S satisfies
``f(S) = best_{i ∈ S} [ f(S \\ {i}) + S_i(i, E ∪ S \\ {i}) ]`` — a dynamic programme over the 2^|N| subsets
(:func:`potential_surprise_exact`), exact and fast up to about 20 unknown items, where brute force over |N|!
orders (:func:`potential_surprise_bruteforce`) stops at about 10.

The greedy minimum is in fact exact for full sequences: consuming every item of N in some order links each item to
its closest earlier item (or to E), i.e. builds a spanning tree of N ∪ {E} whose weight is the sequence's surprise,
and the greedy-min order is Prim's algorithm, which yields the minimum spanning tree. The greedy maximum has no such
guarantee (and greedy limits of truncated sequences neither); :func:`greedy_gap` measures how far it falls.

A problem instance is a :class:`SurpriseProblem`: the initial surprise of every unknown item (its distance to E)
and the distances between unknown items. Item indices in orders are positions in N (0 … |N| − 1).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import islice, permutations
from typing import Literal

import numpy as np
import pandas as pd

from recjudge.surprise.distances import cross_distances

__all__ = [
    "DP_MAX_UNKNOWN",
    "NormalisedSurprise",
    "PotentialSurprise",
    "SurpriseProblem",
    "clip_unit_interval",
    "experiment_random_instances",
    "greedy_gap",
    "item_surprise",
    "item_surprise_similarity",
    "normalised_surprise",
    "potential_surprise_bruteforce",
    "potential_surprise_exact",
    "potential_surprise_greedy",
    "random_instance",
    "sequence_surprise",
    "sequence_surprise_terms",
    "summarise_greedy_gap",
]

Kind = Literal["max", "min"]
#: Largest number of unknown items the subset dynamic programme accepts (at 22 it needs about 2 GiB of memory).
DP_MAX_UNKNOWN = 22


# --------------------------------------------------------------------------------------------------------------------
# Item surprise (eq. 11, eq. 12)
# --------------------------------------------------------------------------------------------------------------------
def item_surprise(distances_to_known: Iterable[float]) -> float:
    """Eq. 11: surprise of an item = minimum of its distances to the known items."""
    d = np.asarray(list(distances_to_known), dtype=float)
    if d.size == 0:
        raise ValueError("item_surprise: the user knows no item (the model needs at least one known item)")
    return float(d.min())


def item_surprise_similarity(similarities_to_known: Iterable[float]) -> float:
    """Eq. 12 (similarity form, Kaminskas & Bridge): maximum similarity of the item to the known items.

    As printed in the paper this is a familiarity score: *higher* means *less* surprising. To use it in sequences,
    turn similarities into distances with a decreasing map (e.g. :func:`recjudge.distances.npmi_distance_matrix`,
    ``(1 − NPMI) / 2``); then eq. 11 on the distances equals the same map applied to this value.
    """
    s = np.asarray(list(similarities_to_known), dtype=float)
    if s.size == 0:
        raise ValueError("item_surprise_similarity: the user knows no item")
    return float(s.max())


# --------------------------------------------------------------------------------------------------------------------
# Problem instances
# --------------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SurpriseProblem:
    """One user's surprise problem: unknown items N and what is known about them.

    ``initial[i]`` is ``S_i(i, E)`` (distance of unknown item i to the closest known item) and ``row(i)`` returns the
    distances from unknown item i to every unknown item. Build with :meth:`from_distance_matrix` (a precomputed
    matrix over all items) or :meth:`from_vectors` (item vectors and a metric name from
    :data:`recjudge.distances.DISTANCES`; rows are computed lazily, so large N only costs what is used).
    """

    initial: np.ndarray
    row: Callable[[int], np.ndarray] = field(repr=False)
    _matrix: np.ndarray | None = field(default=None, repr=False)

    @property
    def n_unknown(self) -> int:
        return int(self.initial.size)

    def between(self) -> np.ndarray:
        """The full |N| × |N| distance matrix between unknown items (built from rows if needed)."""
        if self._matrix is not None:
            return self._matrix
        return np.vstack([self.row(i) for i in range(self.n_unknown)]) if self.n_unknown else np.zeros((0, 0))

    @classmethod
    def from_distance_matrix(cls, distances, known: Sequence[int], unknown: Sequence[int]) -> SurpriseProblem:
        """From a square distance matrix over items; ``known`` (E) and ``unknown`` (N) are row indices."""
        d = np.asarray(distances, dtype=float)
        if d.ndim != 2 or d.shape[0] != d.shape[1]:
            raise ValueError(f"distances must be a square matrix, got shape {d.shape}")
        known_idx, unknown_idx = np.asarray(known, dtype=int), np.asarray(unknown, dtype=int)
        if known_idx.size == 0:
            raise ValueError("the user knows no item: the model needs at least one known item (initial condition 1)")
        if np.intersect1d(known_idx, unknown_idx).size:
            raise ValueError("an item cannot be both known and unknown")
        initial = d[np.ix_(unknown_idx, known_idx)].min(axis=1)
        between = d[np.ix_(unknown_idx, unknown_idx)]
        if np.isnan(initial).any() or np.isnan(between).any():
            raise ValueError("the distance matrix holds NaN for some known/unknown items")
        return cls(initial=initial, row=lambda i, _b=between: _b[i], _matrix=between)

    @classmethod
    def from_vectors(cls, known_vectors, unknown_vectors, metric: str = "euclidean", **metric_options
                     ) -> SurpriseProblem:
        """From item vectors (rows) of the known and unknown items and a metric name."""
        known_v, unknown_v = np.atleast_2d(known_vectors), np.atleast_2d(unknown_vectors)
        if known_v.shape[0] == 0:
            raise ValueError("the user knows no item: the model needs at least one known item (initial condition 1)")
        initial = cross_distances(unknown_v, known_v, metric, **metric_options).min(axis=1)

        def row(i: int) -> np.ndarray:
            return cross_distances(unknown_v[i : i + 1], unknown_v, metric, **metric_options)[0]

        return cls(initial=initial, row=row)


# --------------------------------------------------------------------------------------------------------------------
# Sequence surprise (eq. 13)
# --------------------------------------------------------------------------------------------------------------------
def _check_order(problem: SurpriseProblem, order: Sequence[int]) -> np.ndarray:
    o = np.asarray(order, dtype=int)
    if o.size and (o.min() < 0 or o.max() >= problem.n_unknown):
        raise ValueError(f"order holds an index outside 0..{problem.n_unknown - 1}")
    if np.unique(o).size != o.size:
        raise ValueError("order repeats an item: a consumed item is known and cannot be recommended again")
    return o


def sequence_surprise_terms(problem: SurpriseProblem, order: Sequence[int]) -> np.ndarray:
    """Surprise each item of ``order`` adds, w.r.t. E plus all items consumed before it (the terms of eq. 13)."""
    o = _check_order(problem, order)
    current = problem.initial.astype(float).copy()
    terms = np.empty(o.size)
    for t, item in enumerate(o):
        terms[t] = current[item]
        current = np.minimum(current, problem.row(int(item)))
    return terms


def sequence_surprise(problem: SurpriseProblem, order: Sequence[int]) -> float:
    """Eq. 13: total surprise of consuming the unknown items in ``order`` (full or truncated sequence)."""
    return float(sequence_surprise_terms(problem, order).sum())


# --------------------------------------------------------------------------------------------------------------------
# Potential surprise: brute force, dynamic programme, greedy
# --------------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PotentialSurprise:
    """A potential-surprise limit: its ``value``, one ``order`` achieving it, and how it was computed."""

    value: float
    order: tuple[int, ...]
    kind: str
    method: str
    k: int


def _resolve_k(problem: SurpriseProblem, k: int | None) -> int:
    m = problem.n_unknown
    if k is None:
        return m
    if not 0 <= k <= m:
        raise ValueError(f"k must be between 0 and the number of unknown items ({m}), got {k}")
    return int(k)


def _check_kind(kind: str) -> None:
    if kind not in ("max", "min"):
        raise ValueError(f"kind must be 'max' or 'min', got {kind!r}")


def potential_surprise_bruteforce(
    problem: SurpriseProblem, kind: Kind = "max", k: int | None = None, *, batch: int = 100_000
) -> PotentialSurprise:
    """Eq. 14 / 15 by enumeration: evaluate eq. 13 on every order (every k-arrangement when ``k`` is given).

    |N|! orders: a reference for small N (tests use ≤ 8 items; 10 items take seconds). Orders are evaluated in
    numpy batches; ties keep the first order in :func:`itertools.permutations` order.
    """
    _check_kind(kind)
    m, k = problem.n_unknown, _resolve_k(problem, k)
    if k == 0:
        return PotentialSurprise(0.0, (), kind, "bruteforce", 0)
    between = problem.between()
    initial = problem.initial.astype(float)
    best_value, best_order = (-math.inf if kind == "max" else math.inf), None
    iterator = permutations(range(m), k)
    while True:
        chunk = np.array(list(islice(iterator, batch)), dtype=np.intp)
        if chunk.size == 0:
            break
        rows = np.arange(chunk.shape[0])
        current = np.broadcast_to(initial, (chunk.shape[0], m)).copy()
        total = np.zeros(chunk.shape[0])
        for t in range(k):
            item = chunk[:, t]
            total += current[rows, item]
            np.minimum(current, between[item], out=current)
        pos = int(np.argmax(total) if kind == "max" else np.argmin(total))
        if (kind == "max" and total[pos] > best_value) or (kind == "min" and total[pos] < best_value):
            best_value, best_order = float(total[pos]), tuple(int(x) for x in chunk[pos])
    return PotentialSurprise(best_value, best_order, kind, "bruteforce", k)


def _iter_layers(m: int) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """For p = 0 … m: the masks with p bits set, their p set bits (ascending) and the p sub-masks without each."""
    counts = np.zeros(1 << m, dtype=np.int8)
    for b in range(m):
        counts[1 << b : 1 << (b + 1)] = counts[: 1 << b] + 1
    order = np.argsort(counts, kind="stable").astype(np.int64)
    bounds = np.searchsorted(counts[order], np.arange(m + 2))
    for p in range(m + 1):
        masks = order[bounds[p] : bounds[p + 1]]
        bits = ((masks[:, None] >> np.arange(m)) & 1).astype(bool)
        items = np.nonzero(bits)[1].reshape(masks.size, p)  # row-major: ascending bit order in each row
        previous = masks[:, None] ^ (np.int64(1) << items)
        yield masks, items.astype(np.int8), previous


@lru_cache(maxsize=8)
def _small_layer_plan(m: int) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...]:
    return tuple(_iter_layers(m))


def _layer_plan(m: int) -> Iterable[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    # Plans depend only on |N|: small ones are kept and reused, large ones (hundreds of MB) are generated layer by
    # layer so that only one layer is in memory at a time.
    return _small_layer_plan(m) if m <= 16 else _iter_layers(m)


def potential_surprise_exact(problem: SurpriseProblem, kind: Kind = "max", k: int | None = None) -> PotentialSurprise:
    """Eq. 14 / 15 exactly, by dynamic programming over subsets of the unknown items.

    ``f(S)`` is the best total surprise of consuming exactly the items of S (in the best order), starting from E.
    The last item i of an optimal order for S adds ``S_i(i, E ∪ S \\ {i})``, which depends on the set only, so
    ``f(S) = best_{i ∈ S} f(S \\ {i}) + S_i(i, E ∪ S \\ {i})`` with f(∅) = 0. The answer is f(N) for full
    sequences and ``best_{|S| = k} f(S)`` for truncated sequences of length k (section 3.6). Time O(|N|·2^|N|),
    memory O(|N|·2^|N|): exact up to :data:`DP_MAX_UNKNOWN` unknown items. Ties resolve to the lowest item index
    at each step, so the returned order is one of possibly several optimal ones.
    """
    _check_kind(kind)
    m, k = problem.n_unknown, _resolve_k(problem, k)
    if m > DP_MAX_UNKNOWN:
        raise ValueError(
            f"potential_surprise_exact: {m} unknown items is beyond the exact programme's limit "
            f"({DP_MAX_UNKNOWN}); use potential_surprise_greedy"
        )
    if k == 0:
        return PotentialSurprise(0.0, (), kind, "exact_dp", 0)
    between = problem.between()
    n_masks = 1 << m
    # surprise[S, i] = S_i(i, E ∪ S): the distance of unknown item i to its closest item in E ∪ S.
    surprise = np.empty((n_masks, m))
    surprise[0] = problem.initial
    for b in range(m):
        lo, hi = 1 << b, 1 << (b + 1)
        np.minimum(surprise[:lo], between[b][None, :], out=surprise[lo:hi])
    worst = -np.inf if kind == "max" else np.inf
    best = np.full(n_masks, worst)
    best[0] = 0.0
    last = np.full(n_masks, -1, dtype=np.int8)
    pick = np.argmax if kind == "max" else np.argmin
    final_layer = np.zeros(1, dtype=np.int64)
    for p, (masks, items, previous) in enumerate(_layer_plan(m)):
        if p == 0:
            continue
        if p > k:
            break
        candidates = best[previous] + surprise[previous, items]
        choice = pick(candidates, axis=1)  # first best = lowest item index on ties
        rows = np.arange(masks.size)
        best[masks] = candidates[rows, choice]
        last[masks] = items[rows, choice]
        final_layer = masks
    pos = int(np.argmax(best[final_layer]) if kind == "max" else np.argmin(best[final_layer]))
    mask = int(final_layer[pos])
    value = float(best[mask])
    order: list[int] = []
    while mask:
        i = int(last[mask])
        order.append(i)
        mask ^= 1 << i
    return PotentialSurprise(value, tuple(reversed(order)), kind, "exact_dp", k)


def potential_surprise_greedy(problem: SurpriseProblem, kind: Kind = "max", k: int | None = None) -> PotentialSurprise:
    """Eq. 17–20: repeatedly take the most (``max``) / least (``min``) surprising remaining item w.r.t. the
    current known set, add it to the known set, and sum the surprises; stop after ``k`` items (section 3.6) or
    when N is exhausted. Ties go to the lowest index. Needs only k rows of distances, so it scales to large N.

    For full sequences the greedy minimum equals the exact minimum (it is Prim's minimum-spanning-tree algorithm;
    see the module docstring); the greedy maximum is a lower bound of the exact maximum.
    """
    _check_kind(kind)
    k = _resolve_k(problem, k)
    current = problem.initial.astype(float).copy()
    available = np.ones(problem.n_unknown, dtype=bool)
    order, total = [], 0.0
    for _ in range(k):
        masked = np.where(available, current, -np.inf if kind == "max" else np.inf)
        item = int(np.argmax(masked) if kind == "max" else np.argmin(masked))
        total += current[item]
        order.append(item)
        available[item] = False
        current = np.minimum(current, problem.row(item))
    return PotentialSurprise(float(total), tuple(order), kind, "greedy", k)


_METHODS: dict[str, Callable[..., PotentialSurprise]] = {
    "greedy": potential_surprise_greedy,
    "exact": potential_surprise_exact,
    "bruteforce": potential_surprise_bruteforce,
}
#: ``PotentialSurprise.method`` of each method's results.
_METHOD_LABELS = {"greedy": "greedy", "exact": "exact_dp", "bruteforce": "bruteforce"}


# --------------------------------------------------------------------------------------------------------------------
# Normalised surprise (eq. 16 / 21)
# --------------------------------------------------------------------------------------------------------------------
def clip_unit_interval(values) -> tuple[np.ndarray, int]:
    """Clip values to [0, 1]; returns the clipped array and how many values were outside (NaN left as is)."""
    v = np.asarray(values, dtype=float)
    outside = int(np.sum((v < 0) | (v > 1)))
    return np.clip(v, 0.0, 1.0), outside


@dataclass(frozen=True)
class NormalisedSurprise:
    """Normalised surprise of one sequence: ``value`` in [0, 1] (NaN if the limits coincide), the unclipped
    ``raw`` ratio, whether it was ``clipped``, the sequence's surprise and the limits used."""

    value: float
    raw: float
    clipped: bool
    surprise: float
    s_min: float
    s_max: float
    method: str
    k: int


def normalised_surprise(
    problem: SurpriseProblem, order: Sequence[int], method: Literal["greedy", "exact", "bruteforce"] = "greedy",
    *, limits: tuple[PotentialSurprise, PotentialSurprise] | None = None,
) -> NormalisedSurprise:
    """Eq. 16 (``method="exact"``/``"bruteforce"``) or eq. 21 (``"greedy"``, the paper's Ŝ_sn).

    The limits are taken over sequences of the same length as ``order``: all of N for a full sequence, the
    k-arrangements of N for a truncated one (section 3.6). With greedy limits the ratio can leave [0, 1] (a
    greedy maximum can underestimate the exact one); it is then clipped to [0, 1] as in the paper's Experiment 2,
    and ``clipped`` says so. When the two limits are equal the scale is degenerate and ``value`` is NaN.

    ``limits``: the (minimum, maximum) :class:`PotentialSurprise` of this problem already computed with ``method``
    for lists of ``len(order)`` items (several lists of one user share them); checked, not recomputed.
    """
    if method not in _METHODS:
        raise ValueError(f"method must be one of {sorted(_METHODS)}, got {method!r}")
    k = len(order)
    s = sequence_surprise(problem, order)
    if limits is None:
        s_max = _METHODS[method](problem, "max", k).value
        s_min = _METHODS[method](problem, "min", k).value
    else:
        low, high = limits
        expected = _METHOD_LABELS[method]
        if (low.kind, high.kind) != ("min", "max") or (low.k, high.k) != (k, k) or {low.method, high.method} != {
                expected}:
            raise ValueError(f"limits must be the {method} minimum and maximum for lists of {k} items")
        s_min, s_max = low.value, high.value
    span = s_max - s_min
    if span <= 1e-12 * max(1.0, abs(s_max)):
        return NormalisedSurprise(float("nan"), float("nan"), False, s, s_min, s_max, method, k)
    raw = (s - s_min) / span
    value = float(min(1.0, max(0.0, raw)))
    return NormalisedSurprise(value, float(raw), value != raw, s, s_min, s_max, method, k)


# --------------------------------------------------------------------------------------------------------------------
# Experiment 1 support (Table 1) and the greedy gap
# --------------------------------------------------------------------------------------------------------------------
TABLE1_DISTANCES = ("euclidean", "cosine", "jaccard", "jensen_shannon")
#: Table 1 of Lima & Peres (one unpublished random instance): exact and greedy limits per distance.
TABLE1_PAPER = pd.DataFrame(
    {
        "distance": list(TABLE1_DISTANCES),
        "s_pmax": [37.684, 1.367, 3.784, 2.089],
        "s_pmax_greedy": [36.948, 1.367, 3.784, 2.089],
        "s_pmin": [23.935, 0.277, 2.552, 0.494],
        "s_pmin_greedy": [23.935, 0.277, 2.552, 0.494],
    }
)


def random_instance(n_items: int = 11, dim: int = 2, seed: int = 0, *, low: float = 0.0, high: float = 10.0
                    ) -> np.ndarray:
    """``n_items`` points drawn uniformly from [low, high]^dim with ``numpy.random.default_rng(seed)``.

    Non-negative coordinates keep Jaccard and Jensen–Shannon defined. The paper's points are not published
    ("arbitrarily distributed" in R²); the box [0, 10]² is this compendium's choice, so only scale-free quantities
    (ratios, normalised surprise) are comparable with its Table 1.
    """
    return np.random.default_rng(seed).uniform(low, high, size=(n_items, dim))


def _limits_row(problem: SurpriseProblem, exact_method: str) -> dict[str, float]:
    exact = _METHODS[exact_method]
    out = {
        "s_pmax": exact(problem, "max").value,
        "s_pmax_greedy": potential_surprise_greedy(problem, "max").value,
        "s_pmin": exact(problem, "min").value,
        "s_pmin_greedy": potential_surprise_greedy(problem, "min").value,
    }
    out["max_ratio"] = out["s_pmax_greedy"] / out["s_pmax"] if out["s_pmax"] else float("nan")
    out["min_ratio"] = out["s_pmin_greedy"] / out["s_pmin"] if out["s_pmin"] else float("nan")
    return out


def experiment_random_instances(
    n_items: int = 11,
    dim: int = 2,
    distances: Sequence[str] = TABLE1_DISTANCES,
    seeds: Iterable[int] = range(100),
    *,
    n_known: int = 1,
    exact_method: Literal["exact", "bruteforce"] = "exact",
    low: float = 0.0,
    high: float = 10.0,
) -> pd.DataFrame:
    """Experiment 1 (Table 1) over many random instances: exact vs greedy potential-surprise limits.

    For each seed, :func:`random_instance` draws ``n_items`` points in [low, high]^dim; the first ``n_known`` are
    the user's known items E, the others are N (paper: 11 items in R², one known, so |N| = 10). For every
    distance name (see :data:`recjudge.distances.DISTANCES`; default the paper's four: Euclidean, cosine,
    Jaccard, Jensen–Shannon divergence) it computes the exact limits (subset dynamic programme; ``"bruteforce"``
    enumerates the 10! orders instead, same values, much slower) and the greedy estimates.

    Returns one row per (seed, distance) with columns ``seed``, ``distance``, ``n_unknown``, ``s_pmax``,
    ``s_pmax_greedy``, ``s_pmin``, ``s_pmin_greedy``, ``max_ratio`` (greedy/exact max, ≤ 1), ``min_ratio``
    (greedy/exact min, ≥ 1), ``max_exact`` and ``min_exact`` (greedy equals exact within 1e-9 relative).
    Compare with :data:`TABLE1_PAPER` (one instance in the paper; its points are not published).
    """
    rows = []
    for seed in seeds:
        points = random_instance(n_items, dim, seed, low=low, high=high)
        for metric in distances:
            problem = SurpriseProblem.from_vectors(points[:n_known], points[n_known:], metric)
            row = {"seed": int(seed), "distance": metric, "n_unknown": problem.n_unknown}
            row.update(_limits_row(problem, exact_method))
            rows.append(row)
    table = pd.DataFrame(rows)
    table["max_exact"] = np.isclose(table["s_pmax_greedy"], table["s_pmax"], rtol=1e-9, atol=0)
    table["min_exact"] = np.isclose(table["s_pmin_greedy"], table["s_pmin"], rtol=1e-9, atol=0)
    return table


def greedy_gap(
    n_unknown: Sequence[int] = (5, 10, 15, 18),
    n_instances: int = 50,
    distances: Sequence[str] = TABLE1_DISTANCES,
    *,
    dim: int = 2,
    n_known: int = 1,
    seed: int = 0,
    low: float = 0.0,
    high: float = 10.0,
) -> pd.DataFrame:
    """How far the greedy limits (eq. 17, 19) fall from the exact ones (eq. 14, 15) on random instances.

    For each |N| in ``n_unknown`` (≤ :data:`DP_MAX_UNKNOWN`) and each of ``n_instances`` instances (seeds
    ``seed, seed + 1, …``; ``n_known + |N|`` uniform points in [low, high]^dim), and each distance, compares the
    greedy estimates with the exact dynamic-programme limits. Time grows as |N|·2^|N|: about a second per
    instance and distance at |N| = 18 on one core.

    Returns one row per (n_unknown, seed, distance, kind) with ``exact``, ``greedy``, ``ratio`` (greedy / exact),
    ``relative_gap`` (|greedy − exact| / exact) and ``greedy_is_exact``. :func:`summarise_greedy_gap` turns it
    into a summary table.
    """
    rows = []
    for m in n_unknown:
        if m > DP_MAX_UNKNOWN:
            raise ValueError(f"greedy_gap: |N| = {m} is beyond the exact programme's limit ({DP_MAX_UNKNOWN})")
        for s in range(seed, seed + n_instances):
            points = random_instance(n_known + m, dim, s, low=low, high=high)
            for metric in distances:
                problem = SurpriseProblem.from_vectors(points[:n_known], points[n_known:], metric)
                for kind in ("max", "min"):
                    exact = potential_surprise_exact(problem, kind).value
                    greedy = potential_surprise_greedy(problem, kind).value
                    rows.append({
                        "n_unknown": m, "seed": s, "distance": metric, "kind": kind, "exact": exact,
                        "greedy": greedy, "ratio": greedy / exact if exact else float("nan"),
                        "relative_gap": abs(greedy - exact) / exact if exact else float("nan"),
                        "greedy_is_exact": bool(np.isclose(greedy, exact, rtol=1e-9, atol=0)),
                    })
    return pd.DataFrame(rows)


def summarise_greedy_gap(gap: pd.DataFrame) -> pd.DataFrame:
    """Per (distance, kind, n_unknown): instances, share where greedy is exact, mean / median / max relative gap."""
    return (
        gap.groupby(["distance", "kind", "n_unknown"], sort=True)
        .agg(
            instances=("relative_gap", "size"),
            share_exact=("greedy_is_exact", "mean"),
            mean_relative_gap=("relative_gap", "mean"),
            median_relative_gap=("relative_gap", "median"),
            max_relative_gap=("relative_gap", "max"),
        )
        .reset_index()
    )
