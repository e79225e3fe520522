"""The common interface: ``fit(train)`` then ``recommend(users, k)``.

``train`` holds user_id, item_id, timestamp (positives only).  A subclass implements ``_fit()`` (the training
matrix and sequences are ready as ``self.matrix``, a users x items CSR of ones, and ``self.sequences``, each user's
item indices oldest first) and ``_score(user_index) -> scores over all items`` for a batch of user indices.  The base
class maps ids to indices, masks each user's training items and returns the top k as a tidy frame (user_id, rank,
item_id, score); ties are broken by the lower item index, so lists are deterministic given the scores.  Users
unseen in training get no list (see ``recjudge.recsys.split``).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pandas as pd
import scipy.sparse as sp


def torch_single_thread(seed: int) -> None:
    """Seed torch and use one thread (deterministic kernels on one machine; see the chapter on portability)."""
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(seed)


class Recommender:
    """Base class; ``name`` is the label in tables, ``params`` the hyper-parameters (tuned or given)."""

    name: ClassVar[str] = "base"
    #: default hyper-parameters; ``SEARCH_SPACE`` (recjudge.recsys.tuning) lists what Optuna may change
    defaults: ClassVar[dict[str, Any]] = {}

    def __init__(self, seed: int = 0, **params: Any):
        unknown = sorted(set(params) - set(self.defaults))
        if unknown:
            raise ValueError(f"{self.name}: unknown parameter(s) {unknown}; known: {sorted(self.defaults)}")
        self.seed = int(seed)
        self.params = {**self.defaults, **params}

    # ---------------------------------------------------------------- fitting
    def fit(self, train: pd.DataFrame) -> "Recommender":
        missing = [c for c in ("user_id", "item_id", "timestamp") if c not in train.columns]
        if missing:
            raise ValueError(f"{self.name}: training frame lacks column(s) {missing}")
        if train.empty:
            raise ValueError(f"{self.name}: empty training data")
        ordered = train.sort_values(["timestamp", "user_id", "item_id"], kind="mergesort")
        self.user_ids = np.sort(ordered["user_id"].unique())
        self.item_ids = np.sort(ordered["item_id"].unique())
        self.user_index = pd.Series(np.arange(len(self.user_ids)), index=self.user_ids)
        self.item_index = pd.Series(np.arange(len(self.item_ids)), index=self.item_ids)
        rows = self.user_index.loc[ordered["user_id"]].to_numpy()
        cols = self.item_index.loc[ordered["item_id"]].to_numpy()
        self.n_users, self.n_items = len(self.user_ids), len(self.item_ids)
        self.matrix = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(self.n_users, self.n_items))
        self.matrix.sum_duplicates()
        self.matrix.data[:] = 1.0
        self.sequences = [[] for _ in range(self.n_users)]
        for r, c in zip(rows, cols):
            self.sequences[r].append(int(c))
        self._fit()
        return self

    def _fit(self) -> None:
        raise NotImplementedError

    def _score(self, users: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    # ---------------------------------------------------------------- recommending
    def recommend(self, users, k: int = 20, batch: int = 256) -> pd.DataFrame:
        """Top-k unseen items for each known user in ``users`` (unknown users are skipped)."""
        if not hasattr(self, "matrix"):
            raise RuntimeError(f"{self.name}: call fit() first")
        known = [u for u in pd.unique(pd.Series(list(users))) if u in self.user_index.index]
        frames = []
        for start in range(0, len(known), batch):
            ids = np.asarray(known[start:start + batch])
            idx = self.user_index.loc[ids].to_numpy()
            scores = np.asarray(self._score(idx), dtype=np.float64).copy()
            if scores.shape != (len(idx), self.n_items):
                raise RuntimeError(f"{self.name}: _score returned shape {scores.shape}, expected "
                                   f"{(len(idx), self.n_items)}")
            seen = self.matrix[idx].toarray() > 0
            scores[seen] = -np.inf
            kk = min(k, self.n_items)
            order = np.argsort(-scores, axis=1, kind="stable")[:, :kk]
            top_scores = np.take_along_axis(scores, order, axis=1)
            for row, user in enumerate(ids):
                keep = np.isfinite(top_scores[row])
                items = self.item_ids[order[row][keep]]
                frames.append(pd.DataFrame({"user_id": user, "rank": np.arange(1, len(items) + 1),
                                            "item_id": items, "score": top_scores[row][keep]}))
        if not frames:
            return pd.DataFrame(columns=["user_id", "rank", "item_id", "score"])
        return pd.concat(frames, ignore_index=True)
