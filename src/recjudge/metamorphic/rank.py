"""Similarity of two ranked lists: Kendall's tau (two variants), the overlap ratio and rank-biased overlap.

Lists of recommendations rarely hold the same items, so Kendall's tau needs a definition for that case:

- ``kendall_tau_union`` (the variant reported as "Kendall tau" in the chapter, the one that matches Khirbat et al.'s
  description of a measure of "the overall order of items in the list"): tau-b over the union of the two lists; an
  item absent from a list is placed in that list at the bottom, all absent items tied there (rank len + 1). Items
  missing from one list therefore count as disagreement with the items it holds.
- ``kendall_tau_shared``: tau-b over the items in both lists only, each at its position (order agreement of what
  the two lists have in common, blind to how much that is). NaN with fewer than two shared items.

Both use ``scipy.stats.kendalltau`` (tau-b). ``overlap_ratio`` is |x ∩ y| / max(|x|, |y|) (= |x ∩ y| / k for two
top-k lists).

``rank_biased_overlap`` follows Webber, Moffat & Zobel (2010): the agreement A_d (overlap of the two prefixes of
depth d divided by d) weighted by (1 - p) p^(d-1), with the lists of uneven length handled as in their section 4.3
(the shorter list S of length s, the longer L of length l): ``min`` assumes no overlap beyond what is seen, ``max``
the most overlap the unseen tails allow, ``ext`` extrapolates the agreement at depth s to the unseen part of S and
the agreement at depth l beyond l (their equation 32), ``res`` = max - min.

Ties follow Corsi & Urbano (SIGIR 2024). A ranking element that is a tuple, list, set or frozenset is a group of
tied items occupying the next len(group) ranks. Each item gets a contribution c(d) at depth d:

- variant ``w`` (ties as equality, e.g. a shared place in a race): c(d) = 1 from the group's first rank on, so the
  whole group is seen at once; the agreement is 2 X_d / (|S_d| + |L_d|) with |S_d| the items seen (contributions
  summed), so a prefix may hold more than d items.
- variant ``a`` (ties as uncertainty, averaged): c(d) rises linearly through the group's ranks, (d - t + 1) / g at
  depths t..t+g-1 for a group of size g starting at rank t, i.e. the probability that the item is within depth d
  under a random order of the group; A_d = X_d / d. RBO^a_min is then exactly the mean of RBO_min over all orders
  of the tied items (tested).
- variant ``b`` (ties as uncertainty, corrected for the information they lose): the same contributions,
  A_d = X_d / (sqrt(sum c_S(d)^2) sqrt(sum c_L(d)^2)), a cosine of the two contribution vectors.

X_d = sum over items of c_S(d) c_L(d). Without ties the three variants coincide with Webber et al.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import NamedTuple

import numpy as np
from scipy import stats

TIE_VARIANTS = ("w", "a", "b")
_GROUP_TYPES = (tuple, list, set, frozenset)


# ----------------------------------------------------------------------------------------------- Kendall, overlap

def _plain(ranking: Sequence[Hashable], name: str) -> list[Hashable]:
    items = list(ranking)
    for item in items:
        if isinstance(item, _GROUP_TYPES):
            raise ValueError(f"{name}: Kendall's tau and the overlap ratio take plain lists; got the tie group "
                             f"{item!r}")
    if len(set(items)) != len(items):
        duplicated = sorted({repr(i) for i in items if items.count(i) > 1})
        raise ValueError(f"{name}: duplicated item(s) {', '.join(duplicated)}")
    return items


def kendall_tau_shared(x: Sequence[Hashable], y: Sequence[Hashable]) -> float:
    """Kendall's tau-b over the items in both lists (positions in each); NaN when fewer than two are shared."""
    x, y = _plain(x, "x"), _plain(y, "y")
    in_y = {item: rank for rank, item in enumerate(y)}
    shared = [item for item in x if item in in_y]
    if len(shared) < 2:
        return math.nan
    tau = stats.kendalltau([x.index(i) for i in shared], [in_y[i] for i in shared], variant="b").statistic
    return float(tau)


def kendall_tau_union(x: Sequence[Hashable], y: Sequence[Hashable]) -> float:
    """Kendall's tau-b over the union of the lists, an item absent from a list tied at that list's bottom.

    NaN when the union has fewer than two items or one side is constant (e.g. one list empty)."""
    x, y = _plain(x, "x"), _plain(y, "y")
    union = list(dict.fromkeys([*x, *y]))
    if len(union) < 2:
        return math.nan
    rank_x = {item: rank for rank, item in enumerate(x, start=1)}
    rank_y = {item: rank for rank, item in enumerate(y, start=1)}
    a = [rank_x.get(item, len(x) + 1) for item in union]
    b = [rank_y.get(item, len(y) + 1) for item in union]
    if len(set(a)) < 2 or len(set(b)) < 2:
        return math.nan
    return float(stats.kendalltau(a, b, variant="b").statistic)


