"""Ensembles of evaluators: score averaging over every subset of any evaluators (Kang et al. 2025 RQ3, Zhang et al.
2024 section 5 and Figure 4).

An ensemble of N evaluators scores each unit (an answer, a text, a (text, aspect) pair: whatever ``keys`` name) with
the plain mean of its members' scores, over the units every member scored. For every N = 1..M, every subset of N of
the M available evaluators is formed and judged by an agreement function the caller supplies (Pearson with the
users' ratings, MAE, a three-level meta-evaluation, ...); the distribution of the results against N is what
Figures 5-6 of Kang et al. and Figure 4 of Zhang et al. show.

``ensemble_size_table`` gives, per size, the mean, best and worst of every agreement metric with its own direction
(Pearson: higher is better; MAE, RMSE: lower is better). ``held_out_selection`` guards against reporting the best of
many cells (ensembles x settings) on the data it was chosen on: the cell is chosen on one half of the groups (users)
and reported on the other half, over several distinct seeded splits.

Scores come in long format: the ``keys`` columns, ``evaluator`` and ``score``. Missing member scores make the
ensemble's score NaN (it is then up to the agreement function to drop it) unless ``missing_score`` replaces them
before averaging (Zhang et al.'s penalty of 0). Ensemble scores are never rounded here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import combinations
from math import comb

import numpy as np
import pandas as pd

__all__ = ["ensemble_accuracy", "ensemble_agreement", "ensemble_members", "ensemble_scores", "ensemble_size_table",
           "distinct_splits", "ensemble_summary", "grid_search", "held_out_selection", "sizes_within",
           "split_groups"]

#: Above this many subsets, ensemble_accuracy refuses (2**M - 1 grows fast); pass max_subsets to raise it.
DEFAULT_MAX_SUBSETS = 1023

#: An agreement function: long scores of one ensemble (keys, evaluator, score) -> a table of agreement rows.
AgreementFunction = Callable[[pd.DataFrame], pd.DataFrame]


def ensemble_members(evaluators: Sequence[str], sizes: Sequence[int] | None = None) -> list[tuple[str, ...]]:
    """Every subset of ``evaluators`` with a size in ``sizes`` (default 1..M), in size then lexicographic order."""
    evaluators = list(dict.fromkeys(evaluators))
    if not evaluators:
        raise ValueError("no evaluators given")
    sizes = range(1, len(evaluators) + 1) if sizes is None else sizes
    for size in sizes:
        if not 1 <= size <= len(evaluators):
            raise ValueError(f"ensemble size {size} outside 1..{len(evaluators)}")
    return [members for size in sizes for members in combinations(evaluators, size)]


def sizes_within(n_evaluators: int, max_subsets: int = DEFAULT_MAX_SUBSETS) -> list[int]:
    """Ensemble sizes 1..s of a pool of ``n_evaluators``, with s the largest that keeps the number of subsets within
    ``max_subsets``: every size while 2**M - 1 fits, so a pool that grows (a reader's judges joining it) is
    enumerated up to a size rather than refused. Empty when even the single members are too many."""
    sizes, total = [], 0
    for size in range(1, n_evaluators + 1):
        total += comb(n_evaluators, size)
        if total > max_subsets:
            break
        sizes.append(size)
    return sizes


def ensemble_scores(scores: pd.DataFrame, members: Sequence[str], *, keys: Sequence[str] = ("row_id",),
                    name: str | None = None, missing_score: float | None = None) -> pd.DataFrame:
    """Long scores of the ensemble of ``members``: per unit (``keys``) the mean of the members' scores, over the
    units every member scored. A missing member score gives NaN, or ``missing_score`` before averaging."""
    keys = list(keys)
    members = list(members)
    missing_columns = sorted((set(keys) | {"evaluator", "score"}) - set(scores.columns))
    if missing_columns:
        raise KeyError(f"scores frame lacks column(s) {missing_columns}")
    unknown = sorted(set(members) - set(scores["evaluator"]))
    if unknown:
        raise KeyError(f"evaluator(s) {unknown} not in the scores frame")
    part = scores[scores["evaluator"].isin(members)]
    wide = _wide_scores(part, keys)
    present = part.groupby(keys)["evaluator"].nunique()
    wide = wide[present.reindex(wide.index).to_numpy() == len(members)]  # units every member scored
    return _mean_of_members(wide, members, keys, name, missing_score)


def _wide_scores(scores: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Long scores as one row per unit (``keys``, sorted) and one column per evaluator."""
    if scores.duplicated(keys + ["evaluator"]).any():
        raise ValueError("an evaluator has several scores for one unit; average its runs first")
    return scores.pivot_table(index=keys, columns="evaluator", values="score", aggfunc="first", dropna=False)


def _mean_of_members(wide: pd.DataFrame, members: list[str], keys: list[str], name: str | None,
                     missing_score: float | None) -> pd.DataFrame:
    """:func:`ensemble_scores` from the wide scores of the units to average over."""
    values = wide[members].to_numpy(dtype=float)
    if missing_score is not None:
        values = np.where(np.isnan(values), missing_score, values)
    out = wide.index.to_frame(index=False)
    out["evaluator"] = name or " + ".join(members)
    out["score"] = values.mean(axis=1)  # NaN as soon as one member is NaN
    return out[keys + ["evaluator", "score"]]


def ensemble_accuracy(
    scores: pd.DataFrame,
    evaluators: Sequence[str],
    agreement: AgreementFunction,
    *,
    keys: Sequence[str] = ("row_id",),
    sizes: Sequence[int] | None = None,
    missing_score: float | None = None,
    max_subsets: int = DEFAULT_MAX_SUBSETS,
) -> pd.DataFrame:
    """Judge every ensemble of ``evaluators`` (all subsets of the given sizes) with ``agreement``.

    ``agreement`` receives the ensemble's long scores (evaluator = the members joined by " + ") and returns a table;
    its rows come back with two leading columns, ``n`` (ensemble size) and ``members``, and its own ``evaluator``
    column, if any, dropped.
    """
    evaluators = list(dict.fromkeys(evaluators))
    n_subsets = sum(comb(len(evaluators), s) for s in (sizes or range(1, len(evaluators) + 1)))
    if n_subsets > max_subsets:
        raise ValueError(f"{n_subsets} ensembles of {len(evaluators)} evaluators exceed max_subsets={max_subsets}")
    tables = []
    for members in ensemble_members(evaluators, sizes):
        name = " + ".join(members)
        table = agreement(ensemble_scores(scores, members, keys=keys, name=name, missing_score=missing_score))
        table = table.drop(columns=["evaluator"], errors="ignore")
        table.insert(0, "members", name)
        table.insert(0, "n", len(members))
        tables.append(table)
    return pd.concat(tables, ignore_index=True)


def ensemble_agreement(members: Mapping[str, pd.Series], truth: pd.Series,
                       metric: Callable[[np.ndarray, np.ndarray], Mapping[str, float]], *,
                       transform: Callable[[pd.DataFrame], pd.DataFrame] | None = None,
                       sizes: Sequence[int] | None = None) -> pd.DataFrame:
    """Every ensemble of ``members`` (name -> scores indexed by unit) against ``truth`` on its units: each ensemble's
    mean scores, after ``transform`` (e.g. rounding), judged by ``metric`` (scores, truth -> values with ``n``, the
    units used), as ``ensemble_accuracy`` rows holding the metric's values and ``n`` as ``n_rows``."""
    long = pd.concat([pd.DataFrame({"row_id": truth.index, "evaluator": name,
                                    "score": scores.reindex(truth.index).to_numpy()})
                      for name, scores in members.items()], ignore_index=True)

    def agree(scored: pd.DataFrame) -> pd.DataFrame:
        if transform is not None:
            scored = transform(scored)
        values = dict(metric(scored["score"].to_numpy(), truth.loc[scored["row_id"]].to_numpy()))
        n_rows = values.pop("n")
        return pd.DataFrame([{**values, "n_rows": n_rows}])

    return ensemble_accuracy(long, list(members), agree, sizes=sizes)


def ensemble_summary(accuracy: pd.DataFrame, *, by: Sequence[str] = (), value: str = "value") -> pd.DataFrame:
    """Per ``by`` columns and ensemble size n: number of ensembles, mean, min, max and standard deviation of
    ``value``: the boxes of the ensemble figures in numbers (mean rising with n = better expected agreement; min
    rising = more stable)."""
    keys = [*by, "n"]
    return accuracy.groupby(keys, sort=False)[value].agg(
        n_ensembles="count", mean="mean", min="min", max="max", sd="std").reset_index()


#: Direction of the usual agreement metrics: True when higher is better.
HIGHER_IS_BETTER = {"pearson": True, "pearson_r": True, "pearson_pct": True, "spearman": True, "kendall": True,
                    "mae": False, "rmse": False}


def _direction(metric: str, higher_is_better: bool | None) -> bool:
    if higher_is_better is not None:
        return higher_is_better
    try:
        return HIGHER_IS_BETTER[metric]
    except KeyError:
        raise KeyError(f"direction of metric {metric!r} unknown: pass higher_is_better") from None


def ensemble_size_table(accuracy: pd.DataFrame, metrics: Sequence[str], *, by: Sequence[str] = (),
                        higher_is_better: dict[str, bool] | None = None) -> pd.DataFrame:
    """Per ``by`` columns, ensemble size n and metric: number of ensembles, mean, best and worst value (best =
    max for a higher-is-better metric, min otherwise) and the members of the best and of the worst ensemble
    (first in ``accuracy`` order on ties). ``accuracy`` holds one row per ensemble with the ``metrics`` columns
    (wide), e.g. from ``ensemble_accuracy`` with an agreement function returning one row."""
    rows = []
    for keys, part in accuracy.groupby([*by, "n"], sort=False):
        keys = keys if isinstance(keys, tuple) else (keys,)
        for metric in metrics:
            up = _direction(metric, (higher_is_better or {}).get(metric))
            values = part[metric].astype(float)
            valid = values.dropna()
            best = (valid.idxmax() if up else valid.idxmin()) if len(valid) else None
            worst = (valid.idxmin() if up else valid.idxmax()) if len(valid) else None
            rows.append({**dict(zip([*by, "n"], keys)), "metric": metric, "n_ensembles": len(part),
                         "mean": values.mean(), "best": values[best] if best is not None else np.nan,
                         "worst": values[worst] if worst is not None else np.nan,
                         "best_members": part.loc[best, "members"] if best is not None else "",
                         "worst_members": part.loc[worst, "members"] if worst is not None else ""})
    return pd.DataFrame(rows)


def split_groups(groups: Sequence, seed: int = 0) -> tuple[set, set]:
    """The distinct ``groups`` (e.g. user ids) split at random into two halves (seeded; the first half gets the
    extra group when their number is odd)."""
    unique = pd.unique(pd.Series(list(groups)))
    if len(unique) < 2:
        raise ValueError(f"need at least two groups to split, got {len(unique)}")
    order = np.random.default_rng(seed).permutation(len(unique))
    cut = (len(unique) + 1) // 2
    return set(unique[order[:cut]]), set(unique[order[cut:]])


def distinct_splits(groups: Sequence, n_splits: int, seed: int = 0) -> list[tuple[set, set]]:
    """``n_splits`` splits of the distinct ``groups`` into two halves (as :func:`split_groups`: the first half gets
    the extra group of an odd number), each with another first half, drawn from one generator seeded with ``seed``;
    every possible split once when there are fewer than ``n_splits``. Seeding each split by its own number instead
    draws the same halves twice now and then (two splits of 11 users among 20 seeds), which counts one split twice."""
    unique = pd.unique(pd.Series(list(groups)))
    if len(unique) < 2:
        raise ValueError(f"need at least two groups to split, got {len(unique)}")
    cut = (len(unique) + 1) // 2
    wanted = min(int(n_splits), comb(len(unique), cut))
    rng = np.random.default_rng(seed)
    splits: list[tuple[set, set]] = []
    seen: set[frozenset] = set()
    while len(splits) < wanted:
        order = rng.permutation(len(unique))
        first = frozenset(unique[order[:cut]])
        if first not in seen:
            seen.add(first)
            splits.append((set(first), set(unique[order[cut:]])))
    return splits


def held_out_selection(cells: Mapping[str, pd.Series], truth: pd.Series, groups: pd.Series,
                       metric: Callable[[np.ndarray, np.ndarray], Mapping[str, float]], *, select_by: str,
                       higher_is_better: bool | None = None, n_splits: int = 1, seed: int = 0,
                       undefined: str = "raise") -> pd.DataFrame:
    """Choose the best cell on one half of the groups and report it on the other half.

    cells: cell name -> predicted scores (index aligned with ``truth`` and ``groups``; NaN = not scored).
    metric: (pred, true) -> mapping of metric values (e.g. ``recjudge.metaeval.agreement.agreement``); the cell
        with the best ``select_by`` value on the selection half is chosen (first cell on ties).
    For each of ``n_splits`` distinct splits of the groups (:func:`distinct_splits`, seeded with ``seed``; every
    possible split when there are fewer): one row with split, chosen cell, n and every metric on the selection half
    (prefix ``select_``) and on the held-out half (prefix ``heldout_``). When no cell has a defined
    ``select_by`` on a selection half (e.g. every cell constant there), ``undefined="raise"`` raises and
    ``undefined="nan"`` gives that split no cell (None) and NaN metrics. A single cell is always chosen."""
    if not cells:
        raise ValueError("no cells to select from")
    if undefined not in ("raise", "nan"):
        raise ValueError(f"undefined must be 'raise' or 'nan', got {undefined!r}")
    up = _direction(select_by, higher_is_better)
    rows = []
    for split, (first, _second) in enumerate(distinct_splits(groups, n_splits, seed)):
        in_first = groups.isin(first).to_numpy()
        best_name, best_value, best_stats = None, None, None
        for name, pred in cells.items():
            pred = pred.reindex(truth.index).to_numpy(dtype=float)
            stats = metric(pred[in_first], truth.to_numpy(dtype=float)[in_first])
            value = float(stats[select_by])
            if np.isnan(value) and len(cells) > 1:  # a single cell is no choice: it is reported all the same
                continue
            if best_value is None or (value > best_value if up else value < best_value):
                best_name, best_value, best_stats = name, value, stats
        if best_name is None:
            if undefined == "raise":
                raise ValueError(f"no cell has a defined {select_by!r} on the selection half of split {split}")
            rows.append({"split": split, "cell": None,
                         **{f"{prefix}_{k}": np.nan for prefix in ("select", "heldout") for k in stats}})
            continue
        pred = cells[best_name].reindex(truth.index).to_numpy(dtype=float)
        held = metric(pred[~in_first], truth.to_numpy(dtype=float)[~in_first])
        row: dict[str, object] = {"split": split, "cell": best_name}
        row.update({f"select_{k}": v for k, v in best_stats.items()})
        row.update({f"heldout_{k}": v for k, v in held.items()})
        rows.append(row)
    return pd.DataFrame(rows)


def grid_search(base: Mapping[str, pd.Series], others: Mapping[str, pd.Series], truth: pd.Series,
                metric: Callable[[np.ndarray, np.ndarray], Mapping[str, float]],
                transform: Callable[[pd.DataFrame], pd.DataFrame] | None = None,
                sizes: Sequence[int] | None = None) -> tuple[dict[str, pd.Series], pd.DataFrame]:
    """Every cell of a grid of ensembles: each ``base`` judge joined with every subset (the empty one too) of
    ``others``. A cell's score per unit is the mean of its members' scores (``ensemble_scores``), then
    ``transform`` (e.g. rounding); units are ``truth``'s index; ``sizes``: only subsets of ``others`` of these sizes
    (besides the empty one; default every size). Returns (cell name -> scores, one row per cell:
    base, size, members and ``metric`` against ``truth``), cells in base order, then by subset."""
    columns = {**base, **others}
    long = pd.concat([pd.DataFrame({"row_id": truth.index, "evaluator": name,
                                    "score": scores.reindex(truth.index).to_numpy(dtype=float)})
                      for name, scores in columns.items()], ignore_index=True)
    # Every judge has a row for every unit, so every cell averages over all units: one wide table serves them all
    # (what ensemble_scores computes for each cell).
    wide = _wide_scores(long, ["row_id"])
    cells: dict[str, pd.Series] = {}
    rows = []
    for first in base:
        for extra in [()] + ensemble_members(list(others), sizes):
            members = (first, *extra)
            name = " + ".join(members)
            scored = _mean_of_members(wide, list(members), ["row_id"], name, None)
            if transform is not None:
                scored = transform(scored)
            cells[name] = pd.Series(scored["score"].to_numpy(), index=scored["row_id"].to_numpy())
            rows.append({"base": first, "size": len(members), "members": name,
                         **metric(cells[name].reindex(truth.index).to_numpy(dtype=float),
                                  truth.to_numpy(dtype=float))})
    return cells, pd.DataFrame(rows)
