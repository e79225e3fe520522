"""Ensembles of evaluators: score averaging over every subset of any evaluators (Kang et al. 2025 RQ3, Zhang et al.
2024 section 5 and Figure 4).

An ensemble of N evaluators scores each unit (an answer, a text, a (text, aspect) pair: whatever ``keys`` name) with
the plain mean of its members' scores, over the units every member scored. For every N = 1..M, every subset of N of
the M available evaluators is formed and judged by an agreement function the caller supplies (Pearson with the
users' ratings, MAE, a three-level meta-evaluation, ...); the distribution of the results against N is what
Figures 5-6 of Kang et al. and Figure 4 of Zhang et al. show.

Scores come in long format: the ``keys`` columns, ``evaluator`` and ``score``. Missing member scores make the
ensemble's score NaN (it is then up to the agreement function to drop it) unless ``missing_score`` replaces them
before averaging (Zhang et al.'s penalty of 0). Ensemble scores are never rounded here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import combinations
from math import comb

import numpy as np
import pandas as pd

__all__ = ["ensemble_accuracy", "ensemble_members", "ensemble_scores", "ensemble_summary"]

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
    if part.duplicated(keys + ["evaluator"]).any():
        raise ValueError("an evaluator has several scores for one unit; average its runs first")
    wide = part.pivot_table(index=keys, columns="evaluator", values="score", aggfunc="first", dropna=False)
    present = part.groupby(keys)["evaluator"].nunique()
    wide = wide[present.reindex(wide.index).to_numpy() == len(members)]  # units every member scored
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


def ensemble_summary(accuracy: pd.DataFrame, *, by: Sequence[str] = (), value: str = "value") -> pd.DataFrame:
    """Per ``by`` columns and ensemble size n: number of ensembles, mean, min, max and standard deviation of
    ``value``: the boxes of the ensemble figures in numbers (mean rising with n = better expected agreement; min
    rising = more stable)."""
    keys = [*by, "n"]
    return accuracy.groupby(keys, sort=False)[value].agg(
        n_ensembles="count", mean="mean", min="min", max="max", sd="std").reset_index()
