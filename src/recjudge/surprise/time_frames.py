"""The chronological time-frame process of Lima & Peres, section 4.2 ("segmentation" stage).

The paper's words, rule by rule, and how each is implemented here:

1. *"the ratings are ordered by timestamp and aggregated into timeframes that include 1,500 ratings each."*
   :func:`assign_time_frames` sorts the ratings by timestamp (ties broken by ``user_id`` then ``item_id`` so the
   order is reproducible) and cuts consecutive blocks of ``frame_size`` ratings. A trailing block with fewer than
   ``frame_size`` ratings is not a frame "of 1,500 ratings" and is dropped (``drop_incomplete=True``).
2. *"Consecutive timeframes that contain ratings from at least 30 common users are marked as eligible for
   measurement if there is at least one 5-star rating for each user."* Read here as: frame ``T_j`` (``j >= 1``) is
   eligible when at least ``min_common_users`` users rate in both ``T_{j-1}`` and ``T_j`` **and** give at least one
   top (5-star) rating in ``T_j``; those users are the frame's user sample ``U`` (the paper: "the users that are
   randomly allocated to a timeframe T_i will be preferably allocated to T_{i+1}"). The 5-star rating is looked
   for in the later frame because it plays the part of the held-out relevant item of one plus random.
3. *"An interval is a sequence of consecutive timeframes, starting from the first timeframe and stretching to an
   eligible timeframe."* :class:`Interval` holds the ratings of frames ``T_0 .. T_j`` for an eligible ``T_j``.
4. Known and unknown items (Algorithm 1, lines 3–4): ``E_u`` is the set of items user ``u`` rated within the
   interval; ``N_u = I \\ E_u`` where ``I`` is the repository at the end of the interval.
5. *"the dataset is segmented in a chronological order so that each interval only includes items with an estimated
   release date within that interval, thus simulating an evolving repository."* The release date of an item is
   estimated (:func:`estimated_release_dates`) as the earlier of 1 January of the year in its title and its first
   rating (a rating proves the item existed); the repository of an interval holds the items released by the
   interval's last timestamp (:func:`repository_items`).

The threshold of 30 common users is met by MovieLens-1M, whose users rate many films in bursts, but not by the
smaller MovieLens releases (ml-latest-small peaks at 12 such users in a pair of frames, ML-100K at 10), so
``min_common_users`` is a parameter; any value other than 30 must be reported beside the numbers it produced.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

#: The paper's parameters (section 4.2).
PAPER_FRAME_SIZE = 1500
PAPER_MIN_COMMON_USERS = 30
PAPER_TOP_RATING = 5.0

_REQUIRED_RATING_COLUMNS = ("user_id", "item_id", "rating", "timestamp")


def _check_ratings(ratings: pd.DataFrame) -> None:
    missing = [column for column in _REQUIRED_RATING_COLUMNS if column not in ratings.columns]
    if missing:
        raise ValueError(f"ratings frame lacks column(s) {missing}; expected {list(_REQUIRED_RATING_COLUMNS)}")
    if ratings["timestamp"].isna().any():
        row = int(np.flatnonzero(ratings["timestamp"].isna().to_numpy())[0])
        raise ValueError(f"ratings frame has a missing timestamp at row {row}: the time-frame process needs them all")


def assign_time_frames(
    ratings: pd.DataFrame, frame_size: int = PAPER_FRAME_SIZE, *, drop_incomplete: bool = True
) -> pd.DataFrame:
    """Ratings ordered by time with a ``frame`` column (0, 1, ...): block ``f`` holds ratings
    ``f * frame_size .. (f + 1) * frame_size - 1`` of the chronological order (rule 1)."""
    _check_ratings(ratings)
    if frame_size < 1:
        raise ValueError(f"frame_size must be positive, got {frame_size}")
    ordered = ratings.sort_values(["timestamp", "user_id", "item_id"], kind="stable").reset_index(drop=True)
    ordered["frame"] = np.arange(len(ordered)) // frame_size
    if drop_incomplete and len(ordered) % frame_size:
        ordered = ordered[ordered["frame"] < len(ordered) // frame_size].reset_index(drop=True)
    return ordered


def frame_eligibility(
    framed: pd.DataFrame,
    *,
    min_common_users: int = PAPER_MIN_COMMON_USERS,
    top_rating: float = PAPER_TOP_RATING,
) -> pd.DataFrame:
    """One row per frame: ``frame``, ``start``, ``end``, ``n_ratings``, ``n_users``, ``n_common_users`` (users also
    rating in the previous frame), ``n_sample_users`` (common users with a top rating in this frame),
    ``eligible`` (rule 2) and ``sample_users`` (sorted tuple of user ids)."""
    if "frame" not in framed.columns:
        raise ValueError("frame_eligibility needs the 'frame' column added by assign_time_frames")
    rows = []
    previous_users: set = set()
    for frame, block in framed.groupby("frame", sort=True):
        users = set(block["user_id"].unique())
        common = users & previous_users
        top_raters = set(block.loc[np.isclose(block["rating"].astype(float), top_rating), "user_id"].unique())
        sample = tuple(sorted(common & top_raters))
        rows.append(
            {
                "frame": int(frame),
                "start": block["timestamp"].iloc[0],
                "end": block["timestamp"].iloc[-1],
                "n_ratings": len(block),
                "n_users": len(users),
                "n_common_users": len(common),
                "n_sample_users": len(sample),
                "eligible": bool(frame > 0 and len(sample) >= min_common_users),
                "sample_users": sample,
            }
        )
        previous_users = users
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class Interval:
    """Frames ``T_0 .. T_last_frame`` (rule 3) with the user sample of the eligible frame ``T_last_frame``."""

    last_frame: int
    start: pd.Timestamp
    end: pd.Timestamp
    sample_users: tuple
    ratings: pd.DataFrame = field(repr=False)

    def known_items(self, user_id) -> pd.DataFrame:
        """``E_u`` with the user's ratings: the items ``user_id`` rated within the interval (latest rating of an
        item if it was rated twice)."""
        mine = self.ratings[self.ratings["user_id"] == user_id]
        return mine.drop_duplicates("item_id", keep="last")[["item_id", "rating"]].reset_index(drop=True)


def eligible_intervals(
    ratings: pd.DataFrame,
    *,
    frame_size: int = PAPER_FRAME_SIZE,
    min_common_users: int = PAPER_MIN_COMMON_USERS,
    top_rating: float = PAPER_TOP_RATING,
) -> list[Interval]:
    """Every interval that ends at an eligible frame, in chronological order (rules 1–3)."""
    framed = assign_time_frames(ratings, frame_size)
    table = frame_eligibility(framed, min_common_users=min_common_users, top_rating=top_rating)
    intervals = []
    for row in table[table["eligible"]].itertuples(index=False):
        intervals.append(
            Interval(
                last_frame=row.frame,
                start=framed["timestamp"].iloc[0],
                end=row.end,
                sample_users=row.sample_users,
                ratings=framed[framed["frame"] <= row.frame],
            )
        )
    return intervals


def spread_intervals(intervals: list[Interval], max_intervals: int | None) -> list[Interval]:
    """At most ``max_intervals`` of ``intervals``, evenly spread over the whole time line (first and last kept);
    all of them when ``max_intervals`` is None or not smaller than their number. A cut run then still samples
    early and late periods instead of only the first ones."""
    if max_intervals is None or len(intervals) <= max_intervals:
        return intervals
    if max_intervals < 1:
        raise ValueError(f"max_intervals must be at least 1 (or None for every interval), got {max_intervals!r}")
    picks = np.unique(np.linspace(0, len(intervals) - 1, max_intervals).round().astype(int))
    return [intervals[i] for i in picks]


def estimated_release_dates(items: pd.DataFrame, ratings: pd.DataFrame) -> pd.Series:
    """Estimated release date per ``item_id`` (rule 5): the earlier of 1 January of the title year (column
    ``year``, NaN when unknown) and the item's first rating. Items with neither get NaT (never released)."""
    first_rating = ratings.groupby("item_id")["timestamp"].min()
    years = items.set_index("item_id")["year"] if "year" in items.columns else pd.Series(dtype=float)
    tz = ratings["timestamp"].dt.tz
    from_year = pd.to_datetime(
        years.dropna().astype(int).astype(str) + "-01-01", format="%Y-%m-%d", errors="coerce"
    )
    if tz is not None:
        from_year = from_year.dt.tz_localize(tz)
    all_items = pd.Index(items["item_id"]).union(first_rating.index)
    combined = pd.concat([from_year.reindex(all_items), first_rating.reindex(all_items)], axis=1).min(axis=1)
    combined.name = "release_date"
    combined.index.name = "item_id"
    return combined


def repository_items(release_dates: pd.Series, end: pd.Timestamp) -> np.ndarray:
    """The repository ``I`` of an interval ending at ``end``: items whose estimated release date is not later."""
    return np.sort(release_dates.index[(release_dates <= end).to_numpy()].to_numpy())
