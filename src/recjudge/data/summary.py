"""Small descriptive tables used by the data tour: sizes and value distributions."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pandas as pd


def size_row(dataset: str, table: str, frame: pd.DataFrame, *, user_column: str | None = "user_id",
             item_column: str | None = "item_id", status: str = "", note: str = "") -> dict[str, object]:
    """One row of a size table: rows, distinct users and items, and the density rows / (users × items) when both
    id columns exist (NA where a column is absent)."""
    users = frame[user_column].nunique() if user_column and user_column in frame else pd.NA
    items = frame[item_column].nunique() if item_column and item_column in frame else pd.NA
    density = (len(frame) / (users * items)) if users is not pd.NA and items is not pd.NA and users and items \
        else float("nan")
    return {"dataset": dataset, "table": table, "status": status, "rows": len(frame), "users": users,
            "items": items, "density": density, "note": note}


def value_distribution(frame: pd.DataFrame, columns: Sequence[str], levels: Iterable[float] | None = None,
                       *, na_label: str = "NA") -> pd.DataFrame:
    """Counts and shares of each value of ``columns`` in long form: column, value, count, share.

    ``levels`` fixes the value axis (levels that never occur get a count of 0); missing values are counted under
    ``na_label``. Shares are over all rows, NA included, so each column's shares sum to 1."""
    rows = []
    for column in columns:
        values = frame[column]
        counts = values.value_counts(dropna=True)
        axis = list(levels) if levels is not None else sorted(counts.index)
        for level in axis:
            rows.append({"column": column, "value": str(level), "count": int(counts.get(level, 0))})
        n_missing = int(values.isna().sum())
        if n_missing or levels is not None:
            rows.append({"column": column, "value": na_label, "count": n_missing})
    table = pd.DataFrame(rows, columns=["column", "value", "count"])
    totals = table.groupby("column")["count"].transform("sum")
    table["share"] = table["count"] / totals
    return table
