"""Implicit feedback and the global temporal split of Tokutake et al. (2025, section 5.1).

Ratings >= ``threshold`` (4) are positives; all other ratings are discarded.  The positives are sorted by time (ties
broken by user_id, item_id, so the order is total and reproducible) and cut into ``n_chunks`` (10) chunks of equal
size (``numpy.array_split``: the first ``n % n_chunks`` chunks hold one more row).  Fold f trains on chunks
f..f+5, validates on f+6 and tests on f+7.

Unseen users and items (our decision; the paper does not say): a recommender can rank only items that occur in its
training chunks, and it can only personalise for users who occur there.  So the evaluation targets of the
validation or test chunk keep only users with at least one training positive and, for them, only positives on items
seen in training; the rest are dropped and counted (``Fold.dropped``: positives of unseen users, positives on unseen
items, and the users of the chunk dropped whole, ``<part>_unseen_users``).  Precision and NDCG therefore measure what
the recommender could have hit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

N_CHUNKS = 10
TRAIN_CHUNKS = 6
FOLDS = (0, 1, 2)


def positives(ratings: pd.DataFrame, threshold: float = 4.0) -> pd.DataFrame:
    """The rows with rating >= threshold: user_id, item_id, timestamp (other ratings are discarded)."""
    missing = [c for c in ("user_id", "item_id", "rating", "timestamp") if c not in ratings.columns]
    if missing:
        raise ValueError(f"ratings: missing column(s) {missing}")
    kept = ratings.loc[ratings["rating"] >= threshold, ["user_id", "item_id", "timestamp"]]
    return kept.reset_index(drop=True)


def temporal_chunks(interactions: pd.DataFrame, n_chunks: int = N_CHUNKS) -> pd.DataFrame:
    """The interactions sorted by (timestamp, user_id, item_id) with a column ``chunk`` (0..n_chunks-1)."""
    if len(interactions) < n_chunks:
        raise ValueError(f"{len(interactions)} interactions cannot be cut into {n_chunks} chunks")
    ordered = interactions.sort_values(["timestamp", "user_id", "item_id"], kind="mergesort").reset_index(drop=True)
    chunk = np.concatenate([np.full(len(part), number) for number, part in
                            enumerate(np.array_split(np.arange(len(ordered)), n_chunks))])
    return ordered.assign(chunk=chunk)


@dataclass
class Fold:
    """One fold: training interactions (sorted by time), validation and test targets (seen users and items only)."""

    fold: int
    train: pd.DataFrame
    valid: pd.DataFrame
    test: pd.DataFrame
    dropped: dict[str, int] = field(default_factory=dict)

    @property
    def n_test_users(self) -> int:
        return int(self.test["user_id"].nunique())


def _targets(part: pd.DataFrame, train: pd.DataFrame, name: str, dropped: dict[str, int]) -> pd.DataFrame:
    users, items = set(train["user_id"]), set(train["item_id"])
    seen_user = part["user_id"].isin(users)
    seen_item = part["item_id"].isin(items)
    dropped[f"{name}_unseen_user"] = int((~seen_user).sum())
    dropped[f"{name}_unseen_item"] = int((seen_user & ~seen_item).sum())
    kept_users = set(part.loc[seen_user & seen_item, "user_id"])
    dropped[f"{name}_unseen_users"] = int(part["user_id"].nunique() - len(kept_users))
    return part.loc[seen_user & seen_item, ["user_id", "item_id", "timestamp"]].reset_index(drop=True)


def make_fold(chunked: pd.DataFrame, fold: int, train_chunks: int = TRAIN_CHUNKS) -> Fold:
    """Fold ``fold`` of ``temporal_chunks`` output: train f..f+train_chunks-1, valid next chunk, test the one after."""
    last = int(chunked["chunk"].max())
    if fold < 0 or fold + train_chunks + 1 > last:
        raise ValueError(f"fold {fold} needs chunks {fold}..{fold + train_chunks + 1}; the data have 0..{last}")
    train = chunked.loc[chunked["chunk"].between(fold, fold + train_chunks - 1),
                        ["user_id", "item_id", "timestamp"]].reset_index(drop=True)
    dropped: dict[str, int] = {}
    valid = _targets(chunked[chunked["chunk"] == fold + train_chunks], train, "valid", dropped)
    test = _targets(chunked[chunked["chunk"] == fold + train_chunks + 1], train, "test", dropped)
    return Fold(fold, train, valid, test, dropped)


def folds(ratings: pd.DataFrame, threshold: float = 4.0, n_chunks: int = N_CHUNKS,
          which: tuple[int, ...] = FOLDS) -> list[Fold]:
    """The folds of the protocol from explicit ratings."""
    chunked = temporal_chunks(positives(ratings, threshold), n_chunks)
    return [make_fold(chunked, f) for f in which]




def fold_sizes(folds: list[Fold]) -> pd.DataFrame:
    """Per fold: training positives, users and items, validation users and targets, test users and targets kept,
    and what the split dropped (``Fold.dropped``: positives of unseen users or items, users with nothing kept)."""
    return pd.DataFrame([{"fold": f.fold, "train_positives": len(f.train), "train_users": f.train["user_id"].nunique(),
                          "train_items": f.train["item_id"].nunique(), "valid_targets": len(f.valid),
                          "valid_users": f.valid["user_id"].nunique(), "test_targets": len(f.test),
                          "test_users": f.n_test_users, **f.dropped} for f in folds])


def targets(folds: list[Fold], part: str = "test") -> pd.DataFrame:
    """The ``part`` ("test" or "valid") targets of every fold in one frame, with a ``fold`` column."""
    if part not in ("test", "valid"):
        raise ValueError(f"part {part!r}: 'test' or 'valid'")
    return pd.concat([getattr(f, part).assign(fold=f.fold) for f in folds], ignore_index=True)
