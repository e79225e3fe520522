"""The time-frame process (Lima & Peres, section 4.2) on small hand-made rating logs."""

import numpy as np
import pandas as pd
import pytest

from recjudge.surprise import time_frames
from recjudge.surprise.time_frames import (
    assign_time_frames,
    eligible_intervals,
    estimated_release_dates,
    frame_eligibility,
    repository_items,
)


def _ratings(rows):
    frame = pd.DataFrame(rows, columns=["user_id", "item_id", "rating", "t"])
    frame["timestamp"] = pd.to_datetime(frame.pop("t"), unit="s", utc=True)
    return frame


@pytest.fixture
def log():
    # frame 0 (t 0-3): users 1, 2, 3; frame 1 (t 4-7): users 1, 2 (both with a 5), 4; frame 2 (t 8-11): users
    # 4, 5 (4 has a 5 and rated in frame 1; 5 did not); one trailing rating (t 12) is an incomplete frame.
    return _ratings(
        [
            (1, 10, 4.0, 0), (2, 11, 3.0, 1), (3, 12, 5.0, 2), (1, 13, 2.0, 3),
            (1, 14, 5.0, 4), (2, 10, 5.0, 5), (4, 11, 5.0, 6), (2, 15, 1.0, 7),
            (4, 16, 5.0, 8), (5, 10, 5.0, 9), (5, 11, 4.0, 10), (4, 12, 2.0, 11),
            (1, 17, 5.0, 12),
        ]
    )


def test_frames_cut_consecutive_blocks_in_time_order_and_drop_the_incomplete_tail(log):
    shuffled = log.sample(frac=1.0, random_state=3)
    framed = assign_time_frames(shuffled, frame_size=4)
    assert len(framed) == 12
    assert framed["frame"].tolist() == [0] * 4 + [1] * 4 + [2] * 4
    assert framed["timestamp"].is_monotonic_increasing
    kept = assign_time_frames(shuffled, frame_size=4, drop_incomplete=False)
    assert kept["frame"].max() == 3 and len(kept) == 13


def test_ties_in_time_are_ordered_by_user_then_item():
    ratings = _ratings([(2, 5, 3.0, 0), (1, 9, 3.0, 0), (1, 4, 3.0, 0)])
    framed = assign_time_frames(ratings, frame_size=1)
    assert list(zip(framed["user_id"], framed["item_id"])) == [(1, 4), (1, 9), (2, 5)]


def test_eligibility_counts_common_users_with_a_top_rating_in_the_later_frame(log):
    table = frame_eligibility(assign_time_frames(log, 4), min_common_users=2)
    assert table["n_common_users"].tolist() == [0, 2, 1]
    assert table["n_sample_users"].tolist() == [0, 2, 1]
    assert table["eligible"].tolist() == [False, True, False]
    assert table.loc[1, "sample_users"] == (1, 2)
    # with the paper's threshold (30) nothing is eligible in so small a log
    assert not frame_eligibility(assign_time_frames(log, 4))["eligible"].any()


def test_a_common_user_without_a_five_star_rating_is_not_sampled():
    ratings = _ratings([(1, 1, 5.0, 0), (2, 2, 5.0, 1), (1, 3, 4.0, 2), (2, 4, 5.0, 3)])
    table = frame_eligibility(assign_time_frames(ratings, 2), min_common_users=1)
    assert table.loc[1, "n_common_users"] == 2
    assert table.loc[1, "sample_users"] == (2,)


def test_intervals_run_from_the_first_frame_to_each_eligible_frame(log):
    intervals = eligible_intervals(log, frame_size=4, min_common_users=1)
    assert [interval.last_frame for interval in intervals] == [1, 2]
    first, second = intervals
    assert len(first.ratings) == 8 and len(second.ratings) == 12
    assert first.sample_users == (1, 2) and second.sample_users == (4,)
    known = second.known_items(4)
    assert sorted(known["item_id"]) == [11, 12, 16]
    assert first.known_items(1).set_index("item_id")["rating"].to_dict() == {10: 4.0, 13: 2.0, 14: 5.0}


def test_release_date_is_the_earlier_of_title_year_and_first_rating():
    ratings = _ratings([(1, 1, 4.0, 0), (1, 2, 4.0, 10**9)])  # 1970 and 2001
    items = pd.DataFrame({"item_id": [1, 2, 3], "year": [1995.0, 1999.0, np.nan]})
    dates = estimated_release_dates(items, ratings)
    assert dates[1] == pd.Timestamp("1970-01-01", tz="UTC")  # rated before its title year: the rating wins
    assert dates[2] == pd.Timestamp("1999-01-01", tz="UTC")
    assert pd.isna(dates[3])
    assert repository_items(dates, pd.Timestamp("1998-06-01", tz="UTC")).tolist() == [1]
    assert repository_items(dates, pd.Timestamp("2002-01-01", tz="UTC")).tolist() == [1, 2]


def test_missing_columns_and_timestamps_are_named():
    with pytest.raises(ValueError, match="timestamp"):
        assign_time_frames(pd.DataFrame({"user_id": [1], "item_id": [1], "rating": [5.0]}))
    bad = _ratings([(1, 1, 5.0, 0)])
    bad.loc[0, "timestamp"] = pd.NaT
    with pytest.raises(ValueError, match="row 0"):
        assign_time_frames(bad)


def test_spread_intervals_keeps_the_first_and_last_and_spreads_the_rest(log):
    intervals = list(range(10))  # stand-ins: the selection only reads positions
    assert time_frames.spread_intervals(intervals, 4) == [0, 3, 6, 9]
    assert time_frames.spread_intervals(intervals, 1) == [0]
    assert time_frames.spread_intervals(intervals, None) is intervals
    assert time_frames.spread_intervals(intervals, 10) is intervals
    with pytest.raises(ValueError, match="max_intervals must be at least 1"):
        time_frames.spread_intervals(intervals, 0)
    real = eligible_intervals(log, frame_size=4, min_common_users=1)
    assert time_frames.spread_intervals(real, 1) == real[:1]
