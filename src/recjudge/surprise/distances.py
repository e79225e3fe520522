"""Distances between items, for the surprise model of Lima & Peres (section 4: Table 1 and Table 2).

Geometric: :func:`euclidean`, :func:`cosine` (scipy). Combinatorial: :func:`jaccard` (weighted Jaccard of
non-negative vectors, which equals scipy's Jaccard on binary vectors) and :func:`jaccard_sets`. Informational:
:func:`jensen_shannon` (the divergence, as the paper names it) and NPMI (:func:`npmi_matrix`,
:func:`npmi_distance_matrix`). Statistical: :func:`aitchison`, with zeros replaced by the Bayesian-multiplicative
treatment with the Perks prior (:func:`bayesian_multiplicative_replacement`).

Every metric has a vector form ``f(u, v) -> float`` and is available to :func:`pairwise_distances` /
:func:`cross_distances` by name (``DISTANCES``), which compute whole matrices with scipy's ``cdist``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Literal

import numpy as np
from scipy import sparse
from scipy.spatial import distance as sp_distance

__all__ = [
    "DISTANCES",
    "PRIOR_STRENGTHS",
    "aitchison",
    "bayesian_multiplicative_replacement",
    "clr",
    "cosine",
    "cross_distances",
    "euclidean",
    "jaccard",
    "jaccard_sets",
    "jensen_shannon",
    "jensen_shannon_distance",
    "npmi_distance_matrix",
    "npmi_matrix",
    "pairwise_distances",
]


# --------------------------------------------------------------------------------------------------------------------
# Zero replacement and the centred log-ratio
# --------------------------------------------------------------------------------------------------------------------
#: Prior strength s of the Dirichlet prior, as a function of the number of parts D and the total n.
PRIOR_STRENGTHS: dict[str, Callable[[int, np.ndarray], np.ndarray | float]] = {
    "perks": lambda d, n: 1.0,
    "jeffreys": lambda d, n: d / 2,
    "bayes-laplace": lambda d, n: float(d),
    "sq": lambda d, n: np.sqrt(n),
}


def bayesian_multiplicative_replacement(
    counts, prior: Literal["perks", "jeffreys", "bayes-laplace", "sq"] = "perks"
) -> np.ndarray:
    """Replace zeros of count compositions by the Bayesian-multiplicative treatment (BMT).

    Martín-Fernández, Hron, Templ, Filzmoser & Palarea-Albaladejo (2015), the treatment cited by Lima & Peres
    (Egozcue et al. 2011). For one composition x with D parts and total n = Σ x_j, a Dirichlet prior with strength
    s and expected proportions t_j = 1/D (Perks: s = 1; Jeffreys: s = D/2; Bayes–Laplace: s = D; square root:
    s = √n) gives the posterior expected proportion of a zero part ``r_j = s·t_j / (n + s)``. Zero parts take
    that value and the non-zero parts are shrunk multiplicatively so that the composition still sums to one and
    the ratios between non-zero parts are kept::

        x*_j = r_j                                   if x_j = 0
        x*_j = (x_j / n) · (1 − Σ_{k: x_k = 0} r_k)   if x_j > 0

    ``counts`` is a 1-D vector or a 2-D array with one composition per row; the result is in proportions (rows
    sum to one). Rows without zeros are simply closed (divided by their total). Real-valued non-negative data
    (tf-idf weights, ratings) are treated as counts with n = their sum, as the paper does. Raises
    :class:`ValueError` on negative values or an all-zero row.
    """
    x = np.asarray(counts.toarray() if sparse.issparse(counts) else counts, dtype=float)
    one_d = x.ndim == 1
    x = np.atleast_2d(x)
    if np.any(x < 0) or np.any(np.isnan(x)):
        raise ValueError("bayesian_multiplicative_replacement: compositions must be non-negative and not NaN")
    n = x.sum(axis=1, keepdims=True)
    if np.any(n == 0):
        bad = int(np.flatnonzero(n.ravel() == 0)[0])
        raise ValueError(f"bayesian_multiplicative_replacement: row {bad} is all zeros (no composition)")
    if prior not in PRIOR_STRENGTHS:
        raise ValueError(f"unknown prior {prior!r}; expected one of {sorted(PRIOR_STRENGTHS)}")
    d = x.shape[1]
    s = np.broadcast_to(np.asarray(PRIOR_STRENGTHS[prior](d, n), dtype=float), n.shape)
    r = s * (1.0 / d) / (n + s)
    zero = x == 0
    shrink = 1.0 - (zero * r).sum(axis=1, keepdims=True)
    out = np.where(zero, r, x / n * shrink)
    return out[0] if one_d else out


def clr(compositions, replace_zeros: bool = True) -> np.ndarray:
    """Centred log-ratio transform ``clr(x)_j = log x_j − mean_k log x_k`` (row-wise for 2-D input).

    With ``replace_zeros`` (default) zeros are first replaced by :func:`bayesian_multiplicative_replacement`
    with the Perks prior; without it, a zero raises :class:`ValueError` (the log-ratio is undefined).
    """
    x = np.asarray(compositions.toarray() if sparse.issparse(compositions) else compositions, dtype=float)
    if replace_zeros and np.any(x == 0):
        x = bayesian_multiplicative_replacement(x, "perks")
    if np.any(x <= 0):
        raise ValueError("clr: compositions must be strictly positive (pass replace_zeros=True to treat zeros)")
    logs = np.log(x)
    return logs - logs.mean(axis=-1, keepdims=True)


# --------------------------------------------------------------------------------------------------------------------
# Vector forms
# --------------------------------------------------------------------------------------------------------------------
def euclidean(u, v) -> float:
    """Non-normalised Euclidean distance (scipy)."""
    return float(sp_distance.euclidean(u, v))


def cosine(u, v) -> float:
    """Cosine distance ``1 − cos(u, v)`` in [0, 2] (scipy)."""
    return float(sp_distance.cosine(u, v))


def jaccard(u, v) -> float:
    """Weighted Jaccard distance of non-negative vectors: ``1 − Σ min(u_j, v_j) / Σ max(u_j, v_j)``.

    This is the Jaccard measure for real vectors of Jurafsky & Martin (Speech and Language Processing, the
    reference Lima & Peres give for applying Jaccard to vectors); on binary vectors it equals scipy's
    :func:`scipy.spatial.distance.jaccard`. Two all-zero vectors are at distance 0.
    """
    a, b = np.asarray(u, dtype=float), np.asarray(v, dtype=float)
    if np.any(a < 0) or np.any(b < 0):
        raise ValueError("jaccard: the weighted Jaccard distance needs non-negative vectors")
    top = np.maximum(a, b).sum()
    return 0.0 if top == 0 else float(1.0 - np.minimum(a, b).sum() / top)


def jaccard_sets(a: Iterable, b: Iterable) -> float:
    """Jaccard distance ``1 − |A ∩ B| / |A ∪ B|`` of two sets (e.g. genre or tag sets); 0 for two empty sets."""
    sa, sb = set(a), set(b)
    union = len(sa | sb)
    return 0.0 if union == 0 else 1.0 - len(sa & sb) / union


def _smoothed(u, v, smooth_zeros: bool) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.asarray(u, dtype=float), np.asarray(v, dtype=float)
    if smooth_zeros:
        a, b = bayesian_multiplicative_replacement(a), bayesian_multiplicative_replacement(b)
    return a, b


def jensen_shannon(u, v, smooth_zeros: bool = False) -> float:
    """Jensen–Shannon divergence (natural log) of two non-negative vectors, each first normalised to sum to one.

    ``JS(p, q) = ½ KL(p ‖ m) + ½ KL(q ‖ m)`` with m = (p + q)/2, in [0, ln 2]; computed as the square of scipy's
    :func:`~scipy.spatial.distance.jensenshannon`. Lima & Peres call it a divergence, so that is what this returns
    (see :func:`jensen_shannon_distance` for its square root, a metric). Zeros are well defined here (0·log 0 = 0);
    ``smooth_zeros=True`` applies the BMT/Perks replacement first, as the paper did.
    """
    a, b = _smoothed(u, v, smooth_zeros)
    return float(sp_distance.jensenshannon(a, b) ** 2)


def jensen_shannon_distance(u, v, smooth_zeros: bool = False) -> float:
    """Jensen–Shannon distance: the square root of :func:`jensen_shannon` (scipy)."""
    a, b = _smoothed(u, v, smooth_zeros)
    return float(sp_distance.jensenshannon(a, b))


def aitchison(u, v, replace_zeros: bool = True) -> float:
    """Aitchison distance ``‖clr(u) − clr(v)‖`` of two compositions (zeros: BMT with the Perks prior)."""
    return float(np.linalg.norm(clr(u, replace_zeros) - clr(v, replace_zeros)))


# --------------------------------------------------------------------------------------------------------------------
# NPMI from co-occurrence counts
# --------------------------------------------------------------------------------------------------------------------
def npmi_matrix(incidence) -> np.ndarray:
    """Normalised pointwise mutual information between the columns (items) of a users × items incidence matrix.

    ``P(i)`` is the share of users exposed to item i and ``P(i, j)`` the share exposed to both (Lima & Peres,
    model N; Bouma 2009)::

        NPMI(i, j) = log( P(i, j) / (P(i) P(j)) ) / ( −log P(i, j) )   in [−1, 1]

    with the limits NPMI = −1 when i and j never co-occur, and NPMI = 1 when P(i, j) = 1 (every user saw both).
    The diagonal is 1. Items nobody was exposed to get NaN rows and columns (drop them first). ``incidence`` may
    be dense or scipy-sparse; any non-zero entry counts as an exposure.
    """
    m = sparse.csc_matrix(incidence, dtype=float)
    m.data = np.ones_like(m.data)
    n_users = m.shape[0]
    if n_users == 0:
        raise ValueError("npmi_matrix: the incidence matrix has no rows (users)")
    joint_counts = np.asarray((m.T @ m).toarray(), dtype=float)
    p_item = np.diag(joint_counts) / n_users
    p_joint = joint_counts / n_users
    with np.errstate(divide="ignore", invalid="ignore"):
        pmi = np.log(p_joint) - np.log(p_item)[:, None] - np.log(p_item)[None, :]
        npmi = pmi / -np.log(p_joint)
    npmi = np.where(p_joint == 0, -1.0, npmi)
    npmi = np.where(p_joint == 1, 1.0, npmi)
    unseen = p_item == 0
    npmi[unseen, :] = np.nan
    npmi[:, unseen] = np.nan
    return np.clip(npmi, -1.0, 1.0)


def npmi_distance_matrix(incidence) -> np.ndarray:
    """NPMI similarity inverted and rescaled to a distance in [0, 1]: ``d = (1 − NPMI) / 2``.

    −1 (never together) maps to 1 and +1 (always together) to 0. Because the map is decreasing, the minimum
    distance to the known items (eq. 11) is ``(1 − max NPMI) / 2``, i.e. eq. 12's maximum similarity rescaled.
    """
    return (1.0 - npmi_matrix(incidence)) / 2.0


# --------------------------------------------------------------------------------------------------------------------
# Matrices
# --------------------------------------------------------------------------------------------------------------------
#: Vector distances available by name.
DISTANCES: dict[str, Callable[[np.ndarray, np.ndarray], float]] = {
    "euclidean": euclidean,
    "cosine": cosine,
    "jaccard": jaccard,
    "jensen_shannon": jensen_shannon,
    "jensen_shannon_distance": jensen_shannon_distance,
    "aitchison": aitchison,
}


def _dense(x) -> np.ndarray:
    return np.atleast_2d(np.asarray(x.toarray() if sparse.issparse(x) else x, dtype=float))


def _weighted_jaccard_cdist(a: np.ndarray, b: np.ndarray, chunk: int = 256) -> np.ndarray:
    if np.any(a < 0) or np.any(b < 0):
        raise ValueError("jaccard: the weighted Jaccard distance needs non-negative vectors")
    out = np.empty((a.shape[0], b.shape[0]))
    for start in range(0, a.shape[0], chunk):  # chunks bound the (rows × cols × dim) temporary
        block = a[start : start + chunk, None, :]
        mins = np.minimum(block, b[None]).sum(axis=-1)
        maxs = np.maximum(block, b[None]).sum(axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start : start + chunk] = np.where(maxs > 0, 1.0 - mins / np.where(maxs > 0, maxs, 1.0), 0.0)
    return out


def cross_distances(a, b, metric: str = "euclidean", *, smooth_zeros: bool = False) -> np.ndarray:
    """Distance matrix between the rows of ``a`` and the rows of ``b`` for a metric named in ``DISTANCES``.

    Euclidean, cosine and Jensen–Shannon use :func:`scipy.spatial.distance.cdist`; Aitchison is the Euclidean
    distance of the clr-transformed rows (zeros replaced by BMT/Perks); Jaccard is the weighted Jaccard.
    ``smooth_zeros`` applies the BMT/Perks replacement before Jensen–Shannon (as the paper did).
    """
    if metric not in DISTANCES:
        raise ValueError(f"unknown distance {metric!r}; expected one of {sorted(DISTANCES)}")
    x, y = _dense(a), _dense(b)
    if x.shape[1] != y.shape[1]:
        raise ValueError(f"cross_distances: vectors have different dimensions ({x.shape[1]} and {y.shape[1]})")
    if metric == "euclidean":
        return sp_distance.cdist(x, y, "euclidean")
    if metric == "cosine":
        return sp_distance.cdist(x, y, "cosine")
    if metric == "jaccard":
        return _weighted_jaccard_cdist(x, y)
    if metric == "aitchison":
        return sp_distance.cdist(clr(x), clr(y), "euclidean")
    if smooth_zeros:
        x, y = bayesian_multiplicative_replacement(x), bayesian_multiplicative_replacement(y)
    js = sp_distance.cdist(x, y, "jensenshannon")
    return js**2 if metric == "jensen_shannon" else js


def pairwise_distances(x, metric: str = "euclidean", *, smooth_zeros: bool = False) -> np.ndarray:
    """Symmetric distance matrix between the rows of ``x`` (zero diagonal); see :func:`cross_distances`."""
    d = cross_distances(x, x, metric, smooth_zeros=smooth_zeros)
    d = (d + d.T) / 2  # remove rounding asymmetry
    np.fill_diagonal(d, 0.0)
    return d
