"""The three recommenders of Lima & Peres (2018), section 4.2, as scoring functions over candidate items.

The paper: *"three algorithms were used: a) the traditional item-kNN (with k = 50), which scores items according to
the weighted average rating attributed to the k most similar items known to a given user; b) an algorithm that
scores items according to their degree of surprise (MSI - Most Surprising Item), which promotes the generation of
surprising recommendation lists; and c) an algorithm that scores items according to its familiarity (LSI - Least
Surprising Items), which promotes non-surprising recommendation lists."*

Every scorer receives ``distances``: the matrix of distances from each candidate (row) to each item the user knows
(column), under the item model and distance being evaluated, so each recommender sees the same notion of
similarity as the surprise measure (the paper's kNN column changes with model and distance, Table 2).

- MSI scores a candidate by its surprise ``S_i(i, E_u) = min_j dist(i, j)`` (eq. 11).
- LSI scores it by its familiarity, ``-S_i(i, E_u)``.
- item-kNN takes the ``k`` known items nearest to the candidate and averages the user's ratings of them, weighted
  by the similarity ``1 / (1 + dist)`` (a decreasing map valid for every distance used, bounded or not; the paper
  does not say which similarity its kNN used).

Rankings break ties by candidate order (stable sort), and Algorithm 1 shuffles candidates, so ties fall at random.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

#: Recommender names as in the paper's Table 2, in its column order.
RECOMMENDERS = ("MSI", "kNN", "LSI")
PAPER_K_NEIGHBOURS = 50


def _check_block(distances: np.ndarray) -> np.ndarray:
    distances = np.asarray(distances, dtype=np.float64)
    if distances.ndim != 2:
        raise ValueError(f"distances must be a candidates x known-items matrix, got shape {distances.shape}")
    if distances.shape[1] == 0:
        raise ValueError("the user knows no item: surprise (eq. 11) is undefined with an empty E_u")
    return distances


def item_surprise(distances: np.ndarray) -> np.ndarray:
    """Eq. 11: ``S_i(i, E_u) = min over known j of dist(i, j)``, one value per candidate row."""
    return _check_block(distances).min(axis=1)


def most_surprising_item_scores(distances: np.ndarray, known_ratings: np.ndarray | None = None) -> np.ndarray:
    """MSI: the candidate's surprise (higher is recommended first)."""
    return item_surprise(distances)


def least_surprising_item_scores(distances: np.ndarray, known_ratings: np.ndarray | None = None) -> np.ndarray:
    """LSI: the candidate's familiarity, minus its surprise."""
    return -item_surprise(distances)


def item_knn_scores(distances: np.ndarray, known_ratings: np.ndarray, k: int = PAPER_K_NEIGHBOURS) -> np.ndarray:
    """item-kNN: weighted average of the user's ratings of the ``k`` nearest known items, weights
    ``1 / (1 + dist)``. With fewer than ``k`` known items all of them are neighbours."""
    distances = _check_block(distances)
    known_ratings = np.asarray(known_ratings, dtype=np.float64)
    if known_ratings.shape != (distances.shape[1],):
        raise ValueError(
            f"known_ratings has shape {known_ratings.shape}; expected one rating per known item "
            f"({distances.shape[1]})"
        )
    if k < 1:
        raise ValueError(f"k must be positive, got {k}")
    weights = np.where(nearest_known(distances, k), 1.0 / (1.0 + distances), 0.0)
    return (weights * known_ratings).sum(axis=1) / weights.sum(axis=1)


def nearest_known(distances: np.ndarray, k: int) -> np.ndarray:
    """Boolean mask of each candidate's ``k`` nearest known items (all of them when fewer than ``k``). Items tied
    with the k-th distance are taken in known-item order, so the choice is the same on every machine (which tied
    positions ``np.argpartition`` returns depends on the CPU's sorting kernels)."""
    if distances.shape[1] <= k:
        return np.ones(distances.shape, dtype=bool)
    kth = np.partition(distances, k - 1, axis=1)[:, k - 1:k]  # the k-th smallest value is unique, its position not
    closer = distances < kth
    tied = distances == kth
    wanted = k - closer.sum(axis=1)  # how many of each row's tied items are neighbours
    mask = closer | tied
    # Only rows with more tied items than wanted choose among them (counting along the row is the costly part)
    choosing = np.flatnonzero(tied.sum(axis=1) > wanted)
    if choosing.size:
        rows_tied = tied[choosing]
        mask[choosing] = closer[choosing] | (rows_tied & (np.cumsum(rows_tied, axis=1) <= wanted[choosing, None]))
    return mask


def scorer(name: str, k: int = PAPER_K_NEIGHBOURS) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """The scoring function of recommender ``name`` (one of :data:`RECOMMENDERS`)."""
    if name == "MSI":
        return most_surprising_item_scores
    if name == "LSI":
        return least_surprising_item_scores
    if name == "kNN":
        return lambda distances, ratings: item_knn_scores(distances, ratings, k)
    raise ValueError(f"unknown recommender {name!r}; expected one of {RECOMMENDERS}")


def top_n(scores: np.ndarray, n: int) -> np.ndarray:
    """Positions of the ``n`` highest scores, best first; ties keep candidate order (Algorithm 1, lines 8–9)."""
    scores = np.asarray(scores, dtype=np.float64)
    if np.isnan(scores).any():
        raise ValueError("a recommender produced NaN scores")
    return np.argsort(-scores, kind="stable")[:n]
