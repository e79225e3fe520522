"""Descriptive tables of the data tour, and the Amazon Beauty sequence loader."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import recjudge.data as data


def test_value_distribution_counts_levels_and_na() -> None:
    frame = pd.DataFrame({"s1": [1.0, 1.0, 5.0, np.nan], "s2": [2.0, 2.0, 2.0, 2.0]})
    table = data.value_distribution(frame, ["s1", "s2"], levels=[1.0, 2.0, 3.0, 4.0, 5.0])
    s1 = table[table["column"] == "s1"].set_index("value")["count"].to_dict()
    assert s1 == {"1.0": 2, "2.0": 0, "3.0": 0, "4.0": 0, "5.0": 1, "NA": 1}
    assert table.groupby("column")["share"].sum().round(12).tolist() == [1.0, 1.0]
    free = data.value_distribution(frame, ["s2"])
    assert free[["value", "count"]].values.tolist() == [["2.0", 4]]


def test_size_row() -> None:
    frame = pd.DataFrame({"user_id": [1, 1, 2], "item_id": [5, 6, 5]})
    row = data.size_row("d", "ratings", frame, status="complete")
    assert (row["rows"], row["users"], row["items"], row["density"]) == (3, 2, 2, 0.75)
    no_items = data.size_row("d", "users", frame[["user_id"]], item_column=None)
    assert no_items["items"] is pd.NA and np.isnan(no_items["density"])


def test_amazon_sequences_from_synthetic_file(tmp_path: Path) -> None:
    (tmp_path / "Beauty.txt").write_text("1 1 2 3\n2 4 1\n", encoding="utf-8")
    frame = data.load_amazon_beauty_sequences(tmp_path)
    assert frame.values.tolist() == [[1, 1, 0], [1, 2, 1], [1, 3, 2], [2, 4, 0], [2, 1, 1]]
    (tmp_path / "Beauty.txt").write_text("1 1 2\n2 x\n", encoding="utf-8")
    with pytest.raises(data.DataSchemaError, match=r"Beauty\.txt, line 2"):
        data.load_amazon_beauty_sequences(tmp_path)


@pytest.mark.skipif(not os.environ.get("RECJUDGE_DATA_MIRROR"), reason="RECJUDGE_DATA_MIRROR unset")
def test_amazon_sequences_on_mirror() -> None:
    frame = data.load_amazon_beauty_sequences()
    assert (len(frame), frame["user_id"].nunique(), frame["item_id"].nunique()) == (198502, 22363, 12101)
