"""Ensembles of evaluators (Zhang et al. 2024, section 5 and Figure 4).

An ensemble of N evaluators scores each text with the plain mean of its members' scores. For every N = 1..M, every
subset of N of the M available evaluators is formed and meta-evaluated; Figure 4 shows, per level and aspect, the
distribution of the resulting accuracies (Pearson correlation with the users' ratings) against N.

Scores use the long format of :mod:`recjudge.explanations` (row_id, evaluator, aspect, score). An ensemble is
evaluated on the rows every member scored. Under the default null policy a row where any member's score is missing
is dropped for that ensemble; under ``PAPER_NULLS`` missing member scores are set to 0 before averaging (the
paper's penalty), missing user ratings to 3.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from math import comb

import numpy as np
import pandas as pd

from recjudge.explanations import DROP_NULLS, NullPolicy, meta_evaluate

__all__ = ["ensemble_accuracy", "ensemble_members", "ensemble_scores", "ensemble_summary"]

#: Above this many subsets, ensemble_accuracy refuses (2**M - 1 grows fast); pass max_subsets to raise it.
DEFAULT_MAX_SUBSETS = 1023


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


def ensemble_scores(scores: pd.DataFrame, members: Sequence[str], *, name: str | None = None,
                    nulls: NullPolicy = DROP_NULLS) -> pd.DataFrame:
    """Long scores of the ensemble of ``members``: per (row_id, aspect) the mean of the members' scores, over the
    rows every member scored. Missing member scores: NaN result (drop policy) or 0 before averaging (paper)."""
    members = list(members)
    unknown = sorted(set(members) - set(scores["evaluator"]))
    if unknown:
        raise KeyError(f"evaluator(s) {unknown} not in the scores frame")
    part = scores[scores["evaluator"].isin(members)]
    wide = part.pivot_table(index=["row_id", "aspect"], columns="evaluator", values="score", aggfunc="first",
                            dropna=False)
    present = part.groupby(["row_id", "aspect"])["evaluator"].nunique()
    wide = wide[present.reindex(wide.index).to_numpy() == len(members)]  # rows every member scored
    values = wide[members].to_numpy(dtype=float)
    if nulls.missing_evaluator_score is not None:
        values = np.where(np.isnan(values), nulls.missing_evaluator_score, values)
    mean = values.mean(axis=1)  # NaN as soon as one member is NaN (drop policy)
    out = wide.index.to_frame(index=False)
    out.insert(1, "evaluator", name or " + ".join(members))
    out["score"] = mean
    return out[["row_id", "evaluator", "aspect", "score"]]


def ensemble_accuracy(
    truth: pd.DataFrame,
    scores: pd.DataFrame,
    evaluators: Sequence[str],
    *,
    sizes: Sequence[int] | None = None,
    methods: Sequence[str] = ("pearson",),
    nulls: NullPolicy = DROP_NULLS,
    max_subsets: int = DEFAULT_MAX_SUBSETS,
) -> pd.DataFrame:
    """Meta-evaluate every ensemble of ``evaluators`` (all subsets of the given sizes).

    Returns n (ensemble size), members (" + "-joined), aspect, level, method, value, n_groups, n_undefined, n_rows.
    """
    evaluators = list(dict.fromkeys(evaluators))
    n_subsets = sum(comb(len(evaluators), s) for s in (sizes or range(1, len(evaluators) + 1)))
    if n_subsets > max_subsets:
        raise ValueError(f"{n_subsets} ensembles of {len(evaluators)} evaluators exceed max_subsets={max_subsets}")
    tables = []
    for members in ensemble_members(evaluators, sizes):
        name = " + ".join(members)
        combined = ensemble_scores(scores, members, name=name, nulls=nulls)
        table = meta_evaluate(truth, combined, nulls=nulls, methods=methods)
        table.insert(0, "n", len(members))
        tables.append(table.rename(columns={"evaluator": "members"}))
    result = pd.concat(tables, ignore_index=True)
    return result[["n", "members", "aspect", "level", "method", "value", "n_groups", "n_undefined", "n_rows"]]


def ensemble_summary(accuracy: pd.DataFrame) -> pd.DataFrame:
    """Per (aspect, level, method, n): number of ensembles, mean, min, max and standard deviation of the accuracy —
    the box of Figure 4 in numbers (mean rising with N = better expected accuracy; min rising = more stable)."""
    keys = ["aspect", "level", "method", "n"]
    summary = accuracy.groupby(keys, sort=False)["value"].agg(
        n_ensembles="count", mean="mean", min="min", max="max", sd="std").reset_index()
    return summary
