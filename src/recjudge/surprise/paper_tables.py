"""The numbers Lima & Peres print ("Limits to surprise in recommender systems"), for setting ours beside them.

- :func:`lima_peres_table2`       Table 2 as printed (one row per item model x distance, wide)
- :func:`lima_peres_table2_long`  the same, one row per model x distance x recommender (the shape of
                                  :func:`recjudge.surprise.one_plus_random.summarise_table2`)

Table 1 (greedy against exact potential surprise) is :data:`recjudge.surprise.limits.TABLE1_PAPER`.
"""

from __future__ import annotations

import pandas as pd

from recjudge import papers
from recjudge.surprise.recommenders import RECOMMENDERS

#: Table 2 of the paper, numbers as printed (``recjudge.papers``).
LIMA_PERES_TABLE2 = papers.path("lima_limits_to_surprise_table2")
#: The statistics Table 2 gives per recommender, in its order (St.Dev. is ``sd``).
TABLE2_STATISTICS = ("median", "mean", "sd")
#: A mean normalised surprise (a 0-1 scale) within this distance of Table 2's counts as close to the paper's.
MAGNITUDE_CLOSE = 0.05
#: The fewest intervals the paper's series has ("at least 30 intervals"): its printed SD over this many gives the
#: largest standard error of its means.
PAPER_MIN_INTERVALS = 30

__all__ = ["LIMA_PERES_TABLE2", "TABLE2_STATISTICS", "MAGNITUDE_CLOSE", "PAPER_MIN_INTERVALS", "DISCUSSION_CVS",
           "lima_peres_table2", "lima_peres_table2_long", "coefficients_of_variation"]


def lima_peres_table2() -> pd.DataFrame:
    """Table 2 as printed: ``model``, ``distance`` (the paper's spelling) and ``<recommender>_<statistic>`` for
    MSI, kNN, LSI x median, mean, sd; thirteen rows in the paper's order."""
    return papers.table("lima_limits_to_surprise_table2")


def lima_peres_table2_long() -> pd.DataFrame:
    """Table 2 with one row per (model, distance, recommender) and columns ``median``, ``mean``, ``sd``."""
    wide = lima_peres_table2()
    parts = []
    for recommender in RECOMMENDERS:
        part = wide[["model", "distance"]].copy()
        part.insert(2, "recommender", recommender)
        for statistic in TABLE2_STATISTICS:
            part[statistic] = wide[f"{recommender}_{statistic}"]
        parts.append(part.assign(_row=range(len(part))))
    long = pd.concat(parts, ignore_index=True)
    order = {name: i for i, name in enumerate(RECOMMENDERS)}
    long = long.sort_values(["_row", "recommender"], key=lambda s: s.map(order) if s.name == "recommender" else s,
                            kind="stable")
    return long.drop(columns="_row").reset_index(drop=True)


#: The coefficients of variation of the mean normalised surprise that the paper's discussion states (in %), as
#: (recommender, what varies, what is fixed) -> printed value.
DISCUSSION_CVS: dict[tuple[str, str, str], float] = {
    ("kNN", "models C, P, U", "cosine"): 13.6,
    ("kNN", "models C, P, U", "Euclidean"): 29.9,
    ("kNN", "distances", "model U"): 13.8,
    ("kNN", "distances", "model C"): 20.7,
}


def coefficients_of_variation(long: pd.DataFrame) -> pd.DataFrame:
    """The discussion's coefficients of variation (sample standard deviation over the mean, in %) of the mean
    normalised surprise, computed from a Table 2 in long form (``model``, ``distance``, ``recommender``, ``mean``);
    the printed value beside each."""
    import numpy as np

    rows = []
    for (recommender, varies, fixed), printed in DISCUSSION_CVS.items():
        part = long[long["recommender"] == recommender]
        if varies.startswith("models"):
            models = [m.strip() for m in varies.removeprefix("models").split(",")]
            values = part[(part["distance"] == fixed) & part["model"].isin(models)]["mean"]
        else:
            values = part[part["model"] == fixed.removeprefix("model ")]["mean"]
        values = values.to_numpy(dtype=float)
        cv = 100 * float(np.std(values, ddof=1) / np.mean(values)) if len(values) >= 2 else float("nan")
        rows.append({"recommender": recommender, "varies": varies, "fixed": fixed, "cells": len(values),
                     "cv_pct": cv, "printed_cv_pct": printed})
    return pd.DataFrame(rows)