def overlap_ratio(x: Sequence[Hashable], y: Sequence[Hashable]) -> float:
    """|x ∩ y| / max(|x|, |y|); NaN when both lists are empty."""
    x, y = _plain(x, "x"), _plain(y, "y")
    longest = max(len(x), len(y))
    if longest == 0:
        return math.nan
    return len(set(x) & set(y)) / longest


# ------------------------------------------------------------------------------------------------ rank-biased overlap

class RBO(NamedTuple):
    """Rank-biased overlap of two finite rankings: the extrapolated value and the bounds (res = max - min)."""

    ext: float
    min: float
    max: float
    res: float


def _positions(ranking: Sequence, name: str) -> dict[Hashable, tuple[int, int]]:
    """item -> (first rank, last rank) of its tie group, ranks 1-based; errors name the ranking and the element."""
    positions: dict[Hashable, tuple[int, int]] = {}
    depth = 0
    for index, element in enumerate(ranking):
        group = list(element) if isinstance(element, _GROUP_TYPES) else [element]
        if not group:
            raise ValueError(f"{name}: element {index} is an empty tie group")
        top, bottom = depth + 1, depth + len(group)
        for item in group:
            if isinstance(item, _GROUP_TYPES):
                raise ValueError(f"{name}: element {index} nests a group inside a group ({item!r})")
            if item in positions:
                raise ValueError(f"{name}: item {item!r} appears twice (element {index})")
            positions[item] = (top, bottom)
        depth = bottom
    return positions


def _contributions(positions: dict[Hashable, tuple[int, int]], items: Sequence[Hashable], depth: int,
                   ties: str) -> np.ndarray:
    """Matrix items x depths 1..depth of each item's contribution to the prefix of that depth (0 if absent)."""
    d = np.arange(1, depth + 1, dtype=float)
    matrix = np.zeros((len(items), depth))
    for row, item in enumerate(items):
        if item not in positions:
            continue
        top, bottom = positions[item]
        if ties == "w" or top == bottom:
            matrix[row] = d >= top
        else:
            size = bottom - top + 1
            matrix[row] = np.clip((d - top + 1) / size, 0.0, 1.0)
    return matrix


def _agreement(overlap: np.ndarray, seen_s: np.ndarray, seen_l: np.ndarray, square_s: np.ndarray,
               square_l: np.ndarray, depths: np.ndarray, ties: str) -> np.ndarray:
    if ties == "w":
        return 2 * overlap / (seen_s + seen_l)
    if ties == "a":
        return overlap / depths
    return overlap / np.sqrt(square_s) / np.sqrt(square_l)


#: RBO's persistence p, as Khirbat et al. use it: the weight of depth d falls as p^(d-1).
RBO_PERSISTENCE = 0.9


def rank_biased_overlap(x: Sequence, y: Sequence, p: float = RBO_PERSISTENCE, ties: str = "a") -> RBO:
    """Rank-biased overlap of rankings ``x`` and ``y`` with persistence ``p`` (see the module docstring).

    Elements are items or tie groups (tuple, list, set, frozenset of items). ``ties`` chooses the Corsi & Urbano
    variant ("w", "a" or "b"); rankings without ties give the same result under all three. Either ranking may be
    the longer. Both must be non-empty and hold each item once."""
    if not 0 < p < 1:
        raise ValueError(f"p must be strictly between 0 and 1, got {p!r}")
    if ties not in TIE_VARIANTS:
        raise ValueError(f"ties must be one of {TIE_VARIANTS}, got {ties!r}")
    pos_x, pos_y = _positions(x, "x"), _positions(y, "y")
    if not pos_x or not pos_y:
        raise ValueError("rank-biased overlap needs two non-empty rankings")
    short, long_ = (pos_x, pos_y) if len(pos_x) <= len(pos_y) else (pos_y, pos_x)
    s, l = len(short), len(long_)  # noqa: E741 (the RBO paper's s and l)
    items = list(dict.fromkeys([*short, *long_]))
    c_s = _contributions(short, items, l, ties)
    c_l = _contributions(long_, items, l, ties)
    depths = np.arange(1, l + 1, dtype=float)
    overlap = (c_s * c_l).sum(axis=0)  # X_d over the seen parts
    seen_l, square_l = c_l.sum(axis=0), (c_l ** 2).sum(axis=0)
    # Beyond depth s the short list is exhausted: it holds d items, d - s of them unseen (contribution 1 each).
    seen_s = np.where(depths <= s, c_s.sum(axis=0), depths)
    square_s = np.where(depths <= s, (c_s ** 2).sum(axis=0), depths)
    agree = lambda x_d: _agreement(x_d, seen_s, seen_l, square_s, square_l, depths, ties)  # noqa: E731

    first = depths <= s
    a_s = agree(overlap)[s - 1]  # agreement at depth s
    only_long = [row for row, item in enumerate(items) if item not in short]  # in L order after S's items

    # min: no overlap beyond what is seen.
    x_min = overlap
    # max: at depth d > s, the d - s unseen items of S are the first d - s items of L missing from S.
    x_max = overlap.copy()
    # ext: the unseen items of S agree at the rate seen at depth s, weighted by the contributions of L's items
    # missing from S (1 without ties): X_d + (d - s) A_s mean(c_L of those items seen at d).
    x_ext = overlap.copy()
    for column in range(s, l):
        d = column + 1
        candidates = c_l[only_long, column]
        x_max[column] = overlap[column] + candidates[: d - s].sum()
        seen = candidates[candidates > 0]
        mean_seen = float(seen.mean()) if seen.size else 1.0
        x_ext[column] = overlap[column] + (d - s) * a_s * mean_seen

    weights = p ** depths
    scale = (1 - p) / p
    a_min, a_max, a_ext = agree(x_min), agree(x_max), agree(x_ext)
    a_min[first] = a_max[first] = a_ext[first] = agree(overlap)[first]

    x_l = overlap[-1]
    # Beyond l every item is seen; the agreement of X_d / d with X_d fixed at X_l (min) ...
    tail_min = x_l * (math.log(1 / (1 - p)) - float(np.sum(p ** depths / depths)))
    # ... growing by two per depth (a new item of each list matching a seen one of the other) up to f (max) ...
    f = l + s - x_l  # the depth from which the lists can agree completely (fractional under ties a and b)
    beyond = np.arange(l + 1, f + 1, dtype=float)
    tail_max = float(np.sum((2 * beyond - l - s + x_l) / beyond * p ** beyond)) + p ** (f + 1) / (1 - p)
    # ... or constant at the extrapolated agreement at depth l (ext).
    tail_ext = (x_l + (l - s) * a_s) / l * p ** (l + 1) / (1 - p)

    rbo_min = scale * (float(np.sum(a_min * weights)) + tail_min)
    rbo_max = scale * (float(np.sum(a_max * weights)) + tail_max)
    rbo_ext = scale * (float(np.sum(a_ext * weights)) + tail_ext)
    return RBO(ext=rbo_ext, min=rbo_min, max=rbo_max, res=rbo_max - rbo_min)


