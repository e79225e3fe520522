"""The numbers Lima & Peres print ("Limits to surprise in recommender systems"), for setting ours beside them.

- :func:`lima_peres_table2`       Table 2 as printed (one row per item model x distance, wide)
- :func:`lima_peres_table2_long`  the same, one row per model x distance x recommender (the shape of
                                  :func:`recjudge.surprise.one_plus_random.summarise_table2`)

Table 1 (greedy against exact potential surprise) is :data:`recjudge.surprise.limits.TABLE1_PAPER`.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from recjudge.surprise.recommenders import RECOMMENDERS

#: Table 2 of the paper, numbers as printed (package data).
LIMA_PERES_TABLE2 = Path(__file__).with_name("lima_peres_table2.csv")
#: The statistics Table 2 gives per recommender, in its order (St.Dev. is ``sd``).
TABLE2_STATISTICS = ("median", "mean", "sd")

__all__ = ["LIMA_PERES_TABLE2", "TABLE2_STATISTICS", "lima_peres_table2", "lima_peres_table2_long"]


def lima_peres_table2() -> pd.DataFrame:
    """Table 2 as printed: ``model``, ``distance`` (the paper's spelling) and ``<recommender>_<statistic>`` for
    MSI, kNN, LSI x median, mean, sd; thirteen rows in the paper's order."""
    return pd.read_csv(LIMA_PERES_TABLE2, comment="#")


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