def rbo_weight(depth: int, p: float = RBO_PERSISTENCE) -> float:
    """Webber et al.'s equation 21: the share of RBO's weight held by the first ``depth`` ranks."""
    if depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth}")
    head = sum(p ** i / i for i in range(1, depth))
    return 1 - p ** (depth - 1) + (1 - p) / p * depth * (math.log(1 / (1 - p)) - head)


def similarity_row(x: Sequence[Hashable], y: Sequence[Hashable], p: float = RBO_PERSISTENCE) -> dict[str, float]:
    """The chapter's four numbers for two recommendation lists: tau (union), tau (shared), RBO ext, overlap.

    A reply that is not a list gives an empty list. Both empty: all NaN (nothing to compare). One empty: overlap and
    RBO 0 (no agreement at any depth), both taus NaN (no order to compare)."""
    if not x and not y:
        return {"kendall_tau": math.nan, "kendall_tau_shared": math.nan, "rbo": math.nan, "overlap": math.nan}
    if not x or not y:
        return {"kendall_tau": math.nan, "kendall_tau_shared": math.nan, "rbo": 0.0, "overlap": 0.0}
    return {"kendall_tau": kendall_tau_union(x, y), "kendall_tau_shared": kendall_tau_shared(x, y),
            "rbo": rank_biased_overlap(x, y, p=p).ext, "overlap": overlap_ratio(x, y)}


def perturbation_table(k: int = 5, p_values: Sequence[float] = (0.5, 0.8, 0.9, 0.95, 0.98)) -> list[dict]:
    """How each measure scores the same small changes of a top-k list (constructed lists, no model): swapping the
    first two or the last two items, replacing the first or the last item by a new one, reversing the list, and
    replacing half of it. One dict per change: the change, τ-b (union and shared), overlap, and RBO (ext) per p."""
    reference = [f"item{i}" for i in range(1, k + 1)]
    half = k // 2
    changes = {
        "swap ranks 1 and 2": [reference[1], reference[0], *reference[2:]],
        f"swap ranks {k - 1} and {k}": [*reference[:-2], reference[-1], reference[-2]],
        "new item at rank 1": ["new1", *reference[1:]],
        f"new item at rank {k}": [*reference[:-1], "new1"],
        "reversed": reference[::-1],
        f"last {half} items new": [*reference[:-half], *[f"new{i}" for i in range(1, half + 1)]],
        f"first {half} items new": [*[f"new{i}" for i in range(1, half + 1)], *reference[half:]],
    }
    rows = []
    for change, other in changes.items():
        row = {"change": change, "kendall_tau": kendall_tau_union(reference, other),
               "kendall_tau_shared": kendall_tau_shared(reference, other), "overlap": overlap_ratio(reference, other)}
        row.update({f"rbo_p{p:g}": rank_biased_overlap(reference, other, p=p).ext for p in p_values})
        rows.append(row)
    return rows


__all__ = ["RBO", "TIE_VARIANTS", "kendall_tau_shared", "kendall_tau_union", "overlap_ratio", "perturbation_table",
           "rank_biased_overlap", "rbo_weight", "similarity_row"]
